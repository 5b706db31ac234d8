// out[i] = f(a[i]), four elements per thread (vec4 loads and stores: a quarter of the threads and
// of the memory transactions). Used when the length is a multiple of 4. The host prepends
// `alias T = f32|i32|u32;` and `fn f(x: T) -> T`.
@group(0) @binding(0) var<storage, read_write> out: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> params: array<u32>; // [len / 4]
@group(0) @binding(2) var<storage, read> a: array<vec4<u32>>;

fn w(x: u32) -> u32 {
    return bitcast<u32>(f(bitcast<T>(x)));
}

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = ((wid.z * groups.y + wid.y) * groups.x + wid.x) * 256u + lid;
    if (i >= params[0]) {
        return;
    }
    let v = a[i];
    out[i] = vec4<u32>(w(v.x), w(v.y), w(v.z), w(v.w));
}
