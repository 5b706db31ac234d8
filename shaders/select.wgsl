// out[i] = cond[ic(i)] != 0 ? a[ia(i)] : b[ib(i)] with NumPy broadcasting of all three (`where`).
// params: [len, rank, out_dims[rank], a_strides[rank], cond_strides[rank], b_strides[rank]]
// (strides in elements; 0 on broadcast dims)
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;
@group(0) @binding(3) var<storage, read> cond: array<u32>;
@group(0) @binding(4) var<storage, read> b: array<u32>;

fn strided(i: u32, side: u32) -> u32 {
    let rank = params[1];
    return affon_strided(i, rank, 2u, 2u + rank * (1u + side));
}

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
    out[i] = select(b[strided(i, 2u)], a[strided(i, 0u)], cond[strided(i, 1u)] != 0u);
}
