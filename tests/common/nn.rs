//! The op table's nn and indexing ops — `conv2d`, `depthwiseConv2d`, `maxPool`, `avgPool`,
//! `gather` — against float64 references written here (with TF.js's output-size and padding
//! rules re-derived here, not taken from affon), eager and inside a compiled program, on both GPU
//! targets (`native_gpu.rs`, `web.rs`). Bad input is rejected with its code and changes no ledger
//! record.
//!
//! Tolerances: convolutions `|g − w| ≤ 1e-5·Σ|x·w| + 1e-6` over each output's terms (float32
//! accumulation of at most a few hundred products); pools and gather exact (max and copies), the
//! mean within rel 1e-6.

use affon::ops::{Pad, Pair};
use affon::{DType, Program, Session};

use super::ledger::fails_unchanged;
use super::ops::{compare, expect, Host, Rng, Tol};

mod in_programs;

use in_programs::{epilogues_fuse_and_match, nn_in_a_program};

const EXACT: Tol = Tol::Exact;

/// One spatial dim: (output size, padding before), TF.js's rules.
fn extent(input: usize, f: usize, stride: usize, dil: usize, pad: Pad) -> (usize, usize) {
    let reach = (f - 1) * dil + 1;
    match pad {
        Pad::Explicit(p) => ((input + 2 * p - reach) / stride + 1, p),
        p if p == Pad::VALID => ((input - reach) / stride + 1, 0),
        _ => {
            let out = input.div_ceil(stride);
            let total = ((out - 1) * stride + reach).saturating_sub(input);
            (out, total / 2)
        }
    }
}

struct Geo {
    n: usize,
    h: usize,
    w: usize,
    c: usize,
    oh: usize,
    ow: usize,
    top: usize,
    left: usize,
}

fn geo(x: &[usize], f: (usize, usize), s: Pair, pad: Pad, d: Pair) -> Geo {
    let r = x.len();
    let (h, w, c) = (x[r - 3], x[r - 2], x[r - 1]);
    let (oh, top) = extent(h, f.0, s.0, d.0, pad);
    let (ow, left) = extent(w, f.1, s.1, d.1, pad);
    let n = if r == 4 { x[0] } else { 1 };
    Geo {
        n,
        h,
        w,
        c,
        oh,
        ow,
        top,
        left,
    }
}

/// Visits the input cells of output pixel `(n, oy, ox)`'s window: `(fy, fx, input offset)`.
#[allow(clippy::too_many_arguments)]
fn window(
    g: &Geo,
    f: (usize, usize),
    s: Pair,
    d: Pair,
    n: usize,
    oy: usize,
    ox: usize,
    mut v: impl FnMut(usize, usize, usize),
) {
    for fy in 0..f.0 {
        let iy = (oy * s.0 + fy * d.0) as i64 - g.top as i64;
        for fx in 0..f.1 {
            let ix = (ox * s.1 + fx * d.1) as i64 - g.left as i64;
            if iy >= 0 && ix >= 0 && (iy as usize) < g.h && (ix as usize) < g.w {
                v(fy, fx, ((n * g.h + iy as usize) * g.w + ix as usize) * g.c);
            }
        }
    }
}

fn out_shape(x: &[usize], g: &Geo, channels: usize) -> Vec<usize> {
    let mut s = x[..x.len() - 3].to_vec();
    s.extend([g.oh, g.ow, channels]);
    s
}

/// A convolution in float64 over row-major values: (output shape, values, per-output Σ|x·w|).
#[allow(clippy::too_many_arguments)]
pub fn conv_f64(
    x: &[f64],
    xs: &[usize],
    f: &[f64],
    fs: &[usize],
    s: Pair,
    pad: Pad,
    d: Pair,
    depthwise: bool,
) -> (Vec<usize>, Vec<f64>, Vec<f64>) {
    let (fh, fw, fc, m) = (fs[0], fs[1], fs[2], fs[3]);
    let g = geo(xs, (fh, fw), s, pad, d);
    let oc = if depthwise { fc * m } else { m };
    let (mut out, mut mag) = (vec![], vec![]);
    for n in 0..g.n {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for o in 0..oc {
                    let (mut acc, mut abs) = (0f64, 0f64);
                    window(&g, (fh, fw), s, d, n, oy, ox, |fy, fx, base| {
                        let cs = if depthwise { o / m..o / m + 1 } else { 0..g.c };
                        for c in cs {
                            let k = if depthwise { o % m } else { o };
                            let t = x[base + c] * f[((fy * fw + fx) * fc + c) * m + k];
                            acc += t;
                            abs += t.abs();
                        }
                    });
                    out.push(acc);
                    mag.push(abs);
                }
            }
        }
    }
    (out_shape(xs, &g, oc), out, mag)
}

/// (reference, per-output bound Σ|x·w| for the tolerance)
fn conv_ref(
    x: &Host<f32>,
    f: &Host<f32>,
    s: Pair,
    pad: Pad,
    d: Pair,
    depthwise: bool,
) -> (Host<f32>, Vec<f64>) {
    let w = |h: &Host<f32>| h.data.iter().map(|&v| v as f64).collect::<Vec<_>>();
    let (shape, out, mag) = conv_f64(&w(x), &x.shape, &w(f), &f.shape, s, pad, d, depthwise);
    (
        Host {
            shape,
            data: out.iter().map(|&v| v as f32).collect(),
        },
        mag,
    )
}

/// Max or average pooling in float64 (only cells inside the input): (output shape, values).
pub fn pool_f64(x: &[f64], xs: &[usize], size: Pair, s: Pair, pad: Pad, max: bool) -> (Vec<usize>, Vec<f64>) {
    let g = geo(xs, (size.0, size.1), s, pad, Pair::ONE);
    let mut out = vec![];
    for n in 0..g.n {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for c in 0..g.c {
                    let mut cells = vec![];
                    window(&g, (size.0, size.1), s, Pair::ONE, n, oy, ox, |_, _, base| {
                        cells.push(x[base + c])
                    });
                    out.push(if max {
                        cells.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                    } else {
                        cells.iter().sum::<f64>() / cells.len() as f64
                    });
                }
            }
        }
    }
    (out_shape(xs, &g, g.c), out)
}

fn pool_ref(x: &Host<f32>, size: Pair, s: Pair, pad: Pad, max: bool) -> Host<f32> {
    let xd: Vec<f64> = x.data.iter().map(|&v| v as f64).collect();
    let (shape, out) = pool_f64(&xd, &x.shape, size, s, pad, max);
    Host {
        shape,
        data: out.iter().map(|&v| v as f32).collect(),
    }
}

fn random(rng: &mut Rng, shape: &[usize]) -> Host<f32> {
    Host::from_fn(shape, |_| rng.f32_in(-2.0, 2.0))
}

#[allow(clippy::too_many_arguments)]
async fn check_conv(
    s: &Session,
    rng: &mut Rng,
    x: &[usize],
    f: &[usize],
    st: Pair,
    pad: Pad,
    d: Pair,
    depthwise: bool,
) {
    let (xh, fh) = (random(rng, x), random(rng, f));
    let (want, mag) = conv_ref(&xh, &fh, st, pad, d, depthwise);
    let name = if depthwise { "depthwiseConv2d" } else { "conv2d" };
    let what = format!("{name} x{x:?} filter{f:?} strides {st:?} pad {pad:?} dilations {d:?}");
    let (tx, tf) = (xh.upload(s), fh.upload(s));
    let t = if depthwise {
        tx.depthwise_conv2d(&tf, st, pad, d)
    } else {
        tx.conv2d(&tf, st, pad, d)
    };
    let t = t.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(t.shape(), &want.shape[..], "{what}: shape");
    let got = t.read::<f32>().await.unwrap();
    for (i, (&g, &w)) in got.iter().zip(&want.data).enumerate() {
        let tol = 1e-5 * mag[i] + 1e-6;
        assert!(
            ((g - w) as f64).abs() <= tol,
            "{what}: index {i}: got {g}, want {w} (tolerance {tol:e})"
        );
    }
}

/// Convolutions, pools and gather against the references; errors change nothing.
pub async fn nn_ops_match_f64_reference(s: &Session) {
    let mut rng = Rng::new(0x00C0_DE2D);
    let (one, two) = (Pair::ONE, Pair(2, 2));
    // (input, filter, strides, pad, dilations, depthwise) — what each case adds is its comment
    type ConvCase = (&'static [usize], &'static [usize], Pair, Pad, Pair, bool);
    let cases: [ConvCase; 17] = [
        // 'same' with 5 output channels (not a multiple of the kernel's 4), batch 2
        (&[2, 7, 6, 3], &[3, 3, 3, 5], one, Pad::SAME, one, false),
        // 'valid', uneven strides, a 3×2 window
        (&[1, 9, 8, 4], &[3, 2, 4, 8], Pair(2, 1), Pad::VALID, one, false),
        // one image (rank 3), numeric padding, dilation 2
        (&[7, 7, 2], &[3, 3, 2, 4], one, Pad::Explicit(1), two, false),
        // stride 2 'same' on an even input: the extra padding cell goes after
        (&[1, 8, 8, 3], &[3, 3, 3, 4], two, Pad::SAME, one, false),
        // pointwise (1×1): the matmul path, 6 → 7 channels
        (&[2, 5, 5, 6], &[1, 1, 6, 7], one, Pad::SAME, one, false),
        // a 1×1 window with stride 2 is not pointwise
        (&[1, 5, 5, 3], &[1, 1, 3, 2], two, Pad::VALID, one, false),
        // depthwise: multiplier 2 'same'; multiplier 1 stride 2 'valid'; dilation 2
        (&[2, 6, 7, 3], &[3, 3, 3, 2], one, Pad::SAME, one, true),
        (&[1, 9, 9, 4], &[3, 3, 4, 1], two, Pad::VALID, one, true),
        (&[1, 8, 8, 2], &[3, 3, 2, 1], one, Pad::SAME, two, true),
        // multiplier 1 with channels in fours (four channels a thread): 'same' over a batch of 2
        // with a 3×2 window; stride 2 with dilation 2 and numeric padding
        (&[2, 7, 5, 8], &[3, 2, 8, 1], one, Pad::SAME, one, true),
        (&[1, 9, 8, 12], &[3, 3, 12, 1], two, Pad::Explicit(2), two, true),
        // ... with 16 pixels a thread (a 21-pixel row: the second run mostly past the row's end);
        // 8 a thread with stride 2 and dilation 2 (12 output columns); 8 with a 2×5 'valid' window
        (&[1, 5, 21, 4], &[3, 3, 4, 1], one, Pad::SAME, one, true),
        (&[2, 6, 23, 8], &[3, 3, 8, 1], two, Pad::SAME, two, true),
        (&[1, 4, 18, 4], &[2, 5, 4, 1], one, Pad::VALID, one, true),
        // 3×3 stride 2 on a 40-pixel row: 8 a thread (16 would keep too much live)
        (&[1, 3, 40, 4], &[3, 3, 4, 1], two, Pad::SAME, one, true),
        // windows too wide for the written-out form on CPU adapters (a 1×29 window's 4 pixels
        // read 32 columns; 9 taps 11 apart, 36): the looping kernel there (both lost SwiftShader's
        // device in the written-out form)
        (&[1, 3, 60, 4], &[1, 29, 4, 1], one, Pad::SAME, one, true),
        (&[1, 4, 120, 8], &[2, 9, 8, 1], Pair(1, 11), Pad::VALID, one, true),
    ];
    for (x, f, st, pad, d, depthwise) in cases {
        check_conv(s, &mut rng, x, f, st, pad, d, depthwise).await;
    }

    // pools: 'valid' 2×2/2, 'same' 3×3/1 (padding never counts), rank 3
    let x = random(&mut rng, &[2, 6, 7, 3]);
    let tx = x.upload(s);
    for (size, st, pad) in [
        (two, two, Pad::VALID),
        (Pair(3, 3), one, Pad::SAME),
        (Pair(3, 2), Pair(2, 3), Pad::SAME),
    ] {
        let what = format!("maxPool {size:?} {st:?} {pad:?}");
        expect(
            &what,
            tx.max_pool(size, st, pad),
            &pool_ref(&x, size, st, pad, true),
            EXACT,
        )
        .await;
        let what = format!("avgPool {size:?} {st:?} {pad:?}");
        let tol = Tol::Close { rel: 1e-6, abs: 1e-6 };
        expect(
            &what,
            tx.avg_pool(size, st, pad),
            &pool_ref(&x, size, st, pad, false),
            tol,
        )
        .await;
    }
    let img = random(&mut rng, &[5, 5, 2]);
    expect(
        "maxPool rank 3",
        img.upload(s).max_pool(Pair(2, 2), one, Pad::VALID),
        &pool_ref(&img, two, one, Pad::VALID, true),
        EXACT,
    )
    .await;

    // gather: axis 0 with repeats, axis 1 with 2-D indices, int32 values
    let table = Host::from_fn(&[5, 3], |i| i as f32 * 0.5 - 3.0);
    let idx = Host::from_fn(&[4], |i| [4, 0, 2, 2][i]);
    let want = Host::from_fn(&[4, 3], |i| table.data[idx.data[i / 3] as usize * 3 + i % 3]);
    let (tt, ti) = (table.upload(s), idx.upload(s));
    expect("gather axis 0", tt.gather(&ti, 0), &want, EXACT).await;
    let idx2 = Host::from_fn(&[2, 2], |i| [2, 0, 1, 1][i]);
    let want = Host::from_fn(&[5, 2, 2], |i| {
        table.data[(i / 4) * 3 + idx2.data[i % 4] as usize]
    });
    expect(
        "gather axis 1, 2-D indices",
        tt.gather(&idx2.upload(s), 1),
        &want,
        EXACT,
    )
    .await;
    let ints = Host::from_fn(&[3, 2], |i| i as i32 * 7 - 5);
    let want = Host::from_fn(&[4, 2], |i| ints.data[[2, 2, 0, 1][i / 2] * 2 + i % 2]);
    let ix = Host::from_fn(&[4], |i| [2, 2, 0, 1][i]);
    expect(
        "gather int32 (negative axis)",
        ints.upload(s).gather(&ix.upload(s), -2),
        &want,
        EXACT,
    )
    .await;

    // bad input: codes, and nothing changes
    let f_bad = random(&mut rng, &[3, 3, 4, 2]).upload(s);
    fails_unchanged("SHAPE_MISMATCH", "conv2d channel mismatch", || {
        tx.conv2d(&f_bad, one, Pad::SAME, one)
    });
    fails_unchanged("SHAPE_MISMATCH", "depthwiseConv2d channel mismatch", || {
        tx.depthwise_conv2d(&f_bad, one, Pad::SAME, one)
    });
    let f_big = random(&mut rng, &[9, 9, 3, 1]).upload(s);
    fails_unchanged("SHAPE_MISMATCH", "a 'valid' window larger than the input", || {
        tx.conv2d(&f_big, one, Pad::VALID, one)
    });
    let f_ok = random(&mut rng, &[3, 3, 3, 1]).upload(s);
    fails_unchanged("INVALID_ARGUMENT", "zero strides", || {
        tx.conv2d(&f_ok, Pair(0, 1), Pad::SAME, one)
    });
    fails_unchanged("SHAPE_MISMATCH", "a rank-2 conv2d input", || {
        tt.conv2d(&f_ok, one, Pad::SAME, one)
    });
    fails_unchanged("DTYPE_MISMATCH", "float gather indices", || tt.gather(&tt, 0));
    fails_unchanged("INVALID_ARGUMENT", "gather axis out of range", || {
        tt.gather(&ti, 2)
    });
    let ti4 = Host::from_fn(&[1, 3, 2, 1], |i| i as i32).upload(s);
    fails_unchanged("DTYPE_MISMATCH", "int32 maxPool", || {
        ti4.max_pool(one, one, Pad::VALID)
    });

    nn_in_a_program(s, &mut rng).await;
    epilogues_fuse_and_match(s, &mut rng).await;
}
