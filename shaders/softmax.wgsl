// Softmax along one axis: one workgroup of 64 threads per row (all coordinates but the axis).
// params: [rows, axis_len, inner] — element j of row r is at (r / inner) * axis_len * inner
// + (r % inner) + j * inner.
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;

var<workgroup> partial: array<f32, 64>;

fn reduce_max(lid: u32) -> f32 {
    workgroupBarrier();
    for (var s = 32u; s > 0u; s = s >> 1u) {
        if (lid < s) {
            partial[lid] = max(partial[lid], partial[lid + s]);
        }
        workgroupBarrier();
    }
    let v = partial[0];
    workgroupBarrier();
    return v;
}

fn reduce_sum(lid: u32) -> f32 {
    workgroupBarrier();
    for (var s = 32u; s > 0u; s = s >> 1u) {
        if (lid < s) {
            partial[lid] = partial[lid] + partial[lid + s];
        }
        workgroupBarrier();
    }
    let v = partial[0];
    workgroupBarrier();
    return v;
}

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let r = affon_group(wid, groups);
    let rows = params[0];
    let len = params[1];
    let inner = params[2];
    let valid = r < rows;
    let base = (r / inner) * len * inner + (r % inner);
    // Start from the row's first element, not -inf: a constant infinity is a WGSL shader-creation
    // error (Chrome's Tint rejects `bitcast<f32>(0xff800000u)`; naga accepts it).
    var m = 0.0;
    if (valid) {
        m = bitcast<f32>(a[base]);
        for (var j = lid; j < len; j = j + 64u) {
            m = max(m, bitcast<f32>(a[base + j * inner]));
        }
    }
    partial[lid] = m;
    let row_max = reduce_max(lid);
    var s = 0.0;
    if (valid) {
        for (var j = lid; j < len; j = j + 64u) {
            s = s + exp(bitcast<f32>(a[base + j * inner]) - row_max);
        }
    }
    partial[lid] = s;
    let total = reduce_sum(lid);
    if (valid) {
        for (var j = lid; j < len; j = j + 64u) {
            let idx = base + j * inner;
            out[idx] = bitcast<u32>(exp(bitcast<f32>(a[idx]) - row_max) / total);
        }
    }
}
