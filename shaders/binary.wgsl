// out[i] = f(a[ia], b[ib]) with NumPy broadcasting. The host prepends `alias T = ...;`,
// `const SAME: bool = ...;` (true when both inputs have the output's shape) and `fn f(x: T, y: T) -> T`.
// params: [len, rank, out_dims[rank], a_strides[rank], b_strides[rank]] (stride 0 on broadcast dims)
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;
@group(0) @binding(3) var<storage, read> b: array<u32>;

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = (wid.y * groups.x + wid.x) * 256u + lid;
    if (i >= params[0]) {
        return;
    }
    var ia = i;
    var ib = i;
    if (!SAME) {
        let rank = params[1];
        var rem = i;
        ia = 0u;
        ib = 0u;
        for (var d = i32(rank) - 1; d >= 0; d = d - 1) {
            let k = u32(d);
            let dim = params[2u + k];
            let c = rem % dim;
            rem = rem / dim;
            ia = ia + c * params[2u + rank + k];
            ib = ib + c * params[2u + 2u * rank + k];
        }
    }
    out[i] = bitcast<u32>(f(bitcast<T>(a[ia]), bitcast<T>(b[ib])));
}
