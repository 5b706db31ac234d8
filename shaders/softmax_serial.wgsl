// Softmax along one axis without shared memory (CPU adapters; see `reduce_flat.wgsl`): invocation
// `r` (64 per workgroup) does row `r` alone — its max, the sum of exponentials, then the outputs.
// params: [rows, axis_len, inner] — element j of row r is at (r / inner) * axis_len * inner
// + (r % inner) + j * inner, so with inner > 1 consecutive invocations read consecutive words.
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let r = affon_group(wid, groups) * 64u + lid;
    let rows = params[0];
    let len = params[1];
    let inner = params[2];
    if (r >= rows) {
        return;
    }
    let base = (r / inner) * len * inner + (r % inner);
    // from the row's first element, not -inf (a constant infinity is a shader-creation error in Tint)
    var m = bitcast<f32>(a[base]);
    for (var j = 1u; j < len; j = j + 1u) {
        m = max(m, bitcast<f32>(a[base + j * inner]));
    }
    var s = 0.0;
    for (var j = 0u; j < len; j = j + 1u) {
        s = s + exp(bitcast<f32>(a[base + j * inner]) - m);
    }
    for (var j = 0u; j < len; j = j + 1u) {
        let idx = base + j * inner;
        out[idx] = bitcast<u32>(exp(bitcast<f32>(a[idx]) - m) / s);
    }
}
