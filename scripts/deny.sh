#!/usr/bin/env bash
# Checks the dependency graph against deny.toml with cargo-deny:
#
#   bash scripts/deny.sh
#
# licenses (permissive ones only), bans (no crate in two versions but the
# ones deny.toml lists, no wildcard requirements) and sources (crates.io
# only). Not advisories: cargo-deny fetches the advisory database with git
# from the RustSec repository, which the machines the tests run on cannot
# reach (they reach the package registries only). Installs cargo-deny
# (pinned) into the user's cache directory (~/.cache/wirebridge/tools/) when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.20.2
root="${WIREBRIDGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wirebridge}"/tools/cargo-deny
if ! "$root/bin/cargo-deny" --version 2>/dev/null | grep -qx "cargo-deny $version"; then
    echo "== installing cargo-deny $version"
    cargo install cargo-deny --version "$version" --locked --root "$root" --quiet
fi
export PATH="$root/bin:$PATH"

# --workspace: every crate of the workspace, not only the root package.
cargo deny --workspace check licenses bans sources
