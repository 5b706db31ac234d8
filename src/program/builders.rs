//! The node builders of [`Program`]: one method per op of the op table (unary, binary, reductions,
//! the table's other kernels), the composites (written once over [`crate::ops::compose::Graph`],
//! which a program implements here) and the few builders with their own signatures (`batchNorm`,
//! `matmulT`, `select`, `join`, `split`). Each checks its arguments before it adds a node.

use super::{NodeId, Program};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{infer, BinaryOp, Dims, Op, ReduceOp, UnaryOp};

impl crate::ops::compose::Graph for Program {
    type V = NodeId;

    fn op(&mut self, op: Op, args: &[&NodeId]) -> Result<NodeId> {
        let ids: Vec<NodeId> = args.iter().map(|&&a| a).collect();
        Program::op(self, op, &ids)
    }

    fn scalar(&mut self, value: f64, dtype: DType) -> Result<NodeId> {
        self.constant(&[value], &[], dtype)
    }

    fn constant(&mut self, data: &[f64], shape: &[usize], dtype: DType) -> Result<NodeId> {
        Program::constant(self, data, shape, dtype)
    }

    fn meta(&self, v: &NodeId) -> Result<(Dims, DType)> {
        self.types
            .get(*v)
            .cloned()
            .ok_or_else(|| Error::InvalidProgram(format!("node {v} does not exist")))
    }
}

/// A composite as program nodes: run dry first (inference only) so a rejected call adds nothing.
macro_rules! node_composite {
    ($p:expr, [$first:expr $(, $x:expr)*], |$g:ident, $v:ident $(, $w:ident)*| $body:expr) => {{
        let p: &mut Program = $p;
        {
            let meta = |n: NodeId| crate::ops::compose::Graph::meta(&*p, &n);
            let $v = &meta($first)?;
            $(let $w = &meta($x)?;)*
            let $g = &mut crate::ops::compose::Dry { made: vec![] };
            $body?;
        }
        let $g = p;
        let $v = &$first;
        $(let $w = &$x;)*
        $body
    }};
}

impl Program {
    /// A `batchNorm(mean, variance, offset?, scale?, varianceEpsilon)` composite.
    pub fn batch_norm(
        &mut self,
        a: NodeId,
        mean: NodeId,
        variance: NodeId,
        offset: Option<NodeId>,
        scale: Option<NodeId>,
        epsilon: f64,
    ) -> Result<NodeId> {
        use crate::ops::compose::batch_norm;
        match (offset, scale) {
            (Some(o), Some(sc)) => {
                node_composite!(self, [a, mean, variance, o, sc], |g, v, m, va, of, scl| {
                    batch_norm(g, v, m, va, Some(of), Some(scl), epsilon)
                })
            }
            (Some(o), None) => node_composite!(self, [a, mean, variance, o], |g, v, m, va, of| {
                batch_norm(g, v, m, va, Some(of), None, epsilon)
            }),
            (None, Some(sc)) => node_composite!(self, [a, mean, variance, sc], |g, v, m, va, scl| {
                batch_norm(g, v, m, va, None, Some(scl), epsilon)
            }),
            (None, None) => node_composite!(self, [a, mean, variance], |g, v, m, va| {
                batch_norm(g, v, m, va, None, None, epsilon)
            }),
        }
    }

    /// `matmul` with either operand's last two axes transposed first.
    pub fn matmul_t(&mut self, a: NodeId, b: NodeId, transpose_a: bool, transpose_b: bool) -> Result<NodeId> {
        node_composite!(self, [a, b], |g, v, w| crate::ops::compose::matmul_t(
            g,
            v,
            w,
            transpose_a,
            transpose_b
        ))
    }

    /// A `where` node: elements of `a` where `cond`, else of `b` (all broadcast).
    pub fn select(&mut self, a: NodeId, cond: NodeId, b: NodeId) -> Result<NodeId> {
        self.op(Op::Where {}, &[a, cond, b])
    }

    /// `select(a, cond, value)`, `value` a constant scalar of `a`'s dtype (a JS number operand).
    /// Inferred with both nodes' shapes before anything is added, so a rejected call leaves the
    /// program as it was.
    pub fn select_scalar(&mut self, a: NodeId, cond: NodeId, value: f64) -> Result<NodeId> {
        use crate::ops::compose::Graph;
        let (dims, dtype) = self.meta(&a)?;
        infer(
            &Op::Where {},
            &[(dims, dtype), self.meta(&cond)?, (vec![], dtype)],
        )?;
        dtype.word_from_f64(value)?;
        let k = self.constant(&[value], &[], dtype)?;
        self.select(a, cond, k)
    }

    /// `concat` (or with `stack`, `stack`) nodes along `axis`.
    pub fn join(&mut self, nodes: &[NodeId], axis: i64, stack: bool) -> Result<NodeId> {
        use crate::ops::compose::{concat, stack as stack_nodes, Dry, Graph};
        let metas = nodes.iter().map(|n| self.meta(n)).collect::<Result<Vec<_>>>()?;
        let refs: Vec<&_> = metas.iter().collect();
        let dry = &mut Dry { made: vec![] };
        if stack {
            stack_nodes(dry, &refs, axis)?
        } else {
            concat(dry, &refs, axis)?
        };
        let ids: Vec<&NodeId> = nodes.iter().collect();
        if stack {
            stack_nodes(self, &ids, axis)
        } else {
            concat(self, &ids, axis)
        }
    }

    /// `split(sizes, axis)` nodes.
    pub fn split(&mut self, a: NodeId, sizes: &[i64], axis: i64) -> Result<Vec<NodeId>> {
        self.split_by(a, &crate::ops::SplitSizes::Sizes(sizes.to_vec()), axis)
    }

    /// `parts` equal consecutive slices along `axis`.
    pub fn split_parts(&mut self, a: NodeId, parts: i64, axis: i64) -> Result<Vec<NodeId>> {
        self.split_by(a, &crate::ops::SplitSizes::Parts(parts), axis)
    }

    /// `split` as TF.js's `numOrSizes` says; the axis must have a known length.
    pub fn split_by(&mut self, a: NodeId, how: &crate::ops::SplitSizes, axis: i64) -> Result<Vec<NodeId>> {
        use crate::ops::compose::{split, split_sizes, Dry, Graph};
        let meta = self.meta(&a)?;
        let ax = crate::ops::infer::axis("split", axis, meta.0.len())?;
        let len =
            meta.0.get(ax).copied().flatten().ok_or_else(|| {
                crate::error::Error::InvalidProgram("split: a scalar or a dynamic axis".into())
            })?;
        let sizes = split_sizes(len, how)?;
        let sizes = &sizes[..];
        split(&mut Dry { made: vec![] }, &meta, sizes, axis)?;
        split(self, &a, sizes, axis)
    }
}

macro_rules! node_unary {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        impl Program {$(
            #[doc = concat!("Adds an elementwise ", $doc, " node (op table: `", $js, "`).")]
            pub fn $m(&mut self, a: NodeId) -> Result<NodeId> {
                self.op(Op::Unary(UnaryOp::$v), &[a])
            }
        )*}
    };
}
crate::unary_table!(node_unary);

macro_rules! node_binary {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        impl Program {$(
            #[doc = concat!("Adds a broadcasting ", $doc, " node (op table: `", $js, "`).")]
            pub fn $m(&mut self, a: NodeId, b: NodeId) -> Result<NodeId> {
                self.op(Op::Binary(BinaryOp::$v), &[a, b])
            }
        )*}
    };
}
crate::binary_table!(node_binary);

macro_rules! node_reduce {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        impl Program {$(
            #[doc = concat!("A `", $js, "` reduction node: ", $doc)]
            pub fn $m(&mut self, a: NodeId, axes: &[i64], keep_dims: bool) -> Result<NodeId> {
                self.op(Op::Reduce { op: ReduceOp::$v, axes: axes.to_vec(), keep_dims }, &[a])
            }
        )*}
    };
}
crate::reduce_table!(node_reduce);

macro_rules! node_table {
    (surfaced: [$($e:tt),* $(,)?], internal: [$($i:tt),* $(,)?] $(,)?) => {
        impl Program {
            $(node_table!(@one $e);)*
        }
    };
    (@one ($m:ident, $v:ident, $js:literal, $doc:literal, $k:path, [$($a:ident),*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt $($rest:tt)*)) => {
        #[doc = concat!("A `", $js, "` node: ", $doc)]
        pub fn $m(&mut self, $($a: NodeId,)* $($f: impl Into<$ft>,)* $($o: impl Into<$ot>,)*) -> Result<NodeId> {
            let op = Op::$v { $($f: $f.into(),)* $($o: $o.into(),)* };
            self.op(op, &[$($a),*])
        }
    };
}
crate::kernel_table!(node_table);

macro_rules! node_composites {
    ($(($m:ident, $js:literal, $doc:literal, [$a0:ident $(, $a:ident)*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*],
        |$g:ident| $body:expr)),* $(,)?) => {
        impl Program {$(
            #[doc = concat!("A `", $js, "` composite: ", $doc)]
            pub fn $m(&mut self, $a0: NodeId, $($a: NodeId,)* $($f: impl Into<$ft>,)* $($o: impl Into<$ot>,)*) -> Result<NodeId> {
                $(let $f: $ft = $f.into();)*
                $(let $o: $ot = $o.into();)*
                node_composite!(self, [$a0 $(, $a)*], |$g, $a0 $(, $a)*| $body)
            }
        )*}
    };
}
crate::composite_table!(node_composites);
