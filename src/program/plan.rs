//! Specialisation and memory planning: pure functions of a program and concrete input shapes
//! (no GPU), used by `Executable` and usable on their own ([`Program::memory_plan`]).

use std::collections::HashMap;

use super::{Node, NodeId, Program};
use crate::error::{Error, Result};
use crate::ops::infer;

/// `byteLength` of a shape whose element count was checked ([`crate::shape::element_count`]):
/// 64-bit arithmetic, the same on wasm32 and native.
fn bytes(shape: &[usize]) -> u64 {
    shape.iter().map(|&d| d as u64).product::<u64>() * 4
}

/// What a run of one specialisation holds, in bytes (`byteLength`, no size-class rounding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryPlan {
    /// Largest total of intermediates live at once during the run (freed before `run` returns).
    pub intermediate_bytes: u64,
    /// Bytes of the output tensors `run` returns.
    pub output_bytes: u64,
    /// Bytes of one `ExecutionState` (all slots).
    pub state_bytes: u64,
    /// Largest total the run itself holds at once: live intermediates plus outputs made so far.
    /// Inputs, state and constants already exist before the run and are not included.
    pub peak_bytes: u64,
}

/// A compiled specialisation: every node's shape and dtype, last uses, the memory plan.
pub struct Plan {
    pub(crate) shapes: Vec<Vec<usize>>,
    pub(crate) dtypes: Vec<crate::DType>,
    /// For each node, the last node index that reads it (`usize::MAX` if it must outlive the run).
    pub(crate) last_use: Vec<usize>,
    /// The buffers each node's dispatch reads (a fused root reads its group's leaves; a node fused
    /// into another reads nothing itself).
    pub(crate) reads: Vec<Vec<NodeId>>,
    /// Elementwise chains computed in one kernel.
    pub(crate) fusion: super::fusion::Fusion,
    /// For each assignment (in declaration order): whether its source is a state slot that another
    /// assignment overwrites, so the run copies the source aside first (assignments read their
    /// sources as of the start of the run: swaps and rotations work).
    pub(crate) staged: Vec<bool>,
    /// Every storage the run acquires, in order, and when each is released: the schedule
    /// [`Plan::peak_with`] and the memory plan are computed from.
    pub(crate) schedule: Vec<Step>,
    /// For each intermediate, the buffer size it asks the pool for at least ([`slots`]; 0: its own).
    pub(crate) slot_bytes: Vec<u64>,
    pub(crate) memory: MemoryPlan,
}

/// One event of a run's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// A storage of this many bytes is acquired: an intermediate (`true`) or an output (`false`);
    /// its buffer is at least the third figure (its slot's size, [`slots`]).
    Acquire(u64, bool, u64),
    /// An intermediate of this many bytes (in a buffer of at least the second) goes back to the pool.
    Release(u64, u64),
}

impl Plan {
    /// The largest total of `round(bytes)` the run holds at once, and its largest single buffer:
    /// with the pool's size-class rounding, what the run must reserve before its first dispatch.
    pub(crate) fn peak_with(&self, round: &dyn Fn(u64) -> u64) -> (u64, u64) {
        let (mut live, mut peak, mut largest) = (0u64, 0u64, 0u64);
        for step in &self.schedule {
            match *step {
                Step::Acquire(b, _, at_least) => {
                    let r = round(b.max(at_least));
                    live += r;
                    largest = largest.max(r);
                    peak = peak.max(live);
                }
                Step::Release(b, at_least) => live -= round(b.max(at_least)),
            }
        }
        (peak, largest)
    }
}

/// Concrete input shapes in declaration order, from a name → shape lookup (static dims need none).
pub fn concrete_inputs(
    p: &Program,
    shape_of: &dyn Fn(&str) -> Option<Vec<usize>>,
) -> Result<Vec<Vec<usize>>> {
    let mut out = vec![];
    for (_, name, _, decl) in p.inputs() {
        let given = match shape_of(name) {
            Some(s) => s,
            None if decl.iter().all(|&d| d > 0) => decl.iter().map(|&d| d as usize).collect(),
            None => {
                return Err(Error::InvalidArgument(format!(
                    "input '{name}' has dynamic dims {decl:?}: give its shape"
                )))
            }
        };
        let fits =
            given.len() == decl.len() && decl.iter().zip(&given).all(|(&d, &g)| d == -1 || d as usize == g);
        if !fits {
            return Err(Error::ShapeMismatch(format!(
                "input '{name}' expects shape {decl:?}, got {given:?}"
            )));
        }
        crate::shape::element_count(&given)?;
        out.push(given);
    }
    Ok(out)
}

/// Infers every node's concrete shape and dtype for these inputs and plans the run's memory.
pub fn specialise(p: &Program, inputs: &[Vec<usize>]) -> Result<Plan> {
    let (shapes, types) = node_types(p, inputs)?;
    check_assigns(p, &shapes, inputs)?;
    let fusion = super::fusion::fuse(p, &shapes, &types);
    let reads = node_reads(p.nodes(), &fusion);
    let last_use = last_uses(p, &reads);
    let staged = staged(p);
    let slot_bytes = slots(p, &shapes, &last_use, &reads, &fusion);
    let schedule = schedule(p, &shapes, &last_use, &reads, &fusion, &staged, &slot_bytes);
    let memory = memory_plan(p, &schedule);
    Ok(Plan {
        shapes,
        dtypes: types,
        last_use,
        reads,
        fusion,
        staged,
        schedule,
        slot_bytes,
        memory,
    })
}

/// Every node's concrete shape and dtype for these inputs, in node order.
fn node_types(p: &Program, inputs: &[Vec<usize>]) -> Result<(Vec<Vec<usize>>, Vec<crate::DType>)> {
    let nodes = p.nodes();
    let mut shapes: Vec<Vec<usize>> = Vec::with_capacity(nodes.len());
    let mut types = Vec::with_capacity(nodes.len());
    let mut next_input = 0;
    for (i, node) in nodes.iter().enumerate() {
        let (shape, dtype) = match node {
            Node::Input { dtype, .. } => {
                next_input += 1;
                (inputs[next_input - 1].clone(), *dtype)
            }
            Node::State { shape, dtype, .. } | Node::Constant { shape, dtype, .. } => (shape.clone(), *dtype),
            Node::Op { op, args } => op_type(nodes, i, (op, args), (&shapes, &types), inputs)?,
        };
        shapes.push(shape);
        types.push(dtype);
    }
    Ok((shapes, types))
}

/// The concrete shape and dtype of op node `i`, from those of the nodes before it.
fn op_type(
    nodes: &[Node],
    i: NodeId,
    (op, args): (&crate::ops::Op, &[NodeId]),
    (shapes, types): (&[Vec<usize>], &[crate::DType]),
    inputs: &[Vec<usize>],
) -> Result<(Vec<usize>, crate::DType)> {
    let a: Vec<_> = args
        .iter()
        .map(|&j| (shapes[j].iter().map(|&d| Some(d)).collect(), types[j]))
        .collect();
    let (dims, dtype) = infer(op, &a).map_err(|e| match e {
        Error::ShapeMismatch(m) => {
            Error::ShapeMismatch(format!("node {i} ({}) for inputs {inputs:?}: {m}", op.name()))
        }
        other => other,
    })?;
    super::constant_indices(nodes, op, args, &a[0].0)?;
    let shape: Vec<usize> = dims.into_iter().map(|d| d.unwrap_or(0)).collect();
    crate::shape::element_count(&shape).map_err(|e| {
        Error::InvalidArgument(format!("node {i} ({}) for inputs {inputs:?}: {e}", op.name()))
    })?;
    Ok((shape, dtype))
}

/// Checks that each assigned node has its state's shape.
fn check_assigns(p: &Program, shapes: &[Vec<usize>], inputs: &[Vec<usize>]) -> Result<()> {
    for (state, node) in p.assigns() {
        let (_, _, _, want) = p.states().find(|s| s.1 == state).expect("validated");
        if shapes[*node] != want {
            return Err(Error::ShapeMismatch(format!(
                    "assign to '{state}': the state has shape {want:?} but node {node} has {:?} for inputs {inputs:?}",
                    shapes[*node]
                )));
        }
    }
    Ok(())
}

/// The buffers each node's dispatch reads: a fused root its group's leaves, a node fused into
/// another nothing, any other op node its arguments.
fn node_reads(nodes: &[Node], fusion: &super::fusion::Fusion) -> Vec<Vec<NodeId>> {
    nodes
        .iter()
        .enumerate()
        .map(|(i, node)| match (node, fusion.groups.get(&i)) {
            (_, Some(g)) => g.leaves.clone(),
            (Node::Op { .. }, None) if fusion.fused_into[i].is_some() => vec![],
            (Node::Op { args, .. }, None) => args.clone(),
            _ => vec![],
        })
        .collect()
}

/// For each node, the last node that reads it (`usize::MAX` for outputs and assigned values).
fn last_uses(p: &Program, reads: &[Vec<NodeId>]) -> Vec<usize> {
    let mut last_use = vec![0usize; p.nodes().len()];
    for (i, r) in reads.iter().enumerate() {
        for &a in r {
            last_use[a] = i;
        }
    }
    for (_, n) in p.outputs().iter().chain(p.assigns()) {
        last_use[*n] = usize::MAX;
    }
    last_use
}

/// For each assignment: whether its source is a state slot another assignment overwrites.
fn staged(p: &Program) -> Vec<bool> {
    let assigned: Vec<&str> = p.assigns().iter().map(|(s, _)| s.as_str()).collect();
    p.assigns()
        .iter()
        .map(|(dst, n)| match &p.nodes()[*n] {
            Node::State { name, .. } => name != dst && assigned.contains(&name.as_str()),
            _ => false,
        })
        .collect()
}

/// The acquisitions and releases `run` performs, in its order: each op node's buffer when it runs
/// (fused nodes have none), intermediates released after their last reader, then the output
/// copies (outputs naming a non-op node, or an op node a second time), then the staging copies of
/// assignment sources. Everything still held is released (intermediates) or returned (outputs).
fn schedule(
    p: &Program,
    shapes: &[Vec<usize>],
    last_use: &[usize],
    reads: &[Vec<NodeId>],
    fusion: &super::fusion::Fusion,
    staged: &[bool],
    slot_bytes: &[u64],
) -> Vec<Step> {
    let nodes = p.nodes();
    let output_nodes: Vec<NodeId> = p.outputs().iter().map(|(_, n)| *n).collect();
    let mut steps = Vec::new();
    let mut freed = vec![false; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        if !matches!(node, Node::Op { .. }) || fusion.fused_into[i].is_some() {
            continue; // fused nodes never have a buffer
        }
        steps.push(Step::Acquire(
            bytes(&shapes[i]),
            !output_nodes.contains(&i),
            slot_bytes[i],
        ));
        // a kernel's scratch (a split reduction's partial results, a long line's part summaries)
        // lives while the node runs
        if let Node::Op { op, args } = node {
            let input = args.first().map_or(&[][..], |&a| &shapes[a][..]);
            let words = op.scratch_words(input, shapes[i].iter().product::<usize>() as u64);
            if words > 0 {
                steps.push(Step::Acquire(words * 4, true, 0));
                steps.push(Step::Release(words * 4, 0));
            }
        }
        for &a in &reads[i] {
            let is_mid = matches!(nodes[a], Node::Op { .. }) && !output_nodes.contains(&a);
            if is_mid && last_use[a] == i && !freed[a] {
                freed[a] = true;
                steps.push(Step::Release(bytes(&shapes[a]), slot_bytes[a]));
            }
        }
    }
    let mut seen = vec![false; nodes.len()];
    for &n in &output_nodes {
        if !matches!(nodes[n], Node::Op { .. }) || std::mem::replace(&mut seen[n], true) {
            steps.push(Step::Acquire(bytes(&shapes[n]), false, 0));
        }
    }
    for ((_, n), &stage) in p.assigns().iter().zip(staged) {
        if stage {
            steps.push(Step::Acquire(bytes(&shapes[*n]), true, 0));
        }
    }
    steps
}

/// Buffer slots for a run's intermediates: walking the run in order, each intermediate takes the
/// smallest free slot that holds it (else grows the largest free one, else opens a new one) and
/// frees it after its last reader. Every occupant then asks the pool for its slot's final size, so
/// each run reuses exactly the buffers the first run made, whatever mix of sizes a backward pass
/// has — the pool holds the slots, not every size class that was ever live at once. Outputs and
/// the values assigned to states keep their own sizes (their buffers leave the run). 0: own size.
fn slots(
    p: &Program,
    shapes: &[Vec<usize>],
    last_use: &[usize],
    reads: &[Vec<NodeId>],
    fusion: &super::fusion::Fusion,
) -> Vec<u64> {
    let nodes = p.nodes();
    let leaves: Vec<NodeId> = p.outputs().iter().chain(p.assigns()).map(|(_, n)| *n).collect();
    let mut size: Vec<u64> = vec![]; // per slot
    let mut free: Vec<usize> = vec![];
    let mut slot_of: Vec<Option<usize>> = vec![None; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        if !matches!(node, Node::Op { .. }) || fusion.fused_into[i].is_some() || leaves.contains(&i) {
            continue;
        }
        let b = bytes(&shapes[i]);
        let fit = free
            .iter()
            .copied()
            .filter(|&k| size[k] >= b)
            .min_by_key(|&k| size[k]);
        let k = match fit.or_else(|| free.iter().copied().max_by_key(|&k| size[k])) {
            Some(k) => {
                free.retain(|&f| f != k);
                size[k] = size[k].max(b);
                k
            }
            None => {
                size.push(b);
                size.len() - 1
            }
        };
        slot_of[i] = Some(k);
        for &a in &reads[i] {
            if let Some(ka) = slot_of[a].filter(|_| last_use[a] == i && a != i) {
                if !free.contains(&ka) {
                    free.push(ka);
                }
            }
        }
    }
    slot_of.iter().map(|k| k.map_or(0, |k| size[k])).collect()
}

/// Totals what a schedule holds (no rounding: `byteLength`s, as `compute.storage` counts them).
fn memory_plan(p: &Program, schedule: &[Step]) -> MemoryPlan {
    let (mut live_mid, mut peak_mid, mut outs, mut peak) = (0u64, 0u64, 0u64, 0u64);
    for step in schedule {
        match *step {
            Step::Acquire(b, true, _) => live_mid += b,
            Step::Acquire(b, false, _) => outs += b,
            Step::Release(b, _) => live_mid -= b,
        }
        peak_mid = peak_mid.max(live_mid);
        peak = peak.max(live_mid + outs);
    }
    let state_bytes = p.states().map(|(_, _, _, s)| bytes(s)).sum();
    MemoryPlan {
        intermediate_bytes: peak_mid,
        output_bytes: outs,
        state_bytes,
        peak_bytes: peak,
    }
}

impl Program {
    /// What a run with these input shapes would hold, computed without a device (only inputs
    /// with dynamic dims need a shape). The same figures `Executable::memory_plan` returns.
    pub fn memory_plan(&self, input_shapes: &HashMap<String, Vec<usize>>) -> Result<MemoryPlan> {
        self.validate()?;
        for k in input_shapes.keys() {
            if !self.inputs().any(|(_, n, _, _)| n == k) {
                return Err(Error::InvalidArgument(format!(
                    "memoryPlan: the program has no input '{k}'"
                )));
            }
        }
        let inputs = concrete_inputs(self, &|n| input_shapes.get(n).cloned())?;
        Ok(specialise(self, &inputs)?.memory)
    }
}
