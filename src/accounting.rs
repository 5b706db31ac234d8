//! Live/peak accounting: one [`Ledger`] per session plus the process-wide [`PROCESS`] ledger that
//! every session ledger forwards to. Knows nothing of wgpu or JS; updated only by the pool
//! ([`crate::pool::Pool`]), at every acquire and release, so the figures are exact on both targets.
//!
//! What is counted:
//! - **storage** (`compute.storage`): the `byteLength` (elements × 4) of every live storage —
//!   tensors, ExecutionState slots, executable constants, and run intermediates while they exist.
//!   Size-class rounding is *not* included here.
//! - **pool** (`compute.memory`): the sizes of the device buffers the pools hold, in use or cached,
//!   size-class rounding included; that rounding of the buffers in use on its own
//!   (`pool_padding_bytes`: each buffer's size minus the bytes its storage requested).
//! - **staging** (`compute.memory/staging_bytes`, `staging_buffers`): the readback staging buffers
//!   a session holds, mapping now or kept for the next readback (`staging.rs`).
//! - **parameters** (`compute.memory/param_bytes`, `param_buffers`): the kernel parameter buffers
//!   (read-only storage buffers of a few words, cached by content in `kernels/cache.rs`) a
//!   session's cache holds, counted when the call that made them succeeds.
//! - **operand textures** (`compute.memory/texture_bytes`, `textures`): the textures a session's
//!   kernel cache holds for the CPU matmul's texture form (`kernels/operand_tex.rs`), counted like
//!   the parameter buffers.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

mod exec;
pub(crate) use exec::Exec;
pub use exec::ExecCounters;

/// A set of counters and gauges. All fields are monotonic counters or exact gauges.
#[derive(Debug)]
pub struct Ledger {
    parent: Option<&'static Ledger>,
    /// `(track id, session label)` of a session's ledger: its changes are traced (`trace.rs`).
    trace: Option<(u64, String)>,
    /// Bytes of live storage (sum of `byteLength`).
    pub live_bytes: AtomicU64,
    /// Highest `live_bytes` seen since creation or the last [`Ledger::reset_peak`].
    pub peak_bytes: AtomicU64,
    /// Number of live storages.
    pub live_tensors: AtomicU64,
    /// Storages ever acquired.
    pub allocations: AtomicU64,
    /// Storages ever released.
    pub deallocations: AtomicU64,
    /// Bytes of device buffers held by pools (in use + cached, rounding included).
    pub pool_bytes: AtomicU64,
    /// Bytes of device buffers held by pools and not in use.
    pub pool_cached_bytes: AtomicU64,
    /// Highest `pool_bytes` seen.
    pub pool_peak_bytes: AtomicU64,
    /// Acquires served from the cache.
    pub pool_hits: AtomicU64,
    /// Acquires that created a device buffer.
    pub pool_misses: AtomicU64,
    /// Cached buffers destroyed to make room under the bound (not counting `clear_cache`).
    pub pool_evictions: AtomicU64,
    /// Sum of the bounds of the live pools.
    pub pool_max_total_bytes: AtomicU64,
    /// Acquires above the oversize threshold (exact-size, never cached).
    pub oversize_allocations: AtomicU64,
    /// Device buffers the pools hold (in use + cached).
    pub device_buffers: AtomicU64,
    /// Size-class rounding of the buffers in use: their sizes minus the bytes requested of them.
    pub pool_padding_bytes: AtomicU64,
    /// Bytes of readback staging buffers held (mapping now or kept for reuse).
    pub staging_bytes: AtomicU64,
    /// Readback staging buffers held.
    pub staging_buffers: AtomicU64,
    /// Bytes of kernel parameter buffers held by the sessions' caches.
    pub param_bytes: AtomicU64,
    /// Kernel parameter buffers held by the sessions' caches.
    pub param_buffers: AtomicU64,
    /// Bytes of operand textures held by the sessions' caches.
    pub texture_bytes: AtomicU64,
    /// Operand textures held by the sessions' caches.
    pub textures: AtomicU64,
    /// Execution counters (`compute.execution`).
    pub exec: ExecCounters,
}

/// The process-wide ledger: the sum over all sessions.
pub static PROCESS: Ledger = Ledger::root();

/// A plain copy of a ledger's values at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[allow(missing_docs)] // each field mirrors the Ledger field of the same name
pub struct LedgerSnapshot {
    pub live_bytes: u64,
    pub peak_bytes: u64,
    pub live_tensors: u64,
    pub allocations: u64,
    pub deallocations: u64,
    pub pool_bytes: u64,
    pub pool_cached_bytes: u64,
    pub pool_peak_bytes: u64,
    pub pool_hits: u64,
    pub pool_misses: u64,
    pub pool_evictions: u64,
    pub pool_max_total_bytes: u64,
    pub oversize_allocations: u64,
    pub device_buffers: u64,
    pub pool_padding_bytes: u64,
    pub staging_bytes: u64,
    pub staging_buffers: u64,
    pub param_bytes: u64,
    pub param_buffers: u64,
    pub texture_bytes: u64,
    pub textures: u64,
    pub executions: u64,
    pub dispatches: u64,
    pub compiles: u64,
    pub executable_cache_entries: u64,
    pub executable_cache_evictions: u64,
    pub pipeline_cache_entries: u64,
    pub bind_group_cache_entries: u64,
    pub pipeline_cache_evictions: u64,
    pub upload_bytes: u64,
    pub download_bytes: u64,
    pub transfers: u64,
    pub syncs: u64,
    pub fixups: u64,
    pub submits: u64,
    pub run_time_count: u64,
    pub run_time_sum_us: u64,
    /// `u64::MAX` before the first run.
    pub run_time_min_us: u64,
    pub run_time_max_us: u64,
}

/// A change to the pool gauges, applied atomically per field.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PoolDelta {
    pub held: i64,
    pub cached: i64,
    pub buffers: i64,
    /// Change to the rounding of buffers in use (`pool_padding_bytes`).
    pub padding: i64,
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    pub oversize: u64,
}

fn add_signed(a: &AtomicU64, d: i64) -> u64 {
    if d >= 0 {
        a.fetch_add(d as u64, Relaxed) + d as u64
    } else {
        a.fetch_sub(d.unsigned_abs(), Relaxed) - d.unsigned_abs()
    }
}

impl Ledger {
    const fn root() -> Ledger {
        Ledger {
            parent: None,
            trace: None,
            live_bytes: AtomicU64::new(0),
            peak_bytes: AtomicU64::new(0),
            live_tensors: AtomicU64::new(0),
            allocations: AtomicU64::new(0),
            deallocations: AtomicU64::new(0),
            pool_bytes: AtomicU64::new(0),
            pool_cached_bytes: AtomicU64::new(0),
            pool_peak_bytes: AtomicU64::new(0),
            pool_hits: AtomicU64::new(0),
            pool_misses: AtomicU64::new(0),
            pool_evictions: AtomicU64::new(0),
            pool_max_total_bytes: AtomicU64::new(0),
            oversize_allocations: AtomicU64::new(0),
            device_buffers: AtomicU64::new(0),
            pool_padding_bytes: AtomicU64::new(0),
            staging_bytes: AtomicU64::new(0),
            staging_buffers: AtomicU64::new(0),
            param_bytes: AtomicU64::new(0),
            param_buffers: AtomicU64::new(0),
            texture_bytes: AtomicU64::new(0),
            textures: AtomicU64::new(0),
            exec: ExecCounters::new(),
        }
    }

    /// A ledger whose every update is also applied to [`PROCESS`] (one per session).
    pub fn session() -> Ledger {
        Ledger {
            parent: Some(&PROCESS),
            ..Ledger::root()
        }
    }

    /// [`Ledger::session`] for session `id` labelled `label`: while a trace runs, each change adds
    /// a counter event on that session's track.
    pub fn for_session(id: u64, label: &str) -> Ledger {
        Ledger {
            trace: Some((id, label.to_string())),
            ..Ledger::session()
        }
    }

    fn traced(&self) {
        if let Some((id, label)) = &self.trace {
            if crate::trace::enabled() {
                crate::trace::counter(
                    *id,
                    label,
                    self.live_bytes.load(Relaxed),
                    self.pool_bytes.load(Relaxed),
                    self.pool_cached_bytes.load(Relaxed),
                );
            }
        }
    }

    /// A ledger that forwards nowhere (for tests and tools).
    pub fn standalone() -> Ledger {
        Ledger::root()
    }

    pub(crate) fn storage_acquired(&self, bytes: u64) {
        let live = self.live_bytes.fetch_add(bytes, Relaxed) + bytes;
        self.peak_bytes.fetch_max(live, Relaxed);
        self.live_tensors.fetch_add(1, Relaxed);
        self.allocations.fetch_add(1, Relaxed);
        if let Some(p) = self.parent {
            p.storage_acquired(bytes);
        }
        self.traced();
    }

    pub(crate) fn storage_released(&self, bytes: u64) {
        self.live_bytes.fetch_sub(bytes, Relaxed);
        self.live_tensors.fetch_sub(1, Relaxed);
        self.deallocations.fetch_add(1, Relaxed);
        if let Some(p) = self.parent {
            p.storage_released(bytes);
        }
        self.traced();
    }

    /// Readback staging buffers made (`bytes`, `buffers` > 0) or destroyed (< 0).
    pub(crate) fn staging_changed(&self, bytes: i64, buffers: i64) {
        self.pair_changed(|l| (&l.staging_bytes, &l.staging_buffers), bytes, buffers);
    }

    /// Kernel parameter buffers made (`bytes`, `buffers` > 0) or released (< 0).
    pub(crate) fn params_changed(&self, bytes: i64, buffers: i64) {
        self.pair_changed(|l| (&l.param_bytes, &l.param_buffers), bytes, buffers);
    }

    /// Operand textures made (`bytes`, `textures` > 0) or released (< 0).
    pub(crate) fn textures_changed(&self, bytes: i64, textures: i64) {
        self.pair_changed(|l| (&l.texture_bytes, &l.textures), bytes, textures);
    }

    /// Adds `bytes` and `count` to the gauges `pick` names, here and in every ledger above.
    fn pair_changed(&self, pick: fn(&Ledger) -> (&AtomicU64, &AtomicU64), bytes: i64, count: i64) {
        let (b, n) = pick(self);
        add_signed(b, bytes);
        add_signed(n, count);
        if let Some(p) = self.parent {
            p.pair_changed(pick, bytes, count);
        }
    }

    pub(crate) fn pool_changed(&self, d: PoolDelta) {
        let held = add_signed(&self.pool_bytes, d.held);
        self.pool_peak_bytes.fetch_max(held, Relaxed);
        add_signed(&self.pool_cached_bytes, d.cached);
        add_signed(&self.device_buffers, d.buffers);
        add_signed(&self.pool_padding_bytes, d.padding);
        self.pool_hits.fetch_add(d.hits, Relaxed);
        self.pool_misses.fetch_add(d.misses, Relaxed);
        self.pool_evictions.fetch_add(d.evictions, Relaxed);
        self.oversize_allocations.fetch_add(d.oversize, Relaxed);
        if let Some(p) = self.parent {
            p.pool_changed(d);
        }
        self.traced();
    }

    pub(crate) fn bound_changed(&self, delta: i64) {
        add_signed(&self.pool_max_total_bytes, delta);
        if let Some(p) = self.parent {
            p.bound_changed(delta);
        }
    }

    pub(crate) fn dispatched(&self) {
        self.count(Exec::Dispatch);
    }

    /// Records an execution event here and in the parent.
    pub(crate) fn count(&self, e: Exec) {
        if matches!(e, Exec::Submits(0)) {
            return; // a flush with nothing pending submitted nothing
        }
        let x = &self.exec;
        match e {
            Exec::Dispatch => x.dispatches.fetch_add(1, Relaxed),
            Exec::Execution => x.executions.fetch_add(1, Relaxed),
            Exec::Compile => x.compiles.fetch_add(1, Relaxed),
            Exec::Fixup => x.fixups.fetch_add(1, Relaxed),
            Exec::Submits(n) => x.submits.fetch_add(n, Relaxed),
            Exec::Sync => x.syncs.fetch_add(1, Relaxed),
            Exec::Upload(b) => {
                x.transfers.fetch_add(1, Relaxed);
                x.upload_bytes.fetch_add(b, Relaxed)
            }
            Exec::Download(b) => {
                x.transfers.fetch_add(1, Relaxed);
                x.download_bytes.fetch_add(b, Relaxed)
            }
            Exec::CacheEntries(d) => add_signed(&x.executable_cache_entries, d),
            Exec::CacheEviction => x.executable_cache_evictions.fetch_add(1, Relaxed),
            Exec::Pipelines(d) => add_signed(&x.pipeline_cache_entries, d),
            Exec::BindGroups(d) => add_signed(&x.bind_group_cache_entries, d),
            Exec::PipelineEviction => x.pipeline_cache_evictions.fetch_add(1, Relaxed),
            Exec::RunTime(us) => {
                x.run_time_sum_us.fetch_add(us, Relaxed);
                x.run_time_min_us.fetch_min(us, Relaxed);
                x.run_time_max_us.fetch_max(us, Relaxed);
                x.run_time_count.fetch_add(1, Relaxed)
            }
        };
        if let Some(p) = self.parent {
            p.count(e);
        }
    }

    /// Resets `peak_bytes` and `pool_peak_bytes` to their current values (this ledger only).
    pub fn reset_peak(&self) {
        self.peak_bytes.store(self.live_bytes.load(Relaxed), Relaxed);
        self.pool_peak_bytes.store(self.pool_bytes.load(Relaxed), Relaxed);
    }

    /// [`Ledger::reset_peak`], returning the peaks it replaced (for [`Ledger::keep_peaks`]).
    pub(crate) fn reset_peak_saved(&self) -> (u64, u64) {
        let saved = (self.peak_bytes.load(Relaxed), self.pool_peak_bytes.load(Relaxed));
        self.reset_peak();
        saved
    }

    /// Undoes a reset: each peak becomes the larger of `saved` and what it reached since.
    pub(crate) fn keep_peaks(&self, saved: (u64, u64)) {
        self.peak_bytes.fetch_max(saved.0, Relaxed);
        self.pool_peak_bytes.fetch_max(saved.1, Relaxed);
    }

    /// Reads every field.
    pub fn snapshot(&self) -> LedgerSnapshot {
        LedgerSnapshot {
            live_bytes: self.live_bytes.load(Relaxed),
            peak_bytes: self.peak_bytes.load(Relaxed),
            live_tensors: self.live_tensors.load(Relaxed),
            allocations: self.allocations.load(Relaxed),
            deallocations: self.deallocations.load(Relaxed),
            pool_bytes: self.pool_bytes.load(Relaxed),
            pool_cached_bytes: self.pool_cached_bytes.load(Relaxed),
            pool_peak_bytes: self.pool_peak_bytes.load(Relaxed),
            pool_hits: self.pool_hits.load(Relaxed),
            pool_misses: self.pool_misses.load(Relaxed),
            pool_evictions: self.pool_evictions.load(Relaxed),
            pool_max_total_bytes: self.pool_max_total_bytes.load(Relaxed),
            oversize_allocations: self.oversize_allocations.load(Relaxed),
            device_buffers: self.device_buffers.load(Relaxed),
            pool_padding_bytes: self.pool_padding_bytes.load(Relaxed),
            staging_bytes: self.staging_bytes.load(Relaxed),
            staging_buffers: self.staging_buffers.load(Relaxed),
            param_bytes: self.param_bytes.load(Relaxed),
            param_buffers: self.param_buffers.load(Relaxed),
            texture_bytes: self.texture_bytes.load(Relaxed),
            textures: self.textures.load(Relaxed),
            executions: self.exec.executions.load(Relaxed),
            dispatches: self.exec.dispatches.load(Relaxed),
            compiles: self.exec.compiles.load(Relaxed),
            executable_cache_entries: self.exec.executable_cache_entries.load(Relaxed),
            executable_cache_evictions: self.exec.executable_cache_evictions.load(Relaxed),
            pipeline_cache_entries: self.exec.pipeline_cache_entries.load(Relaxed),
            bind_group_cache_entries: self.exec.bind_group_cache_entries.load(Relaxed),
            pipeline_cache_evictions: self.exec.pipeline_cache_evictions.load(Relaxed),
            upload_bytes: self.exec.upload_bytes.load(Relaxed),
            download_bytes: self.exec.download_bytes.load(Relaxed),
            transfers: self.exec.transfers.load(Relaxed),
            syncs: self.exec.syncs.load(Relaxed),
            fixups: self.exec.fixups.load(Relaxed),
            submits: self.exec.submits.load(Relaxed),
            run_time_count: self.exec.run_time_count.load(Relaxed),
            run_time_sum_us: self.exec.run_time_sum_us.load(Relaxed),
            run_time_min_us: self.exec.run_time_min_us.load(Relaxed),
            run_time_max_us: self.exec.run_time_max_us.load(Relaxed),
        }
    }
}
