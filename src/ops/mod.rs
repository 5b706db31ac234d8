//! Ops as data: the one description shared by eager tensor methods and program nodes, with shape
//! and dtype inference. Pure (no GPU); the kernels that run each op live in `crate::kernels`.
//!
//! Shapes are inferred over `Dim = Option<usize>` where `None` is a dynamic dimension (`-1` in a
//! program input), so the same rules validate a program at compile time (dynamic dims unknown) and
//! each specialisation at run time (every dim known).

pub mod infer;

pub use infer::{infer, Dims};

use crate::dtype::DType;

/// Elementwise functions of one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `|x|`
    Abs,
    /// `x²`
    Square,
    /// `√x` (float32)
    Sqrt,
    /// `eˣ` (float32)
    Exp,
    /// `ln x` (float32)
    Log,
    /// `max(x, 0)`
    Relu,
    /// `1 / (1 + e⁻ˣ)` (float32)
    Sigmoid,
    /// `tanh x` (float32)
    Tanh,
}

/// Elementwise functions of two arguments, with NumPy broadcasting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BinaryOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`
    Mul,
    /// `a / b` (integer division truncates; by zero gives the dividend, as WGSL defines)
    Div,
}

/// Reductions over a set of axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReduceOp {
    /// Sum.
    Sum,
    /// Arithmetic mean (float32 only).
    Mean,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
}

/// One operation with its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// Elementwise unary.
    Unary(UnaryOp),
    /// Elementwise binary with broadcasting.
    Binary(BinaryOp),
    /// Converts to another dtype (float→int truncates toward zero; to bool is `x != 0`).
    Cast(DType),
    /// `[..., M, K] × [..., K, N] → [..., M, N]`; leading (batch) dims broadcast.
    MatMul,
    /// Reduction over `axes` (empty: all axes); `keep_dims` keeps reduced axes as 1.
    Reduce {
        /// Which reduction.
        op: ReduceOp,
        /// Axes to reduce (negative counts from the end); empty reduces everything.
        axes: Vec<i64>,
        /// Keep reduced axes with size 1.
        keep_dims: bool,
    },
    /// Softmax along `axis` (negative counts from the end).
    Softmax {
        /// The axis.
        axis: i64,
    },
    /// Same elements, new shape; one entry may be `-1` (inferred).
    Reshape {
        /// The target shape.
        shape: Vec<i64>,
    },
    /// Permutes axes; `None` reverses them.
    Transpose {
        /// The permutation.
        perm: Option<Vec<i64>>,
    },
    /// A copy.
    Clone,
}

impl Op {
    /// The name used in program JSON, profiles and telemetry origins.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Unary(u) => match u {
                UnaryOp::Neg => "neg",
                UnaryOp::Abs => "abs",
                UnaryOp::Square => "square",
                UnaryOp::Sqrt => "sqrt",
                UnaryOp::Exp => "exp",
                UnaryOp::Log => "log",
                UnaryOp::Relu => "relu",
                UnaryOp::Sigmoid => "sigmoid",
                UnaryOp::Tanh => "tanh",
            },
            Op::Binary(b) => match b {
                BinaryOp::Add => "add",
                BinaryOp::Sub => "sub",
                BinaryOp::Mul => "mul",
                BinaryOp::Div => "div",
            },
            Op::Cast(_) => "cast",
            Op::MatMul => "matmul",
            Op::Reduce { op, .. } => match op {
                ReduceOp::Sum => "sum",
                ReduceOp::Mean => "mean",
                ReduceOp::Max => "max",
                ReduceOp::Min => "min",
            },
            Op::Softmax { .. } => "softmax",
            Op::Reshape { .. } => "reshape",
            Op::Transpose { .. } => "transpose",
            Op::Clone => "clone",
        }
    }

    /// Number of tensor arguments.
    pub fn arity(&self) -> usize {
        match self {
            Op::Binary(_) | Op::MatMul => 2,
            _ => 1,
        }
    }

    /// The unary op of this name, if any.
    pub fn unary(name: &str) -> Option<UnaryOp> {
        use UnaryOp::*;
        Some(match name {
            "neg" => Neg,
            "abs" => Abs,
            "square" => Square,
            "sqrt" => Sqrt,
            "exp" => Exp,
            "log" => Log,
            "relu" => Relu,
            "sigmoid" => Sigmoid,
            "tanh" => Tanh,
            _ => return None,
        })
    }

    /// The binary op of this name, if any.
    pub fn binary(name: &str) -> Option<BinaryOp> {
        use BinaryOp::*;
        Some(match name {
            "add" => Add,
            "sub" => Sub,
            "mul" => Mul,
            "div" => Div,
            _ => return None,
        })
    }

    /// The reduction of this name, if any.
    pub fn reduce(name: &str) -> Option<ReduceOp> {
        use ReduceOp::*;
        Some(match name {
            "sum" => Sum,
            "mean" => Mean,
            "max" => Max,
            "min" => Min,
            _ => return None,
        })
    }
}
