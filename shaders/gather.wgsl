// gather: out[o, j, q] = a[o, indices[j], q] with the input viewed as [outer, axis, inner] and the
// output as [outer, n_indices, inner]; an index outside [0, axis) writes 0 and is recorded in the
// session's check words (`kernels/checks.rs`: tag, index, bound) unless an earlier dispatch's is
// there; the next readback or sync reports it. params: [len, axis, inner, n_indices, tag]
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> a: array<u32>;
@group(0) @binding(3) var<storage, read> indices: array<u32>;
@group(0) @binding(4) var<storage, read_write> check: array<atomic<u32>, 4>;

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
    let axis = params[1];
    let inner = params[2];
    let n = params[3];
    let q = i % inner;
    let j = (i / inner) % n;
    let o = i / (inner * n);
    let idx = bitcast<i32>(indices[j]);
    if (idx < 0 || u32(idx) >= axis) {
        out[i] = 0u;
        affon_check(params[4], indices[j], axis);
        return;
    }
    out[i] = a[(o * axis + u32(idx)) * inner + q];
}

