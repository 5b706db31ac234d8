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

mod elementwise;
mod layers;
mod shapes;

use elementwise::{binary_cases, reduction_cases, unary_cases};
use layers::{linear_and_norm_cases, nn_cases};
use shapes::{matmul_t_case, shape_cases};

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
    assert_eq!(outs.len(), ins.len(), "{}: one gradient per input", c.name);
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
