// The gradient of a convolution with respect to its input: one thread per input element
// (n, iy, ix, c) sums g[n, oy, ox, o] · w[fy, fx, c, o] over the outputs whose window reads it
// (oy · stride + fy · dilation − pad = iy). The host prepends `const DEPTHWISE: bool`; depthwise,
// output channel c · M + m reads input channel c with filter element (fy, fx, c, m).
// A pass walks output channels (or multipliers) first .. last, filter rows and filter columns in the
// ranges of params 15–20 (all of them but on CPU adapters, where the host splits a long walk:
// `kernels/window.rs`, `window_passes`), adding to what the passes before it wrote.
// params: [len, H, W, C, OH, OW, OC (or M), FH, FW, stride_h, stride_w, dil_h, dil_w, pad_top,
// pad_left, first, last, fy0, fy1, fx0, fx1]. Bindings: out (dx), params, w, g.
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> w: array<f32>;
@group(0) @binding(3) var<storage, read> g: array<f32>;

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
    let OH = params[4]; let OW = params[5]; let K = params[6];
    let FW = params[8];
    let sh = params[9]; let sw = params[10];
    let first = params[15]; let last = params[16];
    let c = i % C;
    let pixel = i / C;
    let ix = pixel % W;
    let iy = (pixel / W) % H;
    let n = pixel / (W * H);
    var acc = 0.0;
    for (var fy = params[17]; fy < params[18]; fy = fy + 1u) {
        let ty = i32(iy + params[13]) - i32(fy * params[11]);
        if (ty < 0 || u32(ty) % sh != 0u || u32(ty) / sh >= OH) {
            continue;
        }
        let oy = u32(ty) / sh;
        for (var fx = params[19]; fx < params[20]; fx = fx + 1u) {
            let tx = i32(ix + params[14]) - i32(fx * params[12]);
            if (tx < 0 || u32(tx) % sw != 0u || u32(tx) / sw >= OW) {
                continue;
            }
            let ox = u32(tx) / sw;
            if (DEPTHWISE) {
                let OC = C * K;
                let gb = ((n * OH + oy) * OW + ox) * OC + c * K;
                let wb = (fy * FW + fx) * OC + c * K;
                for (var m = first; m < last; m = m + 1u) {
                    acc = acc + g[gb + m] * w[wb + m];
                }
            } else {
                let gb = ((n * OH + oy) * OW + ox) * K;
                let wb = ((fy * FW + fx) * C + c) * K;
                for (var o = first; o < last; o = o + 1u) {
                    acc = acc + g[gb + o] * w[wb + o];
                }
            }
        }
    }
    if (first > 0u || params[17] > 0u || params[19] > 0u) {
        acc = acc + out[i];
    }
    out[i] = acc;
}
