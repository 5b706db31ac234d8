// The first pass of `cumsum` along long lines (`ops::line_parts`): each line runs as `parts`
// workgroups of 256 threads, part `p` covering scan positions [p·per, min(len, (p + 1)·per)) (from
// the end with `reverse`); this pass writes each part's sum to `out[line·parts + p]` (scratch) for
// `cumsum_wg.wgsl` to start each part from the sum of the parts before it. The host prepends
// `alias T = ...;`. params: [lines, len, inner, exclusive, reverse, parts, per].
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
    let g = (wid.z * groups.y + wid.y) * groups.x + wid.x;
    let parts = params[5];
    let line = g / parts;
    let valid = line < params[0];
    let len = params[1];
    let inner = params[2];
    let reverse = params[4] != 0u;
    let base = (line / inner) * len * inner + line % inner;
    let lo = min((g % parts) * params[6], len);
    let hi = min(lo + params[6], len);
    var s = T(0);
    if (valid) {
        for (var k = lo + lid; k < hi; k = k + 256u) {
            s = s + bitcast<T>(a[base + select(k, len - 1u - k, reverse) * inner]);
        }
    }
    part[lid] = s;
    workgroupBarrier();
    for (var d = 128u; d > 0u; d = d >> 1u) {
        if (lid < d) {
            part[lid] = part[lid] + part[lid + d];
        }
        workgroupBarrier();
    }
    if (valid && lid == 0u) {
        out[g] = bitcast<u32>(part[0]);
    }
}
