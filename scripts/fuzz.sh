#!/usr/bin/env bash
# Runs the fuzz targets in fuzz/ for a bounded time each:
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS defaults to 20, TARGET to all of them. Installs cargo-fuzz (pinned)
# into the user's cache directory (~/.cache/wirebridge/tools/) when it is missing, seeds fuzz/corpus/ from the fixtures,
# builds every target once into fuzz/target/, then runs each. A finding (a
# failed check, a crash, a timeout) is written to fuzz/artifacts/TARGET/ and
# fails the script, after every target has run.
#
# Toolchain: nightly with AddressSanitizer when rustup has a nightly
# toolchain, else the stable toolchain with RUSTC_BOOTSTRAP=1 and no
# sanitizer (libFuzzer's coverage instrumentation needs no sanitizer
# runtime). FUZZ_TOOLCHAIN=stable or =nightly forces one.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-20}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(sse_decoder chat_stream responses_stream responses_request chat_request messages_request messages_stream sealed_carriers compaction_request websocket_client_event upstream_reply history_splice messages_backend_stream reference_resolution conversation_routes)

# The largest input each target is given. Streams longer than this are cut,
# which is itself a case worth fuzzing; request seeds (Codex's are ~45 KB)
# must fit whole, or they would all be invalid JSON.
max_len() {
    case "$1" in
        sse_decoder | sealed_carriers) echo 8192 ;;
        chat_stream | responses_stream | messages_stream | messages_backend_stream) echo 32768 ;;
        # Programs of store calls: a few dozen bytes make a history.
        reference_resolution | conversation_routes) echo 4096 ;;
        *) echo 65536 ;;
    esac
}

version=0.13.2
root="${WIREBRIDGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wirebridge}"/tools/cargo-fuzz
if ! "$root/bin/cargo-fuzz" --version 2>/dev/null | grep -qx "cargo-fuzz $version"; then
    echo "== installing cargo-fuzz $version"
    cargo install cargo-fuzz --version "$version" --locked --root "$root" --quiet
fi
export PATH="$root/bin:$PATH"

toolchain="${FUZZ_TOOLCHAIN:-}"
if [ -z "$toolchain" ]; then
    toolchain=stable
    if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
        toolchain=nightly
    fi
fi
if [ "$toolchain" = nightly ]; then
    fuzz=(cargo +nightly fuzz)
    sanitizer=()
else
    # cargo-fuzz passes nightly-only flags to rustc; RUSTC_BOOTSTRAP lets
    # the stable compiler accept them.
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
    sanitizer=(--sanitizer none)
fi

python3 fuzz/seed.py

echo "== building the fuzz targets ($toolchain)"
"${fuzz[@]}" build "${sanitizer[@]}" --target-dir fuzz/target

logs=fuzz/artifacts/logs
mkdir -p "$logs"
failed=()
for target in "${targets[@]}"; do
    log="$logs/$target.log"
    # The wall-clock bound is a backstop: libFuzzer stops by itself after
    # max_total_time, and a single input that runs 10 s is a finding.
    if timeout "$((seconds + 120))" "${fuzz[@]}" run "${sanitizer[@]}" --target-dir fuzz/target \
        "$target" -- -max_total_time="$seconds" -max_len="$(max_len "$target")" -timeout=10 \
        >"$log" 2>&1; then
        echo "== fuzz $target: $(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1)"
    else
        echo "== fuzz $target: FINDING (full log in $log)"
        grep -E -A12 "panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer|SUMMARY:" "$log" | head -60 || tail -40 "$log"
        grep -E "Test unit written|Reproduce with" -A2 "$log" || true
        failed+=("$target")
    fi
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzzing found problems in: ${failed[*]}" >&2
    exit 1
fi
