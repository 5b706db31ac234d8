//! One run of a specialisation: every node recorded into one command encoder, intermediates taken
//! from the pool when their node runs and given back after their last use (see `executable/mod.rs`).
//! The steps: admit the run's peak, record the op nodes, move out (or copy) the outputs, stage the
//! state slots an assignment overwrites, assign, commit, count the fixups, observe.

use std::collections::HashMap;

use super::state::ExecutionState;
use crate::accounting::Exec;
use crate::commands::Commands;
use crate::error::{Error, Result};
use crate::kernels::{record, record_group, Ctx, Operand};
use crate::platform::Shared;
use crate::program::plan::Plan;
use crate::program::{Node, NodeId, Program};
use crate::tensor::{SessionShared, Tensor};

/// An output of the run with the node it came from.
type Output = (String, Tensor, NodeId);

/// What a run reads and did not make: its program, plan, inputs, state and constants.
#[derive(Clone, Copy)]
struct Reads<'a> {
    s: &'a Shared<SessionShared>,
    p: &'a Program,
    plan: &'a Plan,
    inputs: &'a HashMap<&'a str, &'a Tensor>,
    state: Option<&'a ExecutionState>,
    constants: &'a HashMap<NodeId, Tensor>,
}

/// A run under way: what it reads and what it has made so far.
struct Run<'a> {
    r: Reads<'a>,
    /// Storage made by this run, by node: outputs (kept) and intermediates (released at last use).
    made: Vec<Option<Tensor>>,
    enc: Commands,
    /// Copies the run inserted that the user did not ask for (`compute.execution/fixups`).
    fixups: u64,
}

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
        let alloc = |words| crate::tensor::scratch(s, words, &format!("a run of program '{}'", p.name()));
        let ctx = Ctx {
            scratch: Some(&alloc),
            ..s.ctx()
        };
        let r = Reads {
            s,
            p,
            plan,
            inputs,
            state,
            constants: &constants,
        };
        let mut run = Run {
            r,
            made: (0..p.nodes().len()).map(|_| None).collect(),
            enc: Commands::default(),
            fixups: 0,
        };
        run.record_ops(&ctx)?;
        let outputs = run.take_outputs()?;
        let staged = run.stage_overwritten(&outputs)?;
        run.assign(&outputs, &staged)?;
        crate::runtime::commit(s, std::mem::take(&mut run.enc));
        for _ in 0..run.fixups {
            s.ledger.count(Exec::Fixup);
        }
        drop(staged);
        drop(run);
        let outputs: Vec<(String, Tensor)> = outputs.into_iter().map(|(n, t, _)| (n, t)).collect();
        observe(s, p, inputs, &outputs);
        Ok(outputs)
    }
}

impl<'a> Reads<'a> {
    fn missing(&self, what: &str) -> Error {
        Error::InvalidProgram(format!("run of '{}': no {what}", self.p.name()))
    }

    /// The storage of a node the run did not make: an input, a state slot or a constant.
    fn external(&self, i: NodeId) -> Result<&'a Tensor> {
        let (inputs, state, constants) = (self.inputs, self.state, self.constants);
        match &self.p.nodes()[i] {
            Node::Input { name, .. } => inputs
                .get(name.as_str())
                .copied()
                .ok_or_else(|| self.missing("input")),
            Node::State { name, .. } => state
                .and_then(|st| st.slot(name))
                .ok_or_else(|| self.missing("state")),
            Node::Constant { .. } => constants.get(&i).ok_or_else(|| self.missing("constant")),
            Node::Op { .. } => Err(self.missing("buffer for an op node")),
        }
    }

    /// The value node `n` holds now: made by the run, an output taken already, or external.
    fn value<'b>(
        &self,
        made: &'b [Option<Tensor>],
        outputs: &'b [Output],
        n: NodeId,
        what: &str,
    ) -> Result<&'b Tensor>
    where
        'a: 'b,
    {
        match (&made[n], &self.p.nodes()[n]) {
            (Some(t), _) => Ok(t),
            (None, Node::Op { .. }) => outputs
                .iter()
                .find(|(_, _, id)| *id == n)
                .map(|(_, t, _)| t)
                .ok_or_else(|| self.missing(what)),
            _ => self.external(n),
        }
    }

    /// A copy of `src` (node `n`'s value) in storage of its own, recorded into `enc`: a fixup.
    fn copy(&self, enc: &mut Commands, src: &Tensor, n: NodeId, origin: String) -> Result<Tensor> {
        let copy = Tensor::allocate_untracked(self.s, self.plan.shapes[n].clone(), src.dtype(), origin)?;
        enc.copy_buffer_to_buffer(src.buffer()?, 0, copy.buffer()?, 0, copy.byte_length());
        Ok(copy)
    }
}

impl Run<'_> {
    /// Records every op node that has a kernel of its own (a fused node is computed inside its
    /// root's), releasing each intermediate after its last reader.
    fn record_ops(&mut self, ctx: &Ctx) -> Result<()> {
        let (p, plan) = (self.r.p, self.r.plan);
        let output_nodes: Vec<NodeId> = p.outputs().iter().map(|(_, n)| *n).collect();
        for (i, node) in p.nodes().iter().enumerate() {
            let Node::Op { op, .. } = node else { continue };
            if plan.fusion.fused_into[i].is_some() {
                continue; // computed inside its root's kernel; never has a buffer
            }
            let out = self.record_op(ctx, i, op)?;
            self.made[i] = Some(out);
            for &a in &plan.reads[i] {
                if plan.last_use[a] == i && !output_nodes.contains(&a) {
                    self.made[a] = None; // back to the pool; later nodes may reuse the buffer
                }
            }
        }
        Ok(())
    }

    /// Node `i`'s output, allocated in its planned slot, and its kernel recorded.
    fn record_op(&mut self, ctx: &Ctx, i: NodeId, op: &crate::ops::Op) -> Result<Tensor> {
        let Reads { s, p, plan, .. } = self.r;
        let origin = match p.outputs().iter().find(|(_, n)| *n == i) {
            Some((name, _)) => format!("program '{}' output '{name}'", p.name()),
            None => format!("intermediate of program '{}'", p.name()),
        };
        let out = Tensor::allocate_in_slot(
            s,
            plan.shapes[i].clone(),
            plan.dtypes[i],
            origin,
            plan.slot_bytes[i],
        )?;
        let reads = &plan.reads[i];
        let mut operands: Vec<Operand> = Vec::with_capacity(reads.len());
        for &a in reads {
            let t = match &self.made[a] {
                Some(t) => t,
                None => self.r.external(a)?,
            };
            operands.push(Operand {
                buffer: t.buffer()?,
                shape: &plan.shapes[a],
                dtype: t.dtype(),
            });
        }
        let ctx = &Ctx {
            origin: crate::kernels::Origin::Node {
                program: p.name(),
                node: i,
                op: op.name(),
            },
            ..*ctx
        };
        match plan.fusion.groups.get(&i) {
            Some(group) => record_group(ctx, &mut self.enc, group, &operands, out.operand()?)?,
            None => record(ctx, &mut self.enc, op, &operands, out.operand()?)?,
        }
        Ok(out)
    }

    /// Outputs: op results move out; anything else (an input, a state, a constant, or an op named
    /// twice) is copied — a fixup.
    fn take_outputs(&mut self) -> Result<Vec<Output>> {
        let r = self.r;
        let mut outputs: Vec<Output> = Vec::with_capacity(r.p.outputs().len());
        for (name, n) in r.p.outputs() {
            let t = match self.made[*n].take() {
                Some(t) => t,
                None => {
                    let src = r.value(&self.made, &outputs, *n, "earlier output")?;
                    let origin = format!("program '{}' output '{name}'", r.p.name());
                    self.fixups += 1;
                    r.copy(&mut self.enc, src, *n, origin)?
                }
            };
            outputs.push((name.clone(), t, *n));
        }
        Ok(outputs)
    }

    /// Assignments read their sources as of the start of the run: a source slot that another
    /// assignment overwrites is copied aside first (a swap or a rotation of states works).
    fn stage_overwritten(&mut self, outputs: &[Output]) -> Result<Vec<Option<Tensor>>> {
        let r = self.r;
        let mut staged: Vec<Option<Tensor>> = Vec::with_capacity(r.p.assigns().len());
        for ((slot, n), &stage) in r.p.assigns().iter().zip(&r.plan.staged) {
            staged.push(if stage {
                let src = r.value(&self.made, outputs, *n, "assigned value")?;
                let origin = format!("old value of state '{slot}' in a run of program '{}'", r.p.name());
                self.fixups += 1;
                Some(r.copy(&mut self.enc, src, *n, origin)?)
            } else {
                None
            });
        }
        Ok(staged)
    }

    /// Copies each assigned value into its state slot (a fixup unless it is already there).
    fn assign(&mut self, outputs: &[Output], staged: &[Option<Tensor>]) -> Result<()> {
        let r = self.r;
        for ((slot, n), tmp) in r.p.assigns().iter().zip(staged) {
            let dst = r
                .state
                .and_then(|st| st.slot(slot))
                .ok_or_else(|| r.missing("state slot"))?;
            let src = match tmp {
                Some(t) => t,
                None => r.value(&self.made, outputs, *n, "assigned value")?,
            };
            if src.buffer()? != dst.buffer()? {
                self.enc
                    .copy_buffer_to_buffer(src.buffer()?, 0, dst.buffer()?, 0, dst.byte_length());
                self.fixups += 1;
            }
        }
        Ok(())
    }
}

/// The run's outputs join the tidy scopes, and the run is observed as one kernel of the profile.
fn observe(s: &SessionShared, p: &Program, inputs: &HashMap<&str, &Tensor>, outputs: &[(String, Tensor)]) {
    for (_, t) in outputs {
        s.upper.scopes.track(&t.core);
    }
    let in_shapes: Vec<&[usize]> = inputs.values().map(|t| t.shape()).collect();
    let outs: Vec<&Tensor> = outputs.iter().map(|(_, t)| t).collect();
    s.upper
        .scopes
        .observe(&s.ledger, &format!("run:{}", p.name()), &in_shapes, &outs);
}
