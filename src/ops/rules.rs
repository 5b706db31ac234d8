//! Shape and dtype rules of the op table's `kernel_table!` ops, one function per entry named like
//! its method: `(argument types, attributes…) → (output dims, dtype)`. Dtype errors are
//! `DTYPE_MISMATCH`, shape errors `SHAPE_MISMATCH`, bad attributes `INVALID_ARGUMENT`.

use super::dims::{axis, broadcast, numeric, permutation, reshape as reshape_dims, show, Dims};
use super::{Fill, Pad, PadMode, Pair};
use crate::dtype::DType;
use crate::error::{Error, Result};

type Args<'a> = &'a [(Dims, DType)];
type Out = Result<(Dims, DType)>;

fn float(op: &str, what: &str, d: DType) -> Result<()> {
    if d != DType::Float32 {
        return Err(Error::DtypeMismatch(format!(
            "{op} needs float32 {what}, got {d}"
        )));
    }
    Ok(())
}

pub(super) fn cast(args: Args, dtype: &DType) -> Out {
    Ok((args[0].0.clone(), *dtype))
}

pub(super) fn softmax(args: Args, a: &i64) -> Out {
    let (s, d) = &args[0];
    float("softmax", "input", *d)?;
    axis("softmax", *a, s.len())?;
    Ok((s.clone(), *d))
}

pub(super) fn reshape(args: Args, shape: &[i64]) -> Out {
    Ok((reshape_dims(&args[0].0, shape)?, args[0].1))
}

pub(super) fn transpose(args: Args, perm: &Option<Vec<i64>>) -> Out {
    let (s, d) = &args[0];
    let p = permutation(perm.as_deref(), s.len())?;
    Ok((p.iter().map(|&i| s[i]).collect(), *d))
}

pub(super) fn copy(args: Args) -> Out {
    Ok(args[0].clone())
}

pub(super) fn cumsum(args: Args, a: &i64, _exclusive: &bool, _reverse: &bool) -> Out {
    let (s, d) = &args[0];
    numeric("cumsum", *d)?;
    axis("cumsum", *a, s.len())?;
    Ok((s.clone(), *d))
}

pub(super) fn gather(args: Args, a: &i64) -> Out {
    let ((s, d), (idx, e)) = (&args[0], &args[1]);
    if *e != DType::Int32 {
        return Err(Error::DtypeMismatch(format!(
            "gather: indices must be int32, got {e}"
        )));
    }
    if s.is_empty() {
        return Err(Error::ShapeMismatch(
            "gather: the input must have rank ≥ 1, got a scalar".into(),
        ));
    }
    let ax = axis("gather", *a, s.len())?;
    let mut out: Dims = s[..ax].to_vec();
    out.extend_from_slice(idx);
    out.extend_from_slice(&s[ax + 1..]);
    Ok((out, *d))
}

pub(super) fn matmul_t(args: Args, ta: &bool, tb: &bool) -> Out {
    let ((s, d), (t, e)) = (&args[0], &args[1]);
    numeric("matmul", *d)?;
    if d != e {
        return Err(Error::DtypeMismatch(format!(
            "matmul: dtypes differ ({d} and {e})"
        )));
    }
    if s.len() < 2 || t.len() < 2 {
        return Err(Error::ShapeMismatch(format!(
            "matmul needs rank ≥ 2 on both sides, got {} and {}",
            show(s),
            show(t)
        )));
    }
    let (mut m, mut k1) = (s[s.len() - 2], s[s.len() - 1]);
    let (mut k2, mut n) = (t[t.len() - 2], t[t.len() - 1]);
    if *ta {
        std::mem::swap(&mut m, &mut k1);
    }
    if *tb {
        std::mem::swap(&mut k2, &mut n);
    }
    if let (Some(x), Some(y)) = (k1, k2) {
        if x != y {
            return Err(Error::ShapeMismatch(format!(
                "matmul: inner dimensions differ: {} × {} ({x} vs {y})",
                show(s),
                show(t)
            )));
        }
    }
    let mut out = broadcast("matmul (batch dims)", &s[..s.len() - 2], &t[..t.len() - 2])?;
    out.push(m);
    out.push(n);
    Ok((out, *d))
}

pub(super) fn select(args: Args) -> Out {
    let ((s, d), (c, cd), (t, e)) = (&args[0], &args[1], &args[2]);
    if *cd != DType::Bool {
        return Err(Error::DtypeMismatch(format!(
            "where: the condition must be bool, got {cd}"
        )));
    }
    if d != e {
        return Err(Error::DtypeMismatch(format!(
            "where: the two branches differ in dtype ({d} and {e})"
        )));
    }
    Ok((broadcast("where", &broadcast("where", s, c)?, t)?, *d))
}

pub(super) fn window(args: Args, start: &[i64], size: &[usize], _tile: &bool, value: &Fill) -> Out {
    let (s, d) = &args[0];
    if start.len() != s.len() || size.len() != s.len() {
        return Err(Error::InvalidArgument(format!(
            "window: start {start:?} and size {size:?} must have one entry per dimension of {}",
            show(s)
        )));
    }
    d.word_from_f64(value.value())?;
    crate::shape::element_count(size)?;
    let max = i32::MAX as i64;
    let too_big = start.iter().any(|&x| x.abs() > max)
        || s.iter().any(|d| d.is_some_and(|n| n as i64 > max))
        || size.iter().any(|&n| n as i64 > max);
    if too_big {
        return Err(Error::InvalidArgument(format!(
            "window: dims and offsets must be below 2^31, got {start:?} {size:?}"
        )));
    }
    Ok((size.iter().map(|&n| Some(n)).collect(), *d))
}

/// One spatial dimension of a convolution or pool: its output size and the padding before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Extent {
    pub out: usize,
    pub pad_before: usize,
}

/// The output size and leading padding of a spatial dim of size `input` under a window of
/// `filter` cells, `stride` and `dilation` (TF.js's rules for `'same'`, `'valid'` and numbers).
pub(crate) fn extent(
    op: &str,
    input: usize,
    filter: usize,
    stride: usize,
    dilation: usize,
    pad: Pad,
) -> Result<Extent> {
    // in 64-bit arithmetic: a window of 2^16 cells dilated 2^16 times reaches past 2^32, which
    // must be the same error on wasm32 as natively, never a wrapped (wrong) size or padding
    let (input, stride) = (input as u64, stride as u64);
    let reach = (filter as u64 - 1) * dilation as u64 + 1;
    let (out, pad_before) = match pad {
        Pad::Mode(PadMode::Same) => {
            let out = input.div_ceil(stride);
            let total = ((out - 1) * stride + reach).saturating_sub(input);
            (out, total / 2)
        }
        Pad::Mode(PadMode::Valid) if input >= reach => ((input - reach) / stride + 1, 0),
        Pad::Explicit(p) if input + 2 * p as u64 >= reach => {
            ((input + 2 * p as u64 - reach) / stride + 1, p as u64)
        }
        _ => {
            return Err(Error::ShapeMismatch(format!(
                "{op}: a window reaching {reach} cells does not fit an input of {input} with padding {pad:?}"
            )))
        }
    };
    // the kernels index the span the windows cover (padding included) in 32-bit signed arithmetic
    let span = (out - 1) * stride + reach;
    if span > i32::MAX as u64 {
        return Err(Error::InvalidArgument(format!(
            "{op}: the windows span {span} cells (a window reaches {reach}, padding included), above 2^31"
        )));
    }
    Ok(Extent {
        out: out as usize,
        pad_before: pad_before as usize,
    })
}

fn positive(op: &str, what: &str, p: &Pair) -> Result<()> {
    let max = 1 << 16;
    if p.0 == 0 || p.1 == 0 || p.0 > max || p.1 > max {
        return Err(Error::InvalidArgument(format!(
            "{op}: {what} must be positive (at most {max}), got [{}, {}]",
            p.0, p.1
        )));
    }
    Ok(())
}

/// Output dims of a windowed NHWC op: `x` rank 3 (one image) or 4, window `(fh, fw)`, `channels`
/// out (`None`: unknown until the filter's dims are).
fn windowed(
    op: &str,
    x: &Dims,
    f: (usize, usize),
    strides: &Pair,
    pad: &Pad,
    dil: &Pair,
    channels: Option<usize>,
) -> Result<Dims> {
    positive(op, "strides", strides)?;
    positive(op, "dilations", dil)?;
    positive(op, "the window", &Pair(f.0, f.1))?;
    if let Pad::Explicit(p) = pad {
        if *p > 1 << 16 {
            return Err(Error::InvalidArgument(format!("{op}: pad {p} is too large")));
        }
    }
    if x.len() != 3 && x.len() != 4 {
        return Err(Error::ShapeMismatch(format!(
            "{op}: the input must be NHWC, rank 4 (or 3 for one image), got {}",
            show(x)
        )));
    }
    let r = x.len();
    let dim = |i: usize, size: usize, stride: usize, d: usize| -> Result<Option<usize>> {
        x[i].map(|n| extent(op, n, size, stride, d, *pad).map(|e| e.out))
            .transpose()
    };
    let mut out: Dims = x[..r - 3].to_vec();
    out.push(dim(r - 3, f.0, strides.0, dil.0)?);
    out.push(dim(r - 2, f.1, strides.1, dil.1)?);
    out.push(channels);
    Ok(out)
}

fn filter_dims(op: &str, x: &Dims, filter: &Dims) -> Result<(usize, usize, Option<usize>)> {
    let (Some(fh), Some(fw)) = (
        filter.first().copied().flatten(),
        filter.get(1).copied().flatten(),
    ) else {
        return Err(Error::ShapeMismatch(format!(
            "{op}: the filter must be rank 4 [fh, fw, inC, …] with known spatial dims, got {}",
            show(filter)
        )));
    };
    if filter.len() != 4 {
        return Err(Error::ShapeMismatch(format!(
            "{op}: the filter must be rank 4 [fh, fw, inC, …], got {}",
            show(filter)
        )));
    }
    let c = x.last().copied().flatten();
    if let (Some(c), Some(fc)) = (c, filter[2]) {
        if c != fc {
            return Err(Error::ShapeMismatch(format!(
                "{op}: the input has {c} channels but the filter expects {fc} (input {}, filter {})",
                show(x),
                show(filter)
            )));
        }
    }
    Ok((fh, fw, filter[3]))
}

pub(super) fn conv2d(args: Args, strides: &Pair, pad: &Pad, dil: &Pair) -> Out {
    let ((x, d), (f, e)) = (&args[0], &args[1]);
    float("conv2d", "input", *d)?;
    float("conv2d", "filter", *e)?;
    let (fh, fw, out_c) = filter_dims("conv2d", x, f)?;
    Ok((windowed("conv2d", x, (fh, fw), strides, pad, dil, out_c)?, *d))
}

pub(super) fn depthwise_conv2d(args: Args, strides: &Pair, pad: &Pad, dil: &Pair) -> Out {
    let ((x, d), (f, e)) = (&args[0], &args[1]);
    float("depthwiseConv2d", "input", *d)?;
    float("depthwiseConv2d", "filter", *e)?;
    let (fh, fw, mult) = filter_dims("depthwiseConv2d", x, f)?;
    let channels = match (f[2], mult) {
        (Some(c), Some(m)) => Some(c * m),
        _ => None,
    };
    Ok((
        windowed("depthwiseConv2d", x, (fh, fw), strides, pad, dil, channels)?,
        *d,
    ))
}

fn pool(op: &str, args: Args, size: &Pair, strides: &Pair, pad: &Pad) -> Out {
    let (x, d) = &args[0];
    float(op, "input", *d)?;
    let c = x.last().copied().flatten();
    Ok((
        windowed(op, x, (size.0, size.1), strides, pad, &Pair::ONE, c)?,
        *d,
    ))
}

pub(super) fn max_pool(args: Args, size: &Pair, strides: &Pair, pad: &Pad) -> Out {
    pool("maxPool", args, size, strides, pad)
}

pub(super) fn avg_pool(args: Args, size: &Pair, strides: &Pair, pad: &Pad) -> Out {
    pool("avgPool", args, size, strides, pad)
}

fn float_all(op: &str, args: Args) -> Result<()> {
    for (_, d) in args {
        float(op, "arguments", *d)?;
    }
    Ok(())
}

/// `g` must be what the forward op gives for `args[0]` (x) and `args[1]` (filter): the gradient
/// kernels index x, the filter and g by those shapes (a program loaded from JSON may name any nodes).
fn conv_grad_fits(op: &str, args: Args, s: &Pair, p: &Pad, d: &Pair, dw: bool) -> Result<()> {
    float_all(op, args)?;
    let fwd = &args[..2];
    let (want, _) = if dw {
        depthwise_conv2d(fwd, s, p, d)?
    } else {
        conv2d(fwd, s, p, d)?
    };
    same_dims(
        op,
        &args[2].0,
        &want,
        if dw { "depthwiseConv2d" } else { "conv2d" },
    )
}

/// `g` (known dims) agrees with `want`, the forward op's output for x.
fn same_dims(op: &str, g: &Dims, want: &Dims, fwd: &str) -> Result<()> {
    let fits = g.len() == want.len()
        && g.iter()
            .zip(want)
            .all(|(a, b)| a.is_none() || b.is_none() || a == b);
    if !fits {
        return Err(Error::ShapeMismatch(format!(
            "{op}: g has shape {}, the {fwd} of x gives {}",
            show(g),
            show(want)
        )));
    }
    Ok(())
}

pub(super) fn conv_input_grad(args: Args, s: &Pair, p: &Pad, d: &Pair, dw: &bool) -> Out {
    conv_grad_fits("convInputGrad", args, s, p, d, *dw)?;
    Ok(args[0].clone())
}

pub(super) fn conv_filter_grad(args: Args, s: &Pair, p: &Pad, d: &Pair, dw: &bool) -> Out {
    conv_grad_fits("convFilterGrad", args, s, p, d, *dw)?;
    Ok(args[1].clone())
}

pub(super) fn pool_grad(args: Args, max: &bool, f: &Pair, s: &Pair, p: &Pad) -> Out {
    float_all("poolGrad", args)?;
    // `g` is the forward pool's output: its kernel (and its planned scratch) count its windows
    let op = if *max { "maxPool" } else { "avgPool" };
    let (want, _) = pool(op, &args[..1], f, s, p)?;
    same_dims("poolGrad", &args[1].0, &want, op)?;
    Ok(args[0].clone())
}
