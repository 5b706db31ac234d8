// A window onto the input (slice, pad, tile): output coordinate c reads input coordinate
// c + start per dimension — modulo the input's size when tiling; outside the input it is the pad
// value. params: [len, rank, value_word, tile, out_dims[r], in_dims[r], in_strides[r], start[r] (i32)]
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
    let tile = params[3] != 0u;
    var rem = i;
    var src = 0u;
    var inside = true;
    for (var d = i32(rank) - 1; d >= 0; d = d - 1) {
        let k = u32(d);
        let dim = params[4u + k];
        let in_dim = i32(params[4u + rank + k]);
        var at = i32(rem % dim) + bitcast<i32>(params[4u + 3u * rank + k]);
        rem = rem / dim;
        if (tile) {
            at = at % in_dim;
        }
        if (at < 0 || at >= in_dim) {
            inside = false;
        } else {
            src = src + u32(at) * params[4u + 2u * rank + k];
        }
    }
    out[i] = select(params[2], a[src], inside);
}
