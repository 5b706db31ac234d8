// Direct NHWC convolution: each thread computes 4 consecutive output channels of one output pixel,
// reading each input value once for the 4 (the filter's output channels are contiguous).
// x [N, H, W, C], filter [FH, FW, C, OC], out [N, OH, OW, OC]. The host prepends `alias T = f32;` and
// `fn store(i: u32, v: T)` (a plain write, or a fused epilogue: `kernels/fused.rs`).
// A pass walks input channels first .. last, filter rows and filter columns in the ranges of params
// 15–20 (all of them but on CPU adapters, where the host splits a long walk: `kernels/window.rs`,
// `window_passes`): a pass after the first adds what the passes before it wrote; only the last (every
// range at its end) stores through `store`, the others write raw sums.
// params: [threads, H, W, C, OH, OW, OC, FH, FW, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left,
// first, last, fy0, fy1, fx0, fx1]
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
    let t = affon_lane(wid, groups, lid);
    if (t >= params[0]) {
        return;
    }
    let H = params[1]; let W = params[2]; let C = params[3];
    let OH = params[4]; let OW = params[5]; let OC = params[6];
    let FH = params[7]; let FW = params[8];
    let first = params[15]; let last = params[16];
    let opening = first == 0u && params[17] == 0u && params[19] == 0u;
    let closing = last == C && params[18] == FH && params[20] == FW;
    let quads = (OC + 3u) / 4u;
    let oc0 = (t % quads) * 4u;
    let pixel = t / quads;
    let ox = pixel % OW;
    let oy = (pixel / OW) % OH;
    let n = pixel / (OW * OH);
    let lanes = min(4u, OC - oc0);
    var acc = vec4<f32>(0.0);
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
            let xb = ((n * H + u32(iy)) * W + u32(ix)) * C;
            var wb = ((fy * FW + fx) * C + first) * OC + oc0;
            if (lanes == 4u) {
                for (var c = first; c < last; c = c + 1u) {
                    let v = x[xb + c];
                    acc = acc + v * vec4<f32>(w[wb], w[wb + 1u], w[wb + 2u], w[wb + 3u]);
                    wb = wb + OC;
                }
            } else {
                for (var c = first; c < last; c = c + 1u) {
                    let v = x[xb + c];
                    for (var l = 0u; l < lanes; l = l + 1u) {
                        acc[l] = acc[l] + v * w[wb + l];
                    }
                    wb = wb + OC;
                }
            }
        }
    }
    let ob = pixel * OC + oc0;
    for (var l = 0u; l < lanes; l = l + 1u) {
        var v = acc[l];
        if (!opening) {
            v = v + bitcast<f32>(out[ob + l]);
        }
        if (closing) {
            store(ob + l, v);
        } else {
            out[ob + l] = bitcast<u32>(v);
        }
    }
}
