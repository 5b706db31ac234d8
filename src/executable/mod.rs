//! `Executable`: a validated program compiled for one session. Each new set of concrete input
//! shapes compiles a specialisation (shapes of every node, last uses, memory plan), cached inside
//! the executable and counted in `compute.execution/compiles` and `executable_cache_entries`.
//!
//! A run records every node into one command encoder. Intermediates are taken from the pool when
//! their node runs and given back right after their last use, so the run's peak is the largest
//! set of simultaneously live intermediates (plus the outputs made so far), and nothing
//! intermediate is live once `run` returns. Outputs are new tensors owned by the session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::accounting::Exec;
use crate::error::{Error, Result};
use crate::platform::Shared;
pub use crate::program::plan::MemoryPlan;
use crate::program::plan::{concrete_inputs, specialise, Plan};
use crate::program::{Node, NodeId, Program};
use crate::tensor::{SessionShared, Tensor};

mod execute;
pub mod state;

pub use state::ExecutionState;

static NEXT_EXECUTABLE: AtomicU64 = AtomicU64::new(1);

pub(crate) struct ExecutableShared {
    pub(crate) id: u64,
    pub(crate) session: Shared<SessionShared>,
    pub(crate) program: Program,
    constants: Mutex<HashMap<NodeId, Tensor>>,
    plans: Mutex<lru::LruCache<Vec<Vec<usize>>, Shared<Plan>>>,
    disposed: AtomicBool,
}

/// Specialisations an executable keeps (least recently used evicted first, counted in
/// `compute.execution/executable_cache_evictions`): a model fed many shapes stays bounded.
pub const MAX_SPECIALISATIONS: usize = 64;

/// A compiled program. Runs return tensors owned by the session.
pub struct Executable {
    pub(crate) inner: Shared<ExecutableShared>,
}

impl Executable {
    /// Validates and compiles `program` for `session` (uploads its constants). All or nothing:
    /// the constants' values and their room in the pool are checked before the first is made.
    pub(crate) fn compile(session: &Shared<SessionShared>, program: &Program) -> Result<Executable> {
        session.check_open()?;
        program.validate()?;
        let mut uploads = Vec::new();
        for (i, node) in program.nodes().iter().enumerate() {
            if let Node::Constant { data, shape, dtype } = node {
                let words = crate::host::host_vec(data.len() as u64, |_| 0u32)?;
                uploads.push((i, shape, *dtype, data, words));
            }
        }
        for (_, _, dtype, data, words) in &mut uploads {
            for (w, &v) in words.iter_mut().zip(data.iter()) {
                *w = dtype.word_from_f64(v)?;
            }
        }
        let _submission = session.submission();
        let sizes = uploads
            .iter()
            .map(|(_, shape, ..)| crate::shape::byte_length(shape))
            .collect::<Result<Vec<u64>>>()?;
        let _admitted = session.admit(&sizes)?;
        let mut constants = HashMap::new();
        for (i, shape, dtype, _, words) in uploads {
            let origin = format!("constant of program '{}'", program.name());
            let t = Tensor::allocate_untracked(session, shape.clone(), dtype, origin)?;
            crate::runtime::write(session, t.buffer()?, bytemuck::cast_slice(&words));
            session.ledger.count(Exec::Upload(t.byte_length()));
            constants.insert(i, t);
        }
        let capacity =
            std::num::NonZeroUsize::new(MAX_SPECIALISATIONS).unwrap_or(std::num::NonZeroUsize::MIN);
        Ok(Executable {
            inner: Shared::new(ExecutableShared {
                id: NEXT_EXECUTABLE.fetch_add(1, Ordering::Relaxed),
                session: session.clone(),
                program: program.clone(),
                constants: Mutex::new(constants),
                plans: Mutex::new(lru::LruCache::new(capacity)),
                disposed: AtomicBool::new(false),
            }),
        })
    }

    /// The program's name.
    pub fn name(&self) -> &str {
        self.inner.program.name()
    }

    /// The program this was compiled from.
    pub fn program(&self) -> &Program {
        &self.inner.program
    }

    /// Specialisations cached so far.
    pub fn cache_entries(&self) -> usize {
        self.inner.plans.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Bytes of the constants it holds (until disposed).
    pub fn constant_bytes(&self) -> u64 {
        let c = self.inner.constants.lock().unwrap_or_else(|p| p.into_inner());
        c.values().map(|t| t.byte_length()).sum()
    }

    /// As [`Tensor::forget`]: the handle was collected without `dispose()`; its constants and
    /// cached specialisations stay until `releaseForgotten()` or the session's `dispose()`.
    pub fn forget(self) {
        if self.is_disposed() {
            return;
        }
        let ids: Vec<u64> = {
            let c = self.inner.constants.lock().unwrap_or_else(|p| p.into_inner());
            c.values().map(|t| t.id()).collect()
        };
        let s = self.inner.session.clone();
        s.forget(&ids, Box::new(self));
    }

    /// Whether `dispose()` has been called.
    pub fn is_disposed(&self) -> bool {
        self.inner.disposed.load(Ordering::SeqCst)
    }

    fn check_live(&self) -> Result<()> {
        if self.is_disposed() {
            return Err(Error::Disposed(format!("executable '{}'", self.name())));
        }
        Ok(())
    }

    /// Releases the constants and the cached specialisations. Idempotent. States created from it
    /// keep their storage until they are disposed.
    pub fn dispose(&self) {
        if self.inner.disposed.swap(true, Ordering::SeqCst) {
            return;
        }
        self.inner
            .constants
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        let mut plans = self.inner.plans.lock().unwrap_or_else(|p| p.into_inner());
        let n = plans.len();
        plans.clear();
        self.inner.session.ledger.count(Exec::CacheEntries(-(n as i64)));
    }

    /// A new state: every slot zero-filled, or copied from `init` (by slot name).
    pub fn create_state(&self, init: &[(&str, &Tensor)]) -> Result<ExecutionState> {
        self.check_live()?;
        ExecutionState::create(&self.inner, init)
    }

    /// The specialisation for these input shapes: cached, or computed (not yet cached: see
    /// [`Executable::remember`]) with `false`. Looking changes nothing (not even the cache's
    /// recency: a run that then fails, or a `memoryPlan` query, must not keep an entry alive).
    fn plan(&self, inputs: &[Vec<usize>]) -> Result<(Shared<Plan>, bool)> {
        if let Some(p) = self
            .inner
            .plans
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .peek(inputs)
        {
            return Ok((p.clone(), true));
        }
        Ok((Shared::new(specialise(&self.inner.program, inputs)?), false))
    }

    /// Caches a specialisation after its first successful use, evicting the least recently used
    /// beyond [`MAX_SPECIALISATIONS`]; counts the compile.
    fn remember(&self, inputs: Vec<Vec<usize>>, plan: Shared<Plan>) {
        let mut plans = self.inner.plans.lock().unwrap_or_else(|p| p.into_inner());
        // checked under the lock: `dispose` sets the flag before it takes the lock to clear
        if self.is_disposed() || plans.contains(&inputs) {
            return; // disposed meanwhile, or another thread's run of the same shapes cached it first
        }
        let ledger = &self.inner.session.ledger;
        ledger.count(Exec::Compile);
        match plans.push(inputs, plan) {
            Some(_) => ledger.count(Exec::CacheEviction),
            None => ledger.count(Exec::CacheEntries(1)),
        }
    }

    /// What a run with these input shapes holds (only dynamic inputs need a shape).
    pub fn memory_plan(&self, input_shapes: &HashMap<String, Vec<usize>>) -> Result<MemoryPlan> {
        self.check_live()?;
        for k in input_shapes.keys() {
            if !self.inner.program.inputs().any(|(_, n, _, _)| n == k) {
                return Err(Error::InvalidArgument(format!(
                    "memoryPlan: the program has no input '{k}'"
                )));
            }
        }
        let inputs = concrete_inputs(&self.inner.program, &|n| input_shapes.get(n).cloned())?;
        Ok(self.plan(&inputs)?.0.memory)
    }

    /// Runs the program. `inputs` are `(name, tensor)`; `state` is required when the program has
    /// state slots. Returns the outputs `(name, tensor)` in declaration order.
    pub fn run(
        &self,
        inputs: &[(&str, &Tensor)],
        state: Option<&ExecutionState>,
    ) -> Result<Vec<(String, Tensor)>> {
        let start = crate::platform::now_ms();
        self.check_live()?;
        let ex = &self.inner;
        let s = &ex.session;
        s.check_open()?;
        let p = &ex.program;
        let by_name = self.bind_inputs(inputs)?;
        let state = self.state_for_run(state)?;
        let shapes = concrete_inputs(p, &|n| by_name.get(n).map(|t| t.shape().to_vec()))?;
        let (plan, cached) = self.plan(&shapes)?;
        let outputs = self.execute(&plan, &by_name, state)?;
        if cached {
            // used by a run that succeeded: the most recently used now
            let mut plans = self.inner.plans.lock().unwrap_or_else(|p| p.into_inner());
            plans.promote(&shapes);
        } else {
            self.remember(shapes, plan);
        }
        s.ledger.count(Exec::Execution);
        s.ledger.count(Exec::RunTime(
            ((crate::platform::now_ms() - start) * 1000.0).max(0.0) as u64,
        ));
        if crate::trace::enabled() {
            let args = serde_json::json!({ "program": p.name(), "inputs": shapes_of(&by_name) });
            crate::trace::span(
                s.id,
                &s.label,
                &format!("run:{}", p.name()),
                "affon.run",
                start,
                args,
            );
        }
        Ok(outputs)
    }

    /// The run's inputs by name: each one the program declares, given once, live, of this session
    /// and of its declared dtype.
    fn bind_inputs<'t>(&self, inputs: &[(&'t str, &'t Tensor)]) -> Result<HashMap<&'t str, &'t Tensor>> {
        let s = &self.inner.session;
        let p = &self.inner.program;
        let declared: Vec<&str> = p.inputs().map(|(_, n, _, _)| n).collect();
        bind_named(s, p.name(), "input", &declared, inputs)?;
        let mut by_name: HashMap<&str, &Tensor> = HashMap::new();
        for (_, name, dtype, _) in p.inputs() {
            let (key, t) = inputs.iter().find(|(n, _)| *n == name).copied().ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "missing input '{name}' (the program's inputs are {declared:?})"
                ))
            })?;
            if t.dtype() != dtype {
                return Err(Error::DtypeMismatch(format!(
                    "input '{name}' must be {dtype}, got {}",
                    t.dtype()
                )));
            }
            by_name.insert(key, t);
        }
        Ok(by_name)
    }

    /// The state a run uses: one from this executable's `createState()` exactly when the program
    /// has state slots.
    fn state_for_run<'s>(&self, state: Option<&'s ExecutionState>) -> Result<Option<&'s ExecutionState>> {
        let p = &self.inner.program;
        let has_state = p.states().next().is_some();
        match (has_state, state) {
            (true, None) => Err(Error::InvalidArgument(format!(
                "program '{}' has state: pass an ExecutionState from createState()",
                p.name()
            ))),
            (false, Some(_)) => Err(Error::InvalidArgument(format!(
                "program '{}' has no state slots",
                p.name()
            ))),
            (true, Some(st)) => {
                st.check_for(&self.inner)?;
                Ok(Some(st))
            }
            (false, None) => Ok(None),
        }
    }
}

fn shapes_of(inputs: &HashMap<&str, &Tensor>) -> serde_json::Value {
    inputs
        .iter()
        .map(|(n, t)| (n.to_string(), serde_json::json!(t.shape())))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

impl Drop for Executable {
    fn drop(&mut self) {
        self.dispose();
    }
}

/// Checks tensors given by name to a program — a run's inputs, a new state's initial values: each
/// names one of `declared` (the program's `kind`s), once, and is live and of session `s`.
fn bind_named(
    s: &Shared<SessionShared>,
    program: &str,
    kind: &str,
    declared: &[&str],
    given: &[(&str, &Tensor)],
) -> Result<()> {
    for (i, (name, t)) in given.iter().enumerate() {
        if !declared.contains(name) {
            return Err(Error::InvalidArgument(format!(
                "program '{program}' has no {kind} '{name}' (its {kind}s are {declared:?})"
            )));
        }
        if given[..i].iter().any(|(n, _)| n == name) {
            return Err(Error::InvalidArgument(format!("{kind} '{name}' is given twice")));
        }
        t.check_live()?;
        if !t.belongs_to(s) {
            return Err(Error::InvalidArgument(format!(
                "{kind} '{name}': {t:?} belongs to session '{}', not '{}'",
                t.core.session.label, s.label
            )));
        }
    }
    Ok(())
}

impl crate::forgotten::Kept for Executable {
    fn bytes(&self) -> u64 {
        self.constant_bytes()
    }
}
