// A strided copy: out[i] = a[offset(i)], where offset maps the output coordinate through
// per-dimension source strides. Used by transpose.
// params: [len, rank, out_dims[rank], src_strides[rank]]
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = affon_lane(wid, groups, lid);
    if (i >= params[0]) {
        return;
    }
    let rank = params[1];
    out[i] = a[affon_strided(i, rank, 2u, 2u + rank)];
}
