// Prepended to every matmul shader: where batch `z`'s matrices start in A and B (in elements),
// from the output's batch dims and each side's batch strides (0 where a side broadcasts) in
// params[7..] (layout in `matmul.wgsl`); and, for the tiled forms, the K range of a pass.
fn batch_offsets(z: u32) -> vec2<u32> {
    let rank = params[3];
    var rem = z;
    var offs = vec2<u32>(0u, 0u);
    for (var d = i32(rank) - 1; d >= 0; d = d - 1) {
        let k = u32(d);
        let dim = params[7u + k];
        let c = rem % dim;
        rem = rem / dim;
        offs = offs + c * vec2<u32>(params[7u + rank + k], params[7u + 2u * rank + k]);
    }
    return offs;
}

// The K range [k0, k1) this pass sums, after the batch strides: on CPU adapters a product whose loop
// would pass the adapter's budget is recorded as passes over K (`kernels/matmul.rs`), else [0, K).
fn k_range() -> vec2<u32> {
    let at = 7u + 3u * params[3];
    return vec2<u32>(params[at], params[at + 1u]);
}

// Element i's sum over this pass's K range: added to what the passes before it wrote; the last pass
// stores through `store` (a fused epilogue), the others write the raw sum.
fn put(i: u32, v: T) {
    let r = k_range();
    var x = v;
    if (r.x > 0u) {
        x = x + bitcast<T>(out[i]);
    }
    if (r.y == params[1]) {
        store(i, x);
    } else {
        out[i] = bitcast<u32>(x);
    }
}
