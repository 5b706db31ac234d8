// out[i] = f(a[i], b[i]) four elements per thread (vec4 loads and stores), for the common
// broadcasts only: each side is the output's shape, a single element, or the output's trailing
// dims with a length that is a multiple of 4 (a row repeated). The host prepends `alias T`,
// `fn f(x: T, y: T) -> u32` (the output word), the bindings of `a` and `b` (`array<vec4<u32>>`,
// or `array<u32>` for a single element) and `fn load_a(i: u32) -> vec4<u32>` / `load_b`, and
// appends `main` (`kernels/vec4.rs`).
// params: [len / 4, len_a / 4, len_b / 4]
@group(0) @binding(0) var<storage, read_write> out: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> params: array<u32>;

fn w(x: u32, y: u32) -> u32 {
    return f(bitcast<T>(x), bitcast<T>(y));
}

fn one(i: u32) {
    let x = load_a(i);
    let y = load_b(i);
    out[i] = vec4<u32>(w(x.x, y.x), w(x.y, y.y), w(x.z, y.z), w(x.w, y.w));
}
