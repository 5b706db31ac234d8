//! Where the op table's bodies choose between values rather than compute one: NaN through relu,
//! maximum and minimum (tested on the bits, chosen with `select`), and the formula switches of
//! log1p, expm1, softplus and elu — in scalar lanes, vec4 lanes and fused chains (on whole vectors:
//! `kernels/vector.rs`), against float64 references written here.

use affon::ops::{BinaryOp, Op, UnaryOp};
use affon::Session;

use super::composite::dispatches;
use super::ops::{expect, Host, Rng, Tol, REL};
use super::table::EXACT;
use super::table::{host, map, UnaryRef};

/// A float64 reference of a binary op.
type BinaryRef = fn(f64, f64) -> f64;

/// The first ops of the table (their cases are in `ops.rs`) fused after two (exact) negations at
/// [4, 68]: each runs on whole vec4s there (`kernels/vector.rs`), so a vector form that does not
/// compile or computes something else fails here on both targets.
async fn first_ops_on_vectors_match(s: &Session) {
    let mut rng = Rng::new(0x7EC4);
    let x = host(&[4, 68], |_| {
        rng.f32_in(0.1, 4.0) * if rng.one_in(2) { -1.0 } else { 1.0 }
    });
    let pos = host(&[4, 68], |_| rng.f32_in(0.1, 4.0));
    let unary: [(UnaryOp, UnaryRef, &Host<f32>); 9] = [
        (UnaryOp::Neg, |v| -v, &x),
        (UnaryOp::Abs, f64::abs, &x),
        (UnaryOp::Square, |v| v * v, &x),
        (UnaryOp::Relu, |v| v.max(0.0), &x),
        (UnaryOp::Sqrt, f64::sqrt, &pos),
        (UnaryOp::Exp, f64::exp, &x),
        (UnaryOp::Log, f64::ln, &pos),
        (UnaryOp::Sigmoid, |v| 1.0 / (1.0 + (-v).exp()), &x),
        (UnaryOp::Tanh, f64::tanh, &x),
    ];
    for (op, f, input) in unary {
        let t = input.upload(s);
        let got = t
            .neg()
            .and_then(|t| t.neg())
            .and_then(|t| t.apply(&Op::Unary(op), &[]));
        expect(
            &format!("{} float32 [4, 68], fused", op.name()),
            got,
            &map(input, f),
            REL,
        )
        .await;
    }
    let binary: [(BinaryOp, BinaryRef); 4] = [
        (BinaryOp::Add, |a, b| a + b),
        (BinaryOp::Sub, |a, b| a - b),
        (BinaryOp::Mul, |a, b| a * b),
        (BinaryOp::Div, |a, b| a / b),
    ];
    for (op, f) in binary {
        let want = Host::from_fn(&[4, 68], |i| f(x.data[i] as f64, pos.data[i] as f64) as f32);
        let (a, b) = (x.upload(s), pos.upload(s));
        let got = a
            .neg()
            .and_then(|t| t.neg())
            .and_then(|t| t.apply(&Op::Binary(op), &[&b]));
        expect(&format!("{} float32 [4, 68], fused", op.name()), got, &want, REL).await;
    }
}

pub async fn switch_points_and_nan_match(s: &Session) {
    first_ops_on_vectors_match(s).await;
    trig_is_accurate_up_to_1e5(s).await;
    // the bodies that choose between formulas, at the points where they switch (x so small that 1 + x or
    // eˣ rounds to 1, ±0, past ±1, where eˣ overflows or reaches -1 in float32), in scalar lanes (11) and vec4
    // lanes (12)
    let edges = [
        0.0f32, -0.0, 1e-8, -1e-8, 1e-30, -1e-30, 0.75, -1.5, 50.0, -50.0, 100.0, -100.0,
    ];
    let edge_cases: [(UnaryOp, UnaryRef, f32, f32); 4] = [
        (UnaryOp::Log1p, f64::ln_1p, -0.99, 100.0),  // log1p takes x > -1
        (UnaryOp::Expm1, f64::exp_m1, -100.0, 88.0), // eˣ overflows float32 past 88.7
        (
            UnaryOp::Softplus,
            |x| x.max(0.0) + (-x.abs()).exp().ln_1p(),
            -100.0,
            100.0,
        ),
        (
            UnaryOp::Elu,
            |x| if x > 0.0 { x } else { x.exp_m1() },
            -100.0,
            100.0,
        ),
    ];
    for (op, f, lo, hi) in edge_cases {
        for n in [11usize, 12] {
            let x = host(&[n], |i| edges[i].clamp(lo, hi));
            let what = format!("{} float32 at its switch points, n={n}", op.name());
            expect(&what, x.upload(s).apply(&Op::Unary(op), &[]), &map(&x, f), REL).await;
        }
    }
    // NaN in is NaN out, and log and log1p below their domain are NaN, in scalar (11) and vec4 (12)
    // lanes: on SwiftShader the WGSL built-ins gave exp(NaN) = +∞, log(NaN) = 89.1, log(−∞) = 88.7
    let odd = [
        f32::NAN,
        f32::NEG_INFINITY,
        -2.0,
        0.5,
        f32::NAN,
        1.0,
        -0.5,
        0.0,
        f32::INFINITY,
        -1e-30,
        -1.0,
        f32::NAN,
    ];
    let domain: [(UnaryOp, UnaryRef); 5] = [
        (UnaryOp::Exp, f64::exp),
        (UnaryOp::Log, f64::ln),
        (UnaryOp::Sigmoid, |x| 1.0 / (1.0 + (-x).exp())),
        (UnaryOp::Softplus, |x| {
            if x.is_nan() {
                x
            } else {
                x.max(0.0) + (-x.abs()).exp().ln_1p()
            }
        }),
        (UnaryOp::Log1p, f64::ln_1p),
    ];
    for (op, f) in domain {
        for n in [11usize, 12] {
            let x = host(&[n], |i| odd[i]);
            let what = format!("{} float32 at NaN, ±∞ and outside its domain, n={n}", op.name());
            expect(&what, x.upload(s).apply(&Op::Unary(op), &[]), &map(&x, f), REL).await;
        }
    }
    // log1p at +∞ (itself, not inf·inf/inf), at −1 (−∞) and NaN
    let x = host(&[3], |i| [f32::INFINITY, -1.0, f32::NAN][i]);
    let want = host(&[3], |i| [f32::INFINITY, f32::NEG_INFINITY, f32::NAN][i]);
    let y = x.upload(s).apply(&Op::Unary(UnaryOp::Log1p), &[]);
    expect("log1p at +∞, −1 and NaN", y, &want, super::table::EXACT).await;
    // hardSwish at its ends, ±∞ and NaN: 0 from -3 down, x from 3 up, NaN through
    let ends = [
        f32::NEG_INFINITY,
        -4.0,
        -3.0,
        -2.999,
        -0.0,
        0.0,
        1e-30,
        2.999,
        3.0,
        4.0,
        f32::INFINITY,
        f32::NAN,
    ];
    for n in [11usize, 12] {
        let x = host(&[n], |i| ends[i]);
        let what = format!("hardSwish float32 at its ends, n={n}");
        let f: UnaryRef = |x| match x {
            x if x <= -3.0 => 0.0,
            x if x >= 3.0 => x,
            x => x * (x / 6.0 + 0.5),
        };
        let y = x.upload(s).apply(&Op::Unary(UnaryOp::HardSwish), &[]);
        expect(&what, y, &map(&x, f), REL).await;
    }
    // minimum and relu too, in every kernel form that carries them: scalar lanes (3 elements), vec4
    // lanes (8) and a fused chain (relu → minimum → maximum, one kernel); ±∞ and ordinary values
    // beside the NaN keep their results
    for n in [3usize, 8] {
        let xs: Vec<f32> = (0..n)
            .map(|i| [f32::NAN, -2.0, f32::INFINITY, 1.5][i % 4])
            .collect();
        let ys: Vec<f32> = (0..n)
            .map(|i| [1.0, f32::NAN, f32::NEG_INFINITY, -0.5][i % 4])
            .collect();
        let (x, y) = (s.tensor(&xs, &[n]).unwrap(), s.tensor(&ys, &[n]).unwrap());
        let same = |got: Vec<f32>, want: &dyn Fn(f32, f32) -> f32, what: &str| {
            for (i, g) in got.iter().enumerate() {
                let w = want(xs[i], ys[i]);
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{what} n={n} [{i}]: {g} vs {w}"
                );
            }
        };
        let nan_min = |a: f32, b: f32| {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else {
                a.min(b)
            }
        };
        let nan_max = |a: f32, b: f32| {
            if a.is_nan() || b.is_nan() {
                f32::NAN
            } else {
                a.max(b)
            }
        };
        let relu = |a: f32| if a.is_nan() { a } else { a.max(0.0) };
        same(
            x.minimum(&y).unwrap().read::<f32>().await.unwrap(),
            &nan_min,
            "minimum",
        );
        same(
            x.relu().unwrap().read::<f32>().await.unwrap(),
            &|a, _| relu(a),
            "relu",
        );
        let chain = x.relu().unwrap().minimum(&y).unwrap().maximum(&x).unwrap();
        same(
            chain.read::<f32>().await.unwrap(),
            &|a, b| nan_max(nan_min(relu(a), b), a),
            "relu → minimum → maximum",
        );
    }
}

/// Fused chains and single ops on whole vec4s at every remainder of the thread split: on a CPU
/// adapter a thread takes four vec4s a quarter of the output apart (`kernels/vec4.rs`), so 1–5, 17, 69 and 1,025
/// vec4s leave 0–3 of the last quarter's slots empty. Three siblings over x (one kernel writing
/// three outputs), with a leaf of the same shape and one repeated along rows, each element against
/// a float64 reference: a split that leaves a vec4 unvisited fails here (a thread count rounded down
/// did).
pub async fn vector_chains_cover_every_length(s: &Session) {
    let mut rng = Rng::new(0x4A5);
    for vectors in [1usize, 2, 3, 4, 5, 17, 69, 1025] {
        let shape = [vectors, 4];
        let x = host(&shape, |_| rng.f32_in(-2.0, 2.0));
        let y = host(&shape, |_| rng.f32_in(-2.0, 2.0));
        let bias = host(&[4], |_| rng.f32_in(-2.0, 2.0));
        let (tx, ty, tb) = (x.upload(s), y.upload(s), bias.upload(s));
        s.sync().await.unwrap();
        let d0 = dispatches(s);
        let a = tx.square().and_then(|t| t.neg()).unwrap();
        let b = tx.exp().and_then(|t| t.mul(&ty)).unwrap();
        let c = tx.abs().and_then(|t| t.add(&tb)).unwrap();
        s.sync().await.unwrap();
        assert_eq!(
            dispatches(s) - d0,
            1,
            "{vectors} vec4s: the three siblings in one kernel"
        );
        let at = |h: &Host<f32>, i: usize| h.data[i] as f64;
        let wants: [(&str, _, Host<f32>); 3] = [
            (
                "-(x²)",
                a,
                Host::from_fn(&shape, |i| -(at(&x, i) * at(&x, i)) as f32),
            ),
            (
                "exp(x)·y",
                b,
                Host::from_fn(&shape, |i| (at(&x, i).exp() * at(&y, i)) as f32),
            ),
            (
                "|x| + bias",
                c,
                Host::from_fn(&shape, |i| (at(&x, i).abs() + at(&bias, i % 4)) as f32),
            ),
        ];
        for (what, got, want) in wants {
            expect(&format!("{what}, {vectors} vec4s"), Ok(got), &want, REL).await;
        }
        // one op alone runs its own vec4 kernel (`unary4.wgsl`, `binary4.wgsl`), split the same way
        let alone: [(&str, affon::Result<affon::Tensor>, Host<f32>); 2] = [
            (
                "exp(x) alone",
                tx.exp(),
                Host::from_fn(&shape, |i| at(&x, i).exp() as f32),
            ),
            (
                "x · y alone",
                tx.mul(&ty),
                Host::from_fn(&shape, |i| (at(&x, i) * at(&y, i)) as f32),
            ),
        ];
        for (what, got, want) in alone {
            expect(&format!("{what}, {vectors} vec4s"), got, &want, REL).await;
        }
    }
}

/// `sin` and `cos` within 1e-6 absolute of float64 (of the float32 input) for |x| ≤ 1e5 (API.md:
/// rotary embeddings reach such arguments), near multiples of π/2 too; NaN for ±∞ and NaN.
async fn trig_is_accurate_up_to_1e5(s: &Session) {
    const TRIG_1E6: Tol = Tol::Close { rel: 0.0, abs: 1e-6 };
    let mut rng = Rng::new(0x7819);
    for hi in [std::f32::consts::PI, 100.0, 1e4, 1e5] {
        let mut x = host(&[4, 257], |_| rng.f32_in(-hi, hi));
        // near multiples of π/2, where the reduced argument is smallest relative to x
        for (i, k) in [1.0f64, 2.0, 3.0, 1001.0, 40_000.0, 63_661.0].iter().enumerate() {
            let m = (k * std::f64::consts::FRAC_PI_2) as f32;
            if m.abs() <= hi {
                x.data[2 * i] = m;
                x.data[2 * i + 1] = -m;
            }
        }
        x.data[20..24].copy_from_slice(&[0.0, -0.0, 1e-30, -1e-38]);
        for (op, f) in [(UnaryOp::Sin, f64::sin as UnaryRef), (UnaryOp::Cos, f64::cos)] {
            let what = format!("{} float32 on [-{hi}, {hi}]", op.name());
            let y = x.upload(s).apply(&Op::Unary(op), &[]);
            expect(&what, y, &map(&x, f), TRIG_1E6).await;
        }
    }
    let odd = host(&[3], |i| [f32::INFINITY, f32::NEG_INFINITY, f32::NAN][i]);
    for op in [UnaryOp::Sin, UnaryOp::Cos] {
        let nan = host(&[3], |_| f32::NAN);
        let what = format!("{} of ±∞ and NaN", op.name());
        expect(&what, odd.upload(s).apply(&Op::Unary(op), &[]), &nan, EXACT).await;
    }
}
