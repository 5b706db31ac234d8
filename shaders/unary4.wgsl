// out[i] = f(a[i]), four elements per thread (vec4 loads and stores: a quarter of the threads and
// of the memory transactions). Used when the length is a multiple of 4. The host prepends
// `alias T = f32|i32|u32;` and `fn f(x: T) -> T`, and appends `main` (`kernels/vec4.rs`: one
// vec4 a thread, or four on a CPU adapter).
@group(0) @binding(0) var<storage, read_write> out: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> params: array<u32>; // [len / 4]
@group(0) @binding(2) var<storage, read> a: array<vec4<u32>>;

fn w(x: u32) -> u32 {
    return bitcast<u32>(f(bitcast<T>(x)));
}

fn one(i: u32) {
    let v = a[i];
    out[i] = vec4<u32>(w(v.x), w(v.y), w(v.z), w(v.w));
}
