// Running sums along one axis: one thread per (outer, inner) line walks its `len` elements in order
// (reversed with `reverse`; each output excludes its own element with `exclusive`). The host
// prepends `alias T = ...;`. params: [lines, len, inner, exclusive, reverse]
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let line = affon_lane(wid, groups, lid);
    if (line >= params[0]) {
        return;
    }
    let len = params[1];
    let inner = params[2];
    let base = (line / inner) * len * inner + line % inner;
    var acc = T(0);
    for (var k = 0u; k < len; k = k + 1u) {
        var j = k;
        if (params[4] != 0u) {
            j = len - 1u - k;
        }
        let at = base + j * inner;
        let x = bitcast<T>(a[at]);
        if (params[3] != 0u) {
            out[at] = bitcast<u32>(acc);
            acc = acc + x;
        } else {
            acc = acc + x;
            out[at] = bitcast<u32>(acc);
        }
    }
}
