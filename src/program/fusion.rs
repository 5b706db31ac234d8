//! Fusion of elementwise chains for compiled programs. A unary or binary node whose only consumer
//! is another elementwise node of the same dtype and shape (and which is not an output or an
//! assigned value) is computed inside its consumer's kernel instead of in a buffer of its own: the
//! chain becomes one dispatch, and its intermediates never exist. Broadcasting happens only at the
//! group's leaves (its inputs from outside). A group reads at most [`MAX_LEAVES`] buffers (WebGPU
//! guarantees 8 storage buffers per stage: the output and the parameters take two). A chain may
//! also run inside its producer's store (a matmul or convolution: an epilogue) or inside the
//! reduction that is its only reader (a prologue: `sum(f(x))` reads `x` once).

use std::collections::{HashMap, HashSet};

use super::{Node, NodeId, Program};
use crate::dtype::DType;
use crate::ops::Op;

/// Most buffers a fused kernel reads.
pub const MAX_LEAVES: usize = 6;

/// An operand of a fused step: a leaf buffer, or an earlier step's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Ref {
    Leaf(usize),
    Step(usize),
    /// The producer's value (a group fused into a matmul or convolution's store).
    Acc,
    /// A single-element constant, written into the kernel as its 32-bit word (a bound, an
    /// epsilon): no buffer to bind.
    Const(u32),
    /// The group's `params[k]` (a 32-bit word passed with the kernel's parameters, not written into
    /// its code): an eager number operand, so `x.mul(2)` and `x.mul(3)` share one pipeline.
    Param(usize),
}

/// One elementwise op inside a fused kernel.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Step {
    pub op: Op,
    pub args: Vec<Ref>,
}

/// A fused chain: steps in order (the last is the root, whose value is written), and the nodes
/// whose buffers it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    pub steps: Vec<Step>,
    pub leaves: Vec<NodeId>,
    /// The matmul or convolution the group is fused into (its epilogue); its inputs are the
    /// first leaves, and the steps read its value as [`Ref::Acc`].
    pub producer: Option<Op>,
    /// The reduction the chain feeds (the group's root is then that reduce node): the chain is
    /// computed as the reduction reads it, so its value is never written. With the chain's shape.
    pub consumer: Option<(Op, Vec<usize>)>,
    /// The words [`Ref::Param`] reads (eager chains only; a program's constants are [`Ref::Const`]).
    pub params: Vec<u32>,
}

/// The fusion decisions for one specialisation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fusion {
    /// For a node computed inside another's kernel, that root.
    pub fused_into: Vec<Option<NodeId>>,
    /// Groups of two or more steps, by root.
    pub groups: HashMap<NodeId, Group>,
}

/// Most steps an eager chain holds (`lazy.rs`, `composite.rs`) before it is run.
pub(crate) const MAX_EAGER_STEPS: usize = 32;

/// Unary and binary ops whose output dtype is their inputs' (comparisons change it: not fused).
pub(crate) fn chainable(op: &Op) -> bool {
    match op {
        Op::Unary(_) => true,
        Op::Binary(b) => b.rule() != crate::ops::Rule::Compare,
        _ => false,
    }
}

fn elementwise(n: &Node) -> bool {
    matches!(n, Node::Op { op, .. } if chainable(op))
}

/// Appends the steps of another chain to `steps`, its step references shifted and each of its
/// other operands (a leaf, a parameter) read as `operand(r)`; the index of its root.
pub(crate) fn append_steps(
    steps: &mut Vec<Step>,
    other: &[Step],
    mut operand: impl FnMut(Ref) -> Ref,
) -> usize {
    let base = steps.len();
    for st in other {
        let args = st
            .args
            .iter()
            .map(|r| match *r {
                Ref::Step(k) => Ref::Step(base + k),
                other => operand(other),
            })
            .collect();
        steps.push(Step {
            op: st.op.clone(),
            args,
        });
    }
    steps.len() - 1
}

fn args(n: &Node) -> &[NodeId] {
    match n {
        Node::Op { args, .. } => args,
        _ => &[],
    }
}

/// How a step reads node `a` from outside its group: a single-element constant inline, anything
/// else as a leaf (added to `leaves` once). A float constant that is not finite stays a leaf: WGSL
/// refuses a constant expression that evaluates to an infinity or NaN.
fn operand(nodes: &[Node], a: NodeId, leaves: &mut Vec<NodeId>) -> Ref {
    if let Node::Constant { data, dtype, .. } = &nodes[a] {
        if let (1, Ok(word)) = (data.len(), dtype.word_from_f64(data[0])) {
            if *dtype != DType::Float32 || f32::from_bits(word).is_finite() {
                return Ref::Const(word);
            }
        }
    }
    Ref::Leaf(leaves.iter().position(|l| *l == a).unwrap_or_else(|| {
        leaves.push(a);
        leaves.len() - 1
    }))
}

/// A group of the one node `n` (a root left alone by chain fusion), its operands as [`operand`].
fn single(nodes: &[Node], n: NodeId) -> Option<Group> {
    let Node::Op { op, args } = &nodes[n] else {
        return None;
    };
    let mut leaves = vec![];
    let args = args.iter().map(|&a| operand(nodes, a, &mut leaves)).collect();
    Some(Group {
        steps: vec![Step { op: op.clone(), args }],
        leaves,
        producer: None,
        consumer: None,
        params: vec![],
    })
}

/// Decides which nodes fuse into which, for these concrete shapes and dtypes.
pub(crate) fn fuse(p: &Program, shapes: &[Vec<usize>], dtypes: &[DType]) -> Fusion {
    let nodes = p.nodes();
    let keep: HashSet<NodeId> = p.outputs().iter().chain(p.assigns()).map(|(_, n)| *n).collect();
    let (uses, consumer) = readers(nodes);
    let mut blocked: HashSet<NodeId> = HashSet::new();
    loop {
        let fusable = |n: NodeId| {
            !blocked.contains(&n)
                && elementwise(&nodes[n])
                && !keep.contains(&n)
                && uses[n] == 1
                && consumer[n].is_some_and(|c| {
                    elementwise(&nodes[c]) && dtypes[c] == dtypes[n] && shapes[c] == shapes[n]
                })
        };
        match chains(nodes, &fusable) {
            // stop fusing into this root's producers nearest the root, and try again
            Err(members) => {
                blocked.extend(args(&nodes[*members.last().expect("non-empty")]).iter().copied());
            }
            Ok(mut fusion) => {
                epilogues(&mut fusion, nodes, shapes, dtypes, &uses, &keep);
                prologues(&mut fusion, nodes, dtypes, shapes, &uses, &keep);
                return fusion;
            }
        }
    }
}

/// How many times each node is read, and by which node (the last reader).
fn readers(nodes: &[Node]) -> (Vec<usize>, Vec<Option<NodeId>>) {
    let mut uses = vec![0usize; nodes.len()];
    let mut consumer = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for &a in args(n) {
            uses[a] += 1;
            consumer[a] = Some(i);
        }
    }
    (uses, consumer)
}

/// The chain groups of every elementwise root that is not `fusable` itself: its fusable producers
/// fuse into it. `Err`: the members of the first group that reads more than [`MAX_LEAVES`].
fn chains(nodes: &[Node], fusable: &impl Fn(NodeId) -> bool) -> Result<Fusion, Vec<NodeId>> {
    let mut fusion = Fusion {
        fused_into: vec![None; nodes.len()],
        groups: HashMap::new(),
    };
    for root in 0..nodes.len() {
        if !elementwise(&nodes[root]) || fusable(root) {
            continue;
        }
        let members = members(nodes, root, fusable);
        if members.len() < 2 {
            continue;
        }
        let (steps, leaves) = chain_steps(nodes, &members);
        if leaves.len() > MAX_LEAVES {
            return Err(members);
        }
        for &m in &members[..members.len() - 1] {
            fusion.fused_into[m] = Some(root);
        }
        fusion.groups.insert(
            root,
            Group {
                steps,
                leaves,
                producer: None,
                consumer: None,
                params: vec![],
            },
        );
    }
    Ok(fusion)
}

/// The members of `root`'s chain in node order: the root and every fusable producer reachable
/// through fusable producers.
fn members(nodes: &[Node], root: NodeId, fusable: &impl Fn(NodeId) -> bool) -> Vec<NodeId> {
    let mut members = vec![root];
    let mut stack = vec![root];
    while let Some(m) = stack.pop() {
        for &a in args(&nodes[m]) {
            if fusable(a) && !members.contains(&a) {
                members.push(a);
                stack.push(a);
            }
        }
    }
    members.sort_unstable();
    members
}

/// The steps of a chain of `members` (in node order), and the leaves they read.
fn chain_steps(nodes: &[Node], members: &[NodeId]) -> (Vec<Step>, Vec<NodeId>) {
    let mut leaves: Vec<NodeId> = vec![];
    let mut steps = vec![];
    for &m in members {
        let Node::Op { op, args } = &nodes[m] else {
            unreachable!("members are op nodes")
        };
        let refs = args
            .iter()
            .map(|a| match members.iter().position(|x| x == a) {
                Some(k) => Ref::Step(k),
                None => operand(nodes, *a, &mut leaves),
            })
            .collect();
        steps.push(Step {
            op: op.clone(),
            args: refs,
        });
    }
    (steps, leaves)
}

/// Producers whose store can run an elementwise chain (an `epilogue` in their op-table entry).
fn producer(n: &Node) -> bool {
    matches!(n, Node::Op { op, .. } if op.takes_epilogue())
}

/// Fuses each elementwise root (a group, or one node) into the matmul or convolution that feeds it
/// when that product has no other reader, is not kept, and has the root's shape: the chain runs in
/// the producer's store (`kernels/fused.rs`), so the product is never written.
fn epilogues(
    f: &mut Fusion,
    nodes: &[Node],
    shapes: &[Vec<usize>],
    dtypes: &[DType],
    uses: &[usize],
    keep: &HashSet<NodeId>,
) {
    for root in 0..nodes.len() {
        if !elementwise(&nodes[root]) || f.fused_into[root].is_some() {
            continue;
        }
        let Some(group) = f.groups.get(&root).cloned().or_else(|| single(nodes, root)) else {
            continue;
        };
        let fits = |l: NodeId| {
            producer(&nodes[l])
                && uses[l] == 1
                && !keep.contains(&l)
                && shapes[l] == shapes[root]
                && dtypes[l] == dtypes[root]
        };
        // the producer's inputs replace it among the leaves: at most MAX_LEAVES in all
        let Some(pos) = group.leaves.iter().position(|&l| fits(l)) else {
            continue;
        };
        let Node::Op {
            op: made_by,
            args: inputs,
        } = &nodes[group.leaves[pos]]
        else {
            continue;
        };
        if group.leaves.len() - 1 + inputs.len() > MAX_LEAVES {
            continue;
        }
        let others: Vec<usize> = (0..group.leaves.len()).filter(|&k| k != pos).collect();
        let mut leaves = inputs.clone();
        leaves.extend(others.iter().map(|&k| group.leaves[k]));
        let remap = |r: &Ref| match *r {
            Ref::Leaf(k) if k == pos => Ref::Acc,
            Ref::Leaf(k) => Ref::Leaf(inputs.len() + others.iter().position(|&o| o == k).unwrap_or(0)),
            other => other,
        };
        let steps = group
            .steps
            .iter()
            .map(|s| Step {
                op: s.op.clone(),
                args: s.args.iter().map(remap).collect(),
            })
            .collect();
        f.fused_into[group.leaves[pos]] = Some(root);
        f.groups.insert(
            root,
            Group {
                steps,
                leaves,
                producer: Some(made_by.clone()),
                consumer: None,
                params: vec![],
            },
        );
    }
}

/// Fuses each elementwise root (a group, or one node) into the reduction that is its only reader
/// (same dtype, not kept, not already in a producer's store): the reduction computes the chain as
/// it reads it (`kernels/reduce.rs`), so `sum(f(x))` reads `x` once and writes nothing else.
fn prologues(
    f: &mut Fusion,
    nodes: &[Node],
    dtypes: &[DType],
    shapes: &[Vec<usize>],
    uses: &[usize],
    keep: &HashSet<NodeId>,
) {
    for r in 0..nodes.len() {
        let Node::Op {
            op: reduce @ Op::Reduce { .. },
            args,
        } = &nodes[r]
        else {
            continue;
        };
        let g = args[0];
        if !elementwise(&nodes[g])
            || uses[g] != 1
            || keep.contains(&g)
            || dtypes[g] != dtypes[r]
            || f.fused_into[g].is_some()
            || f.groups.get(&g).is_some_and(|grp| grp.producer.is_some())
        {
            continue;
        }
        let Some(mut group) = f.groups.remove(&g).or_else(|| single(nodes, g)) else {
            continue;
        };
        group.consumer = Some((reduce.clone(), shapes[g].clone()));
        for into in f.fused_into.iter_mut() {
            if *into == Some(g) {
                *into = Some(r);
            }
        }
        f.fused_into[g] = Some(r);
        f.groups.insert(r, group);
    }
}

#[cfg(test)]
mod tests;
