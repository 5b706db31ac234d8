//! `Program::grad` against central finite differences of float64 references written here, for
//! every differentiable op of the op table (broadcasting, reductions with axes, shape ops, `gather`,
//! `matmul`, convolutions, pooling, norms, softmax cross-entropy), on both GPU targets
//! (`native_gpu.rs`, `web.rs`); and the rejections (`INVALID_PROGRAM`, no node added).
//!
//! Each case builds `out = f(inputs)` and differentiates `L = Σ out · R` (R random, fixed) with
//! respect to every input. The reference is `(L(x + h·e) − L(x − h·e)) / 2h` per element, with
//! `h = 1e-4`, evaluated in float64 at the float32 input values. Tolerance per element:
//! `|g − fd| ≤ 1e-3 · (|fd| + max|fd| of that input) + 1e-5` (float32 forward and backward
//! arithmetic against an exact derivative; a wrong rule is off by O(1)).

use affon::ops::{BinaryOp, Op, Pad, Pair, UnaryOp};
use affon::program::NodeId;
use affon::{DType, Program, Session};

use super::nn::{conv_f64, pool_f64};
use super::ops::Rng;

type Build = Box<dyn Fn(&mut Program, &[NodeId]) -> affon::Result<NodeId>>;
type Reference = Box<dyn Fn(&[Vec<f64>]) -> Vec<f64>>;

/// One gradient check: inputs `(shape, lo, hi, avoid)` — values in `[lo, hi]` at least `avoid`
/// from 0 (kinks) — the program, and the float64 forward reference.
struct Case {
    name: String,
    inputs: Vec<(Vec<usize>, f32, f32, f32)>,
    build: Build,
    reference: Reference,
}

fn case(name: &str, inputs: &[(&[usize], f32, f32, f32)], build: Build, reference: Reference) -> Case {
    Case {
        name: name.into(),
        inputs: inputs
            .iter()
            .map(|(s, lo, hi, av)| (s.to_vec(), *lo, *hi, *av))
            .collect(),
        build,
        reference,
    }
}

fn map(f: fn(f64) -> f64) -> Reference {
    Box::new(move |x| x[0].iter().map(|&v| f(v)).collect())
}

/// NumPy broadcasting of `a` (shape `sa`) and `b` (shape `sb`) through `f`.
fn broadcast(a: &[f64], sa: &[usize], b: &[f64], sb: &[usize], f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
    let rank = sa.len().max(sb.len());
    let pad = |s: &[usize]| [vec![1; rank - s.len()], s.to_vec()].concat();
    let (pa, pb) = (pad(sa), pad(sb));
    let out: Vec<usize> = (0..rank).map(|i| pa[i].max(pb[i])).collect();
    let n: usize = out.iter().product();
    let index = |i: usize, s: &[usize]| {
        let (mut rem, mut at, mut stride) = (i, 0, 1);
        for d in (0..rank).rev() {
            let c = rem % out[d];
            rem /= out[d];
            if s[d] != 1 {
                at += c * stride;
            }
            stride *= s[d];
        }
        at
    };
    (0..n).map(|i| f(a[index(i, &pa)], b[index(i, &pb)])).collect()
}

/// `x` of shape `s` reduced over `axes` by `f` (which sees each group's values).
fn reduce(x: &[f64], s: &[usize], axes: &[usize], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    let kept: Vec<usize> = (0..s.len()).filter(|a| !axes.contains(a)).collect();
    let n_out: usize = kept.iter().map(|&a| s[a]).product();
    let mut groups = vec![vec![]; n_out];
    for (i, &v) in x.iter().enumerate() {
        let (mut rem, mut coords) = (i, vec![0; s.len()]);
        for d in (0..s.len()).rev() {
            coords[d] = rem % s[d];
            rem /= s[d];
        }
        let o = kept.iter().fold(0, |acc, &a| acc * s[a] + coords[a]);
        groups[o].push(v);
    }
    groups.iter().map(|g| f(g)).collect()
}

fn erf(x: f64) -> f64 {
    libm::erf(x)
}

fn unary_cases() -> Vec<Case> {
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
        u("elu", UnaryOp::Elu, -2.0, 2.0, 0.1, |x| {
            if x > 0.0 {
                x
            } else {
                x.exp_m1()
            }
        }),
    ]
}

fn binary_cases() -> Vec<Case> {
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

fn reduction_cases() -> Vec<Case> {
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

fn softmax_rows(x: &[f64], n: usize) -> Vec<f64> {
    x.chunks(n)
        .flat_map(|r| {
            let m = r.iter().copied().fold(f64::MIN, f64::max);
            let e: Vec<f64> = r.iter().map(|v| (v - m).exp()).collect();
            let z: f64 = e.iter().sum();
            e.into_iter().map(move |v| v / z)
        })
        .collect()
}

fn shape_cases() -> Vec<Case> {
    let s: &[usize] = &[3, 4];
    let at = |x: &[f64], r: usize, c: usize| x[r * 4 + c];
    vec![
        case(
            "reshape",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.reshape(x[0], vec![2, 6])),
            Box::new(|x| x[0].clone()),
        ),
        case(
            "transpose",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.transpose(x[0], Some(vec![1, 0]))),
            Box::new(move |x| (0..12).map(|i| at(&x[0], i % 3, i / 3)).collect()),
        ),
        case(
            "slice",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.slice(x[0], vec![1, 1], vec![2, 2])),
            Box::new(move |x| vec![at(&x[0], 1, 1), at(&x[0], 1, 2), at(&x[0], 2, 1), at(&x[0], 2, 2)]),
        ),
        case(
            "pad",
            &[(&[2, 2], -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.pad(x[0], vec![(1, 0), (0, 1)], 0.0)),
            Box::new(|x| vec![0.0, 0.0, 0.0, x[0][0], x[0][1], 0.0, x[0][2], x[0][3], 0.0]),
        ),
        case(
            "tile",
            &[(&[2, 2], -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.tile(x[0], vec![2, 1])),
            Box::new(|x| [x[0].clone(), x[0].clone()].concat()),
        ),
        case(
            "concat(axis 1)",
            &[(&[2, 2], -2.0, 2.0, 0.0), (&[2, 1], -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.join(&[x[0], x[1]], 1, false)),
            Box::new(|x| vec![x[0][0], x[0][1], x[1][0], x[0][2], x[0][3], x[1][1]]),
        ),
        case(
            "where (constant condition, broadcast b)",
            &[(s, -2.0, 2.0, 0.0), (&[4], -2.0, 2.0, 0.0)],
            Box::new(|p, x| {
                let c = p.constant(
                    &[1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0],
                    &[3, 4],
                    DType::Bool,
                )?;
                p.select(x[0], c, x[1])
            }),
            Box::new(|x| {
                let c = [1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0];
                (0..12)
                    .map(|i| if c[i] == 1 { x[0][i] } else { x[1][i % 4] })
                    .collect()
            }),
        ),
        case(
            "gather (embedding rows, repeats)",
            &[(&[5, 3], -2.0, 2.0, 0.0)],
            Box::new(|p, x| {
                let i = p.constant(&[4.0, 0.0, 2.0, 2.0], &[4], DType::Int32)?;
                p.gather(x[0], i, 0)
            }),
            Box::new(|x| {
                [4, 0, 2, 2]
                    .iter()
                    .flat_map(|&r| x[0][r * 3..r * 3 + 3].to_vec())
                    .collect()
            }),
        ),
        case(
            "gather (axis 1, 2-D indices)",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| {
                let i = p.constant(&[2.0, 0.0, 3.0, 3.0], &[2, 2], DType::Int32)?;
                p.gather(x[0], i, 1)
            }),
            Box::new(move |x| {
                (0..3)
                    .flat_map(|r| [2, 0, 3, 3].map(|c| at(&x[0], r, c)))
                    .collect()
            }),
        ),
        case(
            "clipByValue",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.clip_by_value(x[0], -1.0, 1.0)),
            Box::new(|x| x[0].iter().map(|v| v.clamp(-1.0, 1.0)).collect()),
        ),
        case(
            "x · oneHot(argMax x) (indices are constants)",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| {
                let am = p.arg_max(x[0], 1)?;
                let hot = p.one_hot(am, 4)?;
                p.mul(x[0], hot)
            }),
            Box::new(|x| {
                x[0].chunks(4)
                    .flat_map(|r| {
                        let m = (0..4).fold(0, |b, j| if r[j] > r[b] { j } else { b });
                        (0..4).map(move |j| if j == m { r[j] } else { 0.0 })
                    })
                    .collect()
            }),
        ),
    ]
}

/// `matmul(a, b, ta, tb)` for `M = 2, K = 3, N = 4`, each operand stored transposed when its flag is set.
fn matmul_t_case(ta: bool, tb: bool) -> Case {
    let sa: &[usize] = if ta { &[3, 2] } else { &[2, 3] };
    let sb: &[usize] = if tb { &[4, 3] } else { &[3, 4] };
    case(
        &format!("matmul (transposeA {ta}, transposeB {tb})"),
        &[(sa, -1.0, 1.0, 0.0), (sb, -1.0, 1.0, 0.0)],
        Box::new(move |p, x| p.matmul_t(x[0], x[1], ta, tb)),
        Box::new(move |x| {
            let a = |i: usize, k: usize| if ta { x[0][k * 2 + i] } else { x[0][i * 3 + k] };
            let b = |k: usize, j: usize| if tb { x[1][j * 3 + k] } else { x[1][k * 4 + j] };
            (0..8)
                .map(|o| (0..3).map(|k| a(o / 4, k) * b(k, o % 4)).sum())
                .collect()
        }),
    )
}

fn linear_and_norm_cases() -> Vec<Case> {
    vec![
        case(
            "matmul (batch broadcast)",
            &[(&[2, 3, 4], -1.0, 1.0, 0.0), (&[4, 2], -1.0, 1.0, 0.0)],
            Box::new(|p, x| p.matmul(x[0], x[1])),
            Box::new(|x| {
                (0..12)
                    .map(|i| {
                        let (b, r, c) = (i / 6, (i / 2) % 3, i % 2);
                        (0..4).map(|k| x[0][b * 12 + r * 4 + k] * x[1][k * 2 + c]).sum()
                    })
                    .collect()
            }),
        ),
        // op(a)·op(b) with a stored [2, 3] or [3, 2] and b [3, 4] or [4, 3]: M = 2, K = 3, N = 4
        matmul_t_case(false, true),
        matmul_t_case(true, false),
        matmul_t_case(true, true),
        case(
            "matmul then bias then relu (fused)",
            &[
                (&[3, 4], -1.0, 1.0, 0.0),
                (&[4, 2], -1.0, 1.0, 0.0),
                (&[2], -1.0, 1.0, 0.0),
            ],
            Box::new(|p, x| {
                let m = p.matmul(x[0], x[1])?;
                let b = p.add(m, x[2])?;
                p.relu(b)
            }),
            Box::new(|x| {
                (0..6)
                    .map(|i| {
                        let (r, c) = (i / 2, i % 2);
                        let d: f64 = (0..4).map(|k| x[0][r * 4 + k] * x[1][k * 2 + c]).sum();
                        (d + x[2][c]).max(0.0)
                    })
                    .collect()
            }),
        ),
        case(
            "layerNorm (x, gamma, beta)",
            &[
                (&[3, 6], -2.0, 2.0, 0.0),
                (&[6], 0.5, 1.5, 0.0),
                (&[6], -1.0, 1.0, 0.0),
            ],
            Box::new(|p, x| p.layer_norm(x[0], x[1], x[2], 1e-5)),
            Box::new(|x| {
                x[0].chunks(6)
                    .flat_map(|r| {
                        let mean = r.iter().sum::<f64>() / 6.0;
                        let var = r.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 6.0;
                        (0..6)
                            .map(move |j| (r[j] - mean) / (var + 1e-5).sqrt() * x[1][j] + x[2][j])
                            .collect::<Vec<_>>()
                    })
                    .collect()
            }),
        ),
        case(
            "batchNorm",
            &[
                (&[2, 3], -2.0, 2.0, 0.0),
                (&[3], -1.0, 1.0, 0.0),
                (&[3], 0.5, 2.0, 0.0),
            ],
            Box::new(|p, x| p.batch_norm(x[0], x[1], x[2], None, None, 1e-3)),
            Box::new(|x| {
                (0..6)
                    .map(|i| (x[0][i] - x[1][i % 3]) / (x[2][i % 3] + 1e-3).sqrt())
                    .collect()
            }),
        ),
        case(
            "softmax cross-entropy via logSoftmax",
            &[(&[4, 3], -2.0, 2.0, 0.0)],
            Box::new(|p, x| {
                let y = p.constant(
                    &[1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0],
                    &[4, 3],
                    DType::Float32,
                )?;
                let ls = p.log_softmax(x[0], -1)?;
                let t = p.mul(y, ls)?;
                let s = p.sum(t, &[1], false)?;
                let m = p.mean(s, &[], false)?;
                p.neg(m)
            }),
            Box::new(|x| {
                let hot = [0, 2, 1, 0];
                let l: f64 = x[0]
                    .chunks(3)
                    .enumerate()
                    .map(|(i, r)| {
                        let m = r.iter().copied().fold(f64::MIN, f64::max);
                        let lse = m + r.iter().map(|v| (v - m).exp()).sum::<f64>().ln();
                        r[hot[i]] - lse
                    })
                    .sum();
                vec![-l / 4.0]
            }),
        ),
    ]
}

fn nn_cases() -> Vec<Case> {
    let conv = |name: &str, xs: &[usize], fs: &[usize], s: Pair, pad: Pad, d: Pair, depthwise: bool| {
        let (xs2, fs2) = (xs.to_vec(), fs.to_vec());
        case(
            name,
            &[(xs, -1.0, 1.0, 0.0), (fs, -1.0, 1.0, 0.0)],
            Box::new(move |p, x| {
                if depthwise {
                    p.depthwise_conv2d(x[0], x[1], s, pad, d)
                } else {
                    p.conv2d(x[0], x[1], s, pad, d)
                }
            }),
            Box::new(move |x| conv_f64(&x[0], &xs2, &x[1], &fs2, s, pad, d, depthwise).1),
        )
    };
    let pool = |name: &str, xs: &[usize], size: Pair, s: Pair, pad: Pad, max: bool| {
        let xs2 = xs.to_vec();
        case(
            name,
            &[(xs, -2.0, 2.0, 0.0)],
            Box::new(move |p, x| {
                if max {
                    p.max_pool(x[0], size, s, pad)
                } else {
                    p.avg_pool(x[0], size, s, pad)
                }
            }),
            Box::new(move |x| pool_f64(&x[0], &xs2, size, s, pad, max).1),
        )
    };
    let (one, two) = (Pair::ONE, Pair(2, 2));
    vec![
        conv(
            "conv2d 'same', batch 2",
            &[2, 5, 5, 2],
            &[3, 3, 2, 3],
            one,
            Pad::SAME,
            one,
            false,
        ),
        conv(
            "conv2d stride 2 'valid'",
            &[1, 6, 6, 2],
            &[2, 2, 2, 2],
            two,
            Pad::VALID,
            one,
            false,
        ),
        conv(
            "conv2d dilation 2, pad 1",
            &[1, 5, 5, 1],
            &[2, 2, 1, 2],
            one,
            Pad::Explicit(1),
            two,
            false,
        ),
        conv(
            "conv2d pointwise (the matmul path)",
            &[1, 3, 3, 2],
            &[1, 1, 2, 3],
            one,
            Pad::SAME,
            one,
            false,
        ),
        conv(
            "depthwiseConv2d 'same', multiplier 2",
            &[1, 5, 5, 2],
            &[3, 3, 2, 2],
            one,
            Pad::SAME,
            one,
            true,
        ),
        conv(
            "depthwiseConv2d stride 2 'valid'",
            &[2, 6, 6, 2],
            &[3, 3, 2, 1],
            two,
            Pad::VALID,
            one,
            true,
        ),
        pool("maxPool 2/2 'valid'", &[1, 4, 4, 2], two, two, Pad::VALID, true),
        pool(
            "maxPool 3/1 'same'",
            &[1, 4, 5, 1],
            Pair(3, 3),
            one,
            Pad::SAME,
            true,
        ),
        pool(
            "avgPool 3/2 'same'",
            &[2, 5, 5, 2],
            Pair(3, 3),
            two,
            Pad::SAME,
            false,
        ),
        // stride past the window (cells in no window get 0) and padding cutting the edge windows
        pool(
            "maxPool 2/3 pad 1",
            &[1, 7, 8, 2],
            two,
            Pair(3, 3),
            Pad::Explicit(1),
            true,
        ),
        pool(
            "avgPool 2×3 / 3×2 pad 1",
            &[1, 7, 8, 1],
            Pair(2, 3),
            Pair(3, 2),
            Pad::Explicit(1),
            false,
        ),
    ]
}

/// Runs one case: the program's gradients against the finite differences of its reference.
async fn check(s: &Session, rng: &mut Rng, c: &Case) {
    let values: Vec<Vec<f32>> = c
        .inputs
        .iter()
        .map(|(shape, lo, hi, avoid)| {
            (0..shape.iter().product::<usize>())
                .map(|_| loop {
                    let v = rng.f32_in(*lo, *hi);
                    if v.abs() >= *avoid {
                        break v;
                    }
                })
                .collect()
        })
        .collect();
    let x64: Vec<Vec<f64>> = values
        .iter()
        .map(|v| v.iter().map(|&e| e as f64).collect())
        .collect();
    let out_len = (c.reference)(&x64).len();
    let r: Vec<f64> = (0..out_len).map(|_| rng.f32_in(-1.0, 1.0) as f64).collect();
    let loss = |x: &[Vec<f64>]| (c.reference)(x).iter().zip(&r).map(|(a, b)| a * b).sum::<f64>();

    let mut p = Program::new("grad check");
    let ins: Vec<NodeId> = c
        .inputs
        .iter()
        .enumerate()
        .map(|(i, (shape, ..))| {
            let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
            p.input(&format!("x{i}"), DType::Float32, &dims).unwrap()
        })
        .collect();
    let out = (c.build)(&mut p, &ins).unwrap_or_else(|e| panic!("{}: building: {e}", c.name));
    let flat = p.reshape(out, vec![-1]).unwrap();
    let rc = p.constant(&r, &[out_len], DType::Float32).unwrap();
    let t = p.mul(flat, rc).unwrap();
    let l = p.sum(t, &[], false).unwrap();
    let grads = p
        .grad(l, &ins)
        .unwrap_or_else(|e| panic!("{}: grad: {e}", c.name));
    for (i, &g) in grads.iter().enumerate() {
        p.output(&format!("g{i}"), g).unwrap();
    }
    let exe = s
        .compile(&p)
        .unwrap_or_else(|e| panic!("{}: compile: {e}", c.name));
    let tensors: Vec<affon::Tensor> = values
        .iter()
        .zip(&c.inputs)
        .map(|(v, (shape, ..))| s.tensor(v, shape).unwrap())
        .collect();
    let names: Vec<String> = (0..ins.len()).map(|i| format!("x{i}")).collect();
    let feed: Vec<(&str, &affon::Tensor)> = names.iter().map(|n| n.as_str()).zip(&tensors).collect();
    let outs = exe
        .run(&feed, None)
        .unwrap_or_else(|e| panic!("{}: run: {e}", c.name));
    for (i, (_, t)) in outs.iter().enumerate() {
        assert_eq!(
            t.shape(),
            &c.inputs[i].0[..],
            "{}: gradient {i} has the input's shape",
            c.name
        );
        let got = t.read::<f32>().await.unwrap();
        let h = 1e-4;
        let fd: Vec<f64> = (0..x64[i].len())
            .map(|j| {
                let (mut up, mut down) = (x64.clone(), x64.clone());
                up[i][j] += h;
                down[i][j] -= h;
                (loss(&up) - loss(&down)) / (2.0 * h)
            })
            .collect();
        let scale = fd.iter().fold(0f64, |m, v| m.max(v.abs()));
        for (j, (&g, &want)) in got.iter().zip(&fd).enumerate() {
            let tol = 1e-3 * (want.abs() + scale) + 1e-5;
            assert!(
                (g as f64 - want).abs() <= tol,
                "{}: d/dx{i}[{j}]: got {g}, finite differences {want} (tolerance {tol:e})",
                c.name
            );
        }
    }
}

/// Every case, then the rejections.
pub async fn gradients_match_finite_differences(s: &Session) {
    let mut rng = Rng::new(0x0067_7AD5);
    let cases: Vec<Case> = [
        unary_cases(),
        binary_cases(),
        reduction_cases(),
        shape_cases(),
        linear_and_norm_cases(),
        nn_cases(),
    ]
    .into_iter()
    .flatten()
    .collect();
    for c in &cases {
        check(s, &mut rng, c).await;
    }
    rejections();
}

/// Non-scalar `y`, integer paths and integer `xs` are `INVALID_PROGRAM` naming the node, and a
/// rejected `grad` adds no node.
fn rejections() {
    let mut p = Program::new("bad grads");
    let x = p.input("x", DType::Float32, &[3]).unwrap();
    let sq = p.square(x).unwrap();
    let n = p.nodes().len();
    let e = p.grad(sq, &[x]).unwrap_err();
    assert_eq!(e.code(), "INVALID_PROGRAM");
    assert!(e.to_string().contains("scalar"), "{e}");
    let i = p.cast(x, DType::Int32).unwrap();
    let f = p.cast(i, DType::Float32).unwrap();
    let l = p.sum(f, &[], false).unwrap();
    let n2 = p.nodes().len();
    let e = p.grad(l, &[x]).unwrap_err();
    assert_eq!(e.code(), "INVALID_PROGRAM");
    assert!(
        e.to_string().contains(&format!("node {i} (cast)")) && e.to_string().contains("int32"),
        "{e}"
    );
    assert_eq!(p.nodes().len(), n2, "a rejected grad adds no node");
    let k = p.input("k", DType::Int32, &[3]).unwrap();
    let e = p.grad(l, &[k]).unwrap_err();
    assert_eq!(e.code(), "INVALID_PROGRAM");
    assert!(e.to_string().contains("input 'k'"), "{e}");
    assert!(n < n2);
}
