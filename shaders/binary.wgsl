// out[i] = f(a[index_a(i)], b[index_b(i)]) with NumPy broadcasting. The host prepends `alias T`,
// `fn f(x: T, y: T) -> u32` (the output word: T's bits, or 0/1 for comparisons), the op table's helpers, and `fn index_a` / `fn index_b`, each one of: `i` (same shape as the
// output), `0u` (a single element), `i % params[2|3]` (the side is the output's trailing dims, a row
// repeated), or `strided(i, side)` (the general case, a loop over dimensions).
// params: [len, rank, len_a, len_b, out_dims[rank], a_strides[rank], b_strides[rank]]
// (stride 0 on broadcast dims)
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;
@group(0) @binding(3) var<storage, read> b: array<u32>;

fn strided(i: u32, side: u32) -> u32 {
    let rank = params[1];
    return affon_strided(i, rank, 4u, 4u + rank * (1u + side));
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
    out[i] = f(bitcast<T>(a[index_a(i)]), bitcast<T>(b[index_b(i)]));
}
