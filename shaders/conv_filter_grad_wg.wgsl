// The gradient of a convolution with respect to its filter (as `conv_filter_grad.wgsl`) with a
// workgroup per filter element (fy, fx, c, k): its 64 invocations split the N · OH · OW output
// positions and combine through workgroup memory, so none loops more than a 64th of them (lavapipe
// stops an invocation's loops after 65,535 iterations: `kernels::MAX_LOOP`). The host takes this form
// when N · OH · OW passes that. A pass walks the positions t0 .. t1 (params 16, 17: all of them but on
// CPU adapters past 64 · 65,535, `kernels/conv.rs`), adding to what the passes before it wrote.
// params: [len, H, W, C, OH, OW, OC (or M), FH, FW, stride_h, stride_w, dil_h, dil_w, pad_top,
// pad_left, N, t0, t1]. Bindings: out (dw), params, x, g. The host prepends `const DEPTHWISE: bool` and
// `conv_filter_grad_index.wgsl`.
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(0) @binding(1) var<storage, read> params: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read> g: array<f32>;

var<workgroup> part: array<f32, 64>;

@compute @workgroup_size(64)
fn main(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = affon_group(wid, groups);
    // the same for every lane of the workgroup: the barriers below stay in uniform control flow
    let live = i < params[0];
    var acc = 0.0;
    if (live) {
        let H = params[1]; let W = params[2]; let C = params[3];
        let OH = params[4]; let OW = params[5];
        let e = filter_element(i);
        let fy = e.fy; let fx = e.fx; let c = e.c; let o = e.o; let OC = e.oc;
        for (var t = params[16] + lid; t < params[17]; t = t + 64u) {
            let ox = t % OW;
            let oy = (t / OW) % OH;
            let n = t / (OW * OH);
            let iy = i32(oy * params[9] + fy * params[11]) - i32(params[13]);
            let ix = i32(ox * params[10] + fx * params[12]) - i32(params[14]);
            if (iy >= 0 && iy < i32(H) && ix >= 0 && ix < i32(W)) {
                acc = acc + x[((n * H + u32(iy)) * W + u32(ix)) * C + c] * g[t * OC + o];
            }
        }
    }
    part[lid] = acc;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s = s >> 1u) {
        if (lid < s) {
            part[lid] = part[lid] + part[lid + s];
        }
        workgroupBarrier();
    }
    if (live && lid == 0u) {
        var v = part[0];
        if (params[16] > 0u) {
            v = v + out[i];
        }
        out[i] = v;
    }
}
