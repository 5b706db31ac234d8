// Prepended to `reduce.wgsl` and `reduce_flat.wgsl`: where a reduction's elements are, for
// reductions over axes that are not the trailing ones. Parameter layout in `reduce.wgsl`.
// The offset of output `o`'s first element (its kept coordinates through the kept strides).
fn out_base(o: u32) -> u32 {
    let kr = params[2];
    return affon_strided(o, kr, 5u, 5u + kr);
}

// The offset of reduced element `r` of the output starting at `base`.
fn elem_offset(base: u32, r: u32) -> u32 {
    let kr = params[2];
    let rr = params[3];
    let rd = 5u + 2u * kr;
    return base + affon_strided(r, rr, rd, rd + rr);
}
