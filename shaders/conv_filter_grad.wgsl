// The gradient of a convolution with respect to its filter: one thread per filter element
// (fy, fx, c, k) sums x[n, iy, ix, c] · g[n, oy, ox, o] over every output (n, oy, ox) that reads it
// (iy = oy · stride + fy · dilation − pad); the host prepends `const DEPTHWISE: bool` and
// `conv_filter_grad_index.wgsl` (the element's coordinates and output channel).
// params: [len, H, W, C, OH, OW, OC (or M), FH, FW, stride_h, stride_w, dil_h, dil_w, pad_top,
// pad_left, N]. Bindings: out (dw), params, x, g.
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
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
    let OH = params[4]; let OW = params[5]; let N = params[15];
    let e = filter_element(i);
    let fy = e.fy; let fx = e.fx; let c = e.c; let o = e.o; let OC = e.oc;
    var acc = 0.0;
    for (var n = 0u; n < N; n = n + 1u) {
        for (var oy = 0u; oy < OH; oy = oy + 1u) {
            let iy = i32(oy * params[9] + fy * params[11]) - i32(params[13]);
            if (iy < 0 || iy >= i32(H)) {
                continue;
            }
            for (var ox = 0u; ox < OW; ox = ox + 1u) {
                let ix = i32(ox * params[10] + fx * params[12]) - i32(params[14]);
                if (ix < 0 || ix >= i32(W)) {
                    continue;
                }
                acc = acc + x[((n * H + u32(iy)) * W + u32(ix)) * C + c] * g[((n * OH + oy) * OW + ox) * OC + o];
            }
        }
    }
    out[i] = acc;
}
