//! `ExecutionState`: the state slots of one executable, owned by the session. Storage is accounted
//! from creation to `dispose()`, attributed to `state '<slot>' of program '<name>'`.

use std::sync::atomic::{AtomicBool, Ordering};

use super::ExecutableShared;
use crate::error::{Error, Result};
use crate::platform::Shared;
use crate::tensor::{SessionShared, Tensor};

/// State slots, updated in place by a program's `assign`s.
pub struct ExecutionState {
    session: Shared<SessionShared>,
    executable: u64,
    program: String,
    slots: Vec<(String, Tensor)>,
    disposed: AtomicBool,
}

impl ExecutionState {
    pub(crate) fn create(ex: &Shared<ExecutableShared>, init: &[(&str, &Tensor)]) -> Result<ExecutionState> {
        let s = &ex.session;
        s.check_open()?;
        let p = &ex.program;
        let names: Vec<&str> = p.states().map(|(_, n, _, _)| n).collect();
        super::bind_named(s, p.name(), "state", &names, init)?;
        // All or nothing: every init is checked and the slots' room reserved before the first exists.
        let mut sizes = Vec::new();
        for (_, name, dtype, shape) in p.states() {
            if let Some((_, t)) = init.iter().find(|(n, _)| *n == name) {
                if t.dtype() != dtype {
                    return Err(Error::DtypeMismatch(format!(
                        "state '{name}' is {dtype}, got {}",
                        t.dtype()
                    )));
                }
                if t.shape() != shape {
                    return Err(Error::ShapeMismatch(format!(
                        "state '{name}' has shape {shape:?}, got {:?}",
                        t.shape()
                    )));
                }
            }
            sizes.push(crate::shape::byte_length(shape)?);
        }
        let _submission = s.submission();
        let _admitted = s.admit(&sizes)?;
        let mut slots = Vec::new();
        let mut enc = crate::commands::Commands::default();
        for (_, name, dtype, shape) in p.states() {
            let src = init.iter().find(|(n, _)| *n == name).map(|(_, t)| *t);
            let origin = format!("state '{name}' of program '{}'", p.name());
            let slot = Tensor::allocate_untracked(s, shape.to_vec(), dtype, origin)?;
            match src {
                Some(t) => enc.copy_buffer_to_buffer(t.buffer()?, 0, slot.buffer()?, 0, slot.byte_length()),
                None => enc.clear_buffer(slot.buffer()?, 0, Some(slot.byte_length())),
            }
            slots.push((name.to_string(), slot));
        }
        crate::runtime::commit(s, enc);
        Ok(ExecutionState {
            session: s.clone(),
            executable: ex.id,
            program: p.name().to_string(),
            slots,
            disposed: AtomicBool::new(false),
        })
    }

    /// Whether `dispose()` has been called.
    pub fn is_disposed(&self) -> bool {
        self.disposed.load(Ordering::SeqCst)
    }

    fn check_live(&self) -> Result<()> {
        if self.is_disposed() {
            return Err(Error::Disposed(format!(
                "execution state of program '{}'",
                self.program
            )));
        }
        Ok(())
    }

    /// `DISPOSED`, or `INVALID_ARGUMENT` if this state was made by another executable.
    pub(crate) fn check_for(&self, ex: &ExecutableShared) -> Result<()> {
        self.check_live()?;
        if self.executable != ex.id {
            return Err(Error::InvalidArgument(format!(
                "this ExecutionState belongs to another executable (of program '{}'); use createState() of '{}'",
                self.program,
                ex.program.name()
            )));
        }
        Ok(())
    }

    pub(crate) fn slot(&self, name: &str) -> Option<&Tensor> {
        self.slots.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }

    /// As [`Tensor::forget`]: the handle was collected without `dispose()`; the slots stay
    /// until `releaseForgotten()` or the session's `dispose()`.
    pub fn forget(self) {
        if self.is_disposed() {
            return;
        }
        let ids: Vec<u64> = self.slots.iter().map(|(_, t)| t.id()).collect();
        let s = self.session.clone();
        s.forget(&ids, Box::new(self));
    }

    /// Bytes of all slots.
    pub fn byte_length(&self) -> u64 {
        self.slots.iter().map(|(_, t)| t.byte_length()).sum()
    }

    /// Slot names.
    pub fn names(&self) -> Vec<&str> {
        self.slots.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// A copy of slot `name`, owned by the session.
    pub fn get(&self, name: &str) -> Result<Tensor> {
        self.check_live()?;
        let Some((_, t)) = self.slots.iter().find(|(n, _)| n == name) else {
            return Err(Error::InvalidArgument(format!(
                "no state '{name}' (the states are {:?})",
                self.names()
            )));
        };
        let s = &t.core.session;
        let _submission = s.submission();
        let copy = Tensor::allocate(
            s,
            t.shape().to_vec(),
            t.dtype(),
            format!("copy of state '{name}'"),
        )?;
        let mut enc = crate::commands::Commands::default();
        enc.copy_buffer_to_buffer(t.buffer()?, 0, copy.buffer()?, 0, copy.byte_length());
        crate::runtime::commit(s, enc);
        Ok(copy)
    }

    /// Releases every slot. Idempotent.
    pub fn dispose(&self) {
        if !self.disposed.swap(true, Ordering::SeqCst) {
            for (_, t) in &self.slots {
                t.dispose();
            }
        }
    }
}

impl Drop for ExecutionState {
    fn drop(&mut self) {
        self.dispose();
    }
}

impl crate::forgotten::Kept for ExecutionState {
    fn bytes(&self) -> u64 {
        if self.is_disposed() {
            0
        } else {
            self.byte_length()
        }
    }
}
