// Depthwise NHWC convolution with channel multiplier 1 and C a multiple of 4: each thread computes 4
// consecutive channels of one output pixel, reading input and filter four channels at a time (both
// have the channels innermost), with the geometry read once. x [N, H, W, C], filter [FH, FW, C, 1],
// out [N, OH, OW, C]. params: [threads, H, W, C, OH, OW, 1, FH, FW, stride_h, stride_w, dil_h,
// dil_w, pad_top, pad_left]. The host prepends `alias T = f32;` and `fn store(i: u32, v: T)` (a
// plain write, or a fused epilogue: `kernels/fused.rs`).
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> w: array<vec4<f32>>;

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let t = ((wid.z * groups.y + wid.y) * groups.x + wid.x) * 256u + lid;
    if (t >= params[0]) {
        return;
    }
    let H = params[1]; let W = params[2]; let C4 = params[3] / 4u;
    let OH = params[4]; let OW = params[5];
    let FH = params[7]; let FW = params[8];
    let sh = params[9]; let sw = params[10]; let dh = params[11]; let dw = params[12];
    let top = i32(params[13]); let left = i32(params[14]);
    let c4 = t % C4;
    let pixel = t / C4;
    let ox = pixel % OW;
    let oy = (pixel / OW) % OH;
    let n = pixel / (OW * OH);
    var acc = vec4<f32>(0.0);
    for (var fy = 0u; fy < FH; fy = fy + 1u) {
        let iy = i32(oy * sh + fy * dh) - top;
        if (iy < 0 || iy >= i32(H)) {
            continue;
        }
        let row = (n * H + u32(iy)) * W;
        for (var fx = 0u; fx < FW; fx = fx + 1u) {
            let ix = i32(ox * sw + fx * dw) - left;
            if (ix < 0 || ix >= i32(W)) {
                continue;
            }
            acc = acc + x[(row + u32(ix)) * C4 + c4] * w[(fy * FW + fx) * C4 + c4];
        }
    }
    let i = t * 4u;
    store(i, acc.x);
    store(i + 1u, acc.y);
    store(i + 2u, acc.z);
    store(i + 3u, acc.w);
}
