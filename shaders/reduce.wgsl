// One workgroup of WG threads per output element; each thread folds a strided slice of the reduced
// elements, then the workgroup combines in shared memory (GPUs; CPU adapters and split reductions
// use `reduce_flat.wgsl`). The host prepends `const WG: u32` (64, or 256 for long reductions),
// `const CONTIG: bool`: the reduced axes are the trailing ones, so output `o` reads elements
// `o·count .. (o+1)·count` (no per-element index arithmetic), and `const V4: bool` (contiguous,
// `count` a multiple of 4: four elements per step through `fn load4`). The host prepends
// `alias T = ...;`, `fn combine(x: T, y: T) -> T`, `const MEAN: bool`, `fn load(i: u32) -> T` and
// `fn load4(i: u32) -> vec4<T>`, which read the reduced tensor: from its buffer `a` (binding 2),
// or — a fused chain — computed from the chain's leaves (bindings 2..) with the chain's
// parameters after these.
// params: [out_len, count, kept_rank, red_rank, identity_bits,
//        kept_dims[kr], kept_strides[kr], red_dims[rr], red_strides[rr]]
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;

var<workgroup> partial: array<T, WG>;

@compute @workgroup_size(WG)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let o = affon_group(wid, groups);
    let out_len = params[0];
    let count = params[1];
    var acc = bitcast<T>(params[4]);
    if (o < out_len) {
        let base = out_base(o);
        if (CONTIG && V4) {
            let start = o * count;
            for (var r = lid * 4u; r < count; r = r + 4u * WG) {
                let v = load4(start + r);
                acc = combine(acc, combine(combine(v.x, v.y), combine(v.z, v.w)));
            }
        } else if (CONTIG) {
            let start = o * count;
            for (var r = lid; r < count; r = r + WG) {
                acc = combine(acc, load(start + r));
            }
        }
        for (var r = select(lid, count, CONTIG); r < count; r = r + WG) {
            acc = combine(acc, load(elem_offset(base, r)));
        }
    }
    partial[lid] = acc;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if (lid < s) {
            partial[lid] = combine(partial[lid], partial[lid + s]);
        }
        workgroupBarrier();
    }
    if (lid == 0u && o < out_len) {
        var v = partial[0];
        if (MEAN) {
            v = v / T(count);
        }
        out[o] = bitcast<u32>(v);
    }
}
