//! `Program`: a named graph of inputs (with dynamic dims), state slots, constants and op nodes,
//! plus named outputs and state assignments. Pure data and validation — no GPU. Nodes can only
//! refer to nodes defined before them, so a program is acyclic by construction; `fromJSON` checks
//! the same rule. Compilation is in `crate::executable`.

pub(crate) mod fusion;
mod grad;
mod grad_rules;
mod optim;

pub use optim::{Adam, Sgd};
mod builders;
mod json;
pub mod plan;

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{infer, BinaryOp, Dims, Op};

/// A program input or output as a caller sees it: its name, dtype and dims (`-1` where dynamic).
pub type Port = (String, DType, Vec<i64>);

/// Index of a node in its program.
pub type NodeId = usize;

/// One node.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A run input; `-1` dims are dynamic (specialised per run).
    Input {
        /// Input name.
        name: String,
        /// Element type.
        dtype: DType,
        /// Dims, `-1` for dynamic.
        shape: Vec<i64>,
    },
    /// A slot of the `ExecutionState` (concrete shape).
    State {
        /// Slot name.
        name: String,
        /// Element type.
        dtype: DType,
        /// Dims.
        shape: Vec<usize>,
    },
    /// Data held by the compiled executable.
    Constant {
        /// Values (representable in `dtype`).
        data: Vec<f64>,
        /// Dims.
        shape: Vec<usize>,
        /// Element type.
        dtype: DType,
    },
    /// An op applied to earlier nodes.
    Op {
        /// The op.
        op: Op,
        /// Argument nodes.
        args: Vec<NodeId>,
    },
}

/// A program: build it with the node methods or load it with [`Program::from_json`].
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    name: String,
    nodes: Vec<Node>,
    outputs: Vec<(String, NodeId)>,
    assigns: Vec<(String, NodeId)>,
    /// Inferred type of each node (kept in step with `nodes` by `push`).
    types: Vec<(Dims, DType)>,
}

fn node_err(id: NodeId, node: &Node, e: Error) -> Error {
    let what = match node {
        Node::Input { name, .. } => format!("node {id} (input '{name}')"),
        Node::State { name, .. } => format!("node {id} (state '{name}')"),
        Node::Constant { .. } => format!("node {id} (constant)"),
        Node::Op { op, .. } => format!("node {id} ({})", op.name()),
    };
    // a zero or negative dim (but an input's -1) is INVALID_ARGUMENT anywhere (API.md): the dims
    // (and data, as eagerly) of an input, a state, a constant and a reshape target keep that code
    let dims_node = matches!(
        node,
        Node::Input { .. }
            | Node::State { .. }
            | Node::Constant { .. }
            | Node::Op {
                op: Op::Reshape { .. },
                ..
            }
    );
    match e {
        Error::InvalidArgument(m) if dims_node => Error::InvalidArgument(format!("{what}: {m}")),
        Error::ShapeMismatch(m) => Error::ShapeMismatch(format!("{what}: {m}")),
        Error::DtypeMismatch(m) => Error::DtypeMismatch(format!("{what}: {m}")),
        Error::InvalidArgument(m) | Error::InvalidProgram(m) => Error::InvalidProgram(format!("{what}: {m}")),
        other => other,
    }
}

impl Program {
    /// An empty program called `name`.
    pub fn new(name: &str) -> Program {
        Program {
            name: name.to_string(),
            nodes: vec![],
            outputs: vec![],
            assigns: vec![],
            types: vec![],
        }
    }

    /// The program's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The nodes, in definition order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    /// Named outputs, in declaration order.
    pub fn outputs(&self) -> &[(String, NodeId)] {
        &self.outputs
    }
    /// State assignments `(slot, node)`.
    pub fn assigns(&self) -> &[(String, NodeId)] {
        &self.assigns
    }

    /// Inputs `(node, name, dtype, shape)` in definition order.
    pub fn inputs(&self) -> impl Iterator<Item = (NodeId, &str, DType, &[i64])> {
        self.nodes.iter().enumerate().filter_map(|(i, n)| match n {
            Node::Input { name, dtype, shape } => Some((i, name.as_str(), *dtype, shape.as_slice())),
            _ => None,
        })
    }

    /// State slots `(node, name, dtype, shape)` in definition order.
    pub fn states(&self) -> impl Iterator<Item = (NodeId, &str, DType, &[usize])> {
        self.nodes.iter().enumerate().filter_map(|(i, n)| match n {
            Node::State { name, dtype, shape } => Some((i, name.as_str(), *dtype, shape.as_slice())),
            _ => None,
        })
    }

    /// Adds a node after checking it against the nodes before it (names, arguments, shapes).
    pub fn push(&mut self, node: Node) -> Result<NodeId> {
        let id = self.nodes.len();
        Self::check_node(&self.nodes, id, &node, &mut self.types).map_err(|e| node_err(id, &node, e))?;
        self.nodes.push(node);
        Ok(id)
    }

    /// An input; `-1` dims are dynamic.
    pub fn input(&mut self, name: &str, dtype: DType, shape: &[i64]) -> Result<NodeId> {
        self.push(Node::Input {
            name: name.into(),
            dtype,
            shape: shape.to_vec(),
        })
    }
    /// A state slot (zero-filled in a new `ExecutionState` unless initialised).
    pub fn state(&mut self, name: &str, dtype: DType, shape: &[usize]) -> Result<NodeId> {
        self.push(Node::State {
            name: name.into(),
            dtype,
            shape: shape.to_vec(),
        })
    }
    /// A constant.
    pub fn constant(&mut self, data: &[f64], shape: &[usize], dtype: DType) -> Result<NodeId> {
        // the program keeps its own copy, reserved fallibly (OUT_OF_MEMORY, never an abort)
        let data = crate::host::host_vec(data.len() as u64, |i| data[i])?;
        self.push(Node::Constant {
            data,
            shape: shape.to_vec(),
            dtype,
        })
    }
    /// Any op node.
    pub fn op(&mut self, op: Op, args: &[NodeId]) -> Result<NodeId> {
        self.push(Node::Op {
            op,
            args: args.to_vec(),
        })
    }

    /// `a op value`, `value` a constant scalar of `a`'s dtype (a JS number operand). Inferred before
    /// anything is added, so a rejected call leaves the program as it was.
    pub fn binary_scalar(&mut self, op: BinaryOp, a: NodeId, value: f64) -> Result<NodeId> {
        let (dims, dtype) = self
            .types
            .get(a)
            .cloned()
            .ok_or_else(|| Error::InvalidProgram(format!("node {a} does not exist")))?;
        infer(&Op::Binary(op), &[(dims, dtype), (vec![], dtype)])?;
        dtype.word_from_f64(value)?;
        let c = self.constant(&[value], &[], dtype)?;
        self.op(Op::Binary(op), &[a, c])
    }

    /// A matmul node.
    pub fn matmul(&mut self, a: NodeId, b: NodeId) -> Result<NodeId> {
        self.op(
            Op::MatMul {
                transpose_a: false,
                transpose_b: false,
            },
            &[a, b],
        )
    }
    /// Each input (in order) and each output ([`Port`]): its name, dtype and dims (`-1` where dynamic) —
    /// `(inputs, outputs)`, what an imported model's caller feeds and gets.
    pub fn signature(&self) -> (Vec<Port>, Vec<Port>) {
        let inputs = self
            .inputs()
            .map(|(_, n, d, s)| (n.to_string(), d, s.to_vec()))
            .collect();
        let outputs = self
            .outputs()
            .iter()
            .filter_map(|(n, id)| {
                let (dims, d) = self.types.get(*id)?;
                Some((
                    n.clone(),
                    *d,
                    dims.iter().map(|x| x.map_or(-1, |v| v as i64)).collect(),
                ))
            })
            .collect();
        (inputs, outputs)
    }

    /// Names `node` as output `name`.
    pub fn output(&mut self, name: &str, node: NodeId) -> Result<()> {
        if self.outputs.iter().any(|(n, _)| n == name) {
            return Err(Error::InvalidProgram(format!("output '{name}' is defined twice")));
        }
        self.check_ref(node, &format!("output '{name}'"))?;
        self.outputs.push((name.into(), node));
        Ok(())
    }

    /// At the end of each run, state slot `state` takes the value of `node`.
    pub fn assign(&mut self, state: &str, node: NodeId) -> Result<()> {
        self.check_ref(node, &format!("assign to '{state}'"))?;
        Self::check_assign(&self.nodes, &self.assigns, state, node, &self.types)?;
        self.assigns.push((state.into(), node));
        Ok(())
    }

    fn check_ref(&self, node: NodeId, what: &str) -> Result<()> {
        if node >= self.nodes.len() {
            return Err(Error::InvalidProgram(format!(
                "{what} refers to node {node}, but the program has {} nodes",
                self.nodes.len()
            )));
        }
        Ok(())
    }

    fn node_types_upto(&self, n: usize) -> Result<Vec<(Dims, DType)>> {
        let mut types = Vec::with_capacity(n);
        for (i, node) in self.nodes[..n].iter().enumerate() {
            Self::check_node(&self.nodes, i, node, &mut types).map_err(|e| node_err(i, node, e))?;
        }
        Ok(types)
    }

    /// Checks `node` (at index `id`) and pushes its inferred type onto `types`.
    fn check_node(nodes: &[Node], id: NodeId, node: &Node, types: &mut Vec<(Dims, DType)>) -> Result<()> {
        let name_taken = |name: &str| {
            nodes[..id]
                .iter()
                .any(|n| matches!(n, Node::Input { name: m, .. } | Node::State { name: m, .. } if m == name))
        };
        let t = match node {
            Node::Input { name, dtype, shape } => {
                if name.is_empty() || name_taken(name) {
                    return Err(Error::InvalidProgram(format!(
                        "input name '{name}' is empty or already used"
                    )));
                }
                let max = crate::shape::MAX_ELEMENTS as i64;
                if let Some(d) = shape.iter().find(|&&d| d == 0 || d < -1 || d > max) {
                    return Err(Error::InvalidArgument(format!(
                        "input '{name}' has dimension {d} in {shape:?}: use positive sizes or -1 (dynamic)"
                    )));
                }
                (
                    shape.iter().map(|&d| (d > 0).then_some(d as usize)).collect(),
                    *dtype,
                )
            }
            Node::State { name, dtype, shape } => {
                if name.is_empty() || name_taken(name) {
                    return Err(Error::InvalidProgram(format!(
                        "state name '{name}' is empty or already used"
                    )));
                }
                crate::shape::element_count(shape)?;
                (shape.iter().map(|&d| Some(d)).collect(), *dtype)
            }
            Node::Constant { data, shape, dtype } => {
                let n = crate::shape::element_count(shape)?;
                if data.len() as u64 != n {
                    return Err(Error::ShapeMismatch(format!(
                        "constant has {} values but shape {shape:?} needs {n}",
                        data.len()
                    )));
                }
                for &v in data {
                    dtype.word_from_f64(v)?;
                }
                (shape.iter().map(|&d| Some(d)).collect(), *dtype)
            }
            Node::Op { op, args } => {
                if let Some(&bad) = args.iter().find(|&&a| a >= id) {
                    return Err(Error::InvalidProgram(format!(
                        "argument {bad} is not defined before this node (arguments must come first, so cycles are impossible)"
                    )));
                }
                let arg_types: Vec<_> = args.iter().map(|&a| types[a].clone()).collect();
                let t = infer(op, &arg_types)?;
                constant_indices(nodes, op, args, &arg_types[0].0)?;
                t
            }
        };
        types.push(t);
        Ok(())
    }

    fn check_assign(
        nodes: &[Node],
        assigns: &[(String, NodeId)],
        state: &str,
        node: NodeId,
        types: &[(Dims, DType)],
    ) -> Result<()> {
        let slot = nodes
            .iter()
            .position(|n| matches!(n, Node::State { name, .. } if name == state));
        let Some(slot) = slot else {
            return Err(Error::InvalidProgram(format!(
                "assign to '{state}': the program has no such state"
            )));
        };
        if assigns.iter().any(|(s, _)| s == state) {
            return Err(Error::InvalidProgram(format!(
                "state '{state}' is assigned twice"
            )));
        }
        let (want, wd) = &types[slot];
        let (got, gd) = &types[node];
        if wd != gd {
            return Err(Error::DtypeMismatch(format!(
                "assign to '{state}': the state is {wd} but node {node} is {gd}"
            )));
        }
        let compatible = want.len() == got.len() && want.iter().zip(got).all(|(w, g)| g.is_none() || g == w);
        if !compatible {
            return Err(Error::ShapeMismatch(format!(
                "assign to '{state}': the state has shape {want:?} but node {node} has {got:?}"
            )));
        }
        Ok(())
    }

    /// Checks the whole program and returns every node's inferred type (dynamic dims `None`).
    pub fn validate(&self) -> Result<Vec<(Dims, DType)>> {
        if self.name.is_empty() {
            return Err(Error::InvalidProgram("a program needs a name".into()));
        }
        let types = self.node_types_upto(self.nodes.len())?;
        if self.outputs.is_empty() && self.assigns.is_empty() {
            return Err(Error::InvalidProgram(format!(
                "program '{}' has no outputs and no assignments: it would compute nothing",
                self.name
            )));
        }
        let mut seen = std::collections::HashSet::new();
        for (name, node) in &self.outputs {
            self.check_ref(*node, &format!("output '{name}'"))?;
            if !seen.insert(name) {
                return Err(Error::InvalidProgram(format!("output '{name}' is defined twice")));
            }
        }
        for (i, (state, node)) in self.assigns.iter().enumerate() {
            self.check_ref(*node, &format!("assign to '{state}'"))?;
            Self::check_assign(&self.nodes, &self.assigns[..i], state, *node, &types)?;
        }
        Ok(types)
    }
}

/// `gather` indices that are constants are checked against the axis when the node is added (and
/// again for each specialisation when that axis is dynamic). Indices computed on the device are
/// not known until they run: the kernel checks them, an out-of-range one reads 0 there and is
/// reported by the session's next readback or sync (`kernels/checks.rs`).
pub(crate) fn constant_indices(
    nodes: &[Node],
    op: &Op,
    args: &[NodeId],
    dims: &[Option<usize>],
) -> Result<()> {
    let (Op::Gather { axis }, [_, i]) = (op, args) else {
        return Ok(());
    };
    let Some(Node::Constant { data, .. }) = nodes.get(*i) else {
        return Ok(());
    };
    let ax = crate::ops::infer::axis("gather", *axis, dims.len())?;
    if let Some(size) = dims[ax] {
        if let Some(bad) = data.iter().find(|&&v| v < 0.0 || v >= size as f64) {
            return Err(Error::InvalidArgument(format!(
                "gather: index {bad} is out of range for axis {axis} of size {size}"
            )));
        }
    }
    Ok(())
}
