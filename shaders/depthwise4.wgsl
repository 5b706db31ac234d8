// Depthwise NHWC convolution with channel multiplier 1 and C a multiple of 4: each thread computes 4
// consecutive channels of PIXELS horizontally adjacent output pixels, reading input and filter four
// channels at a time (both have the channels innermost). The host (`kernels/depthwise.rs`) writes
// the body for the filter width, strides and dilations of the pipeline: per filter row, every input
// column the PIXELS pixels need is read once (`t{o}`, o = k·stride + fx·dilation for pixel k and
// filter column fx: 6 reads, not 12, for 4 pixels of a 3×3 stride-1 window) and every filter tap
// once (`f{fx}`), then PIXELS · FW multiply-adds into the accumulators `a{k}`; on CPU adapters every
// read is a per-lane gather, so fewer reads is less time. x [N, H, W, C], filter [FH, FW, C, 1],
// out [N, OH, OW, C].
// params: [threads, H, W, C, OH, OW, 1, FH, FW, stride_h, stride_w, dil_h, dil_w, pad_top,
// pad_left]. The host prepends `alias T = f32;`, `const PIXELS: u32`, `fn store(i: u32, v: T)`,
// `fn store4(i: u32, v: vec4<T>)` and `channels` / `store4c` (plain writes, or a fused epilogue
// whose per-channel leaves the PIXELS stores read once: `kernels/epilogue.rs`).
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> w: array<vec4<f32>>;

/// The input's four channels at column `ix` of the row starting at vec4 index `row`, or zeros when
/// `ix` is outside the image (a padding cell) — read without a branch (a clamped index).
fn tap(row: u32, ix: i32, W: u32, C4: u32, c4: u32) -> vec4<f32> {
    let inside = ix >= 0 && ix < i32(W);
    let v = x[(row + u32(select(0, ix, inside))) * C4 + c4];
    return select(vec4<f32>(0.0), v, inside);
}

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
    let H = params[1]; let W = params[2]; let C4 = params[3] / 4u;
    let OH = params[4]; let OW = params[5];
    let FH = params[7]; let FW = params[8];
    let sh = params[9]; let sw = params[10]; let dh = params[11];
    let top = i32(params[13]); let left = i32(params[14]);
    let runs = (OW + PIXELS - 1u) / PIXELS;
    let c4 = t % C4;
    let rest = t / C4;
    let ox = (rest % runs) * PIXELS;
    let oy = (rest / runs) % OH;
    let n = rest / (runs * OH);
    // the input column of pixel ox + k for filter column fx is base + k * stride + fx * dilation
    let base = i32(ox * sw) - left;
//{{ACCUMULATORS}}
    for (var fy = 0u; fy < FH; fy = fy + 1u) {
        let iy = i32(oy * sh + fy * dh) - top;
        if (iy < 0 || iy >= i32(H)) {
            continue;
        }
        let row = (n * H + u32(iy)) * W;
        let frow = fy * FW * C4 + c4;
//{{ROW}}
    }
    // pixels past the row's end (OW not a multiple of PIXELS) are computed from clamped reads, not
    // stored
    let i = ((n * OH + oy) * OW + ox) * C4 * 4u + c4 * 4u;
    let C = C4 * 4u;
//{{STORES}}
}
