// The gradient of max or average pooling with respect to its input: one thread per input element
// (n, iy, ix, c) visits the windows that contain it (only those: their range is computed, so a
// thread's loops are as long as a window's overlap, however large the image). Max (`const MAX:
// bool`): it receives a window's g when it is that window's first maximum (the forward kernel's
// choice) — recomputed here over the window's cells inside the input, or, with `const ARG: bool`,
// read from the two words a window that `pool.wgsl` wrote (position, value) when that walk would be
// long (`ops::pool_grad_argmax`); average: g divided by the number of those cells, the area of the
// window's intersection with the input (no walk).
// params: [len, H, W, C, OH, OW, FH, FW, stride_h, stride_w, pad_top, pad_left, oy0, oy1, ox0,
// ox1]: this pass visits the windows in rows [oy0, oy1) and columns [ox0, ox1) of the output (all
// of them but on CPU adapters, `kernels/pool.rs`); a pass after the first adds to what it finds.
// Bindings: out (dx), params, the words of x (or, ARG, the windows' first maxima), g.
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> xw: array<u32>;
@group(0) @binding(3) var<storage, read> g: array<f32>;

fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

// The first window (of stride `s`, `f` wide) whose span contains position `p` (padding included):
// ceil((p + 1 − f) / s), 0 when that is negative.
fn first_window(p: u32, f: u32, s: u32) -> u32 {
    if (p + 1u <= f) {
        return 0u;
    }
    return (p + 1u - f + s - 1u) / s;
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
    let sh = params[8]; let sw = params[9]; let pt = params[10]; let pl = params[11];
    let c = i % C;
    let pixel = i / C;
    let ix = pixel % W;
    let iy = (pixel / W) % H;
    let n = pixel / (W * H);
    // only the windows that contain (iy, ix): oy·sh − pt ≤ iy < oy·sh − pt + FH, that is
    // oy in [ceil((iy + pt + 1 − FH) / sh), floor((iy + pt) / sh)] within [0, OH); the same across
    let oy_lo = max(first_window(iy + pt, FH, sh), params[12]);
    let oy_hi = min(min(OH, (iy + pt) / sh + 1u), params[13]);
    let ox_lo = max(first_window(ix + pl, FW, sw), params[14]);
    let ox_hi = min(min(OW, (ix + pl) / sw + 1u), params[15]);
    var acc = 0.0;
    if (params[12] != 0u || params[14] != 0u) {
        acc = out[i];
    }
    for (var oy = oy_lo; oy < oy_hi; oy = oy + 1u) {
        let y0 = i32(oy * sh) - i32(pt);
        for (var ox = ox_lo; ox < ox_hi; ox = ox + 1u) {
            let x0 = i32(ox * sw) - i32(pl);
            let o = ((n * OH + oy) * OW + ox) * C + c;
            let gv = g[o];
            if (ARG) {
                if (xw[2u * o] == i) {
                    acc = acc + gv;
                }
                continue;
            }
            // the window's cells inside the input: rows [ya, yb), columns [xa, xb)
            let ya = max(y0, 0);
            let yb = min(y0 + i32(FH), i32(H));
            let xa = max(x0, 0);
            let xb = min(x0 + i32(FW), i32(W));
            if (!MAX) {
                // average: g shared by those cells
                acc = acc + gv / f32(max((yb - ya) * (xb - xa), 1));
                continue;
            }
            // max: g to the window's first maximum, in the forward kernel's order
            var best = 0.0;
            var by = 0u;
            var bx = 0u;
            var first = true;
            for (var yy = ya; yy < yb; yy = yy + 1) {
                for (var xx = xa; xx < xb; xx = xx + 1) {
                    let v = bitcast<f32>(xw[((n * H + u32(yy)) * W + u32(xx)) * C + c]);
                    if (first || (!is_nan(best) && (v > best || is_nan(v)))) {
                        best = v;
                        by = u32(yy);
                        bx = u32(xx);
                        first = false;
                    }
                }
            }
            if (by == iy && bx == ix) {
                acc = acc + gv;
            }
        }
    }
    out[i] = acc;
}
