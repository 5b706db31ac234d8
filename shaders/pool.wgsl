// Max or average pooling, NHWC, one thread per output element; only cells inside the input take
// part (a padding cell never wins a max, and the mean divides by the cells inside). The host
// prepends `const MAX: bool`. params: [len, H, W, C, OH, OW, FH, FW, stride_h, stride_w, pad_top,
// pad_left]
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;

fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
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
    let H = params[1]; let W = params[2]; let C = params[3];
    let OH = params[4]; let OW = params[5]; let FH = params[6]; let FW = params[7];
    let c = i % C;
    let pixel = i / C;
    let ox = pixel % OW;
    let oy = (pixel / OW) % OH;
    let n = pixel / (OW * OH);
    var acc = 0.0;
    var count = 0u;
    for (var fy = 0u; fy < FH; fy = fy + 1u) {
        let iy = i32(oy * params[8] + fy) - i32(params[10]);
        if (iy < 0 || iy >= i32(H)) {
            continue;
        }
        for (var fx = 0u; fx < FW; fx = fx + 1u) {
            let ix = i32(ox * params[9] + fx) - i32(params[11]);
            if (ix < 0 || ix >= i32(W)) {
                continue;
            }
            let v = x[((n * H + u32(iy)) * W + u32(ix)) * C + c];
            if (MAX) {
                // NaN propagates: once taken it stays
                if (count == 0u || (!is_nan(acc) && (v > acc || is_nan(v)))) {
                    acc = v;
                }
            } else {
                acc = acc + v;
            }
            count = count + 1u;
        }
    }
    if (MAX) {
        out[i] = acc;
    } else {
        out[i] = acc / f32(max(count, 1u));
    }
}
