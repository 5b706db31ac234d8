// Reductions without shared memory or barriers: every invocation folds its own elements and writes
// one value. On CPU adapters (SwiftShader, lavapipe) a barrier suspends and resumes every
// invocation of the workgroup, which costs more than the reduction itself; GPUs use it for a split
// reduction's first pass. The host prepends what `reduce.wgsl` gets (`alias T`, `fn combine`,
// `const MEAN`, `fn load`, `const CONTIG`, `const PARTS`) and `fn load4(i) -> vec4<T>` (elements
// `i .. i+4` of the reduced tensor, `i` a multiple of 4), `const V4: bool` (contiguous, `count` a
// multiple of 4: fold four elements per step) and `const SERIAL: bool`:
// - SERIAL: invocation `o` (of 64 per workgroup) folds all of output `o`'s elements; consecutive
//   invocations are consecutive outputs.
// - otherwise, a split pass: workgroup `o·PARTS + p` folds part `p` of output `o`, invocation `t`
//   the part's elements `t, t + 64, …` (four at a time with V4), and writes its partial result
//   (undivided) to `out[(o·PARTS + p)·64 + t]` for `reduce_parts.wgsl` to combine.
// params: [out_len, count, kept_rank, red_rank, identity_bits,
//        kept_dims[kr], kept_strides[kr], red_dims[rr], red_strides[rr]]
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;

const TG: u32 = 64u;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let lin = affon_group(wid, groups);
    let out_len = params[0];
    let count = params[1];
    let width = select(1u, 4u, V4);
    var o = lin * TG + lid;
    var first = 0u;
    var hi = count;
    var step = width;
    if (!SERIAL) {
        o = lin / PARTS;
        var per = (count + PARTS - 1u) / PARTS;
        per = (per + width - 1u) / width * width;
        let lo = min(count, (lin % PARTS) * per);
        hi = min(count, lo + per);
        first = lo + lid * width;
        step = width * TG;
    }
    if (o >= out_len) {
        return;
    }
    var acc = bitcast<T>(params[4]);
    if (CONTIG) {
        let start = o * count;
        if (V4) {
            for (var r = first; r < hi; r = r + step) {
                let v = load4(start + r);
                acc = combine(acc, combine(combine(v.x, v.y), combine(v.z, v.w)));
            }
        } else {
            for (var r = first; r < hi; r = r + step) {
                acc = combine(acc, load(start + r));
            }
        }
    } else {
        let base = out_base(o);
        for (var r = first; r < hi; r = r + step) {
            acc = combine(acc, load(elem_offset(base, r)));
        }
    }
    if (SERIAL) {
        if (MEAN) {
            acc = acc / T(count);
        }
        out[o] = bitcast<u32>(acc);
    } else {
        out[lin * TG + lid] = bitcast<u32>(acc);
    }
}
