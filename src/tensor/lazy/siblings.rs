//! Sibling fusion: pending tensors computed at one time (at `sync()`, the end of a browser task,
//! or when a leaf they read is disposed) that have one shape and dtype are computed by one kernel
//! with several outputs. Their chains are merged, a step shared by two of them (the same op on
//! the same operands) computed once: 1,000 kept `x.square()` results are ~170 dispatches of six
//! outputs each (under WebGPU's 8 storage buffers per stage), and kept intermediates of one chain
//! (`a = x.exp(); b = a.mul(y)`) are one kernel that writes both.
//!
//! Each member's chain stays locked from the moment it joins a kernel until that kernel is in the
//! session's batch, as a single settle holds it (a concurrent reader waits for the commands). A
//! member another thread holds is left out and computed on its own.

use std::collections::HashMap;
use std::sync::{MutexGuard, TryLockError};

use super::{leaf_of, param_of, Chain, LeafRef};
use crate::dtype::DType;
use crate::kernels::Operand;
use crate::platform::Shared;
use crate::program::fusion::{Group, Ref, Step, MAX_EAGER_STEPS};
use crate::tensor::{SessionShared, TensorCore};

/// Storage buffers one sibling kernel binds (outputs, leaves and its parameters): the 8 per stage
/// WebGPU guarantees, so the kernels (and their count) are the same on every adapter.
const BUFFERS: usize = 8;

/// Sibling chains being merged into one kernel.
struct Merged<'a> {
    steps: Vec<Step>,
    leaves: Vec<LeafRef>,
    params: Vec<u32>,
    /// Each member, its locked chain, its chain resolved, and the step that is its value.
    members: Vec<(&'a TensorCore, MutexGuard<'a, Option<Chain>>, Chain, usize)>,
}

impl<'a> Merged<'a> {
    fn new() -> Merged<'a> {
        Merged {
            steps: vec![],
            leaves: vec![],
            params: vec![],
            members: vec![],
        }
    }

    /// Adds `chain`'s steps (a step already present reused); its root, or `None` (nothing
    /// changed) if the kernel would bind more than [`BUFFERS`] or pass the step cap.
    fn add(&mut self, chain: &Chain) -> Option<usize> {
        let (steps, leaves, params) = (self.steps.len(), self.leaves.len(), self.params.len());
        let mut map = Vec::with_capacity(chain.steps.len());
        for s in &chain.steps {
            let args = s
                .args
                .iter()
                .map(|r| match *r {
                    Ref::Leaf(k) => leaf_of(&mut self.leaves, &chain.leaves[k].0),
                    Ref::Param(j) => param_of(&mut self.params, chain.params[j]),
                    Ref::Step(j) => Ref::Step(map[j]),
                    other => other,
                })
                .collect();
            let step = Step {
                op: s.op.clone(),
                args,
            };
            let at = self.steps.iter().position(|e| *e == step).unwrap_or_else(|| {
                self.steps.push(step);
                self.steps.len() - 1
            });
            map.push(at);
        }
        // outputs + leaves + the parameters
        let bindings = self.members.len() + 1 + self.leaves.len() + 1;
        if bindings > BUFFERS || self.steps.len() > MAX_EAGER_STEPS {
            self.steps.truncate(steps);
            self.leaves.truncate(leaves);
            self.params.truncate(params);
            return None;
        }
        map.last().copied()
    }

    /// Records the kernel and marks every member computed.
    fn record(self, s: &SessionShared) {
        let Merged {
            steps,
            leaves,
            params,
            members,
        } = self;
        if members.len() > 1 && !s.gpu.is_lost() {
            let group = Group {
                steps,
                leaves: (0..leaves.len()).collect(),
                producer: None,
                consumer: None,
                params,
            };
            let operands: Vec<Operand> = leaves.iter().map(LeafRef::operand).collect();
            let outs: Vec<(Operand, usize)> = members
                .iter()
                .map(|(core, _, _, root)| (core.operand_unchecked(), *root))
                .collect();
            let ctx = s.ctx();
            let mut enc = crate::commands::Commands::default();
            crate::kernels::record_fused_outputs(&ctx, &mut enc, &group, &operands, &outs);
            crate::runtime::commit(&members[0].0.session, enc);
        } else if let [(core, _, chain, _)] = members.as_slice() {
            super::record(core, chain); // one: its own kernel, as it would settle alone
        } // on a lost device nothing is recorded (its reads fail `DEVICE_LOST`)
        let mut taken = Vec::with_capacity(members.len());
        for (core, mut guard, _, _) in members {
            taken.push(guard.take());
            core.mark_settled();
        }
        // dropped once no chain is locked: a tensor only they held is disposed, and looks for
        // pending readers
        drop(taken);
    }
}

/// Computes each of `cores` that is still pending, siblings of one shape and dtype together.
pub(crate) fn settle(s: &SessionShared, cores: &[Shared<TensorCore>]) {
    let mut kinds: HashMap<(&[usize], DType), Vec<&TensorCore>> = HashMap::new();
    let mut order = vec![];
    for core in cores {
        let key = (core.shape.as_slice(), core.dtype);
        let members = kinds.entry(key).or_insert_with(|| {
            order.push(key);
            vec![]
        });
        members.push(core);
    }
    let mut alone = vec![];
    for key in order {
        let mut merged = Merged::new();
        for &core in &kinds[&key] {
            let guard = match core.chain.try_lock() {
                Ok(g) => g,
                Err(TryLockError::Poisoned(p)) => p.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    alone.push(core); // held by another thread: computed on its own
                    continue;
                }
            };
            let Some(chain) = guard.as_ref().map(Chain::resolved) else {
                continue; // computed (or dropped) since it was listed
            };
            let root = match merged.add(&chain) {
                Some(r) => r,
                None => {
                    std::mem::replace(&mut merged, Merged::new()).record(s);
                    merged.add(&chain).expect("one chain fits a kernel of its own")
                }
            };
            merged.members.push((core, guard, chain, root));
        }
        merged.record(s);
    }
    for core in alone {
        core.settle();
    }
}
