#!/usr/bin/env bash
# Builds another commit's package into the gitignored pkg-base/, for `bench-kernel-study ab` (two builds
# in one page, alternating). Usage: scripts/build-pkg-base.sh REV   (e.g. HEAD, or a commit id)
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:?usage: scripts/build-pkg-base.sh REV}"
dir="target/pkg-base-src"
rm -rf "$dir" && git worktree prune
git worktree add --detach -f "$dir" "$rev" >&2
# the worktree shares this tree's target dir, so only what changed recompiles
(cd "$dir" && CARGO_TARGET_DIR="$PWD/../../target" wasm-pack build --target web --out-dir "$PWD/../../pkg-base" --out-name affon --release >&2)
git worktree remove --force "$dir"
echo "pkg-base/: the package at $(git rev-parse --short "$rev")" >&2
