//! One run of a specialisation: every node recorded into one command encoder, intermediates taken
//! from the pool when their node runs and given back after their last use (see `executable.rs`).

use std::collections::HashMap;

use crate::accounting::Exec;
use crate::error::{Error, Result};
use crate::kernels::{record, record_group, Operand};
use crate::program::plan::Plan;
use crate::program::{Node, NodeId};
use crate::state::ExecutionState;
use crate::tensor::Tensor;

impl super::Executable {
    pub(super) fn execute(
        &self,
        plan: &Plan,
        inputs: &HashMap<&str, &Tensor>,
        state: Option<&ExecutionState>,
    ) -> Result<Vec<(String, Tensor)>> {
        let ex = &self.inner;
        let s = &ex.session;
        let p = &ex.program;
        let nodes = p.nodes();
        let _submission = s.submission();
        // Held for the whole run: `dispose()` on another thread waits for it, then finds it done.
        let constants = ex.constants.lock().unwrap_or_else(|p| p.into_inner());
        self.check_live()?;
        // Reserve: the run's peak, rounded as the pool rounds, must fit now; nothing is acquired
        // (or evicted, or counted) before this holds, and every acquisition after it succeeds.
        let (peak, largest) = {
            let pool = s.pool();
            plan.peak_with(&|b| pool.rounded(b))
        };
        let _admitted = s.admit_rounded(peak, largest)?;
        let alloc = |words| crate::session::scratch(s, words, &format!("a run of program '{}'", p.name()));
        let ctx = crate::kernels::Ctx {
            scratch: Some(&alloc),
            ..s.ctx()
        };
        let mut enc = crate::commands::Commands::default();
        // Storage made by this run, by node: outputs (kept) and intermediates (released at last use).
        let mut made: Vec<Option<Tensor>> = (0..nodes.len()).map(|_| None).collect();
        let output_nodes: Vec<NodeId> = p.outputs().iter().map(|(_, n)| *n).collect();
        let first_output_name = |i: NodeId| {
            p.outputs()
                .iter()
                .find(|(_, n)| *n == i)
                .map(|(name, _)| name.clone())
        };
        let missing = |what: &str| Error::InvalidProgram(format!("run of '{}': no {what}", p.name()));
        let external = |i: NodeId| -> Result<&Tensor> {
            match &nodes[i] {
                Node::Input { name, .. } => {
                    inputs.get(name.as_str()).copied().ok_or_else(|| missing("input"))
                }
                Node::State { name, .. } => {
                    state.and_then(|st| st.slot(name)).ok_or_else(|| missing("state"))
                }
                Node::Constant { .. } => constants.get(&i).ok_or_else(|| missing("constant")),
                Node::Op { .. } => Err(missing("buffer for an op node")),
            }
        };
        for (i, node) in nodes.iter().enumerate() {
            let Node::Op { op, .. } = node else { continue };
            if plan.fusion.fused_into[i].is_some() {
                continue; // computed inside its root's kernel; never has a buffer
            }
            let reads = &plan.reads[i];
            let dtype = plan.dtypes[i];
            let origin = match first_output_name(i) {
                Some(name) => format!("program '{}' output '{name}'", p.name()),
                None => format!("intermediate of program '{}'", p.name()),
            };
            let out = Tensor::allocate_in_slot(s, plan.shapes[i].clone(), dtype, origin, plan.slot_bytes[i])?;
            {
                let mut operands: Vec<Operand> = Vec::with_capacity(reads.len());
                for &a in reads {
                    let t = match &made[a] {
                        Some(t) => t,
                        None => external(a)?,
                    };
                    operands.push(Operand {
                        buffer: t.buffer()?,
                        shape: &plan.shapes[a],
                        dtype: t.dtype(),
                    });
                }
                match plan.fusion.groups.get(&i) {
                    Some(group) => record_group(&ctx, &mut enc, group, &operands, out.operand()?)?,
                    None => record(&ctx, &mut enc, op, &operands, out.operand()?)?,
                }
            }
            made[i] = Some(out);
            for &a in reads {
                if plan.last_use[a] == i && !output_nodes.contains(&a) {
                    made[a] = None; // back to the pool; later nodes may reuse the buffer
                }
            }
        }
        // Outputs: op results move out; anything else (an input, a state, a constant, or an op
        // named twice) is copied — a fixup.
        let mut outputs: Vec<(String, Tensor, NodeId)> = Vec::with_capacity(p.outputs().len());
        let mut fixups = 0;
        for (name, n) in p.outputs() {
            let t = match made[*n].take() {
                Some(t) => t,
                None => {
                    let src = match &nodes[*n] {
                        Node::Op { .. } => outputs
                            .iter()
                            .find(|(_, _, id)| id == n)
                            .map(|(_, t, _)| t)
                            .ok_or_else(|| missing("earlier output"))?,
                        _ => external(*n)?,
                    };
                    let origin = format!("program '{}' output '{name}'", p.name());
                    let copy = Tensor::allocate_untracked(s, plan.shapes[*n].clone(), src.dtype(), origin)?;
                    enc.copy_buffer_to_buffer(src.buffer()?, 0, copy.buffer()?, 0, copy.byte_length());
                    fixups += 1;
                    copy
                }
            };
            outputs.push((name.clone(), t, *n));
        }
        // Assignments read their sources as of the start of the run: a source slot that another
        // assignment overwrites is copied aside first (a swap or a rotation of states works).
        let source = |n: NodeId| -> Result<&Tensor> {
            match (&made[n], &nodes[n]) {
                (Some(t), _) => Ok(t),
                (None, Node::Op { .. }) => outputs
                    .iter()
                    .find(|(_, _, id)| *id == n)
                    .map(|(_, t, _)| t)
                    .ok_or_else(|| missing("assigned value")),
                _ => external(n),
            }
        };
        let mut staged: Vec<Option<Tensor>> = Vec::with_capacity(p.assigns().len());
        for ((slot, n), &stage) in p.assigns().iter().zip(&plan.staged) {
            staged.push(if stage {
                let src = source(*n)?;
                let origin = format!("old value of state '{slot}' in a run of program '{}'", p.name());
                let tmp = Tensor::allocate_untracked(s, plan.shapes[*n].clone(), src.dtype(), origin)?;
                enc.copy_buffer_to_buffer(src.buffer()?, 0, tmp.buffer()?, 0, tmp.byte_length());
                fixups += 1;
                Some(tmp)
            } else {
                None
            });
        }
        for ((slot, n), tmp) in p.assigns().iter().zip(&staged) {
            let dst = state
                .and_then(|st| st.slot(slot))
                .ok_or_else(|| missing("state slot"))?;
            let src = match tmp {
                Some(t) => t,
                None => source(*n)?,
            };
            if src.buffer()? != dst.buffer()? {
                enc.copy_buffer_to_buffer(src.buffer()?, 0, dst.buffer()?, 0, dst.byte_length());
                fixups += 1;
            }
        }
        crate::session::commit(s, enc);
        for _ in 0..fixups {
            s.ledger.count(Exec::Fixup);
        }
        drop(staged);
        drop(made);
        let outputs: Vec<(String, Tensor)> = outputs.into_iter().map(|(n, t, _)| (n, t)).collect();
        for (_, t) in &outputs {
            s.scopes.track(&t.core);
        }
        let in_shapes: Vec<&[usize]> = inputs.values().map(|t| t.shape()).collect();
        let outs: Vec<&Tensor> = outputs.iter().map(|(_, t)| t).collect();
        s.scopes
            .observe(&s.ledger, &format!("run:{}", p.name()), &in_shapes, &outs);
        Ok(outputs)
    }
}
