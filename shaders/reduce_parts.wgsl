// The second pass of a split reduction (`reduce.wgsl` with PARTS > 1): output `o` combines the
// partial results `parts[o·P .. (o+1)·P]` (one workgroup of 64 threads per output) and, for a
// mean, divides by the original element count. The host prepends `alias T`, `fn combine`,
// `const MEAN: bool`.
// params: [out_len, P, count, identity_bits]
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> parts: array<u32>;

var<workgroup> partial: array<T, 64>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let o = affon_group(wid, groups);
    let p = params[1];
    var acc = bitcast<T>(params[3]);
    if (o < params[0]) {
        for (var r = lid; r < p; r = r + 64u) {
            acc = combine(acc, bitcast<T>(parts[o * p + r]));
        }
    }
    partial[lid] = acc;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s = s >> 1u) {
        if (lid < s) {
            partial[lid] = combine(partial[lid], partial[lid + s]);
        }
        workgroupBarrier();
    }
    if (lid == 0u && o < params[0]) {
        var v = partial[0];
        if (MEAN) {
            v = v / T(params[2]);
        }
        out[o] = bitcast<u32>(v);
    }
}
