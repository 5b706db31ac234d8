//! The runtime a session's tensors, kernels and programs share (`Runtime`): the device, the pool and
//! its ledger, the kernels, owners and the pending batch, and what makes storage, uploads and commits
//! work in it. It knows nothing of tensors: what the tensor layer keeps per session (tidy scopes,
//! pending chains) is its type parameter `T` ([`Upper`]), stored here and reached through it.
//! `Session` (`session/`) is the public facade over it.

mod idle;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::accounting::{Exec, Ledger};
use crate::device::{DeviceStorage, Gpu};
use crate::error::{Error, Result};
use crate::forgotten::{ForgottenStore, Kept};
use crate::kernels::{Ctx, KernelCache};
use crate::platform::Shared;
use crate::pool::{Lease, Pool};
use crate::telemetry::owners::OwnerTable;
pub(crate) use idle::{arm, Idle};

pub(crate) static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// What the layer above keeps per session inside its runtime: the runtime only stores it, and in
/// the browser asks it to settle pending work before it submits a batch at the end of a task.
pub(crate) trait Upper: Sized + crate::platform::Threaded + 'static {
    /// Records every pending kernel of `rt` into its batch (called in the browser only).
    #[cfg_attr(native, allow(dead_code))]
    fn settle_pending(rt: &Runtime<Self>);
}

/// What tensors, kernels and programs share with their session.
pub(crate) struct Runtime<T> {
    pub(crate) id: u64,
    pub(crate) label: String,
    pub(crate) gpu: Gpu,
    pub(crate) ledger: Arc<Ledger>,
    pub(crate) kernels: KernelCache,
    pub(crate) pool: Mutex<Pool<DeviceStorage>>,
    pub(crate) disposed: Arc<AtomicBool>,
    pub(crate) drained_after_loss: AtomicBool,
    /// Held from a command's first buffer acquisition to its queue submission. A program run gives
    /// intermediates back to the pool before it submits (so later nodes reuse them); without this,
    /// another thread could take such a buffer and submit work writing it before the run's reads.
    pub(crate) submission: Mutex<()>,
    /// A browser task is queued to submit the pending batch.
    #[cfg(web)]
    pub(crate) flush_scheduled: AtomicBool,
    pub(crate) capture_stacks: bool,
    pub(crate) owners: Arc<OwnerTable>,
    pub(crate) info: Arc<crate::telemetry::SessionInfo>,
    /// Objects whose JS handle was collected without `dispose()` (see `forgotten.rs`).
    pub(crate) forgotten: Arc<ForgottenStore>,
    /// Run the kernels' CPU-adapter forms (see `session::Kernels`).
    pub(crate) cpu_kernels: bool,
    /// `Ctx::texture_cap`: set at creation (`kernels::texture_cap`).
    pub(crate) texture_cap: u64,
    /// `Ctx::min_workgroups`: set at creation (`kernels::min_workgroups`).
    pub(crate) min_workgroups: usize,
    /// This runtime, weakly (for the idle timer).
    pub(crate) me: crate::platform::WeakShared<Runtime<T>>,
    /// Activity and the idle timer (see `idle.rs`).
    pub(crate) idle: Idle,
    /// What the tensor layer keeps per session (`tensor::TensorState`).
    pub(crate) upper: T,
}

impl<T> Drop for Runtime<T> {
    /// The last handle went (a forgotten session whose tensors are all gone): the kept staging
    /// buffers go too, counted out (the pool counts out its own when it drops).
    fn drop(&mut self) {
        self.gpu.staging.drain(&self.ledger);
        self.gpu.release();
    }
}

impl<T> Runtime<T> {
    pub(crate) fn pool(&self) -> MutexGuard<'_, Pool<DeviceStorage>> {
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `SESSION_DISPOSED` or `DEVICE_LOST` if no new work may start.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.disposed.load(Ordering::SeqCst) {
            return Err(Error::SessionDisposed(format!("'{}'", self.label)));
        }
        if self.gpu.is_lost() {
            self.drain_after_loss();
        }
        self.gpu.check()
    }

    /// After a device loss the cache is useless: destroy it and stop caching, so disposing the
    /// remaining tensors brings the accounting back to zero.
    pub(crate) fn drain_after_loss(&self) {
        if !self.drained_after_loss.swap(true, Ordering::SeqCst) {
            self.pool().drain();
            self.gpu.staging.drain(&self.ledger);
            self.kernels.release();
        }
    }

    /// Serialises acquire → record → submit sequences of this session (see `submission`).
    pub(crate) fn submission(&self) -> MutexGuard<'_, ()> {
        self.submission.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Submits the pending batch (counted in `compute.execution/submits`).
    pub(crate) fn flush(&self) {
        self.ledger.count(Exec::Submits(self.gpu.flush() as u64));
    }

    /// What kernels need to record work.
    pub(crate) fn ctx(&self) -> Ctx<'_> {
        Ctx {
            device: &self.gpu.device,
            cache: &self.kernels,
            cpu_adapter: self.cpu_kernels,
            texture_cap: self.texture_cap,
            min_workgroups: self.min_workgroups,
            subgroup_lanes: self.gpu.identity.subgroup_size,
            workgroup: self.gpu.workgroup,
            scratch: None,
            origin: crate::kernels::Origin::Unnamed,
        }
    }

    /// A handle of this session was collected without `dispose()`: its storage is marked forgotten
    /// and kept (accounted) until `releaseForgotten()` or the session's `dispose()`, or released
    /// now when the session was created with `releaseOnCollect`.
    pub(crate) fn forget(&self, ids: &[u64], f: Box<dyn Kept>) {
        for &id in ids {
            self.owners.forget(id);
        }
        if !self.info.release_on_collect {
            self.forgotten.keep(f);
        }
    }

    pub(crate) fn release(&self, id: u64, lease: Lease<wgpu::Buffer>)
    where
        T: Upper,
    {
        if self.gpu.is_lost() {
            self.drain_after_loss();
        }
        self.owners.remove(id);
        self.pool().release(lease);
        self.idle.touch();
        arm(self);
    }

    /// The idle timer found the session quiet for its idle time: the pool's cache and the kept
    /// staging buffers go back to the device. Returns the bytes released, or `None` (nothing
    /// changed) when a call turned out to be under way.
    pub(crate) fn trim_idle(&self) -> Option<u64> {
        // as an acquire: never between a run's release of an intermediate and its submission
        let _submission = self.submission();
        if !self.idle.still_quiet() {
            return None;
        }
        self.idle.disarm(); // first: a release during the trim arms a fresh timer
        let pool = self.pool().trim_idle();
        Some(pool + self.gpu.staging.clear(&self.ledger))
    }

    /// Whether `Session::dispose` has run.
    pub(crate) fn is_disposed(&self) -> bool {
        self.disposed.load(Ordering::SeqCst)
    }

    /// Takes storage from the pool and records its owner; on `OUT_OF_MEMORY` the error carries the
    /// largest owners and the pool state.
    pub(crate) fn acquire(
        &self,
        id: u64,
        bytes: u64,
        at_least: u64,
        origin: &str,
    ) -> Result<Lease<wgpu::Buffer>> {
        self.idle.touch();
        let result = self.pool().acquire_at_least(bytes, at_least); // the guard is dropped here: forensics lock it again
        let lease = result.map_err(|e| self.with_forensics(e))?;
        let stack = if self.capture_stacks {
            crate::platform::capture_stack()
        } else {
            None
        };
        self.owners.add(id, origin, bytes, stack);
        Ok(lease)
    }

    /// Checks, changing nothing, that storages of these byte lengths could all be live at once
    /// (device limits, the pool bound after evicting the cache). Calls that acquire several
    /// buffers, or build host data first, check here before they reserve anything.
    /// The call holds the returned guard while it acquires them: until it drops, best fit keeps to
    /// the room the check left (`Pool::admit`).
    pub(crate) fn admit(&self, byte_lengths: &[u64]) -> Result<Admitted<'_, T>> {
        let mut pool = self.pool();
        let rounded: Vec<u64> = byte_lengths.iter().map(|&b| pool.rounded(b)).collect();
        let total = rounded.iter().fold(0u64, |a, &b| a.saturating_add(b));
        let largest = rounded.iter().copied().max().unwrap_or(0);
        let r = pool.admit(total, largest);
        drop(pool);
        let before = r.map_err(|e| self.with_forensics(e))?;
        Ok(Admitted { shared: self, before })
    }

    /// [`Runtime::admit`] for a peak already rounded by the pool (a run's plan).
    pub(crate) fn admit_rounded(&self, total: u64, largest: u64) -> Result<Admitted<'_, T>> {
        let r = self.pool().admit(total, largest);
        let before = r.map_err(|e| self.with_forensics(e))?;
        Ok(Admitted { shared: self, before })
    }

    /// Adds the largest owners and the pool state to an `OUT_OF_MEMORY` error.
    fn with_forensics(&self, e: Error) -> Error {
        let Error::OutOfMemory {
            requested,
            live_bytes,
            pool_bytes,
            bound,
            detail,
            ..
        } = e
        else {
            return e;
        };
        let mut groups = std::collections::BTreeMap::new();
        self.owners.group_into(&mut groups);
        let mut owners = crate::telemetry::owners::sorted(groups);
        owners.truncate(5);
        let pool = self.pool().usage();
        let forensics = crate::error::Forensics { owners, pool, bound };
        Error::OutOfMemory {
            requested,
            live_bytes,
            pool_bytes,
            bound,
            detail,
            forensics: Some(Box::new(forensics)),
        }
    }
}

/// Appends a completed call's commands to the session's batch (counting its dispatches), and
/// submits the batch when it is full; in the browser a batch left pending is submitted as soon as
/// the calling task yields, so the device never idles waiting for a readback.
pub(crate) fn commit<T: Upper>(s: &Shared<Runtime<T>>, c: crate::commands::Commands) {
    s.idle.touch();
    for _ in 0..c.dispatches() {
        s.ledger.dispatched();
    }
    s.kernels.settle(c.effects());
    if s.gpu.pending.append(c) {
        s.flush();
    }
    #[cfg(web)]
    if !s.gpu.pending.is_empty() {
        on_yield(s);
    }
}

/// In the browser: when the calling task yields, the pending tensors are computed and the batch
/// is submitted (once per task, however many calls asked).
#[cfg(web)]
pub(crate) fn on_yield<T: Upper>(s: &Shared<Runtime<T>>) {
    if !s.flush_scheduled.swap(true, Ordering::SeqCst) {
        let weak = Shared::downgrade(s);
        crate::platform::on_yield(async move {
            if let Some(s) = weak.upgrade() {
                T::settle_pending(&s); // its commits find the flush scheduled
                s.flush_scheduled.store(false, Ordering::SeqCst);
                s.flush();
            }
        });
    }
}

/// Uploads `data` into `buffer`, after the pending batch (see `Gpu::write_buffer`).
pub(crate) fn write<T>(s: &Runtime<T>, buffer: &wgpu::Buffer, data: &[u8]) {
    s.kernels.forget_writes_to(buffer);
    s.ledger
        .count(Exec::Submits(s.gpu.write_buffer(buffer, data) as u64));
}

/// A call admitted by [`Runtime::admit`], under way until dropped (`Pool::end_admitted`).
#[must_use = "best fit keeps to the admitted room only while this is held"]
pub(crate) struct Admitted<'a, T> {
    shared: &'a Runtime<T>,
    before: Option<u64>,
}

impl<T> Drop for Admitted<'_, T> {
    fn drop(&mut self) {
        self.shared.pool().end_admitted(self.before);
    }
}
