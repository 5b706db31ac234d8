//! Elementwise ONNX ops: the table's unary and binary ops, variadic `Sum`/`Max`/`Min`/`Mean`, and
//! the activations made of them.

use crate::dtype::DType;
use crate::error::Result;
use crate::onnx::import::Cx;
use crate::ops::{BinaryOp as B, Op, UnaryOp as U};
use crate::program::NodeId;

/// Translates `op` if it is elementwise; `false` otherwise.
pub(super) fn translate(cx: &mut Cx, op: &str) -> Result<bool> {
    if let Some(u) = unary(op) {
        let a = cx.input(0)?;
        let y = cx.im.p.op(Op::Unary(u), &[a])?;
        cx.set(0, y);
        return Ok(true);
    }
    if let Some(b) = binary(op) {
        let (a, c) = (cx.input(0)?, cx.input(1)?);
        let y = cx.im.p.op(Op::Binary(b), &[a, c])?;
        cx.set(0, y);
        return Ok(true);
    }
    let y = match op {
        "Sum" | "Max" | "Min" | "Mean" => variadic(cx, op)?,
        "Identity" | "Dropout" => identity(cx)?,
        "Clip" => clip(cx)?,
        "Where" => {
            let (c, a, b) = (cx.input(0)?, cx.input(1)?, cx.input(2)?);
            cx.im.p.select(a, c, b)?
        }
        "Cast" => cast(cx)?,
        "CastLike" => {
            let (a, (_, d)) = (cx.input(0)?, cx.meta(1)?);
            cx.im.p.op(Op::Cast { dtype: d }, &[a])?
        }
        "Mod" => modulo(cx)?,
        "Mish" | "Swish" | "Sinh" | "Cosh" | "Tan" | "Asinh" | "Acosh" | "Atanh" => math(cx, op)?,
        _ => match activation(cx, op)? {
            Some(y) => y,
            None => return Ok(false),
        },
    };
    cx.set(0, y);
    Ok(true)
}

fn unary(op: &str) -> Option<U> {
    Some(match op {
        "Abs" => U::Abs,
        "Neg" => U::Neg,
        "Sqrt" => U::Sqrt,
        "Exp" => U::Exp,
        "Log" => U::Log,
        "Relu" => U::Relu,
        "Sigmoid" => U::Sigmoid,
        "Tanh" => U::Tanh,
        "Floor" => U::Floor,
        "Ceil" => U::Ceil,
        "Round" => U::Round,
        "Sign" => U::Sign,
        "Reciprocal" => U::Reciprocal,
        "Sin" => U::Sin,
        "Cos" => U::Cos,
        "Erf" => U::Erf,
        "Softplus" => U::Softplus,
        "HardSwish" => U::HardSwish,
        "Not" => U::LogicalNot,
        _ => return None,
    })
}

fn binary(op: &str) -> Option<B> {
    Some(match op {
        "Add" => B::Add,
        "Sub" => B::Sub,
        "Mul" => B::Mul,
        "Div" => B::Div,
        "Pow" => B::Pow,
        "Equal" => B::Equal,
        "Greater" => B::Greater,
        "GreaterOrEqual" => B::GreaterEqual,
        "Less" => B::Less,
        "LessOrEqual" => B::LessEqual,
        "And" => B::LogicalAnd,
        "Or" => B::LogicalOr,
        "Xor" => B::NotEqual,
        _ => return None,
    })
}

/// `Sum`, `Max`, `Min`, `Mean` over any number of inputs (broadcasting).
fn variadic(cx: &mut Cx, op: &str) -> Result<NodeId> {
    let b = match op {
        "Max" => B::Maximum,
        "Min" => B::Minimum,
        _ => B::Add,
    };
    let mut y = cx.input(0)?;
    let n = cx.node.input.len();
    for i in 1..n {
        let x = cx.input(i)?;
        y = cx.im.p.op(Op::Binary(b), &[y, x])?;
    }
    if op == "Mean" {
        y = cx.im.p.binary_scalar(B::Div, y, n as f64)?;
    }
    if n == 1 {
        y = cx.im.p.op(Op::Clone {}, &[y])?;
    }
    Ok(y)
}

/// `Identity` (and `Dropout` at inference: its mask output is not supported).
fn identity(cx: &mut Cx) -> Result<NodeId> {
    if cx.op() == "Dropout" && cx.node.output.iter().skip(1).any(|o| !o.is_empty()) {
        return Err(cx.unsupported("the mask output"));
    }
    let a = cx.input(0)?;
    cx.im.p.op(Op::Clone {}, &[a])
}

/// `Clip`: bounds from attributes (before opset 11) or inputs (nodes too).
fn clip(cx: &mut Cx) -> Result<NodeId> {
    let mut y = cx.input(0)?;
    if cx.im.opset < 11 {
        let (lo, hi) = (cx.float("min", f64::NEG_INFINITY), cx.float("max", f64::INFINITY));
        return cx.im.p.clip_by_value(y, lo, hi);
    }
    for (i, b) in [(1, B::Maximum), (2, B::Minimum)] {
        if let Some(bound) = cx.opt_input(i)? {
            y = cx.im.p.op(Op::Binary(b), &[y, bound])?;
        }
    }
    match cx.node.input.iter().skip(1).all(|n| n.is_empty()) {
        true => cx.im.p.op(Op::Clone {}, &[y]),
        false => Ok(y),
    }
}

fn cast(cx: &mut Cx) -> Result<NodeId> {
    let to = cx.int("to", 1) as i32;
    let dtype = crate::onnx::host::dtype(to, "Cast's 'to'")?;
    let a = cx.input(0)?;
    cx.im.p.op(Op::Cast { dtype }, &[a])
}

/// `Mod`: `fmod = 0` is the floored modulo of the table; `fmod = 1` (floats) truncates.
fn modulo(cx: &mut Cx) -> Result<NodeId> {
    let (a, b) = (cx.input(0)?, cx.input(1)?);
    if cx.int("fmod", 0) == 0 {
        return cx.im.p.op(Op::Binary(B::Mod), &[a, b]);
    }
    let (_, d) = cx.meta(0)?;
    if d != DType::Float32 {
        return Err(cx.unsupported("fmod = 1 on integers"));
    }
    // a − trunc(a / b) · b, trunc(q) = sign(q) · floor(|q|)
    let p = &mut cx.im.p;
    let q = p.op(Op::Binary(B::Div), &[a, b])?;
    let (s, m) = (p.op(Op::Unary(U::Sign), &[q])?, p.op(Op::Unary(U::Abs), &[q])?);
    let f = p.op(Op::Unary(U::Floor), &[m])?;
    let t = p.op(Op::Binary(B::Mul), &[s, f])?;
    let tb = p.op(Op::Binary(B::Mul), &[t, b])?;
    p.op(Op::Binary(B::Sub), &[a, tb])
}

/// The activations with attributes, made of table ops.
fn activation(cx: &mut Cx, op: &str) -> Result<Option<NodeId>> {
    let a = match op {
        "Elu" | "Selu" | "LeakyRelu" | "HardSigmoid" | "PRelu" | "Softsign" | "ThresholdedRelu" | "Gelu"
        | "Celu" => cx.input(0)?,
        _ => return Ok(None),
    };
    let alpha = |d: f64| cx.float("alpha", d);
    let y = match op {
        "LeakyRelu" => {
            let al = alpha(0.01);
            cx.im.p.leaky_relu(a, al)?
        }
        "HardSigmoid" => {
            let (al, beta) = (alpha(0.2), cx.float("beta", 0.5));
            cx.im.p.hard_sigmoid(a, al, beta)?
        }
        "Elu" => {
            let al = alpha(1.0);
            negative_exp(cx, a, al, 1.0)?
        }
        "Celu" => celu(cx, a)?,
        "Selu" => {
            let al = alpha(1.673_263_192_176_818_8);
            let gamma = cx.float("gamma", 1.050_701_022_148_132_3);
            negative_exp(cx, a, al, gamma)?
        }
        "PRelu" => {
            let slope = cx.input(1)?;
            let p = &mut cx.im.p;
            let neg = p.binary_scalar(B::Less, a, 0.0)?;
            let scaled = p.op(Op::Binary(B::Mul), &[a, slope])?;
            p.select(scaled, neg, a)?
        }
        "Softsign" => {
            let p = &mut cx.im.p;
            let m = p.op(Op::Unary(U::Abs), &[a])?;
            let d = p.binary_scalar(B::Add, m, 1.0)?;
            p.op(Op::Binary(B::Div), &[a, d])?
        }
        "ThresholdedRelu" => {
            let al = alpha(1.0);
            let above = cx.im.p.binary_scalar(B::Greater, a, al)?;
            cx.im.p.select(a, above, 0.0)?
        }
        _ => gelu(cx, a)?,
    };
    Ok(Some(y))
}

/// `max(0, x) + min(0, alpha · (exp(x / alpha) − 1))`.
fn celu(cx: &mut Cx, a: NodeId) -> Result<NodeId> {
    let alpha = cx.float("alpha", 1.0);
    let p = &mut cx.im.p;
    let x = p.binary_scalar(B::Div, a, alpha)?;
    let e = p.op(Op::Unary(U::Expm1), &[x])?;
    let e = p.binary_scalar(B::Mul, e, alpha)?;
    let pos = p.op(Op::Unary(U::Relu), &[a])?;
    let neg = p.binary_scalar(B::Minimum, e, 0.0)?;
    p.op(Op::Binary(B::Add), &[pos, neg])
}

/// `gamma · (x > 0 ? x : alpha · (eˣ − 1))` (Elu, Selu).
fn negative_exp(cx: &mut Cx, a: NodeId, alpha: f64, gamma: f64) -> Result<NodeId> {
    let p = &mut cx.im.p;
    let e = p.op(Op::Unary(U::Expm1), &[a])?;
    let e = p.binary_scalar(B::Mul, e, alpha)?;
    let pos = p.binary_scalar(B::Greater, a, 0.0)?;
    let y = p.select(a, pos, e)?;
    match gamma == 1.0 {
        true => Ok(y),
        false => p.binary_scalar(B::Mul, y, gamma),
    }
}

fn gelu(cx: &mut Cx, a: NodeId) -> Result<NodeId> {
    match cx.string("approximate", "none").as_str() {
        "none" => cx.im.p.op(Op::Unary(U::Gelu), &[a]),
        other => Err(cx.unsupported(format!("approximate = '{other}'"))),
    }
}

/// The functions made of the table's: `Mish`, `Swish`, the hyperbolic functions and their inverses,
/// `Tan` (through `expm1`/`log1p` where that keeps them accurate near 0).
fn math(cx: &mut Cx, op: &str) -> Result<NodeId> {
    let a = cx.input(0)?;
    let alpha = cx.float("alpha", 1.0);
    let p = &mut cx.im.p;
    let u = |p: &mut crate::Program, f: U, x: NodeId| p.op(Op::Unary(f), &[x]);
    let b = |p: &mut crate::Program, f: B, x: NodeId, y: NodeId| p.op(Op::Binary(f), &[x, y]);
    Ok(match op {
        "Mish" => {
            let t = u(p, U::Softplus, a)?;
            let t = u(p, U::Tanh, t)?;
            b(p, B::Mul, a, t)?
        }
        "Swish" => {
            let t = p.binary_scalar(B::Mul, a, alpha)?;
            let t = u(p, U::Sigmoid, t)?;
            b(p, B::Mul, a, t)?
        }
        "Sinh" | "Cosh" => {
            let (e, n) = (u(p, U::Expm1, a)?, u(p, U::Neg, a)?);
            let f = u(p, U::Expm1, n)?;
            let s = match op {
                "Sinh" => b(p, B::Sub, e, f)?,
                _ => {
                    let t = b(p, B::Add, e, f)?;
                    p.binary_scalar(B::Add, t, 2.0)?
                }
            };
            p.binary_scalar(B::Mul, s, 0.5)?
        }
        "Tan" => {
            let (s, c) = (u(p, U::Sin, a)?, u(p, U::Cos, a)?);
            b(p, B::Div, s, c)?
        }
        "Asinh" => {
            // sign(x) · log1p(|x| + x² / (1 + √(x² + 1)))
            let (m, sq) = (u(p, U::Abs, a)?, u(p, U::Square, a)?);
            let r = p.binary_scalar(B::Add, sq, 1.0)?;
            let r = u(p, U::Sqrt, r)?;
            let d = p.binary_scalar(B::Add, r, 1.0)?;
            let q = b(p, B::Div, sq, d)?;
            let t = b(p, B::Add, m, q)?;
            let l = u(p, U::Log1p, t)?;
            let s = u(p, U::Sign, a)?;
            b(p, B::Mul, s, l)?
        }
        "Acosh" => {
            let sq = u(p, U::Square, a)?;
            let r = p.binary_scalar(B::Sub, sq, 1.0)?;
            let r = u(p, U::Sqrt, r)?;
            let t = b(p, B::Add, a, r)?;
            u(p, U::Log, t)?
        }
        _ => {
            // ½ · log1p(2x / (1 − x))
            let n = u(p, U::Neg, a)?;
            let d = p.binary_scalar(B::Add, n, 1.0)?;
            let t = b(p, B::Div, a, d)?;
            let t = p.binary_scalar(B::Mul, t, 2.0)?;
            let l = u(p, U::Log1p, t)?;
            p.binary_scalar(B::Mul, l, 0.5)?
        }
    })
}
