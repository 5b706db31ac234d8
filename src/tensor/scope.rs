//! `tidy`/`keep` scopes and `profile`, TensorFlow.js-style, per session.
//!
//! Every tensor a session creates joins its innermost open tidy scope. When the scope ends, each
//! tracked tensor that is still live is disposed, except those the scope's function returned (they
//! move to the enclosing scope, or become untracked at the outermost level) and those marked with
//! `keep` (never disposed by any scope). Scopes are per session, not per thread.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use super::{Tensor, TensorCore};
use crate::accounting::Ledger;
use crate::platform::{Shared, WeakShared};

/// The stack of open scopes of one session.
#[derive(Default)]
pub(crate) struct Scopes {
    stack: Mutex<Vec<Scope>>,
    profile: Mutex<Option<ProfileRun>>,
}

/// One open scope: the tensors created in it. Entries of tensors that were disposed or dropped are
/// compacted away whenever the list doubles, so a long `tidy` holds host memory only for the
/// tensors still live in it (amortised O(1) per tensor).
#[derive(Default)]
struct Scope {
    tracked: Vec<WeakShared<TensorCore>>,
    compact_at: usize,
}

impl Scope {
    const MIN_COMPACT: usize = 64;

    fn push(&mut self, t: WeakShared<TensorCore>) {
        self.tracked.push(t);
        if self.tracked.len() >= self.compact_at.max(Self::MIN_COMPACT) {
            self.tracked
                .retain(|w| w.upgrade().is_some_and(|t| !t.is_disposed()));
            self.tracked.shrink_to(self.tracked.len() * 2);
            self.compact_at = self.tracked.len() * 2;
        }
    }

    /// Entries held (live or not yet compacted).
    fn len(&self) -> usize {
        self.tracked.len()
    }
}

/// One kernel (eager op) observed while profiling.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KernelProfile {
    /// The op (`square`, `matmul`, `run:<program>` for an executable run).
    pub name: String,
    /// Bytes of storage the op's outputs added.
    pub bytes_added: u64,
    /// The session's live bytes right after the op.
    pub total_bytes_snapshot: u64,
    /// Tensors the op created.
    pub tensors_added: u64,
    /// The session's live tensors right after the op.
    pub total_tensors_snapshot: u64,
    /// Input shapes.
    pub input_shapes: Vec<Vec<usize>>,
    /// Output shapes.
    pub output_shapes: Vec<Vec<usize>>,
}

/// What `profile` reports (the JS layer adds `result`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileInfo {
    /// Live bytes after minus before (negative if the function freed more than it made).
    pub new_bytes: i64,
    /// Live tensors after minus before.
    pub new_tensors: i64,
    /// Highest live bytes of the session while the function ran (absolute).
    pub peak_bytes: u64,
    /// The eager ops and runs, in order.
    pub kernels: Vec<KernelProfile>,
}

pub(crate) struct ProfileRun {
    bytes: u64,
    tensors: u64,
    saved_peak: u64,
    kernels: Vec<KernelProfile>,
}

impl Scopes {
    pub(crate) fn track(&self, t: &Shared<TensorCore>) {
        let mut s = self.stack.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(top) = s.last_mut() {
            top.push(Shared::downgrade(t));
        }
    }

    /// Entries the innermost scope holds (for tests of its compaction).
    pub(crate) fn innermost_len(&self) -> usize {
        let s = self.stack.lock().unwrap_or_else(|p| p.into_inner());
        s.last().map_or(0, Scope::len)
    }

    /// Opens a scope.
    pub(crate) fn begin(&self) {
        self.stack
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Scope::default());
    }

    /// Closes the innermost scope, disposing what it tracked except `returned` ids and kept tensors.
    pub(crate) fn end(&self, returned: &HashSet<u64>) {
        let (scope, has_parent) = {
            let mut s = self.stack.lock().unwrap_or_else(|p| p.into_inner());
            let scope = s.pop().unwrap_or_default();
            (scope.tracked, !s.is_empty())
        };
        let mut survivors = Vec::new();
        let mut computed = Vec::new();
        for weak in scope {
            let Some(t) = weak.upgrade() else { continue };
            if t.is_disposed() || t.kept.load(Ordering::SeqCst) {
                continue;
            }
            if returned.contains(&t.id) {
                survivors.push(weak);
            } else if t.is_pending() {
                t.dispose(); // unread intermediates first: never computed
            } else {
                computed.push(t);
            }
        }
        // then the computed ones: a pending reader left is one that is returned or kept
        for t in computed {
            t.dispose();
        }
        if has_parent {
            let mut s = self.stack.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(top) = s.last_mut() {
                for w in survivors {
                    top.push(w);
                }
            }
        }
    }

    /// Starts profiling: the session's peak is reset to its live bytes for the duration.
    pub(crate) fn begin_profile(&self, ledger: &Ledger) -> crate::Result<()> {
        let mut p = self.profile.lock().unwrap_or_else(|p| p.into_inner());
        if p.is_some() {
            return Err(crate::Error::InvalidArgument(
                "profile() calls cannot nest".into(),
            ));
        }
        let s = ledger.snapshot();
        ledger.peak_bytes.store(s.live_bytes, Ordering::Relaxed);
        *p = Some(ProfileRun {
            bytes: s.live_bytes,
            tensors: s.live_tensors,
            saved_peak: s.peak_bytes,
            kernels: vec![],
        });
        Ok(())
    }

    /// Ends profiling and restores the session's peak (the larger of before and during).
    pub(crate) fn end_profile(&self, ledger: &Ledger) -> ProfileInfo {
        let run = self.profile.lock().unwrap_or_else(|p| p.into_inner()).take();
        let run = run.unwrap_or(ProfileRun {
            bytes: 0,
            tensors: 0,
            saved_peak: 0,
            kernels: vec![],
        });
        let s = ledger.snapshot();
        ledger.peak_bytes.fetch_max(run.saved_peak, Ordering::Relaxed);
        ProfileInfo {
            new_bytes: s.live_bytes as i64 - run.bytes as i64,
            new_tensors: s.live_tensors as i64 - run.tensors as i64,
            peak_bytes: s.peak_bytes,
            kernels: run.kernels,
        }
    }

    /// Records a kernel if profiling.
    pub(crate) fn observe(&self, ledger: &Ledger, name: &str, inputs: &[&[usize]], outputs: &[&Tensor]) {
        let mut p = self.profile.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(run) = p.as_mut() {
            let s = ledger.snapshot();
            run.kernels.push(KernelProfile {
                name: name.to_string(),
                bytes_added: outputs.iter().map(|t| t.byte_length()).sum(),
                total_bytes_snapshot: s.live_bytes,
                tensors_added: outputs.len() as u64,
                total_tensors_snapshot: s.live_tensors,
                input_shapes: inputs.iter().map(|s| s.to_vec()).collect(),
                output_shapes: outputs.iter().map(|t| t.shape().to_vec()).collect(),
            });
        }
    }
}

/// Values whose tensors a `tidy` returns (and so must not dispose).
pub trait Returned {
    /// Ids of the tensors in this value.
    fn tensor_ids(&self, out: &mut HashSet<u64>);
}

impl Returned for Tensor {
    fn tensor_ids(&self, out: &mut HashSet<u64>) {
        out.insert(self.id());
    }
}
impl Returned for () {
    fn tensor_ids(&self, _: &mut HashSet<u64>) {}
}
impl<T: Returned> Returned for Vec<T> {
    fn tensor_ids(&self, out: &mut HashSet<u64>) {
        self.iter().for_each(|t| t.tensor_ids(out));
    }
}
impl<T: Returned> Returned for Option<T> {
    fn tensor_ids(&self, out: &mut HashSet<u64>) {
        if let Some(t) = self {
            t.tensor_ids(out);
        }
    }
}
impl<T: Returned, E> Returned for Result<T, E> {
    fn tensor_ids(&self, out: &mut HashSet<u64>) {
        if let Ok(t) = self {
            t.tensor_ids(out);
        }
    }
}
impl<A: Returned, B: Returned> Returned for (A, B) {
    fn tensor_ids(&self, out: &mut HashSet<u64>) {
        self.0.tensor_ids(out);
        self.1.tensor_ids(out);
    }
}
