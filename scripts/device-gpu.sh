#!/usr/bin/env bash
# Native GPU checks on a lent GPU machine (the `device` tool; never CI): the native GPU test suites and
# the matmul benches, from binaries built here (x86-64, release) and carried in `.dev/`:
#   .dev/new/{native_*,workloads,compute}  the change under test
#   .dev/base/workloads (optional)         the commit before it, for a same-run ratio
#   .dev/all/{workloads,compute} (optional) a variant build
# packed as `.devpack/bins.tar.xz` by scripts/device-build.sh (the carried tree is at most 64 MiB), plus the
# Vulkan loader's packages in `.gl/` (see the device README). Writes logs to $OUT.
#   run: bash scripts/device-gpu.sh [steps]   carry: [".gl", ".devpack"]
# steps (default all): tests, large (matmul 1024-4096), compute (matmul 256-1024, MLP), workloads (every
# native workload of the new build).
set -u
out=${OUT:-/tmp/device-out}
mkdir -p "$out" .dev
tar -C .dev -xJf .devpack/bins.tar.xz
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
if ! ls /usr/share/vulkan/icd.d/*nvidia* >/dev/null 2>&1 && [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export XDG_RUNTIME_DIR=/tmp
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
bench() { # name binary filter...
    local name=$1 bin=$2
    shift 2
    [ -x "$bin" ] || return 0
    echo "== $name"
    AFFON_BENCH_LARGE=1 timeout ${BENCH_TIMEOUT:-100} "$bin" --bench "$@" 2>&1 | tee "$out/bench-$name.log" |
        grep -E "^adapter|time:|thrpt:|^[a-zA-Z]" | grep -vE "^(Benchmarking|Warning|Found|Gnuplot|change|Performance|No change)"
}
steps=${*:-tests large compute workloads}
has() { [[ " $steps " == *" $1 "* ]]; }
if has tests; then
    echo "== tests"
    for t in $(cd .dev/new && ls native_*); do
        timeout 100 ".dev/new/$t" --test-threads=1 >"$out/test-$t.log" 2>&1
        rc=$?
        grep -E "^test |panicked|test result" "$out/test-$t.log" | grep -v " ok$"
        # a suite that crashed or ran out of time has no result line: say so
        [ "$rc" = 0 ] || echo "$t: FAILED (exit $rc)"
    done
fi
for v in new base all; do
    has large && bench $v-matmul-large .dev/$v/workloads "matmul large"
    has compute && bench $v-compute .dev/$v/compute "matmul|MLP|cumsum"
done
has workloads && BENCH_TIMEOUT=240 bench new-workloads .dev/new/workloads ""
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv | tee -a "$out/gpu.txt"
