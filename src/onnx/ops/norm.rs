//! Normalisations over trailing axes or per instance, made of table ops: `LayerNormalization` on any
//! axis (with its mean and inverse-deviation outputs), `RMSNormalization`, `InstanceNormalization`.

use crate::error::Result;
use crate::onnx::import::Cx;
use crate::ops::{BinaryOp as B, Op, ReduceOp, UnaryOp as U};
use crate::program::NodeId;

/// Translates `op` if it is one of these; `false` otherwise.
pub(super) fn translate(cx: &mut Cx, op: &str) -> Result<bool> {
    match op {
        "LayerNormalization" => layer_norm(cx)?,
        "RMSNormalization" => rms_norm(cx)?,
        "InstanceNormalization" => instance_norm(cx)?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// The axes from `axis` (negative from the end) to the last, of a rank-`rank` input.
fn trailing(cx: &Cx, axis: i64, rank: usize) -> Result<Vec<i64>> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if !(0..r).contains(&a) {
        return Err(cx.unsupported(format!("axis {axis} of rank {rank}")));
    }
    Ok((a..r).collect())
}

/// `(x − mean) / √(var + ε)` over `axes`, with the mean and `1 / √(var + ε)` (kept dims).
fn standardise(cx: &mut Cx, x: NodeId, axes: &[i64], eps: f64) -> Result<(NodeId, NodeId, NodeId)> {
    let p = &mut cx.im.p;
    let mean = p.op(
        Op::Reduce {
            op: ReduceOp::Mean,
            axes: axes.to_vec(),
            keep_dims: true,
        },
        &[x],
    )?;
    let d = p.op(Op::Binary(B::Sub), &[x, mean])?;
    let sq = p.op(Op::Unary(U::Square), &[d])?;
    let var = p.op(
        Op::Reduce {
            op: ReduceOp::Mean,
            axes: axes.to_vec(),
            keep_dims: true,
        },
        &[sq],
    )?;
    let ve = p.binary_scalar(B::Add, var, eps)?;
    let inv = p.op(Op::Unary(U::Rsqrt), &[ve])?;
    let y = p.op(Op::Binary(B::Mul), &[d, inv])?;
    Ok((y, mean, inv))
}

/// `y · scale (+ bias)`.
fn affine(cx: &mut Cx, y: NodeId, scale: NodeId, bias: Option<NodeId>) -> Result<NodeId> {
    let p = &mut cx.im.p;
    let y = p.op(Op::Binary(B::Mul), &[y, scale])?;
    match bias {
        Some(b) => p.op(Op::Binary(B::Add), &[y, b]),
        None => Ok(y),
    }
}

fn layer_norm(cx: &mut Cx) -> Result<()> {
    let rank = cx.meta(0)?.0.len();
    let axes = trailing(cx, cx.int("axis", -1), rank)?;
    let eps = cx.float("epsilon", 1e-5);
    let (x, scale, bias) = (cx.input(0)?, cx.input(1)?, cx.opt_input(2)?);
    let more = cx.node.output.iter().skip(1).any(|o| !o.is_empty());
    if axes.len() == 1 && !more {
        let b = match bias {
            Some(b) => b,
            None => cx.im.p.binary_scalar(B::Mul, scale, 0.0)?,
        };
        let y = cx.im.p.layer_norm(x, scale, b, eps)?;
        cx.set(0, y);
        return Ok(());
    }
    let (y, mean, inv) = standardise(cx, x, &axes, eps)?;
    let y = affine(cx, y, scale, bias)?;
    cx.set(0, y);
    cx.set(1, mean);
    cx.set(2, inv);
    Ok(())
}

fn rms_norm(cx: &mut Cx) -> Result<()> {
    let rank = cx.meta(0)?.0.len();
    let axes = trailing(cx, cx.int("axis", -1), rank)?;
    let eps = cx.float("epsilon", 1e-5);
    let (x, scale) = (cx.input(0)?, cx.input(1)?);
    let p = &mut cx.im.p;
    let sq = p.op(Op::Unary(U::Square), &[x])?;
    let ms = p.op(
        Op::Reduce {
            op: ReduceOp::Mean,
            axes,
            keep_dims: true,
        },
        &[sq],
    )?;
    let ms = p.binary_scalar(B::Add, ms, eps)?;
    let inv = p.op(Op::Unary(U::Rsqrt), &[ms])?;
    let y = p.op(Op::Binary(B::Mul), &[x, inv])?;
    let y = affine(cx, y, scale, None)?;
    cx.set(0, y);
    Ok(())
}

fn instance_norm(cx: &mut Cx) -> Result<()> {
    let rank = cx.meta(0)?.0.len();
    if rank < 3 {
        return Err(cx.unsupported(format!("rank {rank}")));
    }
    let axes: Vec<i64> = (2..rank as i64).collect();
    let eps = cx.float("epsilon", 1e-5);
    let (x, scale, bias) = (cx.input(0)?, cx.input(1)?, cx.input(2)?);
    let (y, _, _) = standardise(cx, x, &axes, eps)?;
    let mut shape = vec![-1i64];
    shape.extend(std::iter::repeat_n(1, rank - 2));
    let s = cx.im.p.reshape(scale, shape.clone())?;
    let b = cx.im.p.reshape(bias, shape)?;
    let y = affine(cx, y, s, Some(b))?;
    cx.set(0, y);
    Ok(())
}
