//! Convolutions whose one invocation would walk past lavapipe's loop budget (65,535 iterations,
//! shared by all of a shader's loops, each loop's exit counted too) through the filter's taps rather
//! than through its channels: a dense 160×160 filter, a depthwise 300×300 one and a depthwise filter
//! 60,000 rows tall (forward, against float64); the input gradients of a dense and a depthwise
//! filter 11,000 taps wide with four output channels a tap; and a 3×3 filter's gradient over
//! 4,488,008 output positions (a 64th of them per invocation is still past the budget). Inputs are
//! small integers, so every sum is exact in float32 and compared exactly.

use affon::ops::{Pad, Pair};
use affon::program::NodeId;
use affon::{DType, Program, Session};

use super::composite::read;

/// `x` `[1, H, W, C]`, filter `[FH, FW, C, M]`, VALID, stride and dilation 1: the convolution in
/// float64 (depthwise: output channel `c·M + m` reads input channel `c`; dense: M output channels
/// over all C).
fn reference(
    x: &[f32],
    [h, w, c]: [usize; 3],
    f: &[f32],
    [fh, fw, m]: [usize; 3],
    depthwise: bool,
) -> Vec<f64> {
    let (oh, ow) = (h - fh + 1, w - fw + 1);
    let oc = if depthwise { c * m } else { m };
    let mut out = vec![0f64; oh * ow * oc];
    for oy in 0..oh {
        for ox in 0..ow {
            for o in 0..oc {
                let mut acc = 0f64;
                for fy in 0..fh {
                    for fx in 0..fw {
                        let xb = ((oy + fy) * w + ox + fx) * c;
                        let fb = (fy * fw + fx) * c;
                        if depthwise {
                            acc += x[xb + o / m] as f64 * f[(fb + o / m) * m + o % m] as f64;
                        } else {
                            acc += (0..c)
                                .map(|ci| x[xb + ci] as f64 * f[(fb + ci) * m + o] as f64)
                                .sum::<f64>();
                        }
                    }
                }
                out[(oy * ow + ox) * oc + o] = acc;
            }
        }
    }
    out
}

/// A VALID convolution (stride and dilation 1) of `x` by `f`, depthwise or dense.
fn valid_conv(p: &mut Program, x: NodeId, f: NodeId, depthwise: bool) -> NodeId {
    if depthwise {
        p.depthwise_conv2d(x, f, Pair::ONE, Pad::VALID, Pair::ONE)
    } else {
        p.conv2d(x, f, Pair::ONE, Pad::VALID, Pair::ONE)
    }
    .unwrap()
}

/// The gradient of `sum(conv2d(x, f))` with respect to the filter, for `x` of ones shaped
/// `[n, h, w, 1]` and an `fh × fw` filter of ones (one channel in, one out): each tap's count of
/// the output positions whose window reads the input.
pub async fn ones_filter_gradient(
    s: &Session,
    [n, h, w]: [usize; 3],
    (fh, fw): (usize, usize),
    pad: Pad,
) -> Vec<f32> {
    let mut p = Program::new("filter gradient of ones");
    let xi = p
        .input("x", DType::Float32, &[n as i64, h as i64, w as i64, 1])
        .unwrap();
    let fi = p
        .input("f", DType::Float32, &[fh as i64, fw as i64, 1, 1])
        .unwrap();
    let y = p.conv2d(xi, fi, Pair::ONE, pad, Pair::ONE).unwrap();
    let l = p.sum(y, &[], false).unwrap();
    let g = p.grad(l, &[fi]).unwrap();
    p.output("gf", g[0]).unwrap();
    let xt = s.tensor(&vec![1f32; n * h * w], &[n, h, w, 1]).unwrap();
    let ft = s.tensor(&vec![1f32; fh * fw], &[fh, fw, 1, 1]).unwrap();
    let outs = s
        .compile(&p)
        .unwrap()
        .run(&[("x", &xt), ("f", &ft)], None)
        .unwrap();
    read(&outs[0].1).await
}

/// Runs one convolution (VALID, stride 1) of `x` by `f` in a Program and compares it exactly.
async fn forward(s: &Session, (x, xs): (&[f32], [usize; 3]), (f, fs): (&[f32], [usize; 3]), depthwise: bool) {
    let [h, w, c] = xs;
    let [fh, fw, m] = fs;
    let mut p = Program::new("big filter");
    let xi = p
        .input("x", DType::Float32, &[1, h as i64, w as i64, c as i64])
        .unwrap();
    let fi = p
        .input("f", DType::Float32, &[fh as i64, fw as i64, c as i64, m as i64])
        .unwrap();
    let y = valid_conv(&mut p, xi, fi, depthwise);
    p.output("y", y).unwrap();
    let xt = s.tensor(x, &[1, h, w, c]).unwrap();
    let ft = s.tensor(f, &[fh, fw, c, m]).unwrap();
    let outs = s
        .compile(&p)
        .unwrap()
        .run(&[("x", &xt), ("f", &ft)], None)
        .unwrap();
    let want: Vec<f32> = reference(x, xs, f, fs, depthwise)
        .iter()
        .map(|&v| v as f32)
        .collect();
    assert_eq!(
        read(&outs[0].1).await,
        want,
        "{} convolution, {fh}×{fw} filter over {h}×{w}×{c}",
        if depthwise { "depthwise" } else { "dense" }
    );
}

/// Small integers from an index: `(i·a) mod b − off`.
fn ints(n: usize, a: usize, b: usize, off: f32) -> Vec<f32> {
    (0..n).map(|i| ((i * a) % b) as f32 - off).collect()
}

/// The forward passes over big filters (one thread walks every tap of its window).
pub async fn big_filters_match(s: &Session) {
    // dense: 25,600 taps, 4 output channels (a thread's quad)
    let (xs, fs) = ([165, 165, 1], [160, 160, 4]);
    let x = ints(165 * 165, 7, 5, 2.0);
    let f = ints(160 * 160 * 4, 3, 7, 3.0);
    forward(s, (&x, xs), (&f, fs), false).await;
    // depthwise: 90,000 taps a thread (its looping form: the window is too wide to write out)
    let (xs, fs) = ([304, 304, 4], [300, 300, 1]);
    let x = ints(304 * 304 * 4, 7, 5, 2.0);
    let f = ints(300 * 300 * 4, 3, 7, 3.0);
    forward(s, (&x, xs), (&f, fs), true).await;
    // depthwise, 60,000 rows tall and one wide (past half the budget the written-out vec4 form
    // gives way to the looping one, in passes of rows)
    let (xs, fs) = ([60_000, 1, 4], [60_000, 1, 1]);
    let x = ints(60_000 * 4, 7, 5, 2.0);
    let f = ints(60_000 * 4, 3, 7, 3.0);
    forward(s, (&x, xs), (&f, fs), true).await;
}

/// The input gradients of `sum(conv)` for a dense and a depthwise filter `[1, 11,000, 1, 4]` over a
/// row of 22,000 ones: the element in the middle sits under every tap, each walking 4 channels.
/// With g all ones, `dx[i]` is the sum of the filter's values over the taps whose output exists,
/// computed from prefix sums; the forward outputs are all the filter's total.
pub async fn big_filter_gradients_match(s: &Session) {
    let (w, fw, m) = (22_000usize, 11_000usize, 4usize);
    let ow = w - fw + 1;
    let f: Vec<f32> = (0..fw * m).map(|i| (1 + (i * 3) % 7) as f32).collect();
    // a tap's values summed over its 4 channels, and their prefix sums
    let tap: Vec<f64> = (0..fw)
        .map(|t| (0..m).map(|k| f[t * m + k] as f64).sum())
        .collect();
    let mut prefix = vec![0f64; fw + 1];
    for t in 0..fw {
        prefix[t + 1] = prefix[t] + tap[t];
    }
    let want_dx: Vec<f32> = (0..w)
        .map(|i| (prefix[i.min(fw - 1) + 1] - prefix[(i + 1).saturating_sub(ow)]) as f32)
        .collect();
    let totals: Vec<f32> = (0..m)
        .map(|k| (0..fw).map(|t| f[t * m + k] as f64).sum::<f64>() as f32)
        .collect();
    for depthwise in [false, true] {
        let mut p = Program::new("big filter gradient");
        let xi = p.input("x", DType::Float32, &[1, 1, w as i64, 1]).unwrap();
        let fi = p
            .input("f", DType::Float32, &[1, fw as i64, 1, m as i64])
            .unwrap();
        let y = valid_conv(&mut p, xi, fi, depthwise);
        p.output("y", y).unwrap();
        let l = p.sum(y, &[], false).unwrap();
        let g = p.grad(l, &[xi]).unwrap();
        p.output("gx", g[0]).unwrap();
        let xt = s.tensor(&vec![1f32; w], &[1, 1, w, 1]).unwrap();
        let ft = s.tensor(&f, &[1, fw, 1, m]).unwrap();
        let outs = s
            .compile(&p)
            .unwrap()
            .run(&[("x", &xt), ("f", &ft)], None)
            .unwrap();
        let what = if depthwise { "depthwise" } else { "dense" };
        let y = read(&outs[0].1).await;
        assert_eq!(y, totals.repeat(ow), "{what} 1×{fw} filter over {w}: forward");
        let gx = read(&outs[1].1).await;
        assert_eq!(gx, want_dx, "{what} 1×{fw} filter over {w}: input gradient");
    }
}

/// A 3×3 filter's gradient over 2 images of 1,500×1,500 (VALID: 4,488,008 output positions, past
/// 64 · 65,535): with ones, every tap's gradient is the number of positions.
pub async fn many_positions_filter_gradient_matches(s: &Session) {
    let (n, h) = (2usize, 1500usize);
    let positions = (n * (h - 2) * (h - 2)) as f32;
    assert_eq!(
        ones_filter_gradient(s, [n, h, h], (3, 3), Pad::VALID).await,
        vec![positions; 9],
        "filter gradient over {n}×{}×{} positions",
        h - 2,
        h - 2
    );
}
