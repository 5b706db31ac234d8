// Max or average pooling, NHWC, one thread per output element (window); only cells inside the
// input take part (a padding cell never wins a max, and the mean divides by the cells inside). The
// host prepends `const MAX: bool` and `const ARG: bool`: with ARG (max only), each window's first
// maximum in scan order (the forward's choice, the one its gradient goes to) is written as two
// words, its input position (0xffffffff when the window has no cell inside) and its value, for
// `pool_grad.wgsl`. params: [len, H, W, C, OH, OW, FH, FW, stride_h, stride_w, pad_top, pad_left,
// row0, row1, col0, col1]: this pass walks the window's rows [row0, row1) and columns [col0, col1)
// (the whole window but on CPU adapters, `kernels/pool.rs`); a pass that does not start the window
// combines with what the passes before it wrote (a running max, a running sum), and the one that
// ends it stores the result.
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;

const NONE: u32 = 0xffffffffu;

fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

// Whether the candidate `v` at input position `p` beats `w` at `q` as a window's first maximum: a
// NaN beats any number, then the larger value, then the earlier position.
fn beats(v: f32, p: u32, w: f32, q: u32) -> bool {
    if (is_nan(v) != is_nan(w)) {
        return is_nan(v);
    }
    if (!is_nan(v) && v != w) {
        return v > w;
    }
    return p < q;
}

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
    let OH = params[4]; let OW = params[5]; let FH = params[6]; let FW = params[7];
    let c = i % C;
    let pixel = i / C;
    let ox = pixel % OW;
    let oy = (pixel / OW) % OH;
    let n = pixel / (OW * OH);
    let y0 = i32(oy * params[8]) - i32(params[10]);
    let x0 = i32(ox * params[9]) - i32(params[11]);
    // the window's cells inside the input: rows [ya, yb), columns [xa, xb) of the window
    let ya = max(0, -y0);
    let yb = min(i32(FH), i32(H) - y0);
    let xa = max(0, -x0);
    let xb = min(i32(FW), i32(W) - x0);
    let count = u32(max(yb - ya, 0)) * u32(max(xb - xa, 0));
    // a max starts below every value, at no position (an empty part changes nothing); −inf made at
    // run time (a constant infinity is an error in Tint)
    var acc = select(0.0, bitcast<f32>(0xff800000u | (params[0] & 0u)), MAX);
    var at = NONE;
    for (var fy = max(ya, i32(params[12])); fy < min(yb, i32(params[13])); fy = fy + 1) {
        let row = (n * H + u32(y0 + fy)) * W;
        for (var fx = max(xa, i32(params[14])); fx < min(xb, i32(params[15])); fx = fx + 1) {
            let k = (row + u32(x0 + fx)) * C + c;
            let v = x[k];
            if (MAX) {
                // NaN propagates: once taken it stays
                if (at == NONE || (!is_nan(acc) && (v > acc || is_nan(v)))) {
                    acc = v;
                    at = k;
                }
            } else {
                acc = acc + v;
            }
        }
    }
    if (params[12] != 0u || params[14] != 0u) {
        if (ARG) {
            let prev = bitcast<f32>(out[2u * i + 1u]);
            let pat = out[2u * i];
            if (pat != NONE && (at == NONE || !beats(acc, at, prev, pat))) {
                acc = prev;
                at = pat;
            }
        } else if (MAX) {
            // the earlier part wins ties
            let prev = bitcast<f32>(out[i]);
            if (!beats(acc, 1u, prev, 0u)) {
                acc = prev;
            }
        } else {
            acc = bitcast<f32>(out[i]) + acc;
        }
    }
    if (ARG) {
        out[2u * i] = at;
        out[2u * i + 1u] = bitcast<u32>(acc);
        return;
    }
    if (params[13] == FH && params[15] == FW) {
        if (MAX) {
            if (count == 0u) {
                acc = 0.0;
            }
        } else {
            acc = acc / f32(max(count, 1u));
        }
    }
    out[i] = bitcast<u32>(acc);
}
