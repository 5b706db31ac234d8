//! The elementwise ops of the op table (`src/ops/table.rs`) added beyond the first 13, against a
//! float64 CPU reference written here, on both GPU targets; plus number operands and the same ops
//! fused inside a compiled program. One description per op ([`UNARY`], [`BINARY`]).
//!
//! Tolerances (`|g − w| ≤ rel·|w| + abs`, NaN matches NaN, infinities exactly):
//! - exact: `floor ceil round sign logicalNot`, `maximum minimum squaredDifference`, every
//!   comparison and logical op, every integer result, `mod` on inputs away from the floor's jumps;
//! - rel 1e-5, abs 1e-6: `reciprocal rsqrt log1p expm1 silu softplus elu pow`;
//! - abs 1e-6 (+ rel 1e-5): `erf gelu` (the kernel's rational approximation is within 1.5e-7);
//! - abs 5e-4 on `[-π, π]`: `sin cos` (WGSL allows 2⁻¹¹ absolute there).

use affon::ops::{BinaryOp, Op, UnaryOp};
use affon::{DType, Program, Session};

use super::ledger::fails_unchanged;
use super::ops::{compare, expect, Host, Rng, Tol, REL};

const EXACT: Tol = Tol::Exact;
const TRIG: Tol = Tol::Close { rel: 0.0, abs: 5e-4 };

fn erf(x: f64) -> f64 {
    libm::erf(x)
}

/// Round half to even.
fn round_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 {
        2.0 * (x / 2.0).round()
    } else {
        r
    }
}

pub(super) type UnaryRef = fn(f64) -> f64;

/// `(op, input range, reference, tolerance)` for the float32 unary ops.
const UNARY: [(UnaryOp, f32, f32, UnaryRef, Tol); 16] = [
    (UnaryOp::Floor, -50.0, 50.0, f64::floor, EXACT),
    (UnaryOp::Ceil, -50.0, 50.0, f64::ceil, EXACT),
    (UnaryOp::Round, -50.0, 50.0, round_even, EXACT),
    (
        UnaryOp::Sign,
        -5.0,
        5.0,
        |x| {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }
        },
        EXACT,
    ),
    (UnaryOp::Reciprocal, 0.5, 100.0, |x| 1.0 / x, REL),
    (UnaryOp::Rsqrt, 0.01, 100.0, |x| 1.0 / x.sqrt(), REL),
    (UnaryOp::Log1p, -0.9, 10.0, f64::ln_1p, REL),
    (UnaryOp::Expm1, -10.0, 10.0, f64::exp_m1, REL),
    (
        UnaryOp::Sin,
        -std::f32::consts::PI,
        std::f32::consts::PI,
        f64::sin,
        TRIG,
    ),
    (
        UnaryOp::Cos,
        -std::f32::consts::PI,
        std::f32::consts::PI,
        f64::cos,
        TRIG,
    ),
    (UnaryOp::Erf, -4.0, 4.0, erf, REL),
    (
        UnaryOp::Gelu,
        -6.0,
        6.0,
        |x| 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2)),
        REL,
    ),
    (UnaryOp::Silu, -20.0, 20.0, |x| x / (1.0 + (-x).exp()), REL),
    (
        UnaryOp::Softplus,
        -100.0,
        100.0,
        |x| x.max(0.0) + (-x.abs()).exp().ln_1p(),
        REL,
    ),
    (
        UnaryOp::Elu,
        -10.0,
        10.0,
        |x| if x > 0.0 { x } else { x.exp_m1() },
        REL,
    ),
    (UnaryOp::Neg, -1.0, 1.0, |x| -x, EXACT),
];

type BinaryRef = fn(f64, f64) -> f64;
type CompareRef = fn(f32, f32) -> bool;

/// `(op, reference on float64, tolerance)` for the float32 binary ops.
const BINARY: [(BinaryOp, BinaryRef, Tol); 5] = [
    (BinaryOp::Maximum, f64::max, EXACT),
    (BinaryOp::Minimum, f64::min, EXACT),
    (
        BinaryOp::SquaredDifference,
        |a, b| ((a as f32 - b as f32) * (a as f32 - b as f32)) as f64,
        EXACT,
    ),
    (BinaryOp::Pow, f64::powf, REL),
    (BinaryOp::Mod, |a, b| a - b * (a / b).floor(), REL),
];

pub(super) fn host(shape: &[usize], f: impl FnMut(usize) -> f32) -> Host<f32> {
    Host::from_fn(shape, f)
}

pub(super) fn map(x: &Host<f32>, f: UnaryRef) -> Host<f32> {
    Host::from_fn(&x.shape, |i| f(x.data[i] as f64) as f32)
}

fn zip<T: super::ops::Val, R: super::ops::Val>(
    a: &Host<T>,
    b: &Host<T>,
    mut f: impl FnMut(T, T) -> R,
) -> Host<R> {
    Host::from_fn(&a.shape, |i| f(a.data[i], b.data[i]))
}

/// `log Σ exp` over the last axis of a `[rows, n]` host tensor, in float64.
fn lse_rows(x: &Host<f32>) -> Vec<f64> {
    let n = x.shape[1];
    x.data
        .chunks(n)
        .map(|r| {
            let m = r.iter().fold(f64::NEG_INFINITY, |a, &v| a.max(v as f64));
            m + r.iter().map(|&v| (v as f64 - m).exp()).sum::<f64>().ln()
        })
        .collect()
}

/// The composites (`src/ops/compose.rs`), eager and as program nodes, against float64.
pub async fn composites_match_f64_reference(s: &Session) {
    let mut rng = Rng::new(0xC0_FFEE);
    let x = host(&[4, 33], |_| rng.f32_in(-5.0, 5.0));
    let mut big = x.clone();
    big.data[..3].copy_from_slice(&[100.0, -100.0, 90.0]); // finite at ±100
    let tx = x.upload(s);
    let leaky = map(&x, |v| if v > 0.0 { v } else { 0.2 * v });
    expect("leakyRelu(0.2)", tx.leaky_relu(0.2), &leaky, REL).await;
    let clip = map(&x, |v| v.clamp(-1.5, 2.0));
    expect("clipByValue(-1.5, 2)", tx.clip_by_value(-1.5, 2.0), &clip, EXACT).await;
    let xi = Host::from_fn(&[7], |i| i as i32 - 3);
    let want = Host::from_fn(&[7], |i| (i as i32 - 3).clamp(-1, 2));
    expect(
        "clipByValue int32",
        xi.upload(s).clip_by_value(-1.0, 2.0),
        &want,
        EXACT,
    )
    .await;
    let lse = lse_rows(&big);
    let want = Host::from_fn(&[4], |i| lse[i] as f32);
    let tol = Tol::Close { rel: 1e-5, abs: 1e-5 };
    expect(
        "logSumExp(-1)",
        big.upload(s).log_sum_exp(&[-1], false),
        &want,
        tol,
    )
    .await;
    let want_keep = Host {
        shape: vec![4, 1],
        data: want.data.clone(),
    };
    expect(
        "logSumExp(-1, keepDims)",
        big.upload(s).log_sum_exp(&[1], true),
        &want_keep,
        tol,
    )
    .await;
    let want = Host::from_fn(&[4, 33], |i| (big.data[i] as f64 - lse[i / 33]) as f32);
    expect("logSoftmax(-1)", big.upload(s).log_softmax(-1), &want, tol).await;
    let want = Host {
        shape: vec![4, 1, 33],
        data: x.data.clone(),
    };
    expect("expandDims(1)", tx.expand_dims(1), &want, EXACT).await;
    let one = Host::from_fn(&[1, 4, 1, 33], |i| x.data[i]);
    expect(
        "squeeze()",
        one.upload(s).squeeze(affon::ops::Axes::ALL),
        &x,
        EXACT,
    )
    .await;
    let want = Host {
        shape: vec![4, 1, 33],
        data: x.data.clone(),
    };
    expect("squeeze([0])", one.upload(s).squeeze(&[0]), &want, EXACT).await;
    let b = Host::from_fn(&[3, 4], |i| i % 4 != 0 || i == 4);
    let rows = |f: fn(&[bool]) -> bool| Host::from_fn(&[3], |r| f(&b.data[r * 4..r * 4 + 4]));
    expect(
        "all(1)",
        b.upload(s).all(&[1], false),
        &rows(|r| r.iter().all(|&v| v)),
        EXACT,
    )
    .await;
    expect(
        "any(1)",
        b.upload(s).any(&[1], false),
        &rows(|r| r.iter().any(|&v| v)),
        EXACT,
    )
    .await;
    // layerNorm over the last axis (biased variance), batchNorm per channel, matmul transposes
    let (rows, n) = (4usize, 33usize);
    let gamma = host(&[n], |_| rng.f32_in(0.5, 1.5));
    let beta = host(&[n], |_| rng.f32_in(-1.0, 1.0));
    let want = Host::from_fn(&[rows, n], |i| {
        let r = &x.data[(i / n) * n..(i / n + 1) * n];
        let mean = r.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
        let var = r.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        ((x.data[i] as f64 - mean) / (var + 1e-5).sqrt() * gamma.data[i % n] as f64 + beta.data[i % n] as f64)
            as f32
    });
    let (tg, tb) = (gamma.upload(s), beta.upload(s));
    let norm_tol = Tol::Close { rel: 1e-4, abs: 1e-5 };
    expect("layerNorm", tx.layer_norm(&tg, &tb, 1e-5), &want, norm_tol).await;
    let nhwc = host(&[2, 3, 3, 4], |_| rng.f32_in(-3.0, 3.0));
    let (m, v, o, sc) = (
        host(&[4], |_| rng.f32_in(-1.0, 1.0)),
        host(&[4], |_| rng.f32_in(0.1, 2.0)),
        host(&[4], |_| rng.f32_in(-1.0, 1.0)),
        host(&[4], |_| rng.f32_in(0.5, 1.5)),
    );
    let want = Host::from_fn(&nhwc.shape, |i| {
        let c = i % 4;
        let y = (nhwc.data[i] as f64 - m.data[c] as f64) / (v.data[c] as f64 + 1e-3).sqrt();
        (y * sc.data[c] as f64 + o.data[c] as f64) as f32
    });
    let (tm, tv, to, ts) = (m.upload(s), v.upload(s), o.upload(s), sc.upload(s));
    expect(
        "batchNorm",
        nhwc.upload(s).batch_norm(&tm, &tv, Some(&to), Some(&ts), 1e-3),
        &want,
        norm_tol,
    )
    .await;
    let a = host(&[2, 5, 3], |_| rng.f32_in(-2.0, 2.0)); // used as [2, 3, 5]ᵀ
    let b = host(&[4, 5], |_| rng.f32_in(-2.0, 2.0)); // used as [5, 4]ᵀ
    let want = Host::from_fn(&[2, 3, 4], |i| {
        let (bt, r, c) = (i / 12, (i / 4) % 3, i % 4);
        (0..5)
            .map(|k| a.data[bt * 15 + k * 3 + r] as f64 * b.data[c * 5 + k] as f64)
            .sum::<f64>() as f32
    });
    let mm_tol = Tol::Close { rel: 1e-5, abs: 1e-5 };
    expect(
        "matmul(transposeA, transposeB)",
        a.upload(s).matmul_t(&b.upload(s), true, true),
        &want,
        mm_tol,
    )
    .await;
    fails_unchanged("SHAPE_MISMATCH", "layerNorm gamma of the wrong length", || {
        tx.layer_norm(&tm, &tb, 1e-5)
    });
    // where (broadcast over all three), argMax/argMin (first index of the extreme), oneHot
    let cond = Host::from_fn(&[4, 1], |i| i % 2 == 0);
    let other = host(&[33], |i| -(i as f32));
    let want = Host::from_fn(&[4, 33], |i| {
        if cond.data[i / 33] {
            x.data[i]
        } else {
            other.data[i % 33]
        }
    });
    expect(
        "where [4,33] / [4,1] / [33]",
        tx.select(&cond.upload(s), &other.upload(s)),
        &want,
        EXACT,
    )
    .await;
    let want = Host::from_fn(&[4, 33], |i| if cond.data[i / 33] { x.data[i] } else { 7.0 });
    expect(
        "where with a number",
        tx.select_scalar(&cond.upload(s), 7.0),
        &want,
        EXACT,
    )
    .await;
    let mut ties = x.clone();
    ties.data[5] = 9.0;
    ties.data[9] = 9.0; // a tie in row 0: the first index wins
    let arg = |f: fn(f32, f32) -> bool| {
        Host::from_fn(&[4], |r| {
            let row = &ties.data[r * 33..(r + 1) * 33];
            (0..33).fold(0, |best, j| if f(row[j], row[best]) { j } else { best }) as i32
        })
    };
    let tt = ties.upload(s);
    expect("argMax(-1)", tt.arg_max(-1), &arg(|a, b| a > b), EXACT).await;
    expect("argMin(1)", tt.arg_min(1), &arg(|a, b| a < b), EXACT).await;
    let idx = Host {
        shape: vec![2, 3],
        data: vec![0i32, 2, 1, 3, -1, 2],
    };
    let want = Host::from_fn(&[2, 3, 3], |i| {
        if idx.data[i / 3] == (i % 3) as i32 {
            1.0f32
        } else {
            0.0
        }
    });
    expect(
        "oneHot(3) (3 and -1 are all zeros)",
        idx.upload(s).one_hot(3),
        &want,
        EXACT,
    )
    .await;
    // windows: slice, pad, tile; concat, stack, split
    let at = |i: usize, j: usize| x.data[i * 33 + j];
    let want = Host::from_fn(&[2, 5], |k| at(1 + k / 5, 3 + k % 5));
    expect("slice([1, 3], [2, 5])", tx.slice([1, 3], [2, 5]), &want, EXACT).await;
    let want = Host::from_fn(&[3, 30], |k| at(1 + k / 30, 3 + k % 30));
    expect("slice([1, 3]) to the end", tx.slice([1, 3], []), &want, EXACT).await;
    let want = Host::from_fn(&[6, 36], |k| {
        let (i, j) = (k / 36, k % 36);
        if (1..5).contains(&i) && (2..35).contains(&j) {
            at(i - 1, j - 2)
        } else {
            -9.0
        }
    });
    expect(
        "pad([[1,1],[2,1]], -9)",
        tx.pad([(1, 1), (2, 1)], -9.0),
        &want,
        EXACT,
    )
    .await;
    let small = Host::from_fn(&[2, 3], |i| i as f32);
    let want = Host::from_fn(&[4, 9], |k| small.data[(k / 9 % 2) * 3 + k % 9 % 3]);
    expect("tile([2, 3])", small.upload(s).tile([2, 3]), &want, EXACT).await;
    let other3 = host(&[4, 5], |i| 100.0 + i as f32);
    let want = Host::from_fn(&[4, 38], |k| {
        let (i, j) = (k / 38, k % 38);
        if j < 33 {
            at(i, j)
        } else {
            other3.data[i * 5 + j - 33]
        }
    });
    let to3 = other3.upload(s);
    expect("concat axis 1", s.concat(&[&tx, &to3], 1), &want, EXACT).await;
    let want = Host::from_fn(&[2, 4, 33], |k| x.data[k % 132]);
    expect("stack axis 0", s.stack(&[&tx, &tx], 0), &want, EXACT).await;
    let parts = tx.split(&[10, 23], 1).unwrap();
    let want = Host::from_fn(&[4, 23], |k| at(k / 23, 10 + k % 23));
    expect(
        "split [10, 23] along 1, second",
        Ok(parts.into_iter().nth(1).unwrap()),
        &want,
        EXACT,
    )
    .await;
    fails_unchanged("INVALID_ARGUMENT", "slice past the end", || {
        tx.slice([3, 0], [2, -1])
    });
    let ts = small.upload(s);
    fails_unchanged("SHAPE_MISMATCH", "concat of mismatched rows", || {
        s.concat(&[&tx, &ts], 1)
    });
    fails_unchanged("INVALID_ARGUMENT", "split sizes not summing to the axis", || {
        tx.split(&[10, 10], 1)
    });
    // the same in a program, and its JSON round trip
    let mut p = Program::new("windows");
    let n = p.input("x", DType::Float32, &[4, 33]).unwrap();
    let sl = p.slice(n, [0, 30], [-1, -1]).unwrap();
    let pd = p.pad(sl, [(0, 0), (1, 0)], 5.0).unwrap();
    let cat = p.join(&[pd, sl], 1, false).unwrap();
    p.output("cat", cat).unwrap();
    let json = p.to_json_string();
    assert_eq!(
        Program::from_json(&json).unwrap().to_json_string(),
        json,
        "windows round-trip in JSON"
    );
    let exe = s.compile(&p).unwrap();
    let got = exe.run(&[("x", &tx)], None).unwrap().pop().unwrap().1;
    let want = Host::from_fn(&[4, 7], |k| {
        let (i, j) = (k / 7, k % 7);
        match j {
            0 => 5.0,
            1..=3 => at(i, 29 + j),
            _ => at(i, 26 + j),
        }
    });
    expect("program slice → pad → concat", Ok(got), &want, EXACT).await;
    // prod over an axis (float32 within 1e-5·n relative; int32 exact, wrapping)
    let px = host(&[4, 33], |_| rng.f32_in(0.5, 1.5));
    let want = Host::from_fn(&[4], |r| {
        px.data[r * 33..(r + 1) * 33]
            .iter()
            .map(|&v| v as f64)
            .product::<f64>() as f32
    });
    let prod_tol = Tol::Close {
        rel: 33e-5,
        abs: 1e-6,
    };
    expect("prod(1) float32", px.upload(s).prod(&[1], false), &want, prod_tol).await;
    let pi = Host::from_fn(&[3, 5], |i| (i % 7) as i32 - 3);
    let want = Host::from_fn(&[1, 5], |c| {
        (0..3).fold(1i32, |acc, r| acc.wrapping_mul(pi.data[r * 5 + c]))
    });
    expect(
        "prod(0, keepDims) int32",
        pi.upload(s).prod(&[0], true),
        &want,
        EXACT,
    )
    .await;
    // cumsum along an axis: plain, exclusive, reverse (float32 within 1e-5·n, int32 exact)
    let cx = host(&[3, 9, 2], |_| rng.f32_in(-2.0, 2.0));
    let scan = |exclusive: bool, reverse: bool| {
        Host::from_fn(&[3, 9, 2], |i| {
            let (o, k, n) = (i / 18, (i / 2) % 9, i % 2);
            let ks: Vec<usize> = if reverse {
                (k..9).collect()
            } else {
                (0..=k).collect()
            };
            ks.into_iter()
                .filter(|&j| !(exclusive && j == k))
                .map(|j| cx.data[o * 18 + j * 2 + n] as f64)
                .sum::<f64>() as f32
        })
    };
    let scan_tol = Tol::Close { rel: 1e-5, abs: 1e-5 };
    let tc = cx.upload(s);
    expect(
        "cumsum(1)",
        tc.cumsum(1, false, false),
        &scan(false, false),
        scan_tol,
    )
    .await;
    expect(
        "cumsum(1, exclusive)",
        tc.cumsum(-2, true, false),
        &scan(true, false),
        scan_tol,
    )
    .await;
    expect(
        "cumsum(1, reverse)",
        tc.cumsum(1, false, true),
        &scan(false, true),
        scan_tol,
    )
    .await;
    let ci = Host::from_fn(&[5], |i| i as i32 + 1);
    let want = Host {
        shape: vec![5],
        data: vec![1, 3, 6, 10, 15],
    };
    expect("cumsum int32", ci.upload(s).cumsum(0, false, false), &want, EXACT).await;
    // lines of 5,000 (3 apart), halves: every partial sum exact in float32; on GPUs a workgroup scans
    // each line (5,000 is not a multiple of its 256 threads' runs)
    let (len, lines) = (5000usize, 3usize);
    let cl = Host::from_fn(&[2, len, lines], |i| ((i * 7) % 9) as f32 * 0.5 - 2.0);
    let tl = cl.upload(s);
    for (exclusive, reverse) in [(false, false), (true, true)] {
        let want = Host::from_fn(&[2, len, lines], |i| {
            let (o, k, n) = (i / (len * lines), (i / lines) % len, i % lines);
            let ks = if reverse { k..len } else { 0..k + 1 };
            ks.filter(|&j| !(exclusive && j == k))
                .map(|j| cl.data[(o * len + j) * lines + n] as f64)
                .sum::<f64>() as f32
        });
        let what = format!("cumsum along {len} (exclusive {exclusive}, reverse {reverse})");
        expect(&what, tl.cumsum(1, exclusive, reverse), &want, EXACT).await;
    }
    fails_unchanged("INVALID_ARGUMENT", "cumsum over a missing axis", || {
        tc.cumsum(3, false, false)
    });
    fails_unchanged("DTYPE_MISMATCH", "where with a float condition", || {
        tx.select(&tx, &tx)
    });
    fails_unchanged("DTYPE_MISMATCH", "oneHot of float32", || tx.one_hot(3));
    // rejected before the first kernel: the ledger does not move
    let ti = xi.upload(s);
    fails_unchanged("DTYPE_MISMATCH", "logSoftmax of int32", || ti.log_softmax(-1));
    fails_unchanged("INVALID_ARGUMENT", "clipByValue min > max", || {
        tx.clip_by_value(2.0, 1.0)
    });
    fails_unchanged("SHAPE_MISMATCH", "squeeze of a dim of 4", || tx.squeeze(&[0]));
    fails_unchanged("DTYPE_MISMATCH", "all of float32", || tx.all(&[], false));
    // the same composites as program nodes (fused where they can), dynamic rows
    let mut p = Program::new("composites");
    let n = p.input("x", DType::Float32, &[-1, 33]).unwrap();
    let ls = p.log_softmax(n, -1).unwrap();
    let lr = p.leaky_relu(n, 0.2).unwrap();
    let cl = p.clip_by_value(lr, -0.5, 0.5).unwrap();
    let ex = p.expand_dims(cl, 0).unwrap();
    let before = p.nodes().len();
    assert_eq!(
        p.log_softmax(n, 5).unwrap_err().code(),
        "INVALID_ARGUMENT",
        "axis 5 of rank 2"
    );
    assert_eq!(p.nodes().len(), before, "a rejected composite adds no node");
    p.output("ls", ls).unwrap();
    p.output("ex", ex).unwrap();
    let exe = s.compile(&p).unwrap();
    let mut out = exe.run(&[("x", &big.upload(s))], None).unwrap();
    let want_ex = Host::from_fn(&[1, 4, 33], |i| {
        let v = big.data[i];
        (if v > 0.0 { v } else { 0.2 * v }).clamp(-0.5, 0.5)
    });
    expect(
        "program leakyRelu → clip → expandDims",
        Ok(out.pop().unwrap().1),
        &want_ex,
        REL,
    )
    .await;
    let want_ls = Host::from_fn(&[4, 33], |i| (big.data[i] as f64 - lse[i / 33]) as f32);
    expect("program logSoftmax", Ok(out.pop().unwrap().1), &want_ls, tol).await;
}

/// Every op of [`UNARY`] and [`BINARY`], the comparisons and logical ops, integer forms, number
/// operands, and a fused program of new ops, against the reference.
pub async fn table_ops_match_f64_reference(s: &Session) {
    super::table_edges::switch_points_and_nan_match(s).await;
    let mut rng = Rng::new(0x7AB1E);
    let shape = [3, 67];
    // [3, 67] runs lane by lane, [4, 68] four elements a thread; and the op fused after two negations
    // (exact) runs as a chain: on whole vec4s at [4, 68] where the op has a vector form
    // (`kernels/vector.rs`), else component by component
    for (op, lo, hi, f, tol) in UNARY {
        for shape in [[3, 67], [4, 68]] {
            let mut x = host(&shape, |_| rng.f32_in(lo, hi));
            if matches!(op, UnaryOp::Round) {
                x.data[..6].copy_from_slice(&[0.5, 1.5, 2.5, -0.5, -1.5, -2.5]);
                // halves go to even
            }
            if matches!(op, UnaryOp::Softplus) {
                x.data[..2].copy_from_slice(&[100.0, -100.0]); // finite at ±100
            }
            let what = format!("{} float32 {shape:?}", op.name());
            expect(&what, x.upload(s).apply(&Op::Unary(op), &[]), &map(&x, f), tol).await;
            let chained = x
                .upload(s)
                .neg()
                .and_then(|t| t.neg())
                .and_then(|t| t.apply(&Op::Unary(op), &[]));
            expect(&format!("{what}, fused"), chained, &map(&x, f), tol).await;
        }
    }
    // integer forms: sign on int32, logicalNot on bool
    let xi = Host::from_fn(&shape, |_| rng.i32_in(-3, 3));
    let want = Host::from_fn(&shape, |i| xi.data[i].signum());
    expect("sign int32", xi.upload(s).sign(), &want, EXACT).await;
    let xb = Host::from_fn(&shape, |_| rng.one_in(2));
    let want = Host::from_fn(&shape, |i| !xb.data[i]);
    expect("logicalNot bool", xb.upload(s).logical_not(), &want, EXACT).await;
    let ti32 = xi.upload(s);
    fails_unchanged("DTYPE_MISMATCH", "logicalNot of int32", || ti32.logical_not());
    fails_unchanged("DTYPE_MISMATCH", "erf of int32", || ti32.erf());

    // float binary ops, lane by lane and on whole vec4s (as the unary ops above)
    for ((op, f, tol), shape) in BINARY.into_iter().flat_map(|c| [(c, [3, 67]), (c, [4, 68])]) {
        let a = host(&shape, |_| rng.f32_in(0.1, 10.0));
        let b = match op {
            BinaryOp::Pow => host(&shape, |_| rng.f32_in(-3.0, 3.0)),
            _ => host(&shape, |_| {
                rng.f32_in(0.3, 5.0) * if rng.one_in(2) { -1.0 } else { 1.0 }
            }),
        };
        let a = match op {
            // a = k·b + r with r in (0.2, 0.8)·|b|: away from the floor's jumps
            BinaryOp::Mod => zip(&a, &b, |_, bi| {
                (rng.i32_in(-5, 5) as f32 + rng.f32_in(0.2, 0.8)) * bi
            }),
            _ => a,
        };
        let want = zip(&a, &b, |x, y| f(x as f64, y as f64) as f32);
        let what = format!("{} float32 {shape:?}", op.name());
        expect(
            &what,
            a.upload(s).apply(&Op::Binary(op), &[&b.upload(s)]),
            &want,
            tol,
        )
        .await;
        let (ta, tb) = (a.upload(s), b.upload(s));
        let chained = ta
            .neg()
            .and_then(|t| t.neg())
            .and_then(|t| t.apply(&Op::Binary(op), &[&tb]));
        expect(&format!("{what}, fused"), chained, &want, tol).await;
    }
    // pow of a negative base: integer exponents keep the sign rule, fractional ones are NaN
    let base = Host {
        shape: vec![4],
        data: vec![-2.0f32, -2.0, -8.0, 0.0],
    };
    let expo = Host {
        shape: vec![4],
        data: vec![3.0f32, 2.0, 0.5, 0.0],
    };
    let got = base
        .upload(s)
        .pow(&expo.upload(s))
        .unwrap()
        .read::<f32>()
        .await
        .unwrap();
    assert_eq!(&got[..2], &[-8.0, 4.0]);
    assert!(got[2].is_nan() && got[3] == 1.0, "{got:?}");
    // maximum/minimum propagate NaN
    let nan = Host {
        shape: vec![2],
        data: vec![f32::NAN, 1.0],
    };
    let one = Host {
        shape: vec![2],
        data: vec![1.0f32, f32::NAN],
    };
    let got = nan
        .upload(s)
        .maximum(&one.upload(s))
        .unwrap()
        .read::<f32>()
        .await
        .unwrap();
    assert!(got.iter().all(|x| x.is_nan()), "{got:?}");
    // integer mod is floored (the sign of the divisor), maximum exact
    let ai = Host {
        shape: vec![6],
        data: vec![7i32, -7, 7, -7, 5, i32::MAX],
    };
    let bi = Host {
        shape: vec![6],
        data: vec![3i32, 3, -3, -3, 0, 2],
    };
    let want = Host {
        shape: vec![6],
        data: vec![1i32, 2, -2, -1, 5, 1],
    };
    expect("mod int32", ai.upload(s).modulo(&bi.upload(s)), &want, EXACT).await;
    let want = zip(&ai, &bi, |x, y| x.max(y));
    expect("maximum int32", ai.upload(s).maximum(&bi.upload(s)), &want, EXACT).await;

    // comparisons → bool, with broadcasting and equal values; logical ops on bool
    let a = host(&shape, |_| rng.i32_in(-3, 3) as f32);
    let row = Host {
        shape: vec![67],
        data: (0..67).map(|i| (i % 7) as f32 - 3.0).collect(),
    };
    let cmp: [(BinaryOp, CompareRef); 6] = [
        (BinaryOp::Equal, |x, y| x == y),
        (BinaryOp::NotEqual, |x, y| x != y),
        (BinaryOp::Greater, |x, y| x > y),
        (BinaryOp::GreaterEqual, |x, y| x >= y),
        (BinaryOp::Less, |x, y| x < y),
        (BinaryOp::LessEqual, |x, y| x <= y),
    ];
    for (op, f) in cmp {
        let want = Host::from_fn(&shape, |i| f(a.data[i], row.data[i % 67]));
        let what = format!("{} float32 [3, 67] with [67]", op.name());
        expect(
            &what,
            a.upload(s).apply(&Op::Binary(op), &[&row.upload(s)]),
            &want,
            EXACT,
        )
        .await;
    }
    let p = Host::from_fn(&shape, |_| rng.one_in(2));
    let q = Host::from_fn(&shape, |_| rng.one_in(3));
    expect(
        "logicalAnd",
        p.upload(s).logical_and(&q.upload(s)),
        &zip(&p, &q, |x, y| x && y),
        EXACT,
    )
    .await;
    expect(
        "logicalOr",
        p.upload(s).logical_or(&q.upload(s)),
        &zip(&p, &q, |x, y| x || y),
        EXACT,
    )
    .await;
    let ta = a.upload(s);
    fails_unchanged("DTYPE_MISMATCH", "logicalAnd of float32", || ta.logical_and(&ta));

    // number operands: a deferred op takes the number as a parameter word of its kernel (no
    // buffer); one that is not deferred (a comparison) makes a scalar of the tensor's dtype (4 B),
    // freed as soon as the op is recorded
    let x = host(&[5], |i| i as f32 - 2.0);
    let tx = x.upload(s);
    let live = s.stats().live_bytes;
    let y = tx.binary_scalar(BinaryOp::Mul, 2.0).unwrap();
    assert_eq!(s.stats().live_bytes, live + 20, "the result alone");
    compare(
        "mul by a number",
        &y.read::<f32>().await.unwrap(),
        &map(&x, |v| v * 2.0),
        EXACT,
    );
    assert_eq!(s.stats().live_bytes, live + 20, "only the result stays");
    let g = tx.binary_scalar(BinaryOp::Greater, 0.0).unwrap();
    assert_eq!(
        s.stats().live_bytes,
        live + 20 + g.byte_length(),
        "the comparison's result: its scalar was freed"
    );
    compare(
        "greater than a number",
        &g.read::<bool>().await.unwrap(),
        &Host::from_fn(&x.shape, |i| x.data[i] > 0.0),
        EXACT,
    );
    drop(g);
    let ti = s.tensor(&[1i32, 2, 3], &[3]).unwrap();
    fails_unchanged("INVALID_ARGUMENT", "1.5 is not an int32", || {
        ti.binary_scalar(BinaryOp::Add, 1.5)
    });

    // the same ops fused in a program: softplus(gelu(x) * 2 - x) > 1
    let mut prog = Program::new("fused_new_ops");
    let xi = prog.input("x", DType::Float32, &[-1]).unwrap();
    let g = prog.gelu(xi).unwrap();
    let g2 = prog.binary_scalar(BinaryOp::Mul, g, 2.0).unwrap();
    let d = prog.sub(g2, xi).unwrap();
    let sp = prog.softplus(d).unwrap();
    let gt = prog.binary_scalar(BinaryOp::Greater, sp, 1.0).unwrap();
    prog.output("sp", sp).unwrap();
    prog.output("gt", gt).unwrap();
    let exe = s.compile(&prog).unwrap();
    let x = host(&[257], |_| rng.f32_in(-4.0, 4.0));
    let mut out = exe.run(&[("x", &x.upload(s))], None).unwrap();
    fn gelu(v: f64) -> f64 {
        0.5 * v * (1.0 + erf(v / std::f64::consts::SQRT_2))
    }
    let want_sp = map(&x, |v| {
        let d = 2.0 * gelu(v) - v;
        d.max(0.0) + (-d.abs()).exp().ln_1p()
    });
    let gt_t = out.pop().unwrap().1;
    let sp_t = out.pop().unwrap().1;
    let sp_v = sp_t.read::<f32>().await.unwrap();
    compare(
        "fused softplus(gelu(x)·2 − x)",
        &sp_v,
        &want_sp,
        Tol::Close { rel: 1e-5, abs: 2e-6 },
    );
    let gt_v = gt_t.read::<bool>().await.unwrap();
    let want_gt = Host::from_fn(&[257], |i| sp_v[i] > 1.0);
    compare("… > 1 (bool, not fused)", &gt_v, &want_gt, EXACT);
    composites_match_f64_reference(s).await;
}
