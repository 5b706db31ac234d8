// The helpers every kernel may call, prepended by the pipeline cache (`kernels/bindings.rs`) after
// `const WORKGROUP`: each function (a block that starts at its comment and ends at a blank line)
// only where the kernel's source names it.

// The flat index of this invocation's workgroup in a 3-D grid of `groups` (`kernels::grid`: any
// count of workgroups fits).
fn affon_group(wid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return (wid.z * groups.y + wid.y) * groups.x + wid.x;
}

// The flat index of this invocation over a grid of WORKGROUP-wide workgroups (1-D kernels).
fn affon_lane(wid: vec3<u32>, groups: vec3<u32>, lid: u32) -> u32 {
    return affon_group(wid, groups) * WORKGROUP + lid;
}

// The offset of flat index `i` of a shape of `rank` dims at params[dims..] read through the strides
// at params[strides..] (in elements; 0 on a broadcast dim).
fn affon_strided(i: u32, rank: u32, dims: u32, strides: u32) -> u32 {
    var rem = i;
    var off = 0u;
    for (var d = i32(rank) - 1; d >= 0; d = d - 1) {
        let k = u32(d);
        let dim = params[dims + k];
        off = off + (rem % dim) * params[strides + k];
        rem = rem / dim;
    }
    return off;
}

// e^x within 2e-7 relative over float32's range: x reduced by ln 2 (Cody–Waite, two parts), a
// minimax polynomial on [−ln 2/2, ln 2/2] (Cephes' expf), 2^k scaled back in two steps (ldexp takes
// exponents within the float's range); the built-in's overflow past 88 (+∞) and 0 below −104.
fn affon_exp(x: f32) -> f32 {
    let k = clamp(round(x * 1.442695), -150.0, 150.0);
    let r = (x - k * 0.693359375) - k * -2.12194440e-4;
    let p = ((((1.9875691500e-4 * r + 1.3981999507e-3) * r + 8.3334519073e-3) * r + 4.1665795894e-2) * r + 1.6666665459e-1) * r + 5.0000001201e-1;
    let n = i32(k);
    let h = n / 2;
    let y = ldexp(ldexp(p * r * r + r + 1.0, h), n - h);
    return select(select(y, 0.0, x < -104.0), exp(x), x > 88.0);
}

// affon_exp on four lanes.
fn affon_exp4(x: vec4<f32>) -> vec4<f32> {
    let k = clamp(round(x * 1.442695), vec4<f32>(-150.0), vec4<f32>(150.0));
    let r = (x - k * 0.693359375) - k * -2.12194440e-4;
    let p = ((((1.9875691500e-4 * r + 1.3981999507e-3) * r + 8.3334519073e-3) * r + 4.1665795894e-2) * r + 1.6666665459e-1) * r + 5.0000001201e-1;
    let n = vec4<i32>(k);
    let h = n / vec4<i32>(2);
    let y = ldexp(ldexp(p * r * r + r + 1.0, h), n - h);
    return select(select(y, vec4<f32>(0.0), x < vec4<f32>(-104.0)), exp(x), x > vec4<f32>(88.0));
}
