#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` once and prints the directory it is in.
#
# The sources are the ones vendored in the registry's `llama-cpp-python`
# source distribution (pinned by version and SHA-256 below). The build is
# CPU-only and static, and lands in the user's cache directory, outside any
# clone, so that a second run on the same machine prints the path at once:
#
#   ${WIREBRIDGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wirebridge}/llama-server-VERSION-BUILD/
#     llama-server     the binary
#     templates/       the chat templates the live suite uses
#
# A first build takes about 7 minutes on 2 cores. It needs cmake and a C++
# compiler, installed from Debian's packages when missing. A template added
# to the list below is copied into an existing build from the same sources,
# without building again.
set -euo pipefail

version=0.3.36
sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
templates="meta-llama-Llama-3.1-8B-Instruct.jinja meetkai-functionary-medium-v3.2.jinja
           fireworks-ai-llama-3-firefunction-v2.jinja"

cache="${WIREBRIDGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wirebridge}"
# Built for the processor it runs on, but without its AMX tile
# instructions: on a virtual machine whose processor listed them, the
# server crashed in them (SIGSEGV on `ldtilecfg`) on its first matrix
# product. The directory names the build, so that a build made otherwise
# is not reused.
build=noamx
amx_off="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
home="$cache/llama-server-$version-$build"

log() { echo "llama_server.sh: $*" >&2; }

# The sources: the source distribution, checked against its SHA-256 and
# unpacked into $work (only the templates with `templates-only`).
work=""
fetch_sources() {
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    log "downloading llama-cpp-python $version (sources of llama.cpp)"
    python3 -m pip download --quiet --no-deps --no-binary llama-cpp-python \
        -d "$work" "llama-cpp-python==$version" >&2
    archive="$work/llama_cpp_python-$version.tar.gz"
    echo "$sha256  $archive" | sha256sum --check --quiet - >&2
    source_dir="$work/llama_cpp_python-$version/vendor/llama.cpp"
    if [ "${1:-}" = templates-only ]; then
        tar -xzf "$archive" -C "$work" "llama_cpp_python-$version/vendor/llama.cpp/models/templates"
    else
        tar -xzf "$archive" -C "$work"
    fi
}

if [ -x "$home/llama-server" ] && [ -f "$home/.complete" ]; then
    wanted=""
    for template in $templates; do
        [ -f "$home/templates/$template" ] || wanted="$wanted $template"
    done
    if [ -n "$wanted" ]; then
        fetch_sources templates-only
        log "adding to the build:$wanted"
        for template in $wanted; do
            cp "$source_dir/models/templates/$template" "$home/templates/.$template.part"
            mv "$home/templates/.$template.part" "$home/templates/$template"
        done
    fi
    echo "$home"
    exit 0
fi

missing=""
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
command -v g++ >/dev/null 2>&1 || missing="$missing g++"
if [ -n "$missing" ]; then
    log "installing$missing"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >&2
fi

fetch_sources

log "building llama-server (about 7 minutes on 2 cores)"
start=$(date +%s)
cmake -S "$source_dir" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="$amx_off" -DCMAKE_CXX_FLAGS="$amx_off" \
    -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" --target llama-server -j "$(nproc)" >"$work/build.log" 2>&1 ||
    { tail -50 "$work/build.log" >&2; exit 1; }
log "built in $(($(date +%s) - start)) s"

rm -rf "$home"
mkdir -p "$home/templates"
cp "$work/build/bin/llama-server" "$home/"
for template in $templates; do
    cp "$source_dir/models/templates/$template" "$home/templates/"
done
cp "$source_dir/LICENSE" "$home/LICENSE"
touch "$home/.complete"
echo "$home"
