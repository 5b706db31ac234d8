//! The shape composites: `expandDims`, `squeeze`, `slice`, `pad`, `tile`, `concat`, `stack` and
//! `split`, written over [`Graph`] from reshape, strided windows and masks like the others.

use super::Graph;
use crate::dtype::DType;
use crate::error::{invalid_arg, Error, Result};
use crate::ops::infer::{axis as norm_axis, reduce_axes};
use crate::ops::{BinaryOp, Dims, Op};

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
    // in 64-bit arithmetic: the same result (or error) on wasm32 as natively, never wrapped
    let size = s
        .iter()
        .zip(paddings)
        .map(|(&n, &(a, b))| fits("pad", n as u64 + a as u64 + b as u64))
        .collect::<Result<_>>()?;
    window(g, x, start, size, false, value)
}

/// A result dimension computed in 64 bits, as a `usize` when it is at most the element limit.
fn fits(op: &str, n: u64) -> Result<usize> {
    if n > crate::shape::MAX_ELEMENTS {
        return Err(invalid_arg!(
            "{op}: a result dimension of {n} is above the limit of {} elements",
            crate::shape::MAX_ELEMENTS
        ));
    }
    Ok(n as usize)
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
    let size = s
        .iter()
        .zip(reps)
        .map(|(&n, &r)| fits("tile", (n as u64).saturating_mul(r as u64)))
        .collect::<Result<_>>()?;
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
                let m = span_mask(g, total, at..at + n, &mshape)?;
                g.op(Op::Where {}, &[&placed, &m, &prev])?
            }
        });
        at += n;
    }
    out.ok_or_else(|| invalid_arg!("concat needs at least one tensor"))
}

/// A bool run of `total` in `shape`, true on `span`: a constant, or past [`super::iota`]'s host
/// limit compared on the device.
fn span_mask<G: Graph>(
    g: &mut G,
    total: usize,
    span: std::ops::Range<usize>,
    shape: &[usize],
) -> Result<G::V> {
    if total <= super::HOST_IOTA_MAX {
        let mask: Vec<f64> = (0..total).map(|i| span.contains(&i) as u8 as f64).collect();
        return g.constant(&mask, shape, DType::Bool);
    }
    let idx = super::iota(g, total, shape)?;
    let (lo, hi) = (
        g.scalar(span.start as f64, DType::Int32)?,
        g.scalar(span.end as f64, DType::Int32)?,
    );
    let from = g.op(Op::Binary(BinaryOp::GreaterEqual), &[&idx, &lo])?;
    let below = g.op(Op::Binary(BinaryOp::Less), &[&idx, &hi])?;
    g.op(Op::Binary(BinaryOp::LogicalAnd), &[&from, &below])
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

/// How `split` divides its axis (TF.js's `numOrSizes`): a number of equal parts, or the sizes, at
/// most one of them `-1`: what the others leave of the axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SplitSizes {
    /// This many equal parts (at least 1, dividing the axis).
    Parts(i64),
    /// These sizes (each positive, or one `-1`), summing to the axis.
    Sizes(Vec<i64>),
}

/// `split` as TF.js's `numOrSizes` says: the sizes `how` gives the axis, whose length must be known.
pub(crate) fn split_by<G: Graph>(g: &mut G, x: &G::V, how: &SplitSizes, axis: i64) -> Result<Vec<G::V>> {
    let dims = g.meta(x)?.0;
    let ax = crate::ops::infer::axis("split", axis, dims.len())?;
    let len = dims[ax]
        .ok_or_else(|| crate::error::Error::InvalidProgram("split: a scalar or a dynamic axis".into()))?;
    split(g, x, &split_sizes(len, how)?, axis)
}

impl From<i64> for SplitSizes {
    /// Equal parts.
    fn from(parts: i64) -> SplitSizes {
        SplitSizes::Parts(parts)
    }
}

impl From<&[i64]> for SplitSizes {
    /// These sizes.
    fn from(sizes: &[i64]) -> SplitSizes {
        SplitSizes::Sizes(sizes.to_vec())
    }
}

impl From<&SplitSizes> for SplitSizes {
    fn from(how: &SplitSizes) -> SplitSizes {
        how.clone()
    }
}

/// The sizes `how` gives an axis of `len` (`INVALID_ARGUMENT` naming the bad part).
pub(crate) fn split_sizes(len: usize, how: &SplitSizes) -> Result<Vec<usize>> {
    let sizes = match how {
        SplitSizes::Parts(n) if *n < 1 => {
            return Err(invalid_arg!(
            "split: numOrSizes must be a positive number of parts or an array of sizes, got the number {n}"
        ))
        }
        SplitSizes::Parts(n) => {
            let n = usize::try_from(*n).unwrap_or(usize::MAX);
            return match len.is_multiple_of(n) {
                true => Ok(vec![len / n; n]),
                false => Err(invalid_arg!("split: {len} does not divide into {n} equal parts")),
            };
        }
        SplitSizes::Sizes(sizes) => sizes,
    };
    if sizes.iter().filter(|&&d| d == -1).count() > 1 {
        return Err(invalid_arg!(
            "split: numOrSizes must be sizes with at most one -1, got {sizes:?}"
        ));
    }
    // each size is a dimension's (the same rule), or the one -1
    let size = |(i, &d): (usize, &i64)| -> Result<Option<usize>> {
        match d {
            -1 => Ok(None),
            _ => crate::shape::dims_from_f64(&[d as f64])
                .map(|one| one.first().copied())
                .map_err(|_| {
                    invalid_arg!(
                        "split: numOrSizes: size {i} is {d}: every size must be a positive integer, or one of them -1 (sizes {sizes:?})"
                    )
                }),
        }
    };
    let sizes: Vec<Option<usize>> = sizes.iter().enumerate().map(size).collect::<Result<_>>()?;
    let known = sizes.iter().flatten().try_fold(0usize, |a, &d| a.checked_add(d));
    let rest = known.and_then(|k| len.checked_sub(k)).filter(|&r| r > 0);
    match (sizes.contains(&None), rest) {
        (false, _) => Ok(sizes.iter().flatten().copied().collect()),
        (true, Some(r)) => Ok(sizes.iter().map(|d| d.unwrap_or(r)).collect()),
        (true, None) => Err(invalid_arg!(
            "split: the sizes {sizes:?} leave nothing of {len} for the -1"
        )),
    }
}
