//! The elementwise ops of the op table (`src/ops/table.rs`) added beyond the first 13, against a
//! float64 CPU reference written here, on both GPU targets; plus number operands and the same ops
//! fused inside a compiled program. One description per op ([`UNARY`], [`BINARY`]).
//!
//! Tolerances (`|g − w| ≤ rel·|w| + abs`, NaN matches NaN, infinities exactly):
//! - exact: `floor ceil round sign logicalNot`, `maximum minimum squaredDifference`, every
//!   comparison and logical op, every integer result, `mod` on inputs away from the floor's jumps;
//! - rel 1e-5, abs 1e-6: `reciprocal rsqrt log1p expm1 silu softplus elu hardSwish pow`;
//! - abs 1e-6 (+ rel 1e-5): `erf gelu` (the kernel's rational approximation is within 1.5e-7);
//! - abs 5e-4 on `[-π, π]`: `sin cos` (WGSL allows 2⁻¹¹ absolute there).

use affon::ops::{BinaryOp, Op, UnaryOp};
use affon::{DType, Program, Session};

use super::ledger::fails_unchanged;
use super::ops::{compare, expect, Host, Rng, Tol, REL};

pub(super) const EXACT: Tol = Tol::Exact;
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
const UNARY: [(UnaryOp, f32, f32, UnaryRef, Tol); 17] = [
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
    (
        UnaryOp::HardSwish,
        -6.0,
        6.0,
        |x| x * (x / 6.0 + 0.5).clamp(0.0, 1.0),
        REL,
    ),
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

/// Every op of [`UNARY`] and [`BINARY`], the comparisons and logical ops, integer forms, number
/// operands, and a fused program of new ops, against the reference.
pub async fn table_ops_match_f64_reference(s: &Session) {
    super::table_edges::switch_points_and_nan_match(s).await;
    super::table_edges::vector_chains_cover_every_length(s).await;
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
    super::table_composites::composites_match_f64_reference(s).await;
}
