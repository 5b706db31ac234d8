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

/// The reshape target of `s` with dims `keep` kept and `ones` (sorted) inserted as 1: dynamic dims
/// become the one `-1` a reshape allows.
fn reshape_to<G: Graph>(g: &mut G, x: &G::V, dims: Vec<Option<usize>>, what: &str) -> Result<G::V> {
    if dims.iter().filter(|d| d.is_none()).count() > 1 {
        return Err(Error::InvalidProgram(format!(
            "{what}: more than one dynamic dimension; reshape explicitly instead"
        )));
    }
    let shape = dims.iter().map(|d| d.map_or(-1, |n| n as i64)).collect();
    g.op(Op::Reshape { shape }, &[x])
}

/// `expandDims(axis)`: a new axis of size 1 at `axis` (negative counts from the end of the result).
pub(crate) fn expand_dims<G: Graph>(g: &mut G, x: &G::V, axis: i64) -> Result<G::V> {
    let (mut s, _) = g.meta(x)?;
    let at = norm_axis("expandDims", axis, s.len() + 1)?;
    s.insert(at, Some(1));
    reshape_to(g, x, s, "expandDims")
}

/// `squeeze(axes?)`: removes the given axes (each must be 1), or every axis of size 1.
pub(crate) fn squeeze<G: Graph>(g: &mut G, x: &G::V, axes: Option<&[i64]>) -> Result<G::V> {
    let (s, _) = g.meta(x)?;
    let drop: Vec<usize> = match axes {
        Some(a) if !a.is_empty() => {
            let a = reduce_axes("squeeze", a, s.len())?;
            if let Some(&bad) = a.iter().find(|&&i| s[i] != Some(1)) {
                return Err(Error::ShapeMismatch(format!(
                    "squeeze: axis {bad} has size {}, not 1",
                    s[bad].map_or("dynamic".to_string(), |n| n.to_string())
                )));
            }
            a
        }
        _ => (0..s.len()).filter(|&i| s[i] == Some(1)).collect(),
    };
    let dims = s
        .iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .map(|(_, &d)| d)
        .collect();
    reshape_to(g, x, dims, "squeeze")
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
        let elements = |dims: &Dims| {
            dims.iter()
                .try_fold(1u64, |acc, d| d.and_then(|d| acc.checked_mul(d as u64)))
        };
        let count = elements(&out.0);
        self.made.push(count.and_then(|c| c.checked_mul(4)));
        // a kernel's scratch (a split reduction's partial results) is taken beside its output
        if let (Some(input), Some(output)) = (a.first().map_or(Some(1), |v| elements(&v.0)), count) {
            let words = op.scratch_words(input, output);
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

/// `matmul(b, transposeA, transposeB)`: an operand's last two axes read swapped (one kernel).
pub(crate) fn matmul_t<G: Graph>(g: &mut G, a: &G::V, b: &G::V, ta: bool, tb: bool) -> Result<G::V> {
    g.op(
        Op::MatMul {
            transpose_a: ta,
            transpose_b: tb,
        },
        &[a, b],
    )
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
    let iota: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let op = if max { ReduceOp::Max } else { ReduceOp::Min };
    let m = reduce(g, op, x, &[axis], true)?;
    let hit = binary(g, BinaryOp::Equal, x, &m)?;
    let idx = g.constant(&iota, &iota_shape, DType::Int32)?;
    let none = g.scalar(n as f64, DType::Int32)?;
    let cand = g.op(Op::Where {}, &[&idx, &hit, &none])?;
    reduce(g, ReduceOp::Min, &cand, &[axis], false)
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
    if depth < 1 || depth as u64 > crate::shape::MAX_ELEMENTS {
        return Err(invalid_arg!(
            "oneHot: depth must be a positive integer, got {depth}"
        ));
    }
    let depth = depth as usize;
    let col = expand_dims(g, indices, -1)?;
    let iota: Vec<f64> = (0..depth).map(|i| i as f64).collect();
    let classes = g.constant(&iota, &[depth], DType::Int32)?;
    let hit = binary(g, BinaryOp::Equal, &col, &classes)?;
    g.op(
        Op::Cast {
            dtype: DType::Float32,
        },
        &[&hit],
    )
}

/// `SHAPE_MISMATCH` for a scalar where an axis is needed.
fn need_rank(what: &str, s: &[usize]) -> Result<()> {
    if s.is_empty() {
        return Err(Error::ShapeMismatch(format!(
            "{what} needs rank ≥ 1, got a scalar"
        )));
    }
    Ok(())
}

fn concrete(what: &str, s: &Dims) -> Result<Vec<usize>> {
    s.iter()
        .map(|d| {
            d.ok_or_else(|| {
                Error::InvalidProgram(format!(
                    "{what}: the input has a dynamic dimension; its length must be known"
                ))
            })
        })
        .collect()
}

fn window<G: Graph>(
    g: &mut G,
    x: &G::V,
    start: Vec<i64>,
    size: Vec<usize>,
    tile: bool,
    value: f64,
) -> Result<G::V> {
    g.op(
        Op::Window {
            start,
            size,
            tile,
            value: value.into(),
        },
        &[x],
    )
}

/// `slice(begin, size)`: `size` entries of `-1` run to the end; missing entries too.
pub(crate) fn slice<G: Graph>(g: &mut G, x: &G::V, begin: &[i64], size: &[i64]) -> Result<G::V> {
    let s = concrete("slice", &g.meta(x)?.0)?;
    if begin.len() > s.len() || size.len() > s.len() {
        return Err(invalid_arg!(
            "slice: begin {begin:?} / size {size:?} longer than the rank {}",
            s.len()
        ));
    }
    let mut start = vec![0i64; s.len()];
    let mut out = s.clone();
    for k in 0..s.len() {
        let b = begin.get(k).copied().unwrap_or(0);
        if b < 0 || b as u64 >= s[k] as u64 {
            return Err(invalid_arg!(
                "slice: begin {b} is outside dimension {k} of length {}",
                s[k]
            ));
        }
        let n = match size.get(k).copied().unwrap_or(-1) {
            -1 => s[k] as i64 - b,
            n if n >= 1 && b + n <= s[k] as i64 => n,
            n => {
                return Err(invalid_arg!(
                    "slice: size {n} from {b} does not fit dimension {k} of length {}",
                    s[k]
                ))
            }
        };
        start[k] = b;
        out[k] = n as usize;
    }
    window(g, x, start, out, false, 0.0)
}

/// `pad(paddings, value)`: `[before, after]` per dimension, filled with `value`.
pub(crate) fn pad<G: Graph>(g: &mut G, x: &G::V, paddings: &[(i64, i64)], value: f64) -> Result<G::V> {
    let (s, d) = g.meta(x)?;
    let s = concrete("pad", &s)?;
    if paddings.len() != s.len() || paddings.iter().any(|&(a, b)| a < 0 || b < 0) {
        return Err(invalid_arg!(
            "pad: one non-negative [before, after] per dimension, got {paddings:?} for rank {}",
            s.len()
        ));
    }
    d.word_from_f64(value)?;
    let start = paddings.iter().map(|&(a, _)| -a).collect();
    let size = s
        .iter()
        .zip(paddings)
        .map(|(&n, &(a, b))| n + a as usize + b as usize)
        .collect();
    window(g, x, start, size, false, value)
}

/// `tile(reps)`: the input repeated `reps[k]` times along dimension `k`.
pub(crate) fn tile<G: Graph>(g: &mut G, x: &G::V, reps: &[i64]) -> Result<G::V> {
    let s = concrete("tile", &g.meta(x)?.0)?;
    if reps.len() != s.len() || reps.iter().any(|&r| r < 1) {
        return Err(invalid_arg!(
            "tile: one positive repetition per dimension, got {reps:?} for rank {}",
            s.len()
        ));
    }
    let size = s.iter().zip(reps).map(|(&n, &r)| n * r as usize).collect();
    window(g, x, vec![0; s.len()], size, true, 0.0)
}

/// `concat(xs, axis)`: each input padded into its place along `axis`, then selected by a constant
/// mask of its span (exact, whatever the values).
pub(crate) fn concat<G: Graph>(g: &mut G, xs: &[&G::V], axis: i64) -> Result<G::V> {
    let first = xs
        .first()
        .ok_or_else(|| invalid_arg!("concat needs at least one tensor"))?;
    let (s0, d) = g.meta(first)?;
    let s0 = concrete("concat", &s0)?;
    need_rank("concat", &s0)?;
    let ax = norm_axis("concat", axis, s0.len())?;
    let mut lens = vec![];
    for (j, x) in xs.iter().enumerate() {
        let (s, dj) = g.meta(x)?;
        let s = concrete("concat", &s)?;
        let same = s.len() == s0.len() && (0..s.len()).all(|k| k == ax || s[k] == s0[k]);
        if dj != d || !same {
            return Err(Error::ShapeMismatch(format!(
                "concat: input {j} is {dj} {s:?}, the first is {d} {s0:?} (all must match except along axis {ax})"
            )));
        }
        lens.push(s[ax]);
    }
    let total: usize = lens.iter().sum();
    let mut at = 0usize;
    let mut out: Option<G::V> = None;
    for (x, &n) in xs.iter().zip(&lens) {
        let paddings: Vec<(i64, i64)> = (0..s0.len())
            .map(|k| {
                if k == ax {
                    (at as i64, (total - at - n) as i64)
                } else {
                    (0, 0)
                }
            })
            .collect();
        let placed = pad(g, x, &paddings, 0.0)?;
        out = Some(match out {
            None => placed,
            Some(prev) => {
                let mut mshape = vec![1usize; s0.len()];
                mshape[ax] = total;
                let mask: Vec<f64> = (0..total).map(|i| (i >= at && i < at + n) as u8 as f64).collect();
                let m = g.constant(&mask, &mshape, DType::Bool)?;
                g.op(Op::Where {}, &[&placed, &m, &prev])?
            }
        });
        at += n;
    }
    out.ok_or_else(|| invalid_arg!("concat needs at least one tensor"))
}

/// `stack(xs, axis)`: a new axis, then `concat`.
pub(crate) fn stack<G: Graph>(g: &mut G, xs: &[&G::V], axis: i64) -> Result<G::V> {
    let mut expanded = vec![];
    for x in xs {
        expanded.push(expand_dims(g, x, axis)?);
    }
    let refs: Vec<&G::V> = expanded.iter().collect();
    concat(g, &refs, axis)
}

/// `split(sizes, axis)`: consecutive slices along `axis` (`sizes` summing to its length).
pub(crate) fn split<G: Graph>(g: &mut G, x: &G::V, sizes: &[usize], axis: i64) -> Result<Vec<G::V>> {
    let s = concrete("split", &g.meta(x)?.0)?;
    need_rank("split", &s)?;
    let ax = norm_axis("split", axis, s.len())?;
    if sizes.is_empty() || sizes.contains(&0) || sizes.iter().sum::<usize>() != s[ax] {
        return Err(invalid_arg!(
            "split: sizes {sizes:?} must be positive and sum to {} (axis {ax})",
            s[ax]
        ));
    }
    let mut out = vec![];
    let mut at = 0usize;
    for &n in sizes {
        let mut begin = vec![0i64; s.len()];
        let mut size = vec![-1i64; s.len()];
        begin[ax] = at as i64;
        size[ax] = n as i64;
        out.push(slice(g, x, &begin, &size)?);
        at += n;
    }
    Ok(out)
}

/// The sizes of `split(numOrSizes)`: `n` equal parts, or the given sizes.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // the JS bindings' `numOrSizes`
pub(crate) fn split_sizes(len: usize, parts: Option<usize>, sizes: &[usize]) -> Result<Vec<usize>> {
    match parts {
        Some(n) if n >= 1 && len.is_multiple_of(n) => Ok(vec![len / n; n]),
        Some(n) => Err(invalid_arg!("split: {len} does not divide into {n} equal parts")),
        None => Ok(sizes.to_vec()),
    }
}
