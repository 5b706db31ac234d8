// Prepended to `reduce.wgsl` and `reduce_flat.wgsl`: where a reduction's elements are, for
// reductions over axes that are not the trailing ones. Parameter layout in `reduce.wgsl`.
// The offset of output `o`'s first element (its kept coordinates through the kept strides).
fn out_base(o: u32) -> u32 {
    let kr = params[2];
    var rem = o;
    var base = 0u;
    for (var d = i32(kr) - 1; d >= 0; d = d - 1) {
        let k = u32(d);
        let dim = params[5u + k];
        base = base + (rem % dim) * params[5u + kr + k];
        rem = rem / dim;
    }
    return base;
}

// The offset of reduced element `r` of the output starting at `base`.
fn elem_offset(base: u32, r: u32) -> u32 {
    let kr = params[2];
    let rr = params[3];
    let rd = 5u + 2u * kr;
    var rrem = r;
    var off = base;
    for (var d = i32(rr) - 1; d >= 0; d = d - 1) {
        let k = u32(d);
        let dim = params[rd + k];
        off = off + (rrem % dim) * params[rd + rr + k];
        rrem = rrem / dim;
    }
    return off;
}
