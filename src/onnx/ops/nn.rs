//! Network ONNX ops: products (`MatMul`, `Gemm`), softmaxes, `CumSum`, normalisations, and the 2-D
//! convolutions and pools — ONNX's NCHW around affon's NHWC kernels (transposes the fusion and
//! layout passes see like any other node).

use crate::error::Result;
use crate::onnx::import::Cx;
use crate::ops::{BinaryOp as B, Op, Pad, PadMode, Pair, ReduceOp};
use crate::program::NodeId;

/// Translates `op` if it is one of these; `false` otherwise.
pub(super) fn translate(cx: &mut Cx, op: &str) -> Result<bool> {
    let y = match op {
        "MatMul" => matmul(cx)?,
        "Gemm" => gemm(cx)?,
        "Softmax" | "LogSoftmax" => softmax(cx, op)?,
        "CumSum" => {
            let a = cx.input(0)?;
            let axis = cx
                .host_input(1)?
                .and_then(|v| v.data.first().copied())
                .unwrap_or(0.0) as i64;
            let (ex, rev) = (cx.int("exclusive", 0) != 0, cx.int("reverse", 0) != 0);
            cx.im.p.cumsum(a, axis, ex, rev)?
        }
        "BatchNormalization" => batch_norm(cx)?,
        "Conv" => conv(cx)?,
        "MaxPool" | "AveragePool" => pool(cx, op)?,
        "GlobalAveragePool" | "GlobalMaxPool" => {
            let a = cx.input(0)?;
            let rank = cx.meta(0)?.0.len() as i64;
            let axes: Vec<i64> = (2..rank).collect();
            let r = if op == "GlobalMaxPool" {
                ReduceOp::Max
            } else {
                ReduceOp::Mean
            };
            cx.im.p.op(
                Op::Reduce {
                    op: r,
                    axes,
                    keep_dims: true,
                },
                &[a],
            )?
        }
        _ => return Ok(false),
    };
    cx.set(0, y);
    Ok(true)
}

/// `MatMul` with NumPy's rank-1 rules (a vector operand gains then loses a unit dim).
fn matmul(cx: &mut Cx) -> Result<NodeId> {
    let (a, b) = (cx.input(0)?, cx.input(1)?);
    let (ra, rb) = (cx.meta(0)?.0.len(), cx.meta(1)?.0.len());
    let p = &mut cx.im.p;
    let a2 = if ra == 1 { p.expand_dims(a, 0)? } else { a };
    let b2 = if rb == 1 { p.expand_dims(b, -1)? } else { b };
    let mut y = p.matmul_t(a2, b2, false, false)?;
    if ra == 1 {
        y = p.squeeze(y, vec![-2])?;
    }
    if rb == 1 {
        y = p.squeeze(y, vec![-1])?;
    }
    Ok(y)
}

/// `Gemm`: `alpha · A'B' + beta · C`.
fn gemm(cx: &mut Cx) -> Result<NodeId> {
    let (a, b) = (cx.input(0)?, cx.input(1)?);
    let c = cx.opt_input(2)?;
    let (alpha, beta) = (cx.float("alpha", 1.0), cx.float("beta", 1.0));
    let (ta, tb) = (cx.int("transA", 0) != 0, cx.int("transB", 0) != 0);
    let p = &mut cx.im.p;
    let mut y = p.matmul_t(a, b, ta, tb)?;
    if alpha != 1.0 {
        y = p.binary_scalar(B::Mul, y, alpha)?;
    }
    if let Some(c) = c {
        let c = if beta != 1.0 {
            p.binary_scalar(B::Mul, c, beta)?
        } else {
            c
        };
        y = p.op(Op::Binary(B::Add), &[y, c])?;
    }
    Ok(y)
}

/// `Softmax`/`LogSoftmax`: from opset 13 along `axis` (default −1); before, over the dims from
/// `axis` (default 1) on, as one.
fn softmax(cx: &mut Cx, op: &str) -> Result<NodeId> {
    let a = cx.input(0)?;
    let rank = cx.meta(0)?.0.len() as i64;
    let apply = |cx: &mut Cx, x: NodeId, axis: i64| match op {
        "Softmax" => cx.im.p.softmax(x, axis),
        _ => cx.im.p.log_softmax(x, axis),
    };
    if cx.im.opset >= 13 {
        let axis = cx.int("axis", -1);
        return apply(cx, a, axis);
    }
    let axis = cx.int("axis", 1);
    let axis = if axis < 0 { axis + rank } else { axis };
    if !(0..rank).contains(&axis) {
        return Err(cx.unsupported(format!("axis {axis} of rank {rank}")));
    }
    if axis == rank - 1 {
        return apply(cx, a, -1);
    }
    let dims = cx.dims(0)?;
    let lead: usize = dims[..axis as usize].iter().product();
    let flat = cx.im.p.reshape(a, vec![lead as i64, -1])?;
    let y = apply(cx, flat, -1)?;
    cx.im
        .p
        .reshape(y, dims.iter().map(|&d| d as i64).collect::<Vec<_>>())
}

/// `p` reshaped to broadcast along axis 1 of a rank-`rank` input (`[C]` → `[C, 1, …]`).
fn per_channel(cx: &mut Cx, p: NodeId, rank: usize) -> Result<NodeId> {
    let mut shape = vec![-1i64];
    shape.extend(std::iter::repeat_n(1, rank.saturating_sub(2)));
    cx.im.p.reshape(p, shape)
}

/// `BatchNormalization` at inference (`training_mode` is not supported).
fn batch_norm(cx: &mut Cx) -> Result<NodeId> {
    if cx.int("training_mode", 0) != 0
        || cx.outputs() > 1 && cx.node.output[1..].iter().any(|o| !o.is_empty())
    {
        return Err(cx.unsupported("training mode"));
    }
    let x = cx.input(0)?;
    let rank = cx.meta(0)?.0.len();
    let mut params = vec![];
    for i in 1..5 {
        let v = cx.input(i)?;
        params.push(per_channel(cx, v, rank)?);
    }
    let eps = cx.float("epsilon", 1e-5);
    let [scale, bias, mean, var] = params[..] else {
        unreachable!()
    };
    cx.im.p.batch_norm(x, mean, var, Some(bias), Some(scale), eps)
}

/// A 2-D window's attributes as affon takes them: strides, padding, dilations — a 1-D window's as
/// a 2-D one of height 1 (`one_d`).
fn window(cx: &Cx, one_d: bool) -> Result<(Pair, Pad, Pair)> {
    let pair = |name: &str| -> Result<Pair> {
        let mut v = cx.ints(name).unwrap_or_else(|| vec![1; 2 - one_d as usize]);
        if one_d && v.len() == 1 {
            v.insert(0, 1);
        }
        match v[..] {
            [h, w] if h > 0 && w > 0 => Ok(Pair(h as usize, w as usize)),
            _ => Err(cx.unsupported(format!("{name} {v:?}"))),
        }
    };
    let (strides, dilations) = (pair("strides")?, pair("dilations")?);
    let auto = cx.string("auto_pad", "NOTSET");
    let pads = cx.ints("pads").unwrap_or_else(|| vec![0; 4 - 2 * one_d as usize]);
    let even = !pads.is_empty() && pads.iter().all(|&p| p == pads[0]);
    let pad = match auto.as_str() {
        "VALID" => Pad::Mode(PadMode::Valid),
        "SAME_UPPER" if !one_d => Pad::Mode(PadMode::Same),
        "NOTSET" if even && (!one_d || pads[0] == 0) => Pad::Explicit(pads[0].max(0) as usize),
        _ => return Err(cx.unsupported(format!("auto_pad {auto} with pads {pads:?}"))),
    };
    Ok((strides, pad, dilations))
}

/// NCHW → NHWC and back.
fn nhwc(cx: &mut Cx, x: NodeId) -> Result<NodeId> {
    cx.im.p.transpose(x, Some(vec![0, 2, 3, 1]))
}
fn nchw(cx: &mut Cx, y: NodeId) -> Result<NodeId> {
    cx.im.p.transpose(y, Some(vec![0, 3, 1, 2]))
}

/// A 1-D input as 2-D (a unit height at axis 2), and back.
fn lift(cx: &mut Cx, x: NodeId, one_d: bool) -> Result<NodeId> {
    match one_d {
        true => cx.im.p.expand_dims(x, 2),
        false => Ok(x),
    }
}
fn lower(cx: &mut Cx, y: NodeId, one_d: bool) -> Result<NodeId> {
    let y = nchw(cx, y)?;
    match one_d {
        true => cx.im.p.squeeze(y, vec![2]),
        false => Ok(y),
    }
}

/// `Conv` in 1-D or 2-D: `group` 1 (`conv2d`) or one group per input channel (`depthwiseConv2d`).
fn conv(cx: &mut Cx) -> Result<NodeId> {
    let (dims, wdims) = (cx.dims(0)?, cx.dims(1)?);
    let one_d = dims.len() == 3 && wdims.len() == 3;
    if !(one_d || dims.len() == 4 && wdims.len() == 4) {
        return Err(cx.unsupported(format!(
            "a {}-D convolution (1-D and 2-D only)",
            dims.len().saturating_sub(2)
        )));
    }
    let (c, m, group) = (dims[1], wdims[0], cx.int("group", 1) as usize);
    let (kh, kw) = if one_d {
        (1, wdims[2])
    } else {
        (wdims[2], wdims[3])
    };
    let (strides, pad, dilations) = window(cx, one_d)?;
    let (x, w, bias) = (cx.input(0)?, cx.input(1)?, cx.opt_input(2)?);
    let (x, w) = (lift(cx, x, one_d)?, lift(cx, w, one_d)?);
    let xt = nhwc(cx, x)?;
    let p = &mut cx.im.p;
    let y = if group == 1 {
        let f = p.transpose(w, Some(vec![2, 3, 1, 0]))?; // [M, C, kh, kw] → [kh, kw, C, M]
        p.conv2d(xt, f, strides, pad, dilations)?
    } else if group == c && m % c == 0 {
        let r = p.reshape(w, vec![c as i64, (m / c) as i64, kh as i64, kw as i64])?;
        let f = p.transpose(r, Some(vec![2, 3, 0, 1]))?; // → [kh, kw, C, M/C]
        p.depthwise_conv2d(xt, f, strides, pad, dilations)?
    } else {
        return Err(cx.unsupported(format!("group {group} of {c} channels")));
    };
    let y = match bias {
        Some(b) => cx.im.p.op(Op::Binary(B::Add), &[y, b])?,
        None => y,
    };
    lower(cx, y, one_d)
}

/// `MaxPool` / `AveragePool` in 1-D or 2-D (no `ceil_mode`, dilations, or counted padding).
fn pool(cx: &mut Cx, op: &str) -> Result<NodeId> {
    let dims = cx.dims(0)?;
    let mut k = cx.ints("kernel_shape").unwrap_or_default();
    let one_d = dims.len() == 3 && k.len() == 1;
    if one_d {
        k.insert(0, 1);
    }
    let two_d = dims.len() == 4 && k.len() == 2;
    if !(one_d || two_d) || cx.int("ceil_mode", 0) != 0 || cx.outputs() > 1 {
        return Err(cx.unsupported("other than a 1-D or 2-D window without ceil_mode or indices"));
    }
    let (strides, pad, dilations) = window(cx, one_d)?;
    let counted = op == "AveragePool" && cx.int("count_include_pad", 0) != 0 && pad != Pad::Explicit(0);
    if dilations != Pair(1, 1) || counted || k.iter().any(|&x| x < 1) {
        return Err(cx.unsupported("dilations, or padding counted in the average"));
    }
    let x = cx.input(0)?;
    let x = lift(cx, x, one_d)?;
    let xt = nhwc(cx, x)?;
    let size = Pair(k[0] as usize, k[1] as usize);
    let y = match op {
        "MaxPool" => cx.im.p.max_pool(xt, size, strides, pad)?,
        _ => cx.im.p.avg_pool(xt, size, strides, pad)?,
    };
    lower(cx, y, one_d)
}
