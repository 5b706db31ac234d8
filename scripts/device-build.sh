#!/usr/bin/env bash
# Builds what scripts/device-gpu.sh runs on a lent GPU machine and packs it (x86-64 release binaries):
# .dev/new from the working tree; .dev/base/workloads from the commit given (for a same-run ratio, built
# in a worktree under target/); then .devpack/bins.tar.xz (the device tool carries at most 64 MiB).
#   scripts/device-build.sh [BASE_COMMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
bins() { # dir target_dir: the newest binary of each bench and native test suite
    local dir=$1 target=$2
    mkdir -p "$dir"
    for b in workloads compute $(cd tests && ls native_*.rs | sed 's/\.rs$//'); do
        f=$(ls -t "$target"/release/deps/ | grep -E "^$b-[0-9a-f]+$" | head -1)
        cp "$target/release/deps/$f" "$dir/$b" && strip "$dir/$b"
    done
}
rm -rf .dev && mkdir -p .dev .devpack
cargo bench --no-run --bench workloads --bench compute
cargo test --release --no-run --test 'native_*'
bins .dev/new target
if [ $# -ge 1 ]; then
    wt=target/device-base
    rm -rf "$wt" && git worktree prune && git worktree add --detach "$wt" "$1"
    (cd "$wt" && CARGO_TARGET_DIR=../base-target cargo bench --no-run --bench workloads)
    mkdir -p .dev/base
    f=$(ls -t target/base-target/release/deps/ | grep -E "^workloads-[0-9a-f]+$" | head -1)
    cp "target/base-target/release/deps/$f" .dev/base/workloads && strip .dev/base/workloads
    git worktree remove --force "$wt"
fi
tar -C .dev -cJf .devpack/bins.tar.xz .
ls -la .devpack
