// Running sums along one axis for long lines: one workgroup of 256 threads per (outer, inner) line.
// Thread `lid` takes a contiguous run of ceil(len / 256) elements in scan order (reversed with
// `reverse`): it sums its run, the workgroup scans the 256 run sums (Hillis–Steele, in workgroup
// memory), then each thread walks its run again from the sum of the runs before it (each output
// leaving its own element out with `exclusive`). A thread's loops take 2·len/256 iterations, so
// lines past `kernels::MAX_LOOP` run here on CPU adapters (lavapipe stops an invocation's loops after
// 65,535 iterations: `cumsum.wgsl`'s one thread per line would stop short), and long lines on GPUs
// are walked by 256 threads instead of one. The host prepends `alias T = ...;`.
// params: [lines, len, inner, exclusive, reverse]. Workgroups: one per line (`grid`).
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;

var<workgroup> part: array<T, 256>;

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let line = (wid.z * groups.y + wid.y) * groups.x + wid.x;
    // no early return: every invocation reaches the barriers
    let valid = line < params[0];
    let len = params[1];
    let inner = params[2];
    let exclusive = params[3] != 0u;
    let reverse = params[4] != 0u;
    let base = (line / inner) * len * inner + line % inner;
    let per = (len + 255u) / 256u;
    let start = min(lid * per, len);
    let end = min(start + per, len);
    var s = T(0);
    if (valid) {
        for (var k = start; k < end; k = k + 1u) {
            s = s + bitcast<T>(a[base + select(k, len - 1u - k, reverse) * inner]);
        }
    }
    part[lid] = s;
    workgroupBarrier();
    // inclusive scan of the run sums
    for (var d = 1u; d < 256u; d = d << 1u) {
        var v = T(0);
        if (lid >= d) {
            v = part[lid - d];
        }
        workgroupBarrier();
        part[lid] = part[lid] + v;
        workgroupBarrier();
    }
    var acc = T(0);
    if (lid > 0u) {
        acc = part[lid - 1u];
    }
    if (valid) {
        for (var k = start; k < end; k = k + 1u) {
            let at = base + select(k, len - 1u - k, reverse) * inner;
            let x = bitcast<T>(a[at]);
            if (exclusive) {
                out[at] = bitcast<u32>(acc);
                acc = acc + x;
            } else {
                acc = acc + x;
                out[at] = bitcast<u32>(acc);
            }
        }
    }
}
