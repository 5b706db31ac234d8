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
mod table;

pub(crate) use attr::Num;
pub use attr::{Axes, Fill, Pad, PadMode, Pair};
pub use compose::SplitSizes;

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
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt)),* $(,)?) => {
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
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt)),* $(,)?) => {
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

macro_rules! define_reduce {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt)),* $(,)?) => {
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
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt),)*) => {
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

/// Elements per workgroup below which a reduction with few outputs is not split.
const SPLIT_ELEMENTS: u64 = 16_384;
/// Most partial results per output of a split reduction.
const MAX_PARTS: u64 = 256;

/// Invocations per part of a split reduction, each writing one partial result.
pub(crate) const PART_THREADS: u64 = 64;

/// How many parts each output of a reduction of `count` elements into `outputs` values is split
/// into (1: not split). A long reduction into few outputs runs as `parts` workgroups per output,
/// each of [`PART_THREADS`] invocations writing a partial result to a scratch buffer, then one more
/// pass combines them; the scratch is `outputs × parts × PART_THREADS` words (at most a 256th of
/// the input), planned and accounted like any intermediate.
pub(crate) fn reduce_parts(count: u64, outputs: u64) -> u64 {
    if outputs >= 64 {
        return 1; // enough workgroups already
    }
    (count / SPLIT_ELEMENTS).clamp(1, MAX_PARTS)
}

/// Lines (softmax rows, `cumsum` lines) longer than this may run in parts: one workgroup per part
/// of a line, then a second pass per part finishing it from every part's summary (scratch).
pub(crate) const LONG_LINE: usize = 65_535;
/// Lines up to this long run a workgroup per line when there are at least two of them: within
/// lavapipe's loop budget for softmax (3·len/64 a lane) and `cumsum` (2·len/256).
const WHOLE_LINE: usize = 1 << 20;
/// Most parts of one line.
const MAX_LINE_PARTS: usize = 256;

/// How many parts each of `lines` softmax rows or `cumsum` lines of `len` elements runs in (1: one
/// workgroup or invocation for the whole line): a part per 65,536 elements, at most 256, for a
/// single line past `LONG_LINE` (one workgroup would leave all but one core or SM idle) and for
/// lines longer than 2^20 (past lavapipe's loop budget, `kernels::MAX_LOOP`, even with a
/// workgroup's lanes sharing the line). Several shorter lines run whole: on lavapipe (2 cores) the
/// extra pass cost more than the parallelism gave — 4 lines of 2^20 took 89–98 ms in parts against
/// 67 ms whole, while one line of 2^22 took 94–101 ms in parts against 126–128 ms whole
/// (`cargo bench --bench compute -- cumsum`, builds alternated).
pub(crate) fn line_parts(lines: usize, len: usize) -> usize {
    if len <= LONG_LINE || lines == 0 || (lines > 1 && len <= WHOLE_LINE) {
        1
    } else {
        len.div_ceil(LONG_LINE + 1).clamp(2, MAX_LINE_PARTS)
    }
}

/// Whether `maxPool`'s gradient takes each window's first maximum from a pass of its own (two
/// words of scratch a window: `shaders/pool.wgsl` with `ARG`) rather than having every thread walk
/// the cells of each window that contains its element: when that walk (up to ⌈F/stride⌉ windows
/// each way, each about `fh·(fw + 2)` iterations over its cells inside the input, `[h, w]`) would
/// pass lavapipe's loop budget (`LONG_LINE`, less the margin `kernels/pool.rs` keeps), which stops
/// it silently, and where it would cost the square of the window's area anyway.
pub(crate) fn pool_grad_argmax(filter: &Pair, strides: &Pair, [h, w]: [usize; 2]) -> bool {
    let over = |f: usize, s: usize| f.div_ceil(s.max(1)) as u64;
    let (fh, fw) = (filter.0.min(h) as u64, filter.1.min(w) as u64);
    let walk = fh * (fw + 2) + 2;
    over(filter.0, strides.0) * (over(filter.1, strides.1) * walk + 2) + 1 >= (LONG_LINE - 16) as u64
}

impl Op {
    /// Words of scratch a kernel of this op needs for an input of shape `input` and an output of
    /// `output` elements (0: none): a split reduction's partial results; a long softmax row's
    /// per-part maximum and sum of exponentials, a long `cumsum` line's per-part sums; the first
    /// maximum of each window of a large `maxPool`'s gradient.
    pub(crate) fn scratch_words(&self, input: &[usize], output: u64) -> u64 {
        let count = input.iter().product::<usize>() as u64;
        // (lines, parts) of an op along `axis`
        let lines = |axis: i64| {
            let ax = infer::axis("", axis, input.len()).ok()?;
            let len = input.get(ax).copied().unwrap_or(1).max(1);
            let lines = count as usize / len;
            Some((lines as u64, line_parts(lines, len) as u64))
        };
        match self {
            Op::Reduce { .. } => {
                let parts = reduce_parts(count / output.max(1), output);
                if parts > 1 {
                    output * parts * PART_THREADS
                } else {
                    0
                }
            }
            Op::Softmax { axis } => match lines(*axis) {
                Some((rows, parts)) if parts > 1 => rows * parts * 2,
                _ => 0,
            },
            Op::Cumsum { axis, .. } => match lines(*axis) {
                Some((lines, parts)) if parts > 1 => lines * parts,
                _ => 0,
            },
            // each window's first maximum: its position and value
            Op::PoolGrad {
                max: true,
                filter_size,
                strides,
                pad,
            } if input.len() >= 3
                && pool_grad_argmax(
                    filter_size,
                    strides,
                    [input[input.len() - 3], input[input.len() - 2]],
                ) =>
            {
                let r = input.len();
                let out = |i: usize, f: usize, s: usize| {
                    rules::extent("maxPool", input[i], f, s, 1, *pad).map(|e| e.out as u64)
                };
                match (
                    out(r - 3, filter_size.0, strides.0),
                    out(r - 2, filter_size.1, strides.1),
                ) {
                    (Ok(oh), Ok(ow)) => 2 * oh * ow * (count / (input[r - 3] * input[r - 2]).max(1) as u64),
                    _ => 0,
                }
            }
            _ => 0,
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
        ReduceOp::ALL.iter().copied().find(|r| r.name() == name)
    }
}
