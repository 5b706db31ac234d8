// The second pass of a split reduction on CPU adapters (`reduce_parts.wgsl` on GPUs): invocation `o`
// folds output `o`'s partial results `parts[o·P .. (o+1)·P]` four at a time (P is parts × 64, a
// multiple of 4, at most 16,384: 4,096 steps, inside lavapipe's loop budget), with no shared memory
// and no barrier — on CPU adapters a barrier suspends and resumes every invocation of the
// workgroup, and the tree of `reduce_parts.wgsl` cost ~1 ms more per reduction end to end on
// SwiftShader than this loop (`node scripts/bench-kernel-study.mjs a9`). For a mean, divides by
// the original element count. The host prepends `alias T`, `fn combine`, `const MEAN: bool`.
// params: [out_len, P, count, identity_bits]
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> parts: array<vec4<u32>>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let o = affon_group(wid, groups) * 64u + lid;
    if (o >= params[0]) {
        return;
    }
    let p = params[1] / 4u;
    var acc = bitcast<T>(params[3]);
    for (var r = o * p; r < (o + 1u) * p; r = r + 1u) {
        let v = bitcast<vec4<T>>(parts[r]);
        acc = combine(acc, combine(combine(v.x, v.y), combine(v.z, v.w)));
    }
    if (MEAN) {
        acc = acc / T(params[2]);
    }
    out[o] = bitcast<u32>(acc);
}
