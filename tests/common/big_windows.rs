//! Pooling windows past lavapipe's loop budget (65,535 iterations an invocation, shared by all of a
//! shader's loops): a 256×256 global pool and overlapping 260×260 windows, forward and gradient,
//! against a float64 reference written here. The forward walks a window in passes of rows (and
//! columns) on CPU adapters; `maxPool`'s gradient takes each window's first maximum from a pass of
//! its own (scratch) instead of walking the window from every element. Inputs are small integers, so
//! every sum is exact in float32 and the means (over 65,536 or 67,600 cells) are compared to within
//! one rounding.

use affon::ops::{Pad, Pair};
use affon::{DType, Program, Session};

use super::composite::read;

/// `[n, h, w, c]` NHWC input, `(fh, fw)` window, `(sh, sw)` strides, no padding.
struct Case {
    shape: [usize; 4],
    window: (usize, usize),
    strides: (usize, usize),
}

/// Windows (position of each output) and, per window, its cells' flat input indices in scan order.
fn windows(k: &Case) -> Vec<Vec<usize>> {
    let [n, h, w, c] = k.shape;
    let (oh, ow) = (
        (h - k.window.0) / k.strides.0 + 1,
        (w - k.window.1) / k.strides.1 + 1,
    );
    let mut out = Vec::new();
    for b in 0..n {
        for oy in 0..oh {
            for ox in 0..ow {
                for ch in 0..c {
                    let cells = (0..k.window.0)
                        .flat_map(|fy| (0..k.window.1).map(move |fx| (fy, fx)))
                        .map(|(fy, fx)| {
                            ((b * h + oy * k.strides.0 + fy) * w + ox * k.strides.1 + fx) * c + ch
                        })
                        .collect();
                    out.push(cells);
                }
            }
        }
    }
    out
}

/// The mean and the max of each window, the gradients of `sum(avgPool)` and `sum(maxPool)`
/// (each window's 1 to its first maximum), in float64.
fn reference(k: &Case, x: &[f32]) -> [Vec<f64>; 4] {
    let wins = windows(k);
    let mut gavg = vec![0f64; x.len()];
    let mut gmax = vec![0f64; x.len()];
    let (mut mean, mut max) = (Vec::new(), Vec::new());
    for cells in &wins {
        let sum: f64 = cells.iter().map(|&i| x[i] as f64).sum();
        mean.push(sum / cells.len() as f64);
        let first = cells
            .iter()
            .copied()
            .fold(cells[0], |b, i| if x[i] > x[b] { i } else { b });
        max.push(x[first] as f64);
        gmax[first] += 1.0;
        for &i in cells {
            gavg[i] += 1.0 / cells.len() as f64;
        }
    }
    [mean, max, gavg, gmax]
}

async fn check(s: &Session, k: &Case, x: &[f32]) {
    let dims: Vec<i64> = k.shape.iter().map(|&d| d as i64).collect();
    let xt = s.tensor(x, &k.shape).unwrap();
    let want = reference(k, x);
    for max in [false, true] {
        let mut p = Program::new("big windows");
        let xi = p.input("x", DType::Float32, &dims).unwrap();
        let (win, st) = (Pair(k.window.0, k.window.1), Pair(k.strides.0, k.strides.1));
        let y = if max {
            p.max_pool(xi, win, st, Pad::VALID)
        } else {
            p.avg_pool(xi, win, st, Pad::VALID)
        }
        .unwrap();
        p.output("y", y).unwrap();
        let l = p.sum(y, &[], false).unwrap();
        let g = p.grad(l, &[xi]).unwrap();
        p.output("gx", g[0]).unwrap();
        let outs = s.compile(&p).unwrap().run(&[("x", &xt)], None).unwrap();
        let what = if max { "maxPool" } else { "avgPool" };
        let (y, gx) = (read(&outs[0].1).await, read(&outs[1].1).await);
        let (wy, wg) = if max {
            (&want[1], &want[3])
        } else {
            (&want[0], &want[2])
        };
        assert_eq!(y.len(), wy.len(), "{what} {:?}: outputs", k.window);
        for (i, (&g, &w)) in y.iter().zip(wy).enumerate() {
            assert!(
                (g as f64 - w).abs() <= w.abs() * 1e-7,
                "{what} {:?}: window {i}: {g} against {w}",
                k.window
            );
        }
        assert_eq!(gx.len(), wg.len(), "{what} {:?}: input gradient", k.window);
        for (i, (&g, &w)) in gx.iter().zip(wg).enumerate() {
            assert!(
                (g as f64 - w).abs() <= w.abs() * 1e-6,
                "{what} {:?} gradient: cell {i}: {g} against {w}",
                k.window
            );
        }
    }
}

/// A 256×256 global pool over two images of three channels, whose maxima sit past the 65,535th
/// cell (a unique one at the last cell; a tie whose first is at row 200), and 260×260 windows 20
/// apart over 300×300 (nine windows overlapping, each cell in up to nine of them).
pub async fn big_windows_match(s: &Session) {
    let k = Case {
        shape: [2, 256, 256, 3],
        window: (256, 256),
        strides: (1, 1),
    };
    let [_, h, w, c] = k.shape;
    let mut x: Vec<f32> = (0..k.shape.iter().product())
        .map(|i| ((i * 7) % 5) as f32)
        .collect();
    // image 0, channel 0: the maximum at the last cell alone
    x[((h - 1) * w + w - 1) * c] = 10.0;
    // image 1, channel 2: ones, and 7 at (200, 10) and (250, 3): the first is the maximum
    for i in 0..h * w {
        x[(h * w + i) * c + 2] = 1.0;
    }
    x[(h * w + 200 * w + 10) * c + 2] = 7.0;
    x[(h * w + 250 * w + 3) * c + 2] = 7.0;
    check(s, &k, &x).await;
    let k = Case {
        shape: [1, 300, 300, 1],
        window: (260, 260),
        strides: (20, 20),
    };
    let x: Vec<f32> = (0..300 * 300)
        .map(|i| ((i * 13) % 11) as f32 + (i == 299 * 300 + 299) as u8 as f32 * 20.0)
        .collect();
    check(s, &k, &x).await;
}

/// The first maxima of a large `maxPool`'s gradient live in planned scratch, two words a window:
/// `memoryPlan()` counts them (its peak is the `avgPool` program's, which has none, plus 48 bytes
/// for the 6 windows of a global pool over [2, 256, 256, 3]), the measured peak matches the plan,
/// and nothing of them is left when the run returns.
pub async fn big_window_scratch_is_planned(s: &Session) {
    let shape = [2usize, 256, 256, 3];
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let x: Vec<f32> = (0..shape.iter().product())
        .map(|i| ((i * 7) % 5) as f32)
        .collect();
    let xt = s.tensor(&x, &shape).unwrap();
    let mut peaks = Vec::new();
    for max in [false, true] {
        let mut p = Program::new("global pool gradient");
        let xi = p.input("x", DType::Float32, &dims).unwrap();
        let (win, one) = (Pair(256, 256), Pair::ONE);
        let y = if max {
            p.max_pool(xi, win, one, Pad::VALID)
        } else {
            p.avg_pool(xi, win, one, Pad::VALID)
        }
        .unwrap();
        let l = p.sum(y, &[], false).unwrap();
        let g = p.grad(l, &[xi]).unwrap();
        p.output("gx", g[0]).unwrap();
        let exe = s.compile(&p).unwrap();
        let plan = exe.memory_plan(&std::collections::HashMap::new()).unwrap();
        let before = s.stats().live_bytes;
        affon::telemetry::reset_peak();
        let out = exe.run(&[("x", &xt)], None).unwrap().remove(0).1;
        let st = s.stats();
        assert_eq!(
            st.peak_bytes,
            before + plan.peak_bytes,
            "max {max}: telemetry confirms the plan"
        );
        assert_eq!(
            st.live_bytes,
            before + plan.output_bytes,
            "max {max}: only the output is left"
        );
        drop(out);
        peaks.push(plan.peak_bytes);
    }
    assert_eq!(peaks[1], peaks[0] + 48, "the maxima of 6 windows, two words each");
}

/// A `poolGrad` node read from JSON whose `g` is not its pool's output (here `x` itself, 4×4 where
/// the 2×2/2 pool gives 2×2) is refused with SHAPE_MISMATCH: its kernel, and the scratch planned
/// for it, count the windows from `x`'s shape.
pub fn pool_grad_checks_its_gradient() {
    let json = r#"{"assign":[],"format":"affon.program/1","name":"g","nodes":[{"dtype":"float32","name":"x","op":"input","shape":[1,4,4,1]},{"args":[0,0],"filterSize":[2,2],"max":true,"op":"poolGrad","pad":"valid","strides":[2,2]}],"outputs":[{"name":"gx","node":1}]}"#;
    let err = Program::from_json(json).map(|_| ()).unwrap_err();
    assert_eq!(err.code(), "SHAPE_MISMATCH", "{err}");
    let fits = json.replace(
        r#""shape":[1,4,4,1]},{"args":[0,0]"#,
        r#""shape":[1,4,4,1]},{"dtype":"float32","name":"g","op":"input","shape":[1,2,2,1]},{"args":[0,1]"#,
    );
    let fits = fits.replace(r#""node":1"#, r#""node":2"#);
    assert!(
        Program::from_json(&fits).is_ok(),
        "the same with g of the pool's shape"
    );
}
