#!/usr/bin/env bash
# Fuzzes the program JSON front end (parse, validate, plan) and the pool (operation sequences with
# invariants checked) for a bounded time each. Usage: scripts/fuzz.sh [seconds per target, default 60]
# Seeds are in fuzz/seeds/<target>/ (committed); what the fuzzer finds goes to fuzz/corpus/ (ignored),
# crashes to fuzz/artifacts/.
# cargo-fuzz wants a nightly compiler for its sanitizer flags; this machine has only stable, so the
# targets run without a sanitizer (-s none) and RUSTC_BOOTSTRAP=1 lets stable accept the remaining
# -Z flags. Panics and failed assertions are still caught.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --version 0.13.2 --locked
for target in program_json pool_ops; do
  mkdir -p "fuzz/corpus/$target"
  echo "==> fuzzing $target for ${seconds}s" >&2
  log="fuzz/corpus/$target.log"
  if ! RUSTC_BOOTSTRAP=1 cargo fuzz run -s none "$target" "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
      -max_total_time="$seconds" -print_final_stats=1 >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz target $target failed; the input is in fuzz/artifacts/$target/" >&2
    exit 1
  fi
  grep -E "^(Done|INFO: seed corpus)" "$log" >&2
done
