//! Ops as data: the one description shared by eager tensor methods and program nodes, with shape
//! and dtype inference. Pure (no GPU); the kernels that run each op live in `crate::kernels`.
//!
//! Shapes are inferred over `Dim = Option<usize>` where `None` is a dynamic dimension (`-1` in a
//! program input), so the same rules validate a program at compile time (dynamic dims unknown) and
//! each specialisation at run time (every dim known).

pub(crate) mod compose;
pub mod infer;
mod table;

pub(crate) use table::binary_helpers;

pub use infer::{infer, Dims};

use crate::dtype::DType;

/// How an elementwise op treats dtypes (the `rule` column of the op table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Every numeric dtype (not bool); the output has the input's dtype.
    Any,
    /// float32 and int32.
    Signed,
    /// float32 only.
    Float,
    /// bool only (logical ops).
    Bool,
    /// Binary, the same dtype in and out.
    Numeric,
    /// Binary comparison: any two equal dtypes → bool.
    Compare,
    /// Binary logical: bool, bool → bool.
    Logical,
}

macro_rules! define_unary {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal)),* $(,)?) => {
        /// Elementwise functions of one argument (declared in `ops/table.rs`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum UnaryOp {
            $(#[doc = $doc] $v,)*
        }

        impl UnaryOp {
            /// Every unary op.
            pub const ALL: &'static [UnaryOp] = &[$(UnaryOp::$v),*];

            /// The JS, JSON and origin name.
            pub fn name(self) -> &'static str {
                match self { $(UnaryOp::$v => $js,)* }
            }

            /// The dtype rule.
            pub fn rule(self) -> Rule {
                match self { $(UnaryOp::$v => rule!($rule),)* }
            }

            /// The body of `fn f(x: T) -> T`.
            pub(crate) fn body(self) -> &'static str {
                match self { $(UnaryOp::$v => $body,)* }
            }
        }
    };
}

macro_rules! define_binary {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal)),* $(,)?) => {
        /// Elementwise functions of two arguments with NumPy broadcasting (declared in `ops/table.rs`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum BinaryOp {
            $(#[doc = $doc] $v,)*
        }

        impl BinaryOp {
            /// Every binary op.
            pub const ALL: &'static [BinaryOp] = &[$(BinaryOp::$v),*];

            /// The JS, JSON and origin name.
            pub fn name(self) -> &'static str {
                match self { $(BinaryOp::$v => $js,)* }
            }

            /// The dtype rule.
            pub fn rule(self) -> Rule {
                match self { $(BinaryOp::$v => rule!($rule),)* }
            }

            /// The WGSL expression of `x` and `y`.
            pub(crate) fn body(self) -> &'static str {
                match self { $(BinaryOp::$v => $body,)* }
            }
        }
    };
}

macro_rules! rule {
    (any) => {
        Rule::Any
    };
    (signed) => {
        Rule::Signed
    };
    (float) => {
        Rule::Float
    };
    (bool) => {
        Rule::Bool
    };
    (numeric) => {
        Rule::Numeric
    };
    (compare) => {
        Rule::Compare
    };
    (logical) => {
        Rule::Logical
    };
}

crate::unary_table!(define_unary);
crate::binary_table!(define_binary);

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
    /// Product.
    Prod,
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
    /// A window onto the input: output coordinate `c` reads input coordinate `c + start` (modulo the
    /// input's size with `tile`), or `value` outside it — `slice`, `pad` and `tile` (`ops/compose.rs`).
    Window {
        /// Offset per dimension (negative: padding before).
        start: Vec<i64>,
        /// The output shape.
        size: Vec<usize>,
        /// Read modulo the input's size (tiling).
        tile: bool,
        /// The fill value's bits as `f64::to_bits` (representable in the dtype).
        value: u64,
    },
    /// Running sums along `axis` (TF.js `cumsum(axis, exclusive, reverse)`).
    Cumsum {
        /// The axis (negative counts from the end).
        axis: i64,
        /// Each output excludes its own element.
        exclusive: bool,
        /// Sum from the end.
        reverse: bool,
    },
    /// `where(a, cond, b)`: elements of `a` where the bool `cond` holds, else of `b`; all three
    /// broadcast (TF.js `where(cond, a, b)`).
    Where,
}

impl Op {
    /// The name used in program JSON, profiles and telemetry origins.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Unary(u) => u.name(),
            Op::Binary(b) => b.name(),
            Op::Cast(_) => "cast",
            Op::MatMul => "matmul",
            Op::Reduce { op, .. } => match op {
                ReduceOp::Sum => "sum",
                ReduceOp::Mean => "mean",
                ReduceOp::Max => "max",
                ReduceOp::Min => "min",
                ReduceOp::Prod => "prod",
            },
            Op::Softmax { .. } => "softmax",
            Op::Reshape { .. } => "reshape",
            Op::Transpose { .. } => "transpose",
            Op::Clone => "clone",
            Op::Where => "where",
            Op::Cumsum { .. } => "cumsum",
            Op::Window { .. } => "window",
        }
    }

    /// Number of tensor arguments.
    pub fn arity(&self) -> usize {
        match self {
            Op::Binary(_) | Op::MatMul => 2,
            Op::Where => 3,
            _ => 1,
        }
    }

    /// The unary op of this name, if any.
    pub fn unary(name: &str) -> Option<UnaryOp> {
        UnaryOp::ALL.iter().copied().find(|u| u.name() == name)
    }

    /// The binary op of this name, if any.
    pub fn binary(name: &str) -> Option<BinaryOp> {
        BinaryOp::ALL.iter().copied().find(|b| b.name() == name)
    }

    /// The reduction of this name, if any.
    pub fn reduce(name: &str) -> Option<ReduceOp> {
        use ReduceOp::*;
        Some(match name {
            "sum" => Sum,
            "mean" => Mean,
            "max" => Max,
            "min" => Min,
            "prod" => Prod,
            _ => return None,
        })
    }
}
