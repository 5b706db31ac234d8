// Prepended to both filter-gradient shaders (`conv_filter_grad.wgsl`, a thread per filter element, and
// `conv_filter_grad_wg.wgsl`, a workgroup per element): filter element `i` as (fy, fx, c, k), and the
// output channel `o` of `oc` it pairs with. Not depthwise: o = k of OC outputs; depthwise
// (`const DEPTHWISE: bool`): k = m of the multiplier M, o = c · M + m of C · M.
struct FilterElement {
    fy: u32,
    fx: u32,
    c: u32,
    o: u32,
    oc: u32,
}

fn filter_element(i: u32) -> FilterElement {
    let C = params[3];
    let K = params[6];
    let FW = params[8];
    let k = i % K;
    let c = (i / K) % C;
    let fx = (i / (K * C)) % FW;
    let fy = i / (K * C * FW);
    if (DEPTHWISE) {
        return FilterElement(fy, fx, c, c * K + k, C * K);
    }
    return FilterElement(fy, fx, c, k, K);
}
