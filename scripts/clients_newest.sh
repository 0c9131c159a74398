#!/usr/bin/env bash
# Runs the real-client suites against the newest release of every client,
# rather than the versions tests/clients pins: a warning, before a client
# update reaches users, that it reads the bridge differently.
#
#   bash scripts/clients_newest.sh [SCRATCH_DIR] [-- PYTEST_ARGS...]
#
# The newest npm clients (those tests/clients/node/package.json names) and
# PyPI clients (those tests/clients/requirements.txt names) are installed
# into SCRATCH_DIR (a new temporary folder by default), never into the
# repository's node_modules or .venv. Each client's suites then run against
# the binary under test (WIREBRIDGE_BIN, else target/debug/wirebridge, built
# here), and a table says which client versions passed. Exits non-zero when
# any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

scratch=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
    scratch=$1
    shift
fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
pytest_args=("$@")
if [ -z "$scratch" ]; then
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/wirebridge-clients.XXXXXX")
fi
mkdir -p "$scratch"
scratch=$(cd "$scratch" && pwd)
case "$scratch/" in
    "$repo/"*) echo "the scratch folder must be outside the repository" >&2; exit 2 ;;
esac
echo "== scratch folder: $scratch"

# The Node clients: their scripts, and a package.json naming each pinned
# package at its newest version (exact, so that the suites know which).
node_dir="$scratch/node"
mkdir -p "$node_dir"
cp tests/clients/node/*.mjs "$node_dir/"
packages=$(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["dependencies"]))' \
    tests/clients/node/package.json)
dependencies=""
for package in $packages; do
    version=$(npm view "$package" version)
    dependencies="$dependencies\"$package\": \"$version\","
done
cat > "$node_dir/package.json" <<EOF
{
  "name": "wirebridge-newest-clients",
  "private": true,
  "type": "module",
  "dependencies": {${dependencies%,}}
}
EOF
echo "== installing the newest Node clients"
(cd "$node_dir" && npm install --no-audit --no-fund --loglevel=error)

# The PyPI clients, each at the newest version pip can install here; the
# test tools (pytest, its timeout plugin) too. The schema checker stays at
# its pinned version: it is no client.
venv="$scratch/venv"
echo "== installing the newest Python clients"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/schema/requirements.txt
requirements=$(sed -e 's/[=<>!~].*//' -e '/^\s*#/d' -e '/^\s*$/d' tests/clients/requirements.txt)
# shellcheck disable=SC2086
"$venv/bin/pip" install --quiet --disable-pip-version-check --upgrade $requirements

if [ -z "${WIREBRIDGE_BIN:-}" ]; then
    echo "== building the binary"
    cargo build -p wirebridge-cli
fi

# Which suites read which client: "client|suites|-k expression".
suites=(
    "@openai/codex|test_codex_cli.py test_codex_native.py test_codex_requests.py test_model_catalog.py|"
    "@anthropic-ai/claude-code|test_claude_code.py|"
    "openai (npm)|test_client_matrix.py|openai_node"
    "ai, @ai-sdk/openai|test_client_matrix.py test_reasoning_clients.py|vercel"
    "openai (PyPI)|test_websocket.py test_failures.py test_golden_outputs.py|"
    "anthropic|test_messages_clients.py test_messages_golden.py test_messages_backend.py|not codex and not claude"
    "openai-agents|test_client_matrix.py test_reasoning_clients.py|agents"
    "pydantic-ai-slim|test_client_matrix.py|pydantic"
    "langchain-openai|test_client_matrix.py|langchain"
)

version_of() {
    case "$1" in
        @*|ai|"openai (npm)") local name=${1% (npm)}
            python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' \
                "$node_dir/node_modules/$name/package.json" ;;
        "ai, @ai-sdk/openai") echo "$(version_of ai), $(version_of @ai-sdk/openai)" ;;
        *) local name=${1% (PyPI)}
            "$venv/bin/python" -c 'import importlib.metadata,sys; print(importlib.metadata.version(sys.argv[1]))' \
                "$name" ;;
    esac
}

results=()
failed=0
for entry in "${suites[@]}"; do
    IFS='|' read -r client files filter <<<"$entry"
    version=$(version_of "$client")
    echo "== $client $version: $files${filter:+ (-k \"$filter\")}"
    selection=()
    for file in $files; do
        selection+=("tests/clients/$file")
    done
    [ -n "$filter" ] && selection+=(-k "$filter")
    if WIREBRIDGE_NODE_DIR="$node_dir" "$venv/bin/python" -m pytest -q "${selection[@]}" \
        ${pytest_args[@]+"${pytest_args[@]}"}; then
        results+=("$client|$version|passed")
    else
        results+=("$client|$version|FAILED")
        failed=1
    fi
done

echo
printf '%-28s %-28s %s\n' "client" "version" "suites"
for result in "${results[@]}"; do
    IFS='|' read -r client version outcome <<<"$result"
    printf '%-28s %-28s %s\n' "$client" "$version" "$outcome"
done
exit $failed
