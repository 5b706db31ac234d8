//! Ops as data: the one description shared by eager tensor methods and program nodes, with shape
//! and dtype inference. Pure (no GPU); the kernels that run each op live in `crate::kernels`.
//!
//! Shapes are inferred over `Dim = Option<usize>` where `None` is a dynamic dimension (`-1` in a
//! program input), so the same rules validate a program at compile time (dynamic dims unknown) and
//! each specialisation at run time (every dim known).

mod attr;
pub(crate) mod compose;
mod dims;
pub mod infer;
mod reference;
pub(crate) mod rules;
pub(crate) mod scratch;
mod table;

pub(crate) use attr::Num;
pub use attr::{Axes, Coords, Fill, Pad, PadMode, Pair};
pub use compose::{OrNumber, SplitSizes};

pub(crate) use scratch::{line_parts, pool_grad_argmax, reduce_parts, PART_THREADS};
pub(crate) use table::binary_helpers;

pub use infer::{infer, Dims};
pub use reference::op_reference;

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
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
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

            /// The body of `fn f(x: V) -> V` over `V = vec4<f32>` (the entry's `vector` column), `None`
            /// where the op has no vector form.
            pub(crate) fn vector_body(self) -> Option<&'static str> {
                match self { $(UnaryOp::$v => vector_column!($body; $($rest)*),)* }
            }
        }
    };
}

macro_rules! define_binary {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
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

            /// The expression over `V = vec4<f32>` values `x` and `y` (the entry's `vector` column),
            /// `None` where the op has no vector form.
            pub(crate) fn vector_body(self) -> Option<&'static str> {
                match self { $(BinaryOp::$v => vector_column!($body; $($rest)*),)* }
            }
        }
    };
}

/// An elementwise entry's optional `vector` column: absent, `vector = same` (the scalar body reads
/// the same over `vec4<f32>`) or `vector = "…"` (its own body).
macro_rules! vector_column {
    ($body:literal;) => {
        None
    };
    ($body:literal; , vector = same) => {
        Some($body)
    };
    ($body:literal; , vector = $vector:literal) => {
        Some($vector)
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

macro_rules! define_reduce {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        /// Reductions over a set of axes (declared in `ops/table.rs`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ReduceOp {
            $(#[doc = $doc] $v,)*
        }

        impl ReduceOp {
            /// Every reduction.
            pub const ALL: &'static [ReduceOp] = &[$(ReduceOp::$v),*];

            /// The JS, JSON and origin name.
            pub fn name(self) -> &'static str {
                match self { $(ReduceOp::$v => $js,)* }
            }

            /// The dtype rule.
            pub fn rule(self) -> Rule {
                match self { $(ReduceOp::$v => rule!($rule),)* }
            }

            /// The WGSL expression combining `x` and `y`.
            pub(crate) fn combine(self) -> &'static str {
                match self { $(ReduceOp::$v => $body,)* }
            }
        }
    };
}

crate::reduce_table!(define_reduce);

macro_rules! define_op {
    (surfaced: [$($e:tt),* $(,)?], internal: [$($i:tt),* $(,)?] $(,)?) => {
        define_op!(@all $($e,)* $($i,)*);
    };
    (@all $(($m:ident, $v:ident, $js:literal, $doc:literal, $k:path, [$($a:ident),*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt $(, scratch = $sc:tt)? $(, epilogue = $ep:tt)?),)*) => {
        /// One operation with its parameters: the elementwise and reduction families, and one
        /// variant per entry of the op table's `kernel_table!` (`ops/table.rs`).
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum Op {
            /// Elementwise unary.
            Unary(UnaryOp),
            /// Elementwise binary with broadcasting.
            Binary(BinaryOp),
            /// Reduction over `axes` (empty: all axes); `keep_dims` keeps reduced axes as 1.
            Reduce {
                /// Which reduction.
                op: ReduceOp,
                /// Axes to reduce (negative counts from the end); empty reduces everything.
                axes: Vec<i64>,
                /// Keep reduced axes with size 1.
                keep_dims: bool,
            },
            $(#[doc = $doc] $v {
                $(#[doc = concat!("`", $fk, "`")] $f: $ft,)*
                $(#[doc = concat!("`", $ok, "` (default `", stringify!($od), "`)")] $o: $ot,)*
            },)*
        }

        impl Op {
            /// The name used in program JSON, profiles and telemetry origins.
            pub fn name(&self) -> &'static str {
                match self {
                    Op::Unary(u) => u.name(),
                    Op::Binary(b) => b.name(),
                    Op::Reduce { op, .. } => op.name(),
                    $(Op::$v { .. } => $js,)*
                }
            }

            /// Words of scratch a kernel of this op needs for an input of shape `input` and an
            /// output of `output` elements (0: none), as its entry's `scratch` column says
            /// (`ops/scratch.rs`); a reduction's split into parts.
            pub(crate) fn scratch_words(&self, input: &[usize], output: u64) -> u64 {
                match self {
                    Op::Unary(_) | Op::Binary(_) => 0,
                    Op::Reduce { .. } => scratch::reduce(input, output),
                    $(Op::$v { $($f,)* $($o,)* } => {
                        $(let _ = $f;)* $(let _ = $o;)*
                        0 $(+ ($sc)(input, output))?
                    })*
                }
            }

            /// Whether a fused elementwise chain can run in this op's store (its entry has an
            /// `epilogue`: `kernels::record_group` records it).
            pub(crate) fn takes_epilogue(&self) -> bool {
                match self {
                    Op::Unary(_) | Op::Binary(_) | Op::Reduce { .. } => false,
                    $(Op::$v { .. } => !<[&str]>::is_empty(&[$(stringify!($ep))?]),)*
                }
            }

            /// Number of tensor arguments.
            pub fn arity(&self) -> usize {
                match self {
                    Op::Unary(_) | Op::Reduce { .. } => 1,
                    Op::Binary(_) => 2,
                    $(Op::$v { .. } => [$(stringify!($a)),*].len(),)*
                }
            }
        }
    };
}

crate::kernel_table!(define_op);

impl Op {
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
        ReduceOp::ALL.iter().copied().find(|r| r.name() == name)
    }
}
