//! Kernels whose one invocation would loop past 65,535 times on lavapipe (Mesa 22's llvmpipe stops
//! a shader's loops there, silently) take forms whose invocations, or passes, share the work: each
//! case here gives a wrong answer on lavapipe when its fix is undone. Inputs are integers or halves
//! wherever a sum is compared exactly, so every partial sum is exact in float32.

use affon::ops::{Pad, Pair};
use affon::{DType, Program, Session};

use super::big_filters::ones_filter_gradient;
use super::composite::read;

/// Kernels whose one invocation would loop past 65,535 times (lavapipe silently stops there) take
/// forms whose invocations share the work: a dot product with K = 300,000 through matmul, against
/// float64; a softmax over a 100,000-wide row (one hot spot), against float64; sums over 70,000 rows
/// into 64 outputs (exact); a 3×3 convolution's filter gradient over 8 images of 100×100 (80,000
/// output positions; with ones, each tap's count of the positions that read the input, exact).
pub async fn long_loops_match(s: &Session) {
    let (n, h, w) = (8usize, 100usize, 100usize);
    let want: Vec<f32> = (0..9)
        .map(|t| (n * (h - (t / 3 != 1) as usize) * (w - (t % 3 != 1) as usize)) as f32)
        .collect();
    assert_eq!(
        ones_filter_gradient(s, [n, h, w], (3, 3), Pad::SAME).await,
        want,
        "filter gradient over {n}×{h}×{w} positions"
    );
    column_sums_match(s, 70_000, 64).await;
    let k = 300_000;
    let a: Vec<f32> = (0..k).map(|i| ((i % 7) as f32) - 3.0).collect();
    let b: Vec<f32> = (0..k).map(|i| ((i % 5) as f32) * 0.5).collect();
    let want: f64 = a.iter().zip(&b).map(|(&x, &y)| x as f64 * y as f64).sum();
    let ta = s.tensor(&a, &[1, k]).unwrap();
    let tb = s.tensor(&b, &[k, 1]).unwrap();
    let got = read(&ta.matmul(&tb).unwrap()).await;
    // integers and halves: every partial sum is exact in float32
    assert_eq!(got, vec![want as f32], "matmul with K = {k}");
    // a row of 100,000 (one row: 2 parts of 50,000), a hot spot at the end; then masked: -inf
    // opening both parts and in runs inside them (a part's sum must not start from exp(-inf + inf))
    let n = 100_000;
    let mut row = vec![0f32; n];
    row[n - 1] = 10.0;
    let mut masked = row.clone();
    for j in (0..n).filter(|j| j % 50_000 < 70 || j % 1_000 == 3) {
        masked[j] = f32::NEG_INFINITY;
    }
    for x in [row, masked] {
        let got = read(&s.tensor(&x, &[1, n]).unwrap().softmax(-1).unwrap()).await;
        let z: f64 = x.iter().map(|&v| (v as f64 - 10.0).exp()).sum();
        for (j, (&g, &v)) in got.iter().zip(&x).enumerate() {
            let w = (v as f64 - 10.0).exp() / z;
            assert!(
                ((g as f64) - w).abs() <= 1e-5 * w,
                "softmax over {n}: [{j}] = {v}: {g} vs {w}"
            );
        }
    }
    // running sums along lines of 70,000 (integers: every partial sum exact in float32), plain,
    // exclusive and reversed: two lines (a workgroup each), then one (in parts: `ops::line_parts`)
    let len = 70_000usize;
    for lines in [2usize, 1] {
        let x: Vec<f32> = (0..lines * len).map(|i| ((i * 7) % 5) as f32 - 2.0).collect();
        let t = s.tensor(&x, &[lines, len]).unwrap();
        for (exclusive, reverse) in [(false, false), (true, false), (false, true), (true, true)] {
            let want = running(&x, lines, len, 1, exclusive, reverse);
            let got = read(&t.cumsum(1, exclusive, reverse).unwrap()).await;
            assert!(
                got == want,
                "cumsum over {lines} × {len} (exclusive {exclusive}, reverse {reverse}): first difference at {:?}",
                got.iter().zip(&want).position(|(g, w)| g != w)
            );
        }
    }
    // int32 along the first axis, 3 lines 3 apart: of 70,000 (a workgroup each) and of 1.1M
    // (past 2^20: in parts), the second exclusive and reversed
    for (len, flags) in [(70_000usize, false), (1_100_000, true)] {
        let xi: Vec<i32> = (0..3 * len as i32).map(|i| i % 11 - 5).collect();
        let want = running(&xi, 3, len, 3, flags, flags);
        let got = s.tensor(&xi, &[len, 3]).unwrap().cumsum(0, flags, flags).unwrap();
        let got = got.read::<i32>().await.unwrap();
        assert!(
            got == want,
            "int32 cumsum along an axis of {len}, 3 lines (exclusive and reverse {flags}): first difference at {:?}",
            got.iter().zip(&want).position(|(g, w)| g != w)
        );
    }
    long_channel_walks_match(s).await;
    long_products_match(s).await;
    wide_pool_gradients_match(s).await;
    huge_lines_match(s).await;
}

/// Sums over `rows` rows of small integers into `cols` outputs (axis 0), compared exactly with
/// float64 sums.
pub(super) async fn column_sums_match(s: &Session, rows: usize, cols: usize) {
    let x: Vec<f32> = (0..rows * cols).map(|i| (i % 3) as f32).collect();
    let want: Vec<f32> = (0..cols)
        .map(|c| (0..rows).map(|r| x[r * cols + c] as f64).sum::<f64>() as f32)
        .collect();
    let got = read(&s.tensor(&x, &[rows, cols]).unwrap().sum(&[0], false).unwrap()).await;
    assert_eq!(got, want, "sum over {rows} rows into {cols} outputs");
}

/// Two softmax rows of 1.5M and a running sum along 8.5M: lines past what even a workgroup's 64 or
/// 256 lanes can walk within lavapipe's budget (3 passes of len/64, 2 of len/256 a lane), which run
/// in parts (`ops::line_parts`: 23 and 130 here) — before, lavapipe left the softmax's tail
/// unwritten and stopped the running sum short.
async fn huge_lines_match(s: &Session) {
    // two rows of 1.5M, 1 apart (along the first axis of [1.5M, 2]), a hot spot in each
    let n = 1_500_000usize;
    let x: Vec<f32> = (0..2 * n)
        .map(|i| {
            if i / 2 == n - 7 + 3 * (i % 2) - 3 {
                12.0
            } else {
                (i % 3) as f32
            }
        })
        .collect();
    let got = read(&s.tensor(&x, &[n, 2]).unwrap().softmax(0).unwrap()).await;
    for c in 0..2 {
        let z: f64 = (0..n).map(|r| (x[2 * r + c] as f64 - 12.0).exp()).sum();
        for r in 0..n {
            let (g, w) = (got[2 * r + c] as f64, (x[2 * r + c] as f64 - 12.0).exp() / z);
            assert!(
                (g - w).abs() <= 1e-5 * w,
                "softmax over {n} (column {c}): [{r}] {g} vs {w}"
            );
        }
    }
    let len = 8_500_000usize;
    // period 5 around zero: every running sum is in [-3, 3], exact in float32
    let x: Vec<f32> = (0..len).map(|i| ((i * 7) % 5) as f32 - 2.0).collect();
    let got = read(&s.tensor(&x, &[len]).unwrap().cumsum(0, false, false).unwrap()).await;
    let mut acc = 0f64;
    let first_wrong = x.iter().zip(&got).position(|(&v, &g)| {
        acc += v as f64;
        g as f64 != acc
    });
    assert_eq!(first_wrong, None, "cumsum along {len}: first difference");
}

/// Running sums (in float64, or wrapping int32) of `lines` lines of `len`, element `k` of line `l`
/// at `(l / inner)·len·inner + l % inner + k·inner`.
fn running<T: Copy + Into<f64> + FromF64>(
    x: &[T],
    lines: usize,
    len: usize,
    inner: usize,
    exclusive: bool,
    reverse: bool,
) -> Vec<T> {
    let mut out = x.to_vec();
    for l in 0..lines {
        let mut acc = 0f64;
        for k in 0..len {
            let k = if reverse { len - 1 - k } else { k };
            let j = (l / inner) * len * inner + l % inner + k * inner;
            let v = x[j].into();
            if exclusive {
                out[j] = T::from_f64(acc);
                acc += v;
            } else {
                acc += v;
                out[j] = T::from_f64(acc);
            }
        }
    }
    out
}

/// The element type of a running sum's reference.
trait FromF64 {
    fn from_f64(v: f64) -> Self;
}

impl FromF64 for f32 {
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
}

impl FromF64 for i32 {
    fn from_f64(v: f64) -> i32 {
        v as i32
    }
}

/// The gradients of `maxPool` and `avgPool` (1×2 windows, stride 2) over a row of 140,000: 70,000
/// windows across. A thread visits only the windows that contain its element (it walked every
/// window of its row before: past window 65,535 lavapipe left the gradient at 0).
async fn wide_pool_gradients_match(s: &Session) {
    let w = 140_000usize;
    let x: Vec<f32> = (0..w).map(|i| ((i * 7) % 5) as f32).collect();
    let xt = s.tensor(&x, &[1, 1, w, 1]).unwrap();
    for max in [true, false] {
        let mut p = Program::new("pool gradient");
        let xi = p.input("x", DType::Float32, &[1, 1, w as i64, 1]).unwrap();
        let two = Pair(1, 2);
        let y = if max {
            p.max_pool(xi, two, two, Pad::VALID)
        } else {
            p.avg_pool(xi, two, two, Pad::VALID)
        }
        .unwrap();
        let l = p.sum(y, &[], false).unwrap();
        let g = p.grad(l, &[xi]).unwrap();
        p.output("gx", g[0]).unwrap();
        let outs = s.compile(&p).unwrap().run(&[("x", &xt)], None).unwrap();
        // max: 1 to each window's first maximum; avg: a half to both cells
        let want: Vec<f32> = (0..w)
            .map(|i| match (max, i % 2) {
                (false, _) => 0.5,
                (true, 0) => (x[i] >= x[i + 1]) as u8 as f32,
                (true, _) => (x[i] > x[i - 1]) as u8 as f32,
            })
            .collect();
        let got = read(&outs[0].1).await;
        assert!(
            got == want,
            "{} gradient over {w}: first difference at {:?}",
            if max { "maxPool" } else { "avgPool" },
            got.iter().zip(&want).position(|(g, w)| g != w)
        );
    }
}

/// Products with K = 1.2M (past the tiled forms' loop budget on lavapipe: 16 × 65,535), plain and
/// with a bias and relu fused into the last pass in a Program. The inputs repeat with periods 7 and 5
/// around zero, so every partial sum is a small multiple of 0.5: exact in float32.
async fn long_products_match(s: &Session) {
    let k = 1_200_000usize;
    let a: Vec<f32> = (0..2 * k).map(|i| ((i % k + i / k) % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * 3).map(|i| ((i / 3 + i % 3) % 5) as f32 * 0.5).collect();
    let want: Vec<f64> = (0..6)
        .map(|o| {
            let (r, c) = (o / 3, o % 3);
            (0..k).map(|j| a[r * k + j] as f64 * b[j * 3 + c] as f64).sum()
        })
        .collect();
    let (ta, tb) = (s.tensor(&a, &[2, k]).unwrap(), s.tensor(&b, &[k, 3]).unwrap());
    let got = read(&ta.matmul(&tb).unwrap()).await;
    let exact: Vec<f32> = want.iter().map(|&v| v as f32).collect();
    assert_eq!(got, exact, "matmul with K = {k}");
    let mut p = Program::new("dense");
    let xi = p.input("x", DType::Float32, &[2, k as i64]).unwrap();
    let wi = p.input("w", DType::Float32, &[k as i64, 3]).unwrap();
    let bias = p.constant(&[-1.5, 0.5, 2.0], &[3], DType::Float32).unwrap();
    let mm = p.matmul(xi, wi).unwrap();
    let y = p.add(mm, bias).unwrap();
    let r = p.relu(y).unwrap();
    p.output("y", r).unwrap();
    let outs = s
        .compile(&p)
        .unwrap()
        .run(&[("x", &ta), ("w", &tb)], None)
        .unwrap();
    let fused: Vec<f32> = (0..6)
        .map(|o| (want[o] + [-1.5, 0.5, 2.0][o % 3]).max(0.0) as f32)
        .collect();
    assert_eq!(read(&outs[0].1).await, fused, "relu(matmul + bias) with K = {k}");
}

/// Convolutions whose threads walk 3×3 taps of 8,000 channels (72,000 multiply-adds): the forward
/// pass (one and five output channels: a thread's quad whole or partial), with a bias and relu
/// fused into it in a Program, and the input gradients of a dense and a depthwise convolution
/// with 8,000 output channels. All ones over a 3×3 image with SAME padding: a pixel's sum is the
/// taps inside the image times the channels, exact in float32.
async fn long_channel_walks_match(s: &Session) {
    let ch = 8000usize;
    // the taps of a 3×3 window inside a 3×3 image, per pixel: corners 4, edges 6, the centre 9
    let taps = [4.0f32, 6.0, 4.0, 6.0, 9.0, 6.0, 4.0, 6.0, 4.0];
    let x = s.tensor(&vec![1f32; 9 * ch], &[1, 3, 3, ch]).unwrap();
    for oc in [1usize, 5] {
        let f = s.tensor(&vec![1f32; 9 * ch * oc], &[3, 3, ch, oc]).unwrap();
        let got = read(&x.conv2d(&f, Pair::ONE, Pad::SAME, Pair::ONE).unwrap()).await;
        let want: Vec<f32> = (0..9 * oc).map(|i| taps[i / oc] * ch as f32).collect();
        assert_eq!(got, want, "conv2d 3×3 over {ch} channels into {oc}");
    }
    // relu(conv + bias) with the bias taking the corners below zero
    let mut p = Program::new("conv bias relu");
    let xi = p.input("x", DType::Float32, &[1, 3, 3, ch as i64]).unwrap();
    let fi = p.input("f", DType::Float32, &[3, 3, ch as i64, 1]).unwrap();
    let bias = p.constant(&[-5.0 * ch as f64], &[1], DType::Float32).unwrap();
    let c = p.conv2d(xi, fi, Pair::ONE, Pad::SAME, Pair::ONE).unwrap();
    let y = p.add(c, bias).unwrap();
    let r = p.relu(y).unwrap();
    p.output("y", r).unwrap();
    let f = s.tensor(&vec![1f32; 9 * ch], &[3, 3, ch, 1]).unwrap();
    let outs = s.compile(&p).unwrap().run(&[("x", &x), ("f", &f)], None).unwrap();
    let want: Vec<f32> = taps.iter().map(|&t| ((t - 5.0) * ch as f32).max(0.0)).collect();
    assert_eq!(
        read(&outs[0].1).await,
        want,
        "relu(conv2d + bias) over {ch} channels"
    );
    // d(sum of the outputs)/dx: every tap of every output channel that reads the pixel
    for depthwise in [false, true] {
        let mut p = Program::new("input gradient");
        let xi = p.input("x", DType::Float32, &[1, 3, 3, 1]).unwrap();
        let fi = p.input("f", DType::Float32, &[3, 3, 1, ch as i64]).unwrap();
        let c = if depthwise {
            p.depthwise_conv2d(xi, fi, Pair::ONE, Pad::SAME, Pair::ONE)
        } else {
            p.conv2d(xi, fi, Pair::ONE, Pad::SAME, Pair::ONE)
        }
        .unwrap();
        let l = p.sum(c, &[], false).unwrap();
        let g = p.grad(l, &[xi]).unwrap();
        p.output("gx", g[0]).unwrap();
        let x1 = s.tensor(&[1f32; 9], &[1, 3, 3, 1]).unwrap();
        let f = s.tensor(&vec![1f32; 9 * ch], &[3, 3, 1, ch]).unwrap();
        let outs = s
            .compile(&p)
            .unwrap()
            .run(&[("x", &x1), ("f", &f)], None)
            .unwrap();
        let want: Vec<f32> = taps.iter().map(|&t| t * ch as f32).collect();
        assert_eq!(
            read(&outs[0].1).await,
            want,
            "input gradient over {ch} output channels (depthwise {depthwise})"
        );
    }
}
