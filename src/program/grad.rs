//! Reverse-mode differentiation inside a program: `Program::grad(y, xs)` adds the gradient of the
//! scalar float32 node `y` with respect to each of `xs` as nodes of the same program, so fusion,
//! liveness and the memory plan cover the backward pass. Each op's vector-Jacobian rule lives in its
//! op-table entry (`ops/table.rs`, the last column: `()` where the gradient is zero or the op only
//! selects or indexes); the helpers those rules call are [`Vjp`]'s methods (`grad_rules.rs`).

use super::{Node, NodeId, Program};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{BinaryOp, Dims, Op, ReduceOp, UnaryOp};

/// The builder the op table's gradient rules use: `p` plus helpers (`grad_rules.rs`).
pub(crate) struct Vjp<'a> {
    pub p: &'a mut Program,
}

macro_rules! vjp_call {
    ((), $($arg:expr),*) => {
        Ok(None)
    };
    ((|$($param:ident),*| $e:expr), $($arg:expr),*) => {{
        $(#[allow(unused_variables)] let $param = $arg;)*
        $e.map(Some)
    }};
}

macro_rules! has_vjp {
    (()) => {
        false
    };
    ($grad:tt) => {
        true
    };
}

macro_rules! unary_vjp {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        fn unary_vjp(v: &mut Vjp, op: UnaryOp, x: NodeId, y: NodeId, g: NodeId) -> Result<Option<NodeId>> {
            match op { $(UnaryOp::$v => vjp_call!($grad, v, x, y, g),)* }
        }
        fn unary_differentiable(op: UnaryOp) -> bool {
            match op { $(UnaryOp::$v => has_vjp!($grad),)* }
        }
    };
}
crate::unary_table!(unary_vjp);

macro_rules! binary_vjp {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        fn binary_vjp(v: &mut Vjp, op: BinaryOp, a: NodeId, b: NodeId, y: NodeId, g: NodeId) -> Result<Option<[Option<NodeId>; 2]>> {
            match op { $(BinaryOp::$v => vjp_call!($grad, v, a, b, y, g),)* }
        }
        fn binary_differentiable(op: BinaryOp) -> bool {
            match op { $(BinaryOp::$v => has_vjp!($grad),)* }
        }
    };
}
crate::binary_table!(binary_vjp);

macro_rules! reduce_vjp {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        fn reduce_vjp(v: &mut Vjp, op: ReduceOp, x: NodeId, y: NodeId, g: NodeId, axes: &[i64], keep: bool) -> Result<Option<NodeId>> {
            match op { $(ReduceOp::$v => vjp_call!($grad, v, x, y, g, axes, keep),)* }
        }
    };
}
crate::reduce_table!(reduce_vjp);

macro_rules! kernel_vjp {
    (surfaced: [$($e:tt),* $(,)?], internal: [$($i:tt),* $(,)?] $(,)?) => {
        kernel_vjp!(@all $($e,)* $($i,)*);
    };
    (@all $(($m:ident, $v:ident, $js:literal, $doc:literal, $k:path, [$($a:ident),*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt $($rest:tt)*),)*) => {
        /// The gradients of an op-table op's arguments (`None`: none flows there).
        #[allow(unused_variables)]
        fn kernel_vjp(v: &mut Vjp, op: &Op, args: &[NodeId], y: NodeId, g: NodeId) -> Result<Option<Vec<Option<NodeId>>>> {
            match op {
                $(Op::$v { $($f,)* $($o,)* } => {
                    let &[$($a),*] = args else { unreachable!("arity is checked when a node is added") };
                    vjp_call!($kgrad, v, y, g)
                })*
                Op::Unary(_) | Op::Binary(_) | Op::Reduce { .. } => unreachable!("the families have their own rules"),
            }
        }

        fn kernel_differentiable(op: &Op) -> bool {
            match op {
                $(Op::$v { .. } => has_vjp!($kgrad),)*
                Op::Unary(_) | Op::Binary(_) | Op::Reduce { .. } => unreachable!("the families have their own rules"),
            }
        }
    };
}
crate::kernel_table!(kernel_vjp);

/// Whether a gradient flows from op `op`'s output to its argument `i`: not through ops whose rule
/// is `()`, nor to values that only select or index (`where`'s condition, `gather`'s indices).
fn flows(op: &Op, i: usize) -> bool {
    match op {
        Op::Unary(u) => unary_differentiable(*u),
        Op::Binary(b) => binary_differentiable(*b),
        Op::Reduce { .. } => true,
        Op::Where {} => i != 1,
        Op::Gather { .. } => i == 0,
        other => kernel_differentiable(other),
    }
}

/// An `INVALID_PROGRAM` error of `grad`.
fn grad_error(what: String) -> Error {
    Error::InvalidProgram(format!("grad: {what}"))
}

/// The gradients op `op` at node `y` (arguments `args`) sends each argument from the gradient `g`
/// of its output (`None`: none flows there).
fn op_vjp(v: &mut Vjp, op: &Op, args: &[NodeId], y: NodeId, g: NodeId) -> Result<Vec<Option<NodeId>>> {
    Ok(match op {
        Op::Unary(u) => vec![unary_vjp(v, *u, args[0], y, g)?],
        Op::Binary(b) => match binary_vjp(v, *b, args[0], args[1], y, g)? {
            Some(pair) => pair.to_vec(),
            None => vec![None, None],
        },
        Op::Reduce {
            op: r,
            axes,
            keep_dims,
        } => vec![reduce_vjp(v, *r, args[0], y, g, axes, *keep_dims)?],
        other => kernel_vjp(v, other, args, y, g)?.unwrap_or_default(),
    })
}

fn describe(p: &Program, n: NodeId) -> String {
    match &p.nodes[n] {
        Node::Input { name, .. } => format!("node {n} (input '{name}')"),
        Node::State { name, .. } => format!("node {n} (state '{name}')"),
        Node::Constant { .. } => format!("node {n} (constant)"),
        Node::Op { op, .. } => format!("node {n} ({})", op.name()),
    }
}

impl Program {
    /// Reverse-mode gradients of the scalar float32 node `y` with respect to each of `xs` (inputs,
    /// states or nodes), as nodes of this program with the shapes of `xs`. A gradient that would
    /// flow through an integer or bool value, or of a non-scalar `y`, is `INVALID_PROGRAM` naming
    /// the node; a rejected call adds no node.
    pub fn grad(&mut self, y: NodeId, xs: &[NodeId]) -> Result<Vec<NodeId>> {
        let mark = self.nodes.len();
        let r = self.grad_nodes(y, xs);
        if r.is_err() {
            self.nodes.truncate(mark);
            self.types.truncate(mark);
        }
        r
    }

    /// [`Program::grad`]'s work: the checks, then the backward pass (it may leave nodes behind
    /// when it fails).
    fn grad_nodes(&mut self, y: NodeId, xs: &[NodeId]) -> Result<Vec<NodeId>> {
        self.check_grad_args(y, xs)?;
        // the nodes a gradient flows through: reachable from xs and reaching y along flowing edges
        let (from_x, to_y) = (self.reached_from(xs), self.reaching(y));
        self.check_flow_is_float(&from_x, &to_y)?;
        let adj = self.backward(y, &from_x, &to_y)?;
        let mut v = Vjp { p: self };
        xs.iter()
            .map(|&x| match adj[x] {
                Some(g) => Ok(g),
                None => v.zeros_like(x),
            })
            .collect()
    }

    /// Checks that `xs` and `y` exist, `y` is a scalar float32 value and each of `xs` is float32.
    fn check_grad_args(&self, y: NodeId, xs: &[NodeId]) -> Result<()> {
        let n = self.nodes.len();
        for &x in xs.iter().chain([&y]) {
            if x >= n {
                return Err(grad_error(format!("node {x} does not exist")));
            }
        }
        let (dims, dtype) = self.types[y].clone();
        if dtype != DType::Float32 || !dims.is_empty() {
            return Err(grad_error(format!(
                "y must be a scalar float32 value, but {} is {dtype} of {} dims (reduce it first, e.g. with mean)",
                describe(self, y),
                dims.len()
            )));
        }
        for &x in xs {
            if self.types[x].1 != DType::Float32 {
                return Err(grad_error(format!(
                    "{} is {}: only float32 values have gradients",
                    describe(self, x),
                    self.types[x].1
                )));
            }
        }
        Ok(())
    }

    /// Per node: whether it is one of `xs` or reached from them along edges a gradient flows on.
    fn reached_from(&self, xs: &[NodeId]) -> Vec<bool> {
        let n = self.nodes.len();
        let mut from_x = vec![false; n];
        for i in 0..n {
            from_x[i] = xs.contains(&i)
                || matches!(&self.nodes[i], Node::Op { op, args } if args.iter().enumerate().any(|(k, &a)| from_x[a] && flows(op, k)));
        }
        from_x
    }

    /// Per node: whether it is `y` or reaches it along edges a gradient flows on.
    fn reaching(&self, y: NodeId) -> Vec<bool> {
        let mut to_y = vec![false; self.nodes.len()];
        to_y[y] = true;
        for i in (0..=y).rev() {
            if let (true, Node::Op { op, args }) = (to_y[i], &self.nodes[i]) {
                for (k, &a) in args.iter().enumerate() {
                    to_y[a] |= flows(op, k);
                }
            }
        }
        to_y
    }

    /// Checks that every node the gradient flows through is float32.
    fn check_flow_is_float(&self, from_x: &[bool], to_y: &[bool]) -> Result<()> {
        if let Some(i) =
            (0..from_x.len()).find(|&i| from_x[i] && to_y[i] && self.types[i].1 != DType::Float32)
        {
            return Err(grad_error(format!(
                "the gradient would flow through {}, which is {} (integer and bool values have no gradient)",
                describe(self, i),
                self.types[i].1
            )));
        }
        Ok(())
    }

    /// The backward pass from `y` (its gradient 1) over the nodes both reached from the `xs` and
    /// reaching `y`: each node's accumulated gradient (`None`: none flowed there).
    fn backward(&mut self, y: NodeId, from_x: &[bool], to_y: &[bool]) -> Result<Vec<Option<NodeId>>> {
        let mut adj: Vec<Option<NodeId>> = vec![None; from_x.len()];
        let one = self.constant(&[1.0], &[], DType::Float32)?;
        adj[y] = Some(one);
        let mut v = Vjp { p: self };
        for i in (0..=y).rev() {
            let (Some(g), true) = (adj[i], from_x[i] && to_y[i]) else {
                continue;
            };
            let Node::Op { op, args } = v.p.nodes[i].clone() else {
                continue;
            };
            let grads = op_vjp(&mut v, &op, &args, i, g)?;
            for (k, (&a, grad)) in args.iter().zip(grads).enumerate() {
                let Some(grad) = grad else { continue };
                if !(from_x[a] && flows(&op, k)) {
                    continue;
                }
                // broadcasting ops: the gradient sums back to the operand's shape
                let grad = v.sum_to(grad, a)?;
                adj[a] = Some(match adj[a] {
                    Some(prev) => v.add(prev, grad)?,
                    None => grad,
                });
            }
        }
        Ok(adj)
    }

    /// The inferred dims of a node.
    pub(crate) fn dims_of(&self, n: NodeId) -> Dims {
        self.types[n].0.clone()
    }
}
