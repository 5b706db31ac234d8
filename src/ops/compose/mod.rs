//! Composite ops: each written **once** over [`Graph`], a builder both eager tensors and programs
//! implement, from the primitives of the op table (as jax-js and tinygrad compose theirs). The eager
//! method runs the primitives' kernels (intermediates are freed as it goes); the program node adds
//! the primitive nodes, which fuse and are planned like any others (the JSON form holds the
//! primitives). Each composite checks its arguments before its first primitive, so a rejected call
//! changes nothing.

use crate::dtype::DType;
use crate::error::{invalid_arg, Error, Result};
use crate::ops::infer::{axis as norm_axis, reduce_axes};
use crate::ops::{BinaryOp, Dims, Op, ReduceOp};

mod shape;
pub use shape::SplitSizes;
pub(crate) use shape::{concat, expand_dims, pad, slice, split_by, squeeze, stack, tile};

/// What a composite needs from its builder.
pub(crate) trait Graph {
    /// A value: a tensor (eager) or a node (program).
    type V;
    /// Applies a primitive.
    fn op(&mut self, op: Op, args: &[&Self::V]) -> Result<Self::V>;
    /// A scalar constant of `dtype`.
    fn scalar(&mut self, value: f64, dtype: DType) -> Result<Self::V>;
    /// A constant tensor of `data` (row-major) with `shape`.
    fn constant(&mut self, data: &[f64], shape: &[usize], dtype: DType) -> Result<Self::V>;
    /// The (possibly dynamic) shape and dtype of a value.
    fn meta(&self, v: &Self::V) -> Result<(Dims, DType)>;
}

fn float_only(name: &str, d: DType) -> Result<()> {
    if d != DType::Float32 {
        return Err(Error::DtypeMismatch(format!(
            "{name} needs float32, got {d} (cast it first)"
        )));
    }
    Ok(())
}

fn reduce<G: Graph>(g: &mut G, op: ReduceOp, x: &G::V, axes: &[i64], keep_dims: bool) -> Result<G::V> {
    g.op(
        Op::Reduce {
            op,
            axes: axes.to_vec(),
            keep_dims,
        },
        &[x],
    )
}

fn binary<G: Graph>(g: &mut G, op: BinaryOp, a: &G::V, b: &G::V) -> Result<G::V> {
    g.op(Op::Binary(op), &[a, b])
}

/// `leakyRelu(alpha)`: `x` where `x > 0`, else `alpha · x` — `max(x, αx)` for `α ≤ 1`, `min` above.
pub(crate) fn leaky_relu<G: Graph>(g: &mut G, x: &G::V, alpha: f64) -> Result<G::V> {
    let (_, d) = g.meta(x)?;
    float_only("leakyRelu", d)?;
    if !alpha.is_finite() {
        return Err(invalid_arg!("leakyRelu: alpha must be finite, got {alpha}"));
    }
    let a = g.scalar(alpha, d)?;
    let ax = binary(g, BinaryOp::Mul, x, &a)?;
    let pick = if alpha <= 1.0 {
        BinaryOp::Maximum
    } else {
        BinaryOp::Minimum
    };
    binary(g, pick, x, &ax)
}

/// `hardSigmoid(alpha, beta)`: `alpha · x + beta` clamped to `[0, 1]` (finite `alpha`, `beta`).
pub(crate) fn hard_sigmoid<G: Graph>(g: &mut G, x: &G::V, alpha: f64, beta: f64) -> Result<G::V> {
    let (_, d) = g.meta(x)?;
    float_only("hardSigmoid", d)?;
    if !alpha.is_finite() || !beta.is_finite() {
        return Err(invalid_arg!(
            "hardSigmoid: alpha and beta must be finite, got {alpha} and {beta}"
        ));
    }
    let (a, b) = (g.scalar(alpha, d)?, g.scalar(beta, d)?);
    let ax = binary(g, BinaryOp::Mul, x, &a)?;
    let y = binary(g, BinaryOp::Add, &ax, &b)?;
    clip_by_value(g, &y, 0.0, 1.0)
}

/// `clipByValue(min, max)`: `min(max(x, lo), hi)`, `lo ≤ hi` in the tensor's dtype.
pub(crate) fn clip_by_value<G: Graph>(g: &mut G, x: &G::V, lo: f64, hi: f64) -> Result<G::V> {
    let (_, d) = g.meta(x)?;
    if d == DType::Bool {
        return Err(Error::DtypeMismatch(
            "clipByValue needs a numeric tensor, got bool".into(),
        ));
    }
    if lo.is_nan() || hi.is_nan() || lo > hi {
        return Err(invalid_arg!("clipByValue needs min ≤ max, got {lo} and {hi}"));
    }
    d.word_from_f64(lo)?;
    d.word_from_f64(hi)?;
    let (l, h) = (g.scalar(lo, d)?, g.scalar(hi, d)?);
    let m = binary(g, BinaryOp::Maximum, x, &l)?;
    binary(g, BinaryOp::Minimum, &m, &h)
}

/// `logSumExp(axes, keepDims)`: `max + log(Σ exp(x − max))`, finite for large inputs.
pub(crate) fn log_sum_exp<G: Graph>(g: &mut G, x: &G::V, axes: &[i64], keep_dims: bool) -> Result<G::V> {
    let (s, d) = g.meta(x)?;
    float_only("logSumExp", d)?;
    reduce_axes("logSumExp", axes, s.len())?;
    let m = reduce(g, ReduceOp::Max, x, axes, true)?;
    let shifted = binary(g, BinaryOp::Sub, x, &m)?;
    let e = g.op(Op::Unary(crate::ops::UnaryOp::Exp), &[&shifted])?;
    let total = reduce(g, ReduceOp::Sum, &e, axes, keep_dims)?;
    let l = g.op(Op::Unary(crate::ops::UnaryOp::Log), &[&total])?;
    let m_out = reduce(g, ReduceOp::Max, x, axes, keep_dims)?;
    binary(g, BinaryOp::Add, &l, &m_out)
}

/// `logSoftmax(axis)`: `(x − max) − log(Σ exp(x − max))`, finite for large inputs.
pub(crate) fn log_softmax<G: Graph>(g: &mut G, x: &G::V, axis: i64) -> Result<G::V> {
    let (s, d) = g.meta(x)?;
    float_only("logSoftmax", d)?;
    norm_axis("logSoftmax", axis, s.len())?;
    let m = reduce(g, ReduceOp::Max, x, &[axis], true)?;
    let shifted = binary(g, BinaryOp::Sub, x, &m)?;
    let e = g.op(Op::Unary(crate::ops::UnaryOp::Exp), &[&shifted])?;
    let total = reduce(g, ReduceOp::Sum, &e, &[axis], true)?;
    let l = g.op(Op::Unary(crate::ops::UnaryOp::Log), &[&total])?;
    binary(g, BinaryOp::Sub, &shifted, &l)
}

/// `all` / `any` over `axes` of a bool tensor: the min / max of its 0/1 words.
pub(crate) fn all_any<G: Graph>(
    g: &mut G,
    x: &G::V,
    any: bool,
    axes: &[i64],
    keep_dims: bool,
) -> Result<G::V> {
    let (s, d) = g.meta(x)?;
    let name = if any { "any" } else { "all" };
    if d != DType::Bool {
        return Err(Error::DtypeMismatch(format!("{name} needs bool, got {d}")));
    }
    reduce_axes(name, axes, s.len())?;
    let words = g.op(Op::Cast { dtype: DType::Uint32 }, &[x])?;
    let r = reduce(
        g,
        if any { ReduceOp::Max } else { ReduceOp::Min },
        &words,
        axes,
        keep_dims,
    )?;
    g.op(Op::Cast { dtype: DType::Bool }, &[&r])
}

/// A builder that only infers: runs a composite to learn every value it would make, and every
/// kernel scratch it would take, without making any (the eager path admits their total before it
/// starts, so a composite never fails midway at the memory bound).
pub(crate) struct Dry {
    /// Byte lengths of the values made, in order (`None` for a dynamic one).
    pub made: Vec<Option<u64>>,
}

impl Graph for Dry {
    type V = (Dims, DType);

    fn op(&mut self, op: Op, args: &[&Self::V]) -> Result<Self::V> {
        let a: Vec<(Dims, DType)> = args.iter().map(|&v| v.clone()).collect();
        let out = crate::ops::infer(&op, &a)?;
        let count = (out.0.iter()).try_fold(1u64, |acc, d| d.and_then(|d| acc.checked_mul(d as u64)));
        self.made.push(count.and_then(|c| c.checked_mul(4)));
        // a kernel's scratch (a split reduction's partial results, a long line's part summaries)
        // is taken beside its output
        let input: Option<Vec<usize>> = a.first().map_or(Some(vec![]), |v| v.0.iter().copied().collect());
        if let (Some(input), Some(output)) = (input, count) {
            let words = op.scratch_words(&input, output);
            if words > 0 {
                self.made.push(Some(words * 4));
            }
        }
        Ok(out)
    }

    fn scalar(&mut self, value: f64, dtype: DType) -> Result<Self::V> {
        dtype.word_from_f64(value)?;
        self.made.push(Some(4));
        Ok((vec![], dtype))
    }

    fn constant(&mut self, data: &[f64], shape: &[usize], dtype: DType) -> Result<Self::V> {
        for &v in data {
            dtype.word_from_f64(v)?;
        }
        self.made.push(Some(crate::shape::byte_length(shape)?));
        Ok((shape.iter().map(|&d| Some(d)).collect(), dtype))
    }

    fn meta(&self, v: &Self::V) -> Result<(Dims, DType)> {
        Ok(v.clone())
    }
}

/// `layerNorm(gamma, beta, epsilon)` over the last axis: `(x − mean) / √(var + ε) · γ + β`, with the
/// biased variance (as TF.js / PyTorch); `γ` and `β` broadcast against the last axis.
pub(crate) fn layer_norm<G: Graph>(
    g: &mut G,
    x: &G::V,
    gamma: &G::V,
    beta: &G::V,
    epsilon: f64,
) -> Result<G::V> {
    let (s, d) = g.meta(x)?;
    float_only("layerNorm", d)?;
    if s.is_empty() {
        return Err(Error::ShapeMismatch(
            "layerNorm needs rank ≥ 1, got a scalar".into(),
        ));
    }
    check_affine(g, "layerNorm", &s, d, &[("gamma", gamma), ("beta", beta)])?;
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(invalid_arg!("layerNorm: epsilon must be ≥ 0, got {epsilon}"));
    }
    let mean = reduce(g, ReduceOp::Mean, x, &[-1], true)?;
    let centred = binary(g, BinaryOp::Sub, x, &mean)?;
    let sq = g.op(Op::Unary(crate::ops::UnaryOp::Square), &[&centred])?;
    let var = reduce(g, ReduceOp::Mean, &sq, &[-1], true)?;
    let eps = g.scalar(epsilon, d)?;
    let ve = binary(g, BinaryOp::Add, &var, &eps)?;
    let inv = g.op(Op::Unary(crate::ops::UnaryOp::Rsqrt), &[&ve])?;
    let normed = binary(g, BinaryOp::Mul, &centred, &inv)?;
    let scaled = binary(g, BinaryOp::Mul, &normed, gamma)?;
    binary(g, BinaryOp::Add, &scaled, beta)
}

/// `batchNorm(mean, variance, offset?, scale?, varianceEpsilon)`: `(x − μ) · rsqrt(σ² + ε) · scale +
/// offset`, every parameter broadcast against `x` (NHWC: per channel, the last axis).
pub(crate) fn batch_norm<G: Graph>(
    g: &mut G,
    x: &G::V,
    mean: &G::V,
    variance: &G::V,
    offset: Option<&G::V>,
    scale: Option<&G::V>,
    epsilon: f64,
) -> Result<G::V> {
    let (s, d) = g.meta(x)?;
    float_only("batchNorm", d)?;
    let mut params = vec![("mean", mean), ("variance", variance)];
    params.extend(offset.map(|o| ("offset", o)));
    params.extend(scale.map(|o| ("scale", o)));
    for (name, p) in &params {
        let (ps, pd) = g.meta(p)?;
        if pd != d {
            return Err(Error::DtypeMismatch(format!(
                "batchNorm: {name} is {pd}, x is {d}"
            )));
        }
        crate::ops::infer::broadcast(&format!("batchNorm {name}"), &s, &ps)?;
    }
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(invalid_arg!(
            "batchNorm: varianceEpsilon must be ≥ 0, got {epsilon}"
        ));
    }
    let eps = g.scalar(epsilon, d)?;
    let ve = binary(g, BinaryOp::Add, variance, &eps)?;
    let mut inv = g.op(Op::Unary(crate::ops::UnaryOp::Rsqrt), &[&ve])?;
    // the scale joins the per-channel factor first: one pass over x fewer when run eagerly
    if let Some(sc) = scale {
        inv = binary(g, BinaryOp::Mul, &inv, sc)?;
    }
    let centred = binary(g, BinaryOp::Sub, x, mean)?;
    let mut y = binary(g, BinaryOp::Mul, &centred, &inv)?;
    if let Some(o) = offset {
        y = binary(g, BinaryOp::Add, &y, o)?;
    }
    Ok(y)
}

/// Checks that each affine parameter has `x`'s dtype `d` and is a scalar, `[1]` or `[last axis]`.
fn check_affine<G: Graph>(g: &G, what: &str, s: &Dims, d: DType, params: &[(&str, &G::V)]) -> Result<()> {
    let last = s[s.len() - 1];
    for (name, p) in params {
        let (ps, pd) = g.meta(p)?;
        if pd != d {
            return Err(Error::DtypeMismatch(format!("{what}: {name} is {pd}, x is {d}")));
        }
        let fits = match ps.as_slice() {
            [] | [Some(1)] => true,
            [n] => last.is_none() || n.is_none() || *n == last,
            _ => false,
        };
        if !fits {
            return Err(Error::ShapeMismatch(format!(
                "{what}: {name} must be a scalar or match the last axis ({last:?}), got {ps:?}"
            )));
        }
    }
    Ok(())
}

/// Index runs of at most this many elements are written on the host (8 bytes each while built) and
/// uploaded; longer ones are computed on the device. Built on the host, `oneHot(2^28)`'s 2 GiB
/// was past what a wasm32 instance can address, and aborted it.
const HOST_IOTA_MAX: usize = 1 << 20;

/// `0, 1, …, n-1` as int32, in `shape` (`n` elements): a constant, or past [`HOST_IOTA_MAX`]
/// `row · B + column` over a `[⌈n/B⌉, B]` grid of two short constants (B = [`HOST_IOTA_MAX`];
/// exact: int32, `n` < 2^31), its first `n`. Elementwise, so no kernel loops over the run (a
/// running sum would: lavapipe ends a shader loop after 65,535 iterations).
pub(crate) fn iota<G: Graph>(g: &mut G, n: usize, shape: &[usize]) -> Result<G::V> {
    let host = |g: &mut G, n: usize, shape: &[usize]| {
        let data: Vec<f64> = (0..n).map(|i| i as f64).collect();
        g.constant(&data, shape, DType::Int32)
    };
    if n <= HOST_IOTA_MAX {
        return host(g, n, shape);
    }
    let (b, rows) = (HOST_IOTA_MAX, n.div_ceil(HOST_IOTA_MAX));
    let row = host(g, rows, &[rows, 1])?;
    let column = host(g, b, &[1, b])?;
    let width = g.scalar(b as f64, DType::Int32)?;
    let start = binary(g, BinaryOp::Mul, &row, &width)?;
    let grid = binary(g, BinaryOp::Add, &start, &column)?;
    let flat = g.op(
        Op::Reshape {
            shape: vec![(rows * b) as i64],
        },
        &[&grid],
    )?;
    let window = Op::Window {
        start: vec![0],
        size: vec![n],
        tile: false,
        value: 0.0.into(),
    };
    let run = g.op(window, &[&flat])?;
    let shape = shape.iter().map(|&d| d as i64).collect();
    g.op(Op::Reshape { shape }, &[&run])
}

/// `argMax(axis)` / `argMin(axis)` → int32: the first index of the extreme along `axis`
/// (`where(x == max, iota, n)` then its minimum). The axis must have a concrete length.
pub(crate) fn arg_extreme<G: Graph>(g: &mut G, x: &G::V, max: bool, axis: i64) -> Result<G::V> {
    let name = if max { "argMax" } else { "argMin" };
    let (s, d) = g.meta(x)?;
    if d == DType::Bool {
        return Err(Error::DtypeMismatch(format!(
            "{name} needs a numeric tensor, got bool"
        )));
    }
    let ax = norm_axis(name, axis, s.len())?;
    let n = if s.is_empty() {
        1
    } else {
        s[ax].ok_or_else(|| {
            Error::InvalidProgram(format!(
                "{name}: axis {axis} is dynamic; its length must be known"
            ))
        })?
    };
    let mut iota_shape = vec![1usize; s.len()];
    if !s.is_empty() {
        iota_shape[ax] = n;
    }
    let op = if max { ReduceOp::Max } else { ReduceOp::Min };
    let m = reduce(g, op, x, &[axis], true)?;
    let hit = binary(g, BinaryOp::Equal, x, &m)?;
    let idx = iota(g, n, &iota_shape)?;
    let none = g.scalar(n as f64, DType::Int32)?;
    let cand = g.op(Op::Where {}, &[&idx, &hit, &none])?;
    reduce(g, ReduceOp::Min, &cand, &[axis], false)
}

/// An operand that may be a number: `where`'s `b` (a scalar of `a`'s dtype when a number). `T` is a
/// tensor (`&Tensor`), a program node (`NodeId`) or a composite's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OrNumber<T> {
    /// A value.
    Value(T),
    /// A number, made a scalar of the dtype the op gives it.
    Number(f64),
}

impl<T> OrNumber<T> {
    /// `OrNumber<&T>` of this one.
    pub fn as_ref(&self) -> OrNumber<&T> {
        self.map(|v| v)
    }

    /// The value mapped by `f`; a number stays.
    pub fn map<'a, U>(&'a self, f: impl FnOnce(&'a T) -> U) -> OrNumber<U> {
        match self {
            OrNumber::Value(v) => OrNumber::Value(f(v)),
            OrNumber::Number(x) => OrNumber::Number(*x),
        }
    }
}

impl<T> From<f64> for OrNumber<T> {
    fn from(x: f64) -> OrNumber<T> {
        OrNumber::Number(x)
    }
}

impl From<usize> for OrNumber<usize> {
    /// A program node.
    fn from(n: usize) -> OrNumber<usize> {
        OrNumber::Value(n)
    }
}

/// `where`: elements of `a` where the bool `cond` holds, else of `b` — a value, or a number (a
/// scalar of `a`'s dtype, made for the op); all three broadcast.
pub(crate) fn select<G: Graph>(g: &mut G, a: &G::V, cond: &G::V, b: OrNumber<&G::V>) -> Result<G::V> {
    match b {
        OrNumber::Value(b) => g.op(Op::Where {}, &[a, cond, b]),
        OrNumber::Number(x) => {
            let (_, d) = g.meta(a)?;
            let s = g.scalar(x, d)?;
            g.op(Op::Where {}, &[a, cond, &s])
        }
    }
}

/// `oneHot(depth)`: int32 indices → float32 `[…, depth]` with 1 at each index (0 for one out of
/// `[0, depth)`).
pub(crate) fn one_hot<G: Graph>(g: &mut G, indices: &G::V, depth: i64) -> Result<G::V> {
    let (_, d) = g.meta(indices)?;
    if d != DType::Int32 {
        return Err(Error::DtypeMismatch(format!(
            "oneHot needs int32 indices, got {d}"
        )));
    }
    // the indices are int32: a class past 2^31 - 1 could never be hit
    if depth < 1 || depth > i32::MAX as i64 {
        return Err(invalid_arg!(
            "oneHot: depth must be a positive integer below 2^31 (the indices are int32), got {depth}"
        ));
    }
    let depth = depth as usize;
    let col = expand_dims(g, indices, -1)?;
    let classes = iota(g, depth, &[depth])?;
    let hit = binary(g, BinaryOp::Equal, &col, &classes)?;
    g.op(
        Op::Cast {
            dtype: DType::Float32,
        },
        &[&hit],
    )
}
