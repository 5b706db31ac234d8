//! Lazy eager fusion. A user-level elementwise op (unary, or binary other than a comparison, its
//! inputs of its output's dtype) does not record a kernel when it is called: its output's storage
//! is taken from the pool at once (so accounting is exact when the call returns, as for any op),
//! and what would compute it is kept as a *pending chain* — fused steps over leaf tensors, the
//! same [`Group`] a program's fusion makes. An input that is itself pending, at the output's
//! shape, is inlined (its steps join the chain): `x.mul(a).add(b).relu()` is one kernel that reads
//! `x`, `a` and `b` once, and its intermediates, disposed unread (as a `tidy` does), are never
//! written. A reduction of a pending tensor reads its chain as it reduces (`sum(chain(x))` reads
//! `x` once and writes only the sum).
//!
//! A pending tensor is computed (its kernel recorded into the session's batch) when anything needs
//! its contents: every read of a tensor's storage goes through `TensorCore::buffer`, which settles
//! it first — a readback, a non-elementwise op, a program run or a state copy; when one of its
//! leaves is disposed (a leaf counts its pending readers, and settles them before its storage goes
//! back to the pool); at `sync()`; at a session's `dispose()`; and in the browser when the calling
//! task yields, so device work is never held back past the task that asked for it. Settling needs
//! no submission lock: a pending tensor's storage is its own from its creation, and its leaves are
//! live until it has been recorded, so the batch order is the only order that matters.
//!
//! A chain holds at most [`MAX_EAGER_STEPS`] steps and [`MAX_LEAVES`] leaves; past that its pending
//! inputs are computed first and read as leaves.

mod siblings;

use std::sync::atomic::Ordering;
use std::sync::Mutex;

use super::{SessionShared, Tensor, TensorCore};
use crate::dtype::DType;
use crate::kernels::Operand;
use crate::ops::Op;
use crate::platform::{Shared, WeakShared};
use crate::program::fusion::{append_steps, chainable, Group, Ref, Step, MAX_EAGER_STEPS, MAX_LEAVES};

/// A leaf of a pending chain: a computed tensor, counting this reader while it is held.
pub(crate) struct LeafRef(pub(crate) Shared<TensorCore>);

impl LeafRef {
    fn new(core: &Shared<TensorCore>) -> LeafRef {
        core.dependents.fetch_add(1, Ordering::SeqCst);
        LeafRef(core.clone())
    }

    /// The leaf's storage as an operand (live while this reference is held; never pending).
    pub(crate) fn operand(&self) -> Operand<'_> {
        self.0.operand_unchecked()
    }
}

impl Clone for LeafRef {
    fn clone(&self) -> LeafRef {
        LeafRef::new(&self.0)
    }
}

impl Drop for LeafRef {
    fn drop(&mut self) {
        if self.0.dependents.fetch_sub(1, Ordering::SeqCst) == 1 && self.0.is_disposed() {
            self.0.release_storage(); // disposed while this reader held it
        }
    }
}

/// What computes a pending tensor.
#[derive(Clone)]
pub(crate) struct Chain {
    pub(crate) steps: Vec<Step>,
    pub(crate) leaves: Vec<LeafRef>,
    /// The words its [`Ref::Param`]s read (number operands: `x.mul(2)`'s 2).
    pub(crate) params: Vec<u32>,
    /// The pending tensors inlined into it, each with the step that is its value: one computed
    /// since (kept and read, or settled at `sync()`) is read back as a leaf instead ([`Chain::resolved`]).
    inlined: Vec<(WeakShared<TensorCore>, usize)>,
    /// Tensors nothing but pending chains holds (a composite's statistic): disposed when the
    /// last chain holding them is computed or dropped. After `leaves`, so dropped after them.
    owned: Vec<Shared<Tensor>>,
}

impl Chain {
    /// The chain as a fused group (its leaves in order), read by `consumer` when given.
    pub(crate) fn group(&self, consumer: Option<(Op, Vec<usize>)>) -> Group {
        Group {
            steps: self.steps.clone(),
            leaves: (0..self.leaves.len()).collect(),
            producer: None,
            consumer,
            params: self.params.clone(),
        }
    }

    /// The chain with every inlined tensor computed since read as a leaf, and the steps only
    /// those read dropped: settling tensors in creation order makes each one step over the last.
    pub(crate) fn resolved(&self) -> Chain {
        let computed: Vec<(usize, Shared<TensorCore>)> = self
            .inlined
            .iter()
            .filter_map(|(w, at)| Some((*at, w.upgrade()?)))
            .filter(|(_, c)| c.is_computed())
            .collect();
        if computed.is_empty() {
            return self.clone();
        }
        let root = self.steps.len() - 1;
        let as_leaf = |k: usize| computed.iter().find(|(at, _)| *at == k && k != root);
        // the steps the root needs, not looking past a computed tensor
        let mut needed = vec![false; self.steps.len()];
        needed[root] = true;
        for k in (0..self.steps.len()).rev() {
            if !needed[k] || as_leaf(k).is_some() {
                continue;
            }
            for r in &self.steps[k].args {
                if let Ref::Step(j) = *r {
                    needed[j] = true;
                }
            }
        }
        let mut out = Chain {
            steps: vec![],
            leaves: vec![],
            params: self.params.clone(),
            inlined: vec![],
            owned: self.owned.clone(),
        };
        let mut map: Vec<Option<Ref>> = vec![None; self.steps.len()];
        for k in 0..self.steps.len() {
            if !needed[k] {
                continue;
            }
            if let Some((_, core)) = as_leaf(k) {
                map[k] = Some(out.leaf(core));
                continue;
            }
            let args = self.steps[k]
                .args
                .iter()
                .map(|r| match *r {
                    Ref::Leaf(i) => out.leaf(&self.leaves[i].0),
                    Ref::Step(j) => map[j].expect("a needed step's operands come first"),
                    other => other,
                })
                .collect();
            out.steps.push(Step {
                op: self.steps[k].op.clone(),
                args,
            });
            map[k] = Some(Ref::Step(out.steps.len() - 1));
        }
        if out.leaves.len() > MAX_LEAVES {
            return self.clone(); // a leaf more than the chain binds: computed as it was built
        }
        for (w, at) in &self.inlined {
            if let Some(Ref::Step(k)) = map[*at] {
                out.inlined.push((w.clone(), k));
            }
        }
        out
    }

    /// `core` as a leaf of this chain (added once).
    fn leaf(&mut self, core: &Shared<TensorCore>) -> Ref {
        leaf_of(&mut self.leaves, core)
    }

    fn reads(&self, leaf: &TensorCore) -> bool {
        self.leaves
            .iter()
            .any(|l| std::ptr::eq(Shared::as_ptr(&l.0), leaf))
    }
}

/// `core` as one of `leaves` (added once).
fn leaf_of(leaves: &mut Vec<LeafRef>, core: &Shared<TensorCore>) -> Ref {
    let at = leaves.iter().position(|l| Shared::ptr_eq(&l.0, core));
    Ref::Leaf(at.unwrap_or_else(|| {
        leaves.push(LeafRef::new(core));
        leaves.len() - 1
    }))
}

/// `word` as one of `params` (added once).
fn param_of(params: &mut Vec<u32>, word: u32) -> Ref {
    Ref::Param(params.iter().position(|&w| w == word).unwrap_or_else(|| {
        params.push(word);
        params.len() - 1
    }))
}

/// A session's pending tensors, weakly (settled all at once, or those reading a leaf).
#[derive(Default)]
pub(crate) struct Deferred {
    list: Mutex<(Vec<WeakShared<TensorCore>>, usize)>,
}

impl Deferred {
    fn register(&self, core: &Shared<TensorCore>) {
        let mut g = self.list.lock().unwrap_or_else(|p| p.into_inner());
        let (list, prune_at) = &mut *g;
        list.push(Shared::downgrade(core));
        if list.len() > (*prune_at).max(256) {
            list.retain(|w| w.upgrade().is_some_and(|c| c.is_pending()));
            *prune_at = list.len() * 2;
        }
    }

    fn live(&self, take: bool) -> Vec<Shared<TensorCore>> {
        let mut g = self.list.lock().unwrap_or_else(|p| p.into_inner());
        let list = if take {
            std::mem::take(&mut g.0)
        } else {
            g.0.clone()
        };
        drop(g);
        list.iter()
            .filter_map(WeakShared::upgrade)
            .filter(|c| c.is_pending())
            .collect()
    }
}

/// Whether `op` on `args` (giving `dtype`) is deferred.
pub(crate) fn defers(op: &Op, args: &[&Tensor], dtype: DType) -> bool {
    chainable(op) && args.iter().all(|a| a.dtype() == dtype)
}

/// The pending chain computing `steps` (their `Ref::Leaf(k)` read `args[k]`, their
/// `Ref::Param(j)` the word `params[j]`) at `shape`, the pending args at that shape inlined;
/// `None` past the caps.
fn build(steps: &[Step], params: &[u32], args: &[&Tensor], shape: &[usize]) -> Option<Chain> {
    let mut chain = Chain {
        steps: vec![],
        leaves: vec![],
        params: vec![],
        inlined: vec![],
        owned: vec![],
    };
    let mut refs = vec![];
    for a in args {
        let ptr = Shared::as_ptr(&a.core);
        let seen = chain.inlined.iter().find(|(w, _)| std::ptr::eq(w.as_ptr(), ptr));
        if let Some(&(_, root)) = seen {
            refs.push(Ref::Step(root));
            continue;
        }
        if a.shape() == shape {
            let pending = a.core.chain.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(c) = pending.as_ref() {
                let c = c.resolved();
                let base = chain.steps.len();
                let (steps, leaves, words) = (&mut chain.steps, &mut chain.leaves, &mut chain.params);
                let root = append_steps(steps, &c.steps, |r| match r {
                    Ref::Leaf(k) => leaf_of(leaves, &c.leaves[k].0),
                    Ref::Param(j) => param_of(words, c.params[j]),
                    other => other,
                });
                chain
                    .inlined
                    .extend(c.inlined.iter().map(|(w, k)| (w.clone(), base + k)));
                chain.owned.extend(c.owned.iter().cloned());
                chain.inlined.push((Shared::downgrade(&a.core), root));
                refs.push(Ref::Step(root));
                continue;
            }
        }
        a.core.settle(); // read as a leaf: computed first
        refs.push(chain.leaf(&a.core));
    }
    let words = &mut chain.params;
    append_steps(&mut chain.steps, steps, |r| match r {
        Ref::Leaf(k) => refs[k],
        Ref::Param(j) => param_of(words, params[j]),
        other => other,
    });
    if chain.leaves.len() > MAX_LEAVES || chain.steps.len() > MAX_EAGER_STEPS {
        return None;
    }
    Some(chain)
}

/// Runs `steps` over `args` and `params` (see [`build`]) lazily: `out` (just allocated at the
/// inferred shape) becomes pending. Of `owned` (tensors nothing else will hold: a composite's
/// statistic), those it reads are held until it is computed.
pub(crate) fn defer(
    s: &Shared<SessionShared>,
    steps: &[Step],
    params: &[u32],
    args: &[&Tensor],
    out: &Tensor,
    owned: &[Shared<Tensor>],
) {
    let mut chain = build(steps, params, args, out.shape()).unwrap_or_else(|| {
        for a in args {
            a.core.settle();
        }
        build(steps, params, args, out.shape()).expect("a chain over computed tensors fits the caps")
    });
    let read: Vec<Shared<Tensor>> = owned.iter().filter(|t| chain.reads(&t.core)).cloned().collect();
    chain.owned.extend(read);
    out.core.set_chain(chain);
    s.upper.deferred.register(&out.core);
    #[cfg(web)]
    crate::runtime::on_yield(s);
}

/// `op` on its args as a one-step chain, for [`defer`].
pub(crate) fn one_step(op: &Op, arity: usize) -> [Step; 1] {
    [Step {
        op: op.clone(),
        args: (0..arity).map(Ref::Leaf).collect(),
    }]
}

/// Binary `op` on a tensor and a number (the word `params[0]`) as a one-step chain, for [`defer`].
pub(crate) fn scalar_step(op: &Op) -> [Step; 1] {
    [Step {
        op: op.clone(),
        args: vec![Ref::Leaf(0), Ref::Param(0)],
    }]
}

/// A copy of `t`'s pending chain (a reduction reads it as a prologue), if it is pending.
pub(crate) fn chain_of(t: &Tensor) -> Option<Chain> {
    if !t.core.is_pending() {
        return None;
    }
    let chain = t.core.chain.lock().unwrap_or_else(|p| p.into_inner());
    chain.as_ref().map(Chain::resolved)
}

/// Records `chain` into `core`'s storage (its commands join the session's batch).
pub(crate) fn record(core: &TensorCore, chain: &Chain) {
    let s = &core.session;
    if s.gpu.is_lost() {
        return; // nothing reaches a lost device (its reads fail `DEVICE_LOST`)
    }
    let leaves: Vec<Operand> = chain.leaves.iter().map(LeafRef::operand).collect();
    let out = core.operand_unchecked();
    let ctx = s.ctx();
    let mut enc = crate::commands::Commands::default();
    let root = &chain.steps[chain.steps.len() - 1];
    // one step on tensors alone: the op's own kernel (as if run at once)
    let plain: Option<Vec<Operand>> = match chain.steps.len() {
        1 => root
            .args
            .iter()
            .map(|r| match r {
                Ref::Leaf(k) => Some(leaves[*k]),
                _ => None,
            })
            .collect(),
        _ => None,
    };
    let recorded = match plain {
        Some(args) => crate::kernels::record(&ctx, &mut enc, &root.op, &args, out),
        None => crate::kernels::record_group(&ctx, &mut enc, &chain.group(None), &leaves, out),
    };
    // inferred when deferred: an elementwise step over live tensors always records
    debug_assert!(recorded.is_ok(), "{recorded:?}");
    if recorded.is_ok() {
        crate::runtime::commit(s, enc);
    }
}

/// Settles every pending tensor of `s` (siblings together: [`siblings`]).
pub(crate) fn settle_all(s: &SessionShared) {
    siblings::settle(s, &s.upper.deferred.live(true));
}

/// Settles the pending tensors of `s` that read `leaf` (before its storage goes).
pub(crate) fn settle_readers(s: &SessionShared, leaf: &TensorCore) {
    let readers: Vec<Shared<TensorCore>> = s
        .upper
        .deferred
        .live(false)
        .into_iter()
        .filter(|core| {
            core.chain
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
                .is_some_and(|c| c.reads(leaf))
        })
        .collect();
    siblings::settle(s, &readers);
}
