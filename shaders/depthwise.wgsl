// Depthwise NHWC convolution: one thread per output element. Output channel ch = c * M + m reads
// input channel c with filter [FH, FW, C, M], whose element (fy, fx, c, m) is at
// (fy * FW + fx) * C * M + ch. params: [len, H, W, C, OH, OW, M, FH, FW, stride_h, stride_w,
// dil_h, dil_w, pad_top, pad_left, 0, 1, fy0, fy1, fx0, fx1]: a pass walks the filter rows and
// columns in the ranges of params 17–20 (all of them but on CPU adapters, where the host splits a
// long walk: `kernels/window.rs`, `window_passes`), adding to what the passes before it wrote; only
// the last stores through `store`, the others write raw sums. The host prepends `alias T = f32;` and `fn store(i: u32, v: T)`
// (a plain write, or a fused epilogue: `kernels/fused.rs`).
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read> w: array<f32>;

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
    let H = params[1]; let W = params[2]; let C = params[3];
    let OH = params[4]; let OW = params[5]; let M = params[6];
    let FH = params[7]; let FW = params[8];
    let OC = C * M;
    let ch = i % OC;
    let c = ch / M;
    let pixel = i / OC;
    let ox = pixel % OW;
    let oy = (pixel / OW) % OH;
    let n = pixel / (OW * OH);
    var acc = 0.0;
    for (var fy = params[17]; fy < params[18]; fy = fy + 1u) {
        let iy = i32(oy * params[9] + fy * params[11]) - i32(params[13]);
        if (iy < 0 || iy >= i32(H)) {
            continue;
        }
        for (var fx = params[19]; fx < params[20]; fx = fx + 1u) {
            let ix = i32(ox * params[10] + fx * params[12]) - i32(params[14]);
            if (ix < 0 || ix >= i32(W)) {
                continue;
            }
            acc = acc + x[((n * H + u32(iy)) * W + u32(ix)) * C + c] * w[(fy * FW + fx) * OC + ch];
        }
    }
    if (params[17] > 0u || params[19] > 0u) {
        acc = acc + bitcast<f32>(out[i]);
    }
    if (params[18] == FH && params[20] == FW) {
        store(i, acc);
    } else {
        out[i] = bitcast<u32>(acc);
    }
}
