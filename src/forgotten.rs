//! Forgotten handles: tensors, executables and execution states whose JS handle the garbage
//! collector took without `dispose()`. Policy lives here, not in the `js/` layer: by default such
//! storage stays allocated and accounted (reported as forgotten, so figures never depend on GC
//! timing) until [`release_forgotten`](crate::telemetry::release_forgotten) or the session's
//! `dispose()`; with `releaseOnCollect` it is released at collection.
//!
//! A forgotten object keeps its session alive (it holds the session's shared state), so a session
//! whose own handle was collected lives on while anything of it is forgotten; releasing breaks
//! that link.

use std::sync::Mutex;

/// One collected handle's object (a tensor, an executable, an execution state), kept so its storage
/// stays accounted; dropping it releases that storage.
pub(crate) trait Kept: crate::platform::Threaded {
    /// Bytes of live storage it holds.
    fn bytes(&self) -> u64;
}

/// The forgotten objects of one session.
#[derive(Default)]
pub(crate) struct ForgottenStore {
    items: Mutex<Vec<Box<dyn Kept>>>,
}

// SAFETY: only on wasm32-unknown-unknown (built without the `atomics` feature), where there is
// exactly one thread: nothing can be sent to or shared with another thread. The store holds `Rc`-
// based handles there and must sit in the process-wide telemetry registry beside the native build.
#[cfg(web)]
unsafe impl Send for ForgottenStore {}
// SAFETY: see the `Send` impl above.
#[cfg(web)]
unsafe impl Sync for ForgottenStore {}

impl ForgottenStore {
    /// Keeps `f` (its storage stays accounted).
    pub(crate) fn keep(&self, f: Box<dyn Kept>) {
        self.items.lock().unwrap_or_else(|p| p.into_inner()).push(f);
    }

    /// Releases everything kept: returns `(handles, bytes)` released.
    pub(crate) fn release(&self) -> (u64, u64) {
        let items = std::mem::take(&mut *self.items.lock().unwrap_or_else(|p| p.into_inner()));
        let bytes = items.iter().map(|k| k.bytes()).sum();
        let handles = items.len() as u64;
        drop(items); // outside the lock: dropping releases storage to the pool
        (handles, bytes)
    }
}
