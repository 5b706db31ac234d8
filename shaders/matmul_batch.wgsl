// Prepended to every matmul shader: where batch `z`'s matrices start in A and B (in elements),
// from the output's batch dims and each side's batch strides (0 where a side broadcasts) in
// params[7..] (layout in `matmul.wgsl`).
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
