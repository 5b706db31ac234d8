//! What a session's tensors, kernels and programs share with it (`SessionShared`): the device, the
//! pool and its ledger, the pending batch, scopes and owners; and the helpers that make storage,
//! upload and commit work in it. `Session` (`mod.rs`) is the public handle over it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::accounting::{Exec, Ledger};
use crate::device::{DeviceStorage, Gpu};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::forgotten::{Forgotten, ForgottenStore};
use crate::kernels::{Ctx, KernelCache};
use crate::platform::Shared;
use crate::pool::{Lease, Pool};
use crate::scope::Scopes;
use crate::shape;
use crate::telemetry::owners::OwnerTable;
use crate::tensor::Tensor;

pub(super) static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// What tensors share with their session.
pub(crate) struct SessionShared {
    pub(crate) id: u64,
    pub(crate) label: String,
    pub(crate) gpu: Gpu,
    pub(crate) ledger: Arc<Ledger>,
    pub(crate) kernels: KernelCache,
    pub(super) pool: Mutex<Pool<DeviceStorage>>,
    pub(super) disposed: Arc<AtomicBool>,
    pub(super) drained_after_loss: AtomicBool,
    /// Held from a command's first buffer acquisition to its queue submission. A program run gives
    /// intermediates back to the pool before it submits (so later nodes reuse them); without this,
    /// another thread could take such a buffer and submit work writing it before the run's reads.
    pub(super) submission: Mutex<()>,
    /// A browser task is queued to submit the pending batch.
    #[cfg(target_arch = "wasm32")]
    pub(super) flush_scheduled: AtomicBool,
    pub(crate) scopes: Scopes,
    pub(crate) capture_stacks: bool,
    pub(crate) owners: Arc<OwnerTable>,
    pub(crate) info: Arc<crate::telemetry::SessionInfo>,
    /// Objects whose JS handle was collected without `dispose()` (see `forgotten.rs`).
    pub(crate) forgotten: Arc<ForgottenStore>,
    /// Run the kernels' CPU-adapter forms (see [`Kernels`]).
    pub(super) cpu_kernels: bool,
    /// `Ctx::texture_cap`: set at creation (`kernels::texture_cap`).
    pub(super) texture_cap: u64,
    /// `Ctx::min_workgroups`: set at creation (`kernels::min_workgroups`).
    pub(super) min_workgroups: usize,
    /// This session, weakly (for the idle timer).
    pub(crate) me: crate::platform::WeakShared<SessionShared>,
    /// Activity and the idle timer (see `idle.rs`).
    pub(crate) idle: crate::idle::Idle,
    /// Its pending tensors (see `lazy.rs`).
    pub(crate) deferred: crate::lazy::Deferred,
}

impl Drop for SessionShared {
    /// The last handle went (a forgotten session whose tensors are all gone): the kept staging
    /// buffers go too, counted out (the pool counts out its own when it drops).
    fn drop(&mut self) {
        self.gpu.staging.drain(&self.ledger);
        self.gpu.release();
    }
}

impl SessionShared {
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
    pub(super) fn drain_after_loss(&self) {
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
        }
    }

    /// A handle of this session was collected without `dispose()`: its storage is marked forgotten
    /// and kept (accounted) until `releaseForgotten()` or the session's `dispose()`, or released
    /// now when the session was created with `releaseOnCollect`.
    pub(crate) fn forget(&self, ids: &[u64], f: Forgotten) {
        for &id in ids {
            self.owners.forget(id);
        }
        if !self.info.release_on_collect {
            self.forgotten.keep(f);
        }
    }

    pub(crate) fn release(&self, id: u64, lease: Lease<wgpu::Buffer>) {
        if self.gpu.is_lost() {
            self.drain_after_loss();
        }
        self.owners.remove(id);
        self.pool().release(lease);
        self.idle.touch();
        crate::idle::arm(self);
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
    pub(crate) fn admit(&self, byte_lengths: &[u64]) -> Result<Admitted<'_>> {
        let mut pool = self.pool();
        let rounded: Vec<u64> = byte_lengths.iter().map(|&b| pool.rounded(b)).collect();
        let total = rounded.iter().fold(0u64, |a, &b| a.saturating_add(b));
        let largest = rounded.iter().copied().max().unwrap_or(0);
        let r = pool.admit(total, largest);
        drop(pool);
        let before = r.map_err(|e| self.with_forensics(e))?;
        Ok(Admitted { shared: self, before })
    }

    /// [`SessionShared::admit`] for a peak already rounded by the pool (a run's plan).
    pub(crate) fn admit_rounded(&self, total: u64, largest: u64) -> Result<Admitted<'_>> {
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

/// A scalar tensor holding `value` in `dtype`, in `s` (number operands of binary ops).
pub(crate) fn scalar_in(s: &Shared<SessionShared>, value: f64, dtype: DType) -> Result<Tensor> {
    constant_in(s, &[value], &[], dtype, "scalar")
}

/// A tensor of `data` (each value representable in `dtype`) in `s`, for composites' constants.
pub(crate) fn constant_in(
    s: &Shared<SessionShared>,
    data: &[f64],
    shape: &[usize],
    dtype: DType,
    origin: &str,
) -> Result<Tensor> {
    let words = data
        .iter()
        .map(|&v| dtype.word_from_f64(v))
        .collect::<Result<Vec<u32>>>()?;
    if words.len() as u64 != shape::element_count(shape)? {
        return Err(Error::ShapeMismatch(format!(
            "{} values for shape {shape:?}",
            words.len()
        )));
    }
    let _submission = s.submission();
    let t = Tensor::allocate(s, shape.to_vec(), dtype, origin.to_string())?;
    write(s, t.buffer()?, bytemuck::cast_slice(&words));
    s.ledger.count(Exec::Upload(t.byte_length()));
    Ok(t)
}

/// Appends a completed call's commands to the session's batch (counting its dispatches), and
/// submits the batch when it is full; in the browser a batch left pending is submitted as soon as
/// the calling task yields, so the device never idles waiting for a readback.
pub(crate) fn commit(s: &Shared<SessionShared>, c: crate::commands::Commands) {
    s.idle.touch();
    for _ in 0..c.dispatches() {
        s.ledger.dispatched();
    }
    s.kernels.settle(c.effects());
    if s.gpu.pending.append(c) {
        s.flush();
    }
    #[cfg(target_arch = "wasm32")]
    if !s.gpu.pending.is_empty() {
        on_yield(s);
    }
}

/// In the browser: when the calling task yields, the pending tensors are computed and the batch
/// is submitted (once per task, however many calls asked).
#[cfg(target_arch = "wasm32")]
pub(crate) fn on_yield(s: &Shared<SessionShared>) {
    if !s.flush_scheduled.swap(true, Ordering::SeqCst) {
        let weak = Shared::downgrade(s);
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(s) = weak.upgrade() {
                crate::lazy::settle_all(&s); // its commits find the flush scheduled
                s.flush_scheduled.store(false, Ordering::SeqCst);
                s.flush();
            }
        });
    }
}

/// Scratch storage for a kernel of `s` (origin `scratch of <what>`), as `Ctx::scratch` allocates it.
pub(crate) fn scratch(s: &Shared<SessionShared>, words: u64, what: &str) -> Result<crate::kernels::Scratch> {
    let t = Tensor::allocate_untracked(
        s,
        vec![words as usize],
        DType::Float32,
        format!("scratch of {what}"),
    )?;
    Ok(crate::kernels::Scratch {
        buffer: t.buffer()?.clone(),
        _hold: Box::new(t),
    })
}

/// Uploads `data` into `buffer`, after the pending batch (see `Gpu::write_buffer`).
pub(crate) fn write(s: &SessionShared, buffer: &wgpu::Buffer, data: &[u8]) {
    s.kernels.forget_writes_to(buffer);
    s.ledger
        .count(Exec::Submits(s.gpu.write_buffer(buffer, data) as u64));
}

/// `OUT_OF_MEMORY` for `bytes` of host memory that could not be reserved.
pub(crate) fn host_oom(bytes: u64) -> Error {
    Error::OutOfMemory {
        requested: bytes,
        live_bytes: 0,
        pool_bytes: 0,
        bound: 0,
        detail: "; the host cannot hold the data".into(),
        forensics: None,
    }
}

/// A host vector of `n` elements made by `f`, or `OUT_OF_MEMORY` if the host cannot hold it
/// (wasm32's 4 GiB linear memory): never an allocation failure that aborts the instance.
pub(crate) fn host_vec<T>(n: u64, mut f: impl FnMut(usize) -> T) -> Result<Vec<T>> {
    let too_big = || host_oom(n.saturating_mul(std::mem::size_of::<T>() as u64));
    let n = usize::try_from(n).map_err(|_| too_big())?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| too_big())?;
    v.extend((0..n).map(&mut f));
    Ok(v)
}

/// A call admitted by [`SessionShared::admit`], under way until dropped (`Pool::end_admitted`).
#[must_use = "best fit keeps to the admitted room only while this is held"]
pub(crate) struct Admitted<'a> {
    shared: &'a SessionShared,
    before: Option<u64>,
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        self.shared.pool().end_admitted(self.before);
    }
}
