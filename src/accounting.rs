//! Live/peak accounting: one [`Ledger`] per session plus the process-wide [`PROCESS`] ledger that
//! every session ledger forwards to. Knows nothing of wgpu or JS; updated only by the pool
//! ([`crate::pool::Pool`]), at every acquire and release, so the figures are exact on both targets.
//!
//! What is counted:
//! - **storage** (`compute.storage`): the `byteLength` (elements × 4) of every live storage —
//!   tensors, ExecutionState slots, executable constants, and run intermediates while they exist.
//!   Size-class rounding is *not* included here.
//! - **pool** (`compute.memory`): the sizes of the device buffers the pools hold, in use or cached,
//!   size-class rounding included. Readback staging buffers and kernel parameter buffers are
//!   transient, freed within the call that made them, and not counted.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A set of counters and gauges. All fields are monotonic counters or exact gauges.
#[derive(Debug, Default)]
pub struct Ledger {
    parent: Option<&'static Ledger>,
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
}

/// A change to the pool gauges, applied atomically per field.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PoolDelta {
    pub held: i64,
    pub cached: i64,
    pub buffers: i64,
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
        }
    }

    /// A ledger whose every update is also applied to [`PROCESS`] (one per session).
    pub fn session() -> Ledger {
        Ledger {
            parent: Some(&PROCESS),
            ..Ledger::root()
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
    }

    pub(crate) fn storage_released(&self, bytes: u64) {
        self.live_bytes.fetch_sub(bytes, Relaxed);
        self.live_tensors.fetch_sub(1, Relaxed);
        self.deallocations.fetch_add(1, Relaxed);
        if let Some(p) = self.parent {
            p.storage_released(bytes);
        }
    }

    pub(crate) fn pool_changed(&self, d: PoolDelta) {
        let held = add_signed(&self.pool_bytes, d.held);
        self.pool_peak_bytes.fetch_max(held, Relaxed);
        add_signed(&self.pool_cached_bytes, d.cached);
        add_signed(&self.device_buffers, d.buffers);
        self.pool_hits.fetch_add(d.hits, Relaxed);
        self.pool_misses.fetch_add(d.misses, Relaxed);
        self.pool_evictions.fetch_add(d.evictions, Relaxed);
        self.oversize_allocations.fetch_add(d.oversize, Relaxed);
        if let Some(p) = self.parent {
            p.pool_changed(d);
        }
    }

    pub(crate) fn bound_changed(&self, delta: i64) {
        add_signed(&self.pool_max_total_bytes, delta);
        if let Some(p) = self.parent {
            p.bound_changed(delta);
        }
    }

    /// Resets `peak_bytes` and `pool_peak_bytes` to their current values (this ledger only).
    pub fn reset_peak(&self) {
        self.peak_bytes.store(self.live_bytes.load(Relaxed), Relaxed);
        self.pool_peak_bytes.store(self.pool_bytes.load(Relaxed), Relaxed);
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
        }
    }
}
