//! The node builders of [`Program`]: one method per op of the op table (unary, binary, reductions,
//! the table's other kernels, the composites — written once over [`crate::ops::compose::Graph`],
//! which a program implements here), and Rust's short forms of a few (`select_scalar`, `join`,
//! `split`, `split_parts`). Each checks its arguments before it adds a node.

use super::{NodeId, Program};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{BinaryOp, Dims, Op, OrNumber, ReduceOp, UnaryOp};

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

/// A composite as program nodes: run dry first (inference only, [`NodeArg::dry`]) so a rejected call
/// adds nothing, then for real.
macro_rules! node_composite {
    ($p:expr, |$g:ident, $($x:ident),+| $body:expr) => {{
        let p: &mut Program = $p;
        {
            $(let $x = &NodeArg::dry(&$x, &*p)?;)+
            let $g = &mut crate::ops::compose::Dry { made: vec![] };
            $body?;
        }
        let $g = p;
        $(let $x = &NodeArg::real(&$x);)+
        $body
    }};
}

/// A composite's argument as a program node builder takes it — a node, an optional one, a node or
/// a number, a list of nodes: its shapes for the dry run, its values for the real one.
pub(crate) trait NodeArg {
    /// As the dry run sees it.
    type Dry;
    /// As the real run sees it.
    type Real;
    /// Its shapes and dtypes in `p`.
    fn dry(&self, p: &Program) -> Result<Self::Dry>;
    /// Its nodes.
    fn real(&self) -> Self::Real;
}

type Meta = (Dims, DType);

fn meta(p: &Program, n: NodeId) -> Result<Meta> {
    crate::ops::compose::Graph::meta(p, &n)
}

impl NodeArg for NodeId {
    type Dry = Meta;
    type Real = NodeId;
    fn dry(&self, p: &Program) -> Result<Meta> {
        meta(p, *self)
    }
    fn real(&self) -> NodeId {
        *self
    }
}

impl NodeArg for Option<NodeId> {
    type Dry = Option<Meta>;
    type Real = Option<NodeId>;
    fn dry(&self, p: &Program) -> Result<Option<Meta>> {
        self.map(|n| meta(p, n)).transpose()
    }
    fn real(&self) -> Option<NodeId> {
        *self
    }
}

impl NodeArg for OrNumber<NodeId> {
    type Dry = OrNumber<Meta>;
    type Real = OrNumber<NodeId>;
    fn dry(&self, p: &Program) -> Result<OrNumber<Meta>> {
        match self {
            OrNumber::Value(n) => meta(p, *n).map(OrNumber::Value),
            OrNumber::Number(x) => Ok(OrNumber::Number(*x)),
        }
    }
    fn real(&self) -> OrNumber<NodeId> {
        *self
    }
}

impl NodeArg for &[NodeId] {
    type Dry = Vec<Meta>;
    type Real = Vec<NodeId>;
    fn dry(&self, p: &Program) -> Result<Vec<Meta>> {
        self.iter().map(|&n| meta(p, n)).collect()
    }
    fn real(&self) -> Vec<NodeId> {
        self.to_vec()
    }
}

/// Rust's short forms of op-table builders (the table's have every argument).
impl Program {
    /// `select(a, cond, value)` with `value` a number: a constant scalar of `a`'s dtype. Inferred
    /// with both nodes' shapes before anything is added, so a rejected call leaves the program as
    /// it was.
    pub fn select_scalar(&mut self, a: NodeId, cond: NodeId, value: f64) -> Result<NodeId> {
        self.select(a, cond, value)
    }

    /// `concat` (or with `stack`, `stack`) nodes along `axis`.
    pub fn join(&mut self, nodes: &[NodeId], axis: i64, stack: bool) -> Result<NodeId> {
        match stack {
            true => self.stack(nodes, axis),
            false => self.concat(nodes, axis),
        }
    }

    /// `split(sizes, axis)` nodes.
    pub fn split(&mut self, a: NodeId, sizes: &[i64], axis: i64) -> Result<Vec<NodeId>> {
        self.split_by(a, sizes, axis)
    }

    /// `parts` equal consecutive slices along `axis`.
    pub fn split_parts(&mut self, a: NodeId, parts: i64, axis: i64) -> Result<Vec<NodeId>> {
        self.split_by(a, parts, axis)
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
    ($($e:tt),* $(,)?) => {
        $(node_composites!(@one $e);)*
    };
    (@one ($m:ident, $js:literal, $doc:literal, list [$l:ident],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*],
        |$g:ident| $body:expr)) => {
        impl Program {
            #[doc = concat!("A `", $js, "` composite: ", $doc)]
            pub fn $m(&mut self, $l: &[NodeId], $($f: impl Into<$ft>,)* $($o: impl Into<$ot>,)*) -> Result<NodeId> {
                $(let $f: $ft = $f.into();)*
                $(let $o: $ot = $o.into();)*
                node_composite!(self, |$g, $l| $body)
            }
        }
    };
    (@one ($m:ident, $js:literal, $doc:literal, [$a0:ident $(, $a:ident)*]
        $(or_number [$($n:ident),*])? $(optional [$($q:ident),*])?,
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*] $(-> $res:ident)?,
        |$g:ident| $body:expr)) => {
        impl Program {
            #[doc = concat!("A `", $js, "` composite: ", $doc)]
            pub fn $m(
                &mut self,
                $a0: NodeId,
                $($a: NodeId,)*
                $($($n: impl Into<OrNumber<NodeId>>,)*)?
                $($($q: Option<NodeId>,)*)?
                $($f: impl Into<$ft>,)*
                $($o: impl Into<$ot>,)*
            ) -> Result<node_composites!(@out $($res)?)> {
                $($(let $n: OrNumber<NodeId> = $n.into();)*)?
                $(let $f: $ft = $f.into();)*
                $(let $o: $ot = $o.into();)*
                node_composite!(self, |$g, $a0 $(, $a)* $($(, $n)*)? $($(, $q)*)?| $body)
            }
        }
    };
    (@out) => { NodeId };
    (@out many) => { Vec<NodeId> };
}
crate::composite_table!(node_composites);
