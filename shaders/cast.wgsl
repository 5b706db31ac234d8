// out[i] = convert(a[i]) from one dtype to another. The host prepends
// `fn convert(w: u32) -> u32` reading the source bits and returning the target bits.
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>; // [len]
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
    out[i] = convert(a[i]);
}
