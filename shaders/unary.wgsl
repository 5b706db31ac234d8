// out[i] = f(a[i]). The host prepends `alias T = f32|i32|u32;` and a definition of
// `fn f(x: T) -> T` for the op.
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
    out[i] = bitcast<u32>(f(bitcast<T>(a[i])));
}
