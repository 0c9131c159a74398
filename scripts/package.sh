#!/usr/bin/env bash
# Packages every crate of the workspace meant for crates.io, as `cargo
# publish` would, without uploading anything:
#
#   bash scripts/package.sh
#
# The crates are those without `publish = false`, read from the workspace's
# metadata. They are packaged together, so that cargo verifies each package
# (builds it from its `.crate` file, debug profile, default features)
# against the packages of its sibling crates rather than against crates.io,
# where they are not yet. Then, once the repository has a tag, each is
# checked against the tag with cargo-semver-checks (pinned, installed into
# the user's cache directory (~/.cache/wirebridge/tools/) only then); with no tag there is nothing to compare with.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t crates < <(cargo metadata --format-version 1 --no-deps | python3 -c '
import json, sys
for package in json.load(sys.stdin)["packages"]:
    # `publish = false` reads as an empty list of registries.
    if package["publish"] != []:
        print(package["name"])
')
packages=()
for crate in "${crates[@]}"; do
    packages+=(-p "$crate")
done

# Cargo unpacks each package it verifies into its home's registry sources
# under a directory named for the temporary registry's path, and reuses an
# unpacked crate of the same name and version without looking at its
# contents. The version here does not change between commits, so a second
# run from the same path would build against the first run's sources: those
# are removed first. (Directories whose name starts with a dash are the
# temporary registries'; crates.io's are named for its index.)
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
for crate in "${crates[@]}"; do
    rm -rf "$cargo_home"/registry/src/-*/"$crate"-[0-9]*
done

echo "== cargo package: ${crates[*]}"
# --allow-dirty: this checks that the packages build, it publishes nothing,
# so it also runs on a work tree with changes. The crates leave their tests
# out of their packages (they need the unpublished test support crate), and
# cargo says so once per test: those lines are left out here.
cargo package --allow-dirty --quiet "${packages[@]}" 2>&1 |
    sed '/^warning: ignoring test `[a-z_0-9]*` as `tests\/[a-z_0-9]*\.rs` is not included in the published package$/d'

tag=$(git describe --tags --abbrev=0 2>/dev/null || true)
if [ -z "$tag" ]; then
    echo "== semver checks: skipped, the repository has no tag to compare with"
    exit 0
fi

version=0.51.0
root="${WIREBRIDGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wirebridge}"/tools/cargo-semver-checks
if ! "$root/bin/cargo-semver-checks" semver-checks --version 2>/dev/null | grep -qx "cargo-semver-checks $version"; then
    echo "== installing cargo-semver-checks $version"
    cargo install cargo-semver-checks --version "$version" --locked --root "$root" --quiet
fi
export PATH="$root/bin:$PATH"
echo "== semver checks against $tag"
cargo semver-checks check-release --baseline-rev "$tag" "${packages[@]}"
