//! The accuracy table of the float32 unary ops (docs/accuracy.md): each op over its useful ranges —
//! large and small magnitudes, denormals — against float64 of the same float32 inputs, on this
//! machine's adapter (lavapipe in CI), with ±∞ and NaN checked apart. Prints the markdown table.
//!
//! Run: `cargo run --release --example accuracy` (the browser's: `node scripts/accuracy.mjs`).

#[cfg(not(target_arch = "wasm32"))]
fn main() -> affon::Result<()> {
    native::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {} // natively only: the browser's half is scripts/accuracy.mjs

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use affon::ops::{Op, UnaryOp};
    use affon::{Session, SessionOptions};

    /// Points per range: a grid (linear, or geometric for ranges spanning decades) plus both signs.
    const POINTS: usize = 4096;

    /// `(op, float64 reference, ranges)`; a range is `(lo, hi, geometric)`.
    type Case = (UnaryOp, fn(f64) -> f64, &'static [(f64, f64, bool)]);

    fn erf(x: f64) -> f64 {
        libm::erf(x)
    }

    fn cases() -> Vec<Case> {
        use UnaryOp as U;
        const WIDE: &[(f64, f64, bool)] = &[(-10.0, 10.0, false), (1e-30, 1e30, true), (1e-44, 1e-38, true)];
        const TRIG: &[(f64, f64, bool)] = &[
            (-std::f64::consts::PI, std::f64::consts::PI, false),
            (-100.0, 100.0, false),
            (1e-30, 1e5, true),
            (1e-44, 1e-38, true),
        ];
        vec![
            (U::Neg, |x| -x, WIDE),
            (U::Abs, f64::abs, WIDE),
            (U::Square, |x| x * x, &[(-10.0, 10.0, false), (1e-19, 1e19, true)]),
            (
                U::Sqrt,
                f64::sqrt,
                &[(0.0, 10.0, false), (1e-38, 1e38, true), (1e-44, 1e-38, true)],
            ),
            (U::Exp, f64::exp, &[(-10.0, 10.0, false), (-87.0, 88.0, false)]),
            (U::Log, f64::ln, &[(0.5, 2.0, false), (1e-37, 1e38, true)]),
            (U::Relu, |x| if x.is_nan() { x } else { x.max(0.0) }, WIDE),
            (
                U::Sigmoid,
                |x| 1.0 / (1.0 + (-x).exp()),
                &[(-10.0, 10.0, false), (-80.0, 80.0, false)],
            ),
            (
                U::Tanh,
                f64::tanh,
                &[(-1.0, 1.0, false), (-10.0, 10.0, false), (1e-30, 1e30, true)],
            ),
            (U::Floor, f64::floor, WIDE),
            (U::Ceil, f64::ceil, WIDE),
            (U::Round, round_even, WIDE),
            (U::Sign, sign, WIDE),
            (
                U::Reciprocal,
                |x| 1.0 / x,
                &[(0.5, 2.0, false), (1e-37, 1e37, true)],
            ),
            (
                U::Rsqrt,
                |x| 1.0 / x.sqrt(),
                &[(0.5, 2.0, false), (1e-37, 1e37, true)],
            ),
            (U::Log1p, f64::ln_1p, &[(-0.99, 10.0, false), (1e-30, 1e30, true)]),
            (
                U::Expm1,
                f64::exp_m1,
                &[(-10.0, 10.0, false), (1e-30, 88.0, true)],
            ),
            (U::Sin, f64::sin, TRIG),
            (U::Cos, f64::cos, TRIG),
            (U::Erf, erf, &[(-4.0, 4.0, false), (1e-30, 10.0, true)]),
            (
                U::Gelu,
                |x| 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2)),
                &[(-6.0, 6.0, false), (1e-30, 1e3, true)],
            ),
            (
                U::Silu,
                |x| x / (1.0 + (-x).exp()),
                &[(-20.0, 20.0, false), (1e-30, 1e30, true)],
            ),
            (
                U::Softplus,
                |x| x.max(0.0) + (-x.abs()).exp().ln_1p(),
                &[(-20.0, 20.0, false), (1e-30, 1e30, true)],
            ),
            (
                U::Elu,
                |x| if x > 0.0 { x } else { x.exp_m1() },
                &[(-10.0, 10.0, false), (1e-30, 1e30, true)],
            ),
            (
                U::HardSwish,
                hard_swish,
                &[(-6.0, 6.0, false), (1e-30, 1e30, true)],
            ),
        ]
    }

    fn round_even(x: f64) -> f64 {
        let r = x.round();
        if (x - x.trunc()).abs() == 0.5 {
            2.0 * (x / 2.0).round()
        } else {
            r
        }
    }

    fn sign(x: f64) -> f64 {
        if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            x * 0.0 // ±0 stays 0, NaN stays NaN
        }
    }

    /// 0 from −3 down (−∞ included), x from 3 up.
    fn hard_swish(x: f64) -> f64 {
        match x {
            x if x <= -3.0 => 0.0,
            x if x >= 3.0 => x,
            x => x * (x / 6.0 + 0.5),
        }
    }

    /// The float32 inputs of one range: a grid of `POINTS`, geometric over magnitudes (both signs) or
    /// linear.
    fn inputs(lo: f64, hi: f64, geometric: bool) -> Vec<f32> {
        let t = |i: usize| i as f64 / (POINTS / 2 - 1) as f64;
        if geometric {
            let (a, b) = (lo.ln(), hi.ln());
            (0..POINTS / 2)
                .flat_map(|i| {
                    let v = (a + (b - a) * t(i)).exp() as f32;
                    [v, -v]
                })
                .collect()
        } else {
            (0..POINTS)
                .map(|i| (lo + (hi - lo) * (i as f64 / (POINTS - 1) as f64)) as f32)
                .collect()
        }
    }

    /// Largest absolute and relative error of `got` against `f` of the inputs (relative only where the
    /// reference is at least 1e-30 in magnitude), and the criterion's: absolute where the reference is
    /// below 1 in magnitude, relative above; all skip inputs whose reference is not finite.
    fn errors(xs: &[f32], got: &[f32], f: fn(f64) -> f64) -> (f64, f64, f64) {
        let mut worst = (0.0f64, 0.0f64, 0.0f64);
        for (&x, &g) in xs.iter().zip(got) {
            let w = f(x as f64);
            if !w.is_finite() || w.abs() > f32::MAX as f64 {
                continue;
            }
            let abs = (g as f64 - w).abs();
            worst.0 = worst.0.max(abs);
            if w.abs() >= 1e-30 {
                worst.1 = worst.1.max(abs / w.abs());
            }
            worst.2 = worst.2.max(abs / w.abs().max(1.0));
        }
        worst
    }

    /// Whether ±∞ and NaN give what float64 gives (NaN for NaN; the limit for ±∞).
    fn specials(s: &Session, op: UnaryOp, f: fn(f64) -> f64) -> affon::Result<String> {
        let xs = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
        let got = s.tensor(&xs, &[3])?.apply(&Op::Unary(op), &[])?.to_vec::<f32>()?;
        let bad: Vec<String> = xs
            .iter()
            .zip(&got)
            .filter(|(&x, &g)| {
                let w = f(x as f64) as f32;
                !(w.is_nan() && g.is_nan() || w == g)
            })
            .map(|(x, g)| format!("{x} → {g}"))
            .collect();
        Ok(if bad.is_empty() {
            "as float64".into()
        } else {
            bad.join(", ")
        })
    }

    pub fn main() -> affon::Result<()> {
        let s = Session::new(SessionOptions::default())?;
        println!("Adapter: {} ({}).\n", s.adapter().name, s.adapter().backend);
        println!("| op | range | max abs error | max rel error | criterion | ±∞, NaN |");
        println!("|---|---|---:|---:|---:|---|");
        for (op, f, ranges) in cases() {
            let special = specials(&s, op, f)?;
            for &(lo, hi, geometric) in ranges {
                let xs = inputs(lo, hi, geometric);
                let got = s
                    .tensor(&xs, &[xs.len()])?
                    .apply(&Op::Unary(op), &[])?
                    .to_vec::<f32>()?;
                let (abs, rel, mixed) = errors(&xs, &got, f);
                let range = match geometric {
                    true => format!("±[{lo:e}, {hi:e}]"),
                    false => format!("[{lo}, {hi}]"),
                };
                let mark = if mixed <= 1e-6 { "" } else { " ✗" };
                println!(
                    "| `{}` | {range} | {abs:.1e} | {rel:.1e} | {mixed:.1e}{mark} | {special} |",
                    op.name()
                );
            }
        }
        Ok(())
    }
}
