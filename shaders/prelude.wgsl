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

// Records the bad index `index` (outside [0, bound)) of the dispatch tagged `tag` in the session's
// check words (`kernels/checks.rs`), which the kernel declares as `check`, unless a dispatch before
// this one did (the lanes of one dispatch race: one wins).
fn affon_check(tag: u32, index: u32, bound: u32) {
    let seen = atomicLoad(&check[0]);
    if (seen == 0u || seen == tag) {
        atomicStore(&check[0], tag);
        atomicStore(&check[1], index);
        atomicStore(&check[2], bound);
    }
}
