//! Reductions: `Reduce*` (axes from the attribute, or the input from opset 13 for `ReduceSum` and
//! 18 for the others), `ArgMax`/`ArgMin`.

use crate::error::Result;
use crate::onnx::import::Cx;
use crate::ops::{Op, ReduceOp, UnaryOp};
use crate::program::NodeId;

/// Translates `op` if it is a reduction; `false` otherwise.
pub(super) fn translate(cx: &mut Cx, op: &str) -> Result<bool> {
    let y = match op {
        "ArgMax" | "ArgMin" => arg(cx, op)?,
        _ if op.starts_with("Reduce") => match reduce(cx, op)? {
            Some(y) => y,
            None => return Ok(false),
        },
        _ => return Ok(false),
    };
    cx.set(0, y);
    Ok(true)
}

fn reduce(cx: &mut Cx, op: &str) -> Result<Option<NodeId>> {
    let (r, pre, post) = match op {
        "ReduceSum" => (ReduceOp::Sum, None, None),
        "ReduceMean" => (ReduceOp::Mean, None, None),
        "ReduceMax" => (ReduceOp::Max, None, None),
        "ReduceMin" => (ReduceOp::Min, None, None),
        "ReduceProd" => (ReduceOp::Prod, None, None),
        "ReduceL1" => (ReduceOp::Sum, Some(UnaryOp::Abs), None),
        "ReduceL2" => (ReduceOp::Sum, Some(UnaryOp::Square), Some(UnaryOp::Sqrt)),
        "ReduceSumSquare" => (ReduceOp::Sum, Some(UnaryOp::Square), None),
        "ReduceLogSum" => (ReduceOp::Sum, None, Some(UnaryOp::Log)),
        "ReduceLogSumExp" => (ReduceOp::Sum, None, None),
        _ => return Ok(None),
    };
    let since = if op == "ReduceSum" { 13 } else { 18 };
    let axes = cx.ints_from("axes", 1, since)?.unwrap_or_default();
    let keep = cx.int("keepdims", 1) != 0;
    let a = cx.input(0)?;
    if axes.is_empty() && cx.int("noop_with_empty_axes", 0) != 0 {
        return cx.im.p.op(Op::Clone {}, &[a]).map(Some);
    }
    if op == "ReduceLogSumExp" {
        return cx.im.p.log_sum_exp(a, axes, keep).map(Some);
    }
    let p = &mut cx.im.p;
    let x = match pre {
        Some(u) => p.op(Op::Unary(u), &[a])?,
        None => a,
    };
    let y = p.op(
        Op::Reduce {
            op: r,
            axes,
            keep_dims: keep,
        },
        &[x],
    )?;
    Ok(Some(match post {
        Some(u) => p.op(Op::Unary(u), &[y])?,
        None => y,
    }))
}

/// `ArgMax`/`ArgMin`; with `select_last_index`, of the input reversed along the axis, counted back.
fn arg(cx: &mut Cx, op: &str) -> Result<NodeId> {
    let mut a = cx.input(0)?;
    let axis = cx.int("axis", 0);
    let keep = cx.int("keepdims", 1) != 0;
    let last = match cx.int("select_last_index", 0) != 0 {
        true => {
            let dims = cx.dims(0)?;
            let n = dims[crate::ops::infer::axis("ArgMax", axis, dims.len())?];
            let rev: Vec<f64> = (0..n).rev().map(|i| i as f64).collect();
            let idx = cx.im.p.constant(&rev, &[n], crate::dtype::DType::Int32)?;
            a = cx.im.p.gather(a, idx, axis)?;
            Some(n)
        }
        false => None,
    };
    let p = &mut cx.im.p;
    let mut y = match op {
        "ArgMax" => p.arg_max(a, axis)?,
        _ => p.arg_min(a, axis)?,
    };
    if let Some(n) = last {
        let neg = p.op(Op::Unary(UnaryOp::Neg), &[y])?;
        y = p.binary_scalar(crate::ops::BinaryOp::Add, neg, (n - 1) as f64)?;
    }
    match keep {
        true => p.expand_dims(y, axis),
        false => Ok(y),
    }
}
