//! Gradient cases, part one: unary and binary elementwise ops (with broadcasting) and reductions,
//! softmax and cumsum over axes, each with its float64 forward reference.

use super::*;

pub(super) fn unary_cases() -> Vec<Case> {
    let s: &[usize] = &[2, 5];
    let u = |name: &str, op: UnaryOp, lo: f32, hi: f32, avoid: f32, f: fn(f64) -> f64| {
        case(
            name,
            &[(s, lo, hi, avoid)],
            Box::new(move |p, x| p.op(Op::Unary(op), &[x[0]])),
            map(f),
        )
    };
    vec![
        u("neg", UnaryOp::Neg, -2.0, 2.0, 0.0, |x| -x),
        u("abs", UnaryOp::Abs, -2.0, 2.0, 0.1, f64::abs),
        u("square", UnaryOp::Square, -2.0, 2.0, 0.0, |x| x * x),
        u("sqrt", UnaryOp::Sqrt, 0.5, 4.0, 0.0, f64::sqrt),
        u("exp", UnaryOp::Exp, -2.0, 2.0, 0.0, f64::exp),
        u("log", UnaryOp::Log, 0.5, 4.0, 0.0, f64::ln),
        u("relu", UnaryOp::Relu, -2.0, 2.0, 0.1, |x| x.max(0.0)),
        u("sigmoid", UnaryOp::Sigmoid, -3.0, 3.0, 0.0, |x| {
            1.0 / (1.0 + (-x).exp())
        }),
        u("tanh", UnaryOp::Tanh, -2.0, 2.0, 0.0, f64::tanh),
        u(
            "floor (zero gradient)",
            UnaryOp::Floor,
            -3.0,
            3.0,
            0.0,
            f64::floor,
        ),
        u(
            "round (zero gradient)",
            UnaryOp::Round,
            -3.0,
            3.0,
            0.0,
            f64::round,
        ),
        u("sign (zero gradient)", UnaryOp::Sign, -3.0, 3.0, 0.1, f64::signum),
        u("reciprocal", UnaryOp::Reciprocal, 0.5, 3.0, 0.0, |x| 1.0 / x),
        u("rsqrt", UnaryOp::Rsqrt, 0.5, 4.0, 0.0, |x| 1.0 / x.sqrt()),
        u("log1p", UnaryOp::Log1p, -0.5, 3.0, 0.0, f64::ln_1p),
        u("expm1", UnaryOp::Expm1, -2.0, 2.0, 0.0, f64::exp_m1),
        u("sin", UnaryOp::Sin, -3.0, 3.0, 0.0, f64::sin),
        u("cos", UnaryOp::Cos, -3.0, 3.0, 0.0, f64::cos),
        u("erf", UnaryOp::Erf, -2.0, 2.0, 0.0, erf),
        u("gelu", UnaryOp::Gelu, -3.0, 3.0, 0.0, |x| {
            0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2))
        }),
        u("silu", UnaryOp::Silu, -3.0, 3.0, 0.0, |x| x / (1.0 + (-x).exp())),
        u("softplus", UnaryOp::Softplus, -3.0, 3.0, 0.0, |x| x.exp().ln_1p()),
        u(
            "hardSwish (between the ends)",
            UnaryOp::HardSwish,
            -2.9,
            2.9,
            0.0,
            |x| x * (x / 6.0 + 0.5),
        ),
        u("hardSwish (the ends)", UnaryOp::HardSwish, -5.0, 5.0, 3.1, |x| {
            x * (x / 6.0 + 0.5).clamp(0.0, 1.0)
        }),
        u("elu", UnaryOp::Elu, -2.0, 2.0, 0.1, |x| {
            if x > 0.0 {
                x
            } else {
                x.exp_m1()
            }
        }),
    ]
}

pub(super) fn binary_cases() -> Vec<Case> {
    let b = |name: &str,
             op: BinaryOp,
             sa: &[usize],
             sb: &[usize],
             ra: (f32, f32),
             rb: (f32, f32),
             f: fn(f64, f64) -> f64| {
        let (sa2, sb2) = (sa.to_vec(), sb.to_vec());
        case(
            name,
            &[(sa, ra.0, ra.1, 0.0), (sb, rb.0, rb.1, 0.0)],
            Box::new(move |p, x| p.op(Op::Binary(op), &[x[0], x[1]])),
            Box::new(move |x| broadcast(&x[0], &sa2, &x[1], &sb2, f)),
        )
    };
    let (m, row, col): (&[usize], &[usize], &[usize]) = (&[3, 4], &[4], &[3, 1]);
    vec![
        b(
            "add, broadcast [4]",
            BinaryOp::Add,
            m,
            row,
            (-2.0, 2.0),
            (-2.0, 2.0),
            |a, b| a + b,
        ),
        b(
            "sub, broadcast [3, 1]",
            BinaryOp::Sub,
            m,
            col,
            (-2.0, 2.0),
            (-2.0, 2.0),
            |a, b| a - b,
        ),
        b(
            "mul, broadcast [4]",
            BinaryOp::Mul,
            m,
            row,
            (-2.0, 2.0),
            (-2.0, 2.0),
            |a, b| a * b,
        ),
        b(
            "div, broadcast [3, 1]",
            BinaryOp::Div,
            m,
            col,
            (-2.0, 2.0),
            (0.5, 2.0),
            |a, b| a / b,
        ),
        b("pow", BinaryOp::Pow, m, col, (0.5, 2.0), (-2.0, 2.0), f64::powf),
        b(
            "maximum",
            BinaryOp::Maximum,
            m,
            row,
            (-2.0, 2.0),
            (-2.0, 2.0),
            f64::max,
        ),
        b(
            "minimum",
            BinaryOp::Minimum,
            m,
            m,
            (-2.0, 2.0),
            (-2.0, 2.0),
            f64::min,
        ),
        b("mod", BinaryOp::Mod, m, row, (-3.0, 3.0), (0.7, 1.3), |a, b| {
            a - b * (a / b).floor()
        }),
        b(
            "squaredDifference",
            BinaryOp::SquaredDifference,
            m,
            row,
            (-2.0, 2.0),
            (-2.0, 2.0),
            |a, b| (a - b) * (a - b),
        ),
    ]
}

pub(super) fn reduction_cases() -> Vec<Case> {
    let s: &[usize] = &[3, 4];
    let sum = |g: &[f64]| g.iter().sum::<f64>();
    vec![
        case(
            "sum(axis 1)",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.sum(x[0], &[1], false)),
            Box::new(move |x| reduce(&x[0], &[3, 4], &[1], sum)),
        ),
        case(
            "mean(axis 0, keepDims)",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.mean(x[0], &[0], true)),
            Box::new(|x| reduce(&x[0], &[3, 4], &[0], |g| g.iter().sum::<f64>() / g.len() as f64)),
        ),
        case(
            "max(all)",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.max(x[0], &[], false)),
            Box::new(|x| {
                reduce(&x[0], &[3, 4], &[0, 1], |g| {
                    g.iter().copied().fold(f64::MIN, f64::max)
                })
            }),
        ),
        case(
            "min(axis -1)",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.min(x[0], &[-1], false)),
            Box::new(|x| {
                reduce(&x[0], &[3, 4], &[1], |g| {
                    g.iter().copied().fold(f64::MAX, f64::min)
                })
            }),
        ),
        case(
            "prod(axis 1)",
            &[(s, 0.5, 1.5, 0.0)],
            Box::new(|p, x| p.prod(x[0], &[1], false)),
            Box::new(|x| reduce(&x[0], &[3, 4], &[1], |g| g.iter().product())),
        ),
        case(
            "logSumExp(axis 1)",
            &[(s, -3.0, 3.0, 0.0)],
            Box::new(|p, x| p.log_sum_exp(x[0], &[1], false)),
            Box::new(|x| {
                reduce(&x[0], &[3, 4], &[1], |g| {
                    g.iter().map(|v| v.exp()).sum::<f64>().ln()
                })
            }),
        ),
        case(
            "softmax(-1)",
            &[(&[3, 5], -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.softmax(x[0], -1)),
            Box::new(|x| softmax_rows(&x[0], 5)),
        ),
        case(
            "cumsum(1, reverse)",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.cumsum(x[0], 1, false, true)),
            Box::new(|x| {
                x[0].chunks(4)
                    .flat_map(|r| (0..4).map(|j| r[j..].iter().sum::<f64>()).collect::<Vec<_>>())
                    .collect()
            }),
        ),
    ]
}
