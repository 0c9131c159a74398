#!/usr/bin/env bash
# Runs every test of the workspace, then each fuzz target for a short time.
# Safe on a fresh machine: it installs the system packages, the Python
# virtual environment, and the fuzzing and dependency-checking tools the
# tests need.
set -euo pipefail
cd "$(dirname "$0")/.."

# A full run builds every test binary of the workspace once, from scratch on
# a fresh machine. Incremental caches and full debug info would take the
# target directory to about 11 GB, and a linker that runs out of disk dies
# with a bus error; without them it stays near a third of that. Backtraces
# keep their file and line. Either setting can be overridden from outside.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-line-tables-only}"

# System packages the tests use: Python's venv module (schema checks, the
# official SDK), a real redis-server with redis-cli (response store tests,
# over TLS and as a Cluster), openssl (their test certificates), and Node.js
# with npm (the Codex CLI, the Node SDK and the Vercel AI SDK).
missing=""
python3 -m venv --help >/dev/null 2>&1 || missing="$missing python3-venv"
command -v redis-server >/dev/null 2>&1 || missing="$missing redis-server"
command -v redis-cli >/dev/null 2>&1 || missing="$missing redis-tools"
command -v openssl >/dev/null 2>&1 || missing="$missing openssl"
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"
if [ -n "$missing" ]; then
    echo "== installing$missing"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing
fi

venv=.venv
requirements="tests/schema/requirements.txt tests/clients/requirements.txt tests/live/requirements.txt"
stamp="$venv/.requirements"
# shellcheck disable=SC2086
if [ ! -x "$venv/bin/python" ] || ! cat $requirements | cmp -s - "$stamp"; then
    echo "== setting up $venv"
    python3 -m venv "$venv"
    for file in $requirements; do
        "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$file"
    done
    cat $requirements > "$stamp"
fi

# The Node clients, at the versions pinned in tests/clients/node, installed
# beside their package.json (ignored by git) and only when it changed.
node_dir=tests/clients/node
node_stamp="$node_dir/node_modules/.installed-package-lock.json"
if ! cmp -s "$node_dir/package-lock.json" "$node_stamp"; then
    echo "== installing the Node clients"
    (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$node_dir/package-lock.json" "$node_stamp"
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check

echo "== cargo clippy"
# The facade's `websocket` feature on, so that its WebSocket example is
# checked and built with the rest.
cargo clippy --workspace --all-targets --features wirebridge/websocket --quiet -- -D warnings

echo "== module circles"
python3 scripts/module_cycles.py crates/*/src

echo "== cargo deny: licenses, bans, sources (see scripts/deny.sh)"
bash scripts/deny.sh

echo "== cargo test"
cargo test --workspace --features wirebridge/websocket --quiet

# The translation benches at the root, each case run once (criterion's
# test mode), so that a bench whose inputs stopped translating fails here.
echo "== the translation benches, once each"
cargo test -p wirebridge --benches --quiet

echo "== packages: the crates for crates.io, built from their packages (see scripts/package.sh)"
bash scripts/package.sh

echo "== fuzzing: each target for 20 s (longer: bash scripts/fuzz.sh SECONDS)"
bash scripts/fuzz.sh 20

echo "== schema: translated output against the official OpenAPI spec"
"$venv/bin/python" tests/schema/validate.py --self-test
golden="crates/wirebridge-convert/tests/golden crates/wirebridge-demo/tests/golden"
for kind in chat-request responses-stream responses-response chat-stream chat-response responses-request; do
    # shellcheck disable=SC2086
    files=$(for dir in $golden; do ls "$dir"/*."$kind".* 2>/dev/null; done || true)
    [ -z "$files" ] && continue
    # shellcheck disable=SC2086
    "$venv/bin/python" tests/schema/validate.py "$kind" $files
done
echo "== official openai SDK: the golden outputs, and the real binary on loopback"
cargo build -p wirebridge-cli --quiet
WIREBRIDGE_BIN="${WIREBRIDGE_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/debug/wirebridge}" \
    "$venv/bin/python" -m pytest -v tests/clients

echo "== faults: slow, idle, dripping and exhausting clients against the real binary"
WIREBRIDGE_BIN="${WIREBRIDGE_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/debug/wirebridge}" \
    "$venv/bin/python" -m pytest -v tests/faults

echo "== live: llama.cpp's llama-server running Gemma 3 270M behind the bridge"
# Built once into the user's cache directory (about 7 minutes on 2 cores),
# then reused. WIREBRIDGE_LIVE=0 turns the suite off: its tests then say so.
if [ "${WIREBRIDGE_LIVE:-1}" != 0 ]; then
    bash scripts/llama_server.sh >/dev/null
fi
WIREBRIDGE_BIN="${WIREBRIDGE_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/debug/wirebridge}" \
    "$venv/bin/python" -m pytest -v tests/live

echo "== all tests passed"
