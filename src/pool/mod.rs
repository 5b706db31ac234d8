//! The buffer pool: one implementation for both targets, generic over [`Storage`] so the whole
//! policy is unit-tested on a CPU stand-in (see `tests.rs`).
//!
//! Policy:
//! - a request at or below the oversize threshold is rounded to its size class
//!   ([`size_class`], worst-case waste < request / steps) and served from the cache when a buffer
//!   of that class — or, best fit, of the smallest free class up to half again as large — is free
//!   (a *hit*: the padding is counted in `pool_padding_bytes`), else a new device buffer is made
//!   (a *miss*);
//! - the pool never holds more than `max_total_bytes` (in use + cached). A miss that would exceed
//!   the bound first evicts cached buffers, least recently released first; if the bound cannot be
//!   met even with an empty cache the call fails with `OUT_OF_MEMORY` *before* anything is evicted,
//!   so a failed acquire changes nothing;
//! - how much stays cached: with `cache_limit_bytes` set, at most that many bytes (a release above
//!   it evicts, oldest first); unset, the learned budget of [`retention`] (a quarter over the
//!   largest set of buffers in use at once, plus the sizes loops came back to), applied at misses;
//! - a request above the oversize threshold (or above the largest explicit class) is exact-size,
//!   counted in `oversize_allocations`, and destroyed on release instead of cached;
//! - [`Pool::clear_cache`] destroys every cached buffer; [`Pool::trim_idle`] does the same when
//!   the session has gone idle for `idle_trim_ms` (the timer is the session's, see `idle.rs`),
//!   counted as evictions.
//!
//! Every acquire/release updates the session's [`Ledger`] (and through it the process ledger):
//! storage bytes (the requested `byteLength`) and pool bytes (the buffer size).

pub mod config;
pub mod retention;
pub mod size_class;
mod trim;
pub(crate) mod usage;
// The policy tests need proptest, a native-only dev-dependency.
#[cfg(all(test, native))]
mod tests;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::accounting::{Ledger, PoolDelta};
use crate::error::{Error, Result};
pub use config::{PoolConfig, PoolOptions};
pub use size_class::SizeClasses;
pub use usage::PoolUsage;

/// Where device buffers come from. `alloc` makes a buffer of exactly `size` bytes.
pub trait Storage {
    /// A handle to one device buffer (cheap to clone).
    type Buffer: Clone;
    /// Makes a buffer of exactly `size` bytes.
    fn alloc(&mut self, size: u64) -> Result<Self::Buffer>;
    /// Destroys a buffer made by `alloc`.
    fn dealloc(&mut self, buffer: Self::Buffer);
    /// The largest buffer `alloc` can make (the device's `maxBufferSize` and storage binding
    /// limit). The pool checks it before it evicts anything, so a request that can never fit
    /// changes nothing.
    fn max_buffer_size(&self) -> u64 {
        u64::MAX
    }
}

/// A buffer handed out by the pool. Give it back with [`Pool::release`].
#[derive(Debug)]
pub struct Lease<B> {
    /// The device buffer; at least `requested` bytes.
    pub buffer: B,
    /// Bytes of the device buffer (the size class, or the exact size when oversize).
    pub size: u64,
    /// Bytes of storage asked for (the tensor's `byteLength`).
    pub requested: u64,
    cached: bool,
}

struct Cached<B> {
    buffer: B,
    stamp: u64,
}

/// A bounded, size-classed, LRU-evicting buffer cache.
pub struct Pool<S: Storage> {
    storage: S,
    config: PoolConfig,
    ledger: Arc<Ledger>,
    /// Free buffers by class; each queue in release order (oldest at the front).
    free: BTreeMap<u64, VecDeque<Cached<S::Buffer>>>,
    /// Release stamp → class, oldest first: the eviction order.
    lru: BTreeMap<u64, u64>,
    next_stamp: u64,
    held: u64,
    cached: u64,
    in_use: u64,
    cached_count: u64,
    /// Buffers in use by size: `(buffers, requested bytes)` (requested vs rounded, for the panel).
    in_use_by_size: BTreeMap<u64, (u64, u64)>,
    /// Set by [`Pool::drain`]: releases go to the device, not the cache.
    draining: bool,
    /// The default policy's learned state (unused when `cache_limit_bytes` is set).
    retention: retention::Retention,
    /// While an admitted call runs ([`Pool::admit`]): the padding best fit may still add to the
    /// bytes in use without breaking the call's admission; `None` outside one.
    best_fit_slack: Option<u64>,
}

impl<S: Storage> Pool<S> {
    /// A pool over `storage`, reporting to `ledger`. The bound is added to
    /// `pool_max_total_bytes` for as long as the pool lives.
    pub fn new(storage: S, config: PoolConfig, ledger: Arc<Ledger>) -> Self {
        ledger.bound_changed(config.max_total_bytes as i64);
        Pool {
            storage,
            config,
            ledger,
            free: BTreeMap::new(),
            lru: BTreeMap::new(),
            next_stamp: 0,
            held: 0,
            cached: 0,
            in_use: 0,
            cached_count: 0,
            in_use_by_size: BTreeMap::new(),
            draining: false,
            retention: retention::Retention::default(),
            best_fit_slack: None,
        }
    }

    /// The configuration this pool runs under.
    pub fn config(&self) -> &PoolConfig {
        &self.config
    }

    /// The ledger this pool reports to.
    pub fn ledger(&self) -> &Arc<Ledger> {
        &self.ledger
    }

    /// The storage the buffers come from.
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// The storage, mutably (for tests and tools that model device behaviour, like the fuzzer).
    pub fn storage_mut(&mut self) -> &mut S {
        &mut self.storage
    }

    /// The class a request of `bytes` is served from, or `None` for an exact-size (oversize) buffer.
    fn class_of(&self, bytes: u64) -> Option<u64> {
        if bytes > self.config.oversize_threshold_bytes {
            None
        } else {
            self.config.size_classes.class_for(bytes)
        }
    }

    /// Bytes of the device buffer a request of `bytes` takes (its size class, or exact when oversize).
    pub fn rounded(&self, bytes: u64) -> u64 {
        self.class_of(bytes).unwrap_or(bytes)
    }

    /// Checks, changing nothing, that buffers of these (rounded) sizes could be in use at once on
    /// top of what is in use now: each fits the device, and their sum fits under the bound once
    /// the cache is evicted. A run or a multi-buffer creation calls this first, so it fails before
    /// its first acquisition; every acquisition after a successful check succeeds (the caller holds
    /// the session's submission lock, so nothing else acquires in between).
    pub fn check_fits(&self, total_rounded: u64, largest_rounded: u64) -> Result<()> {
        if largest_rounded > self.storage.max_buffer_size() {
            return Err(self.never_fits(largest_rounded));
        }
        let in_use_bytes = self.held - self.cached;
        if in_use_bytes.saturating_add(total_rounded) > self.config.max_total_bytes {
            let detail = if total_rounded != largest_rounded {
                format!("; the call needs {total_rounded} bytes of buffers at once")
            } else {
                String::new()
            };
            return Err(self.out_of_memory(total_rounded, &detail));
        }
        Ok(())
    }

    /// [`Pool::check_fits`] for a call that then acquires buffers of these sizes, and the start of
    /// that call: until [`Pool::end_admitted`], best fit takes a larger free buffer only while the
    /// padding it adds stays within the room the check left (`bound − in use − total`), so every
    /// acquisition the check admitted still fits — a buffer half again as large, taken for the
    /// first request, could otherwise leave the last one without room in the middle of the call.
    /// Returns what to restore when the call ends (admissions nest: the smaller room holds).
    pub fn admit(&mut self, total_rounded: u64, largest_rounded: u64) -> Result<Option<u64>> {
        self.check_fits(total_rounded, largest_rounded)?;
        let in_use_bytes = self.held - self.cached;
        let room = self.config.max_total_bytes - in_use_bytes - total_rounded;
        let before = self.best_fit_slack;
        self.best_fit_slack = Some(before.map_or(room, |r| r.min(room)));
        Ok(before)
    }

    /// The admitted call that [`Pool::admit`] returned `before` for has ended.
    pub fn end_admitted(&mut self, before: Option<u64>) {
        self.best_fit_slack = before;
    }

    /// Hands out a buffer of at least `bytes` (> 0, a multiple of 4) bytes. Fails with
    /// `OUT_OF_MEMORY` before anything changes (no eviction, no counter) when the buffer cannot
    /// fit the device or the bound.
    pub fn acquire(&mut self, bytes: u64) -> Result<Lease<S::Buffer>> {
        self.acquire_at_least(bytes, bytes)
    }

    /// [`Pool::acquire`] for `bytes` (what is counted) in a buffer of at least `at_least` bytes'
    /// class (a program run's slot size): the extra is padding.
    pub fn acquire_at_least(&mut self, bytes: u64, at_least: u64) -> Result<Lease<S::Buffer>> {
        let class = self.class_of(bytes.max(at_least));
        if let Some(lease) = class.and_then(|want| self.take_cached(want, bytes)) {
            return Ok(lease);
        }
        let size = class.unwrap_or(bytes.max(at_least));
        self.take_new(class, size, bytes)
    }

    /// A hit: the best-fitting free buffer for a request of class `want`, counted for `bytes` of
    /// storage; `None` when none fits.
    fn take_cached(&mut self, want: u64, bytes: u64) -> Option<Lease<S::Buffer>> {
        let (class, entry) = self.best_fit(want)?;
        self.lru.remove(&entry.stamp);
        if self.free.get(&class).is_some_and(|q| q.is_empty()) {
            self.free.remove(&class);
        }
        if let Some(room) = &mut self.best_fit_slack {
            *room -= class - want;
        }
        self.cached -= class;
        self.cached_count -= 1;
        self.in_use += 1;
        self.retention.saw(self.held - self.cached);
        self.note_in_use(class, bytes as i64, 1);
        self.ledger.pool_changed(PoolDelta {
            cached: -(class as i64),
            padding: (class - bytes) as i64,
            hits: 1,
            ..Default::default()
        });
        self.ledger.storage_acquired(bytes);
        Some(Lease {
            buffer: entry.buffer,
            size: class,
            requested: bytes,
            cached: true,
        })
    }

    /// Takes the best-fitting free buffer of a request of class `want` off its queue, with its
    /// class.
    fn best_fit(&mut self, want: u64) -> Option<(u64, Cached<S::Buffer>)> {
        // best fit: this class, else the smallest free one up to half again as large (the
        // neighbouring classes), so buffers released in another class are reused, not doubled
        let room = self.best_fit_slack.unwrap_or(u64::MAX);
        let fit = self.free.range(want..=want + want / 2).next().map(|(&c, _)| c);
        let fit = fit.filter(|&c| c - want <= room);
        fit.and_then(|c| Some((c, self.free.get_mut(&c)?.pop_back()?)))
    }

    /// A miss: a new device buffer of `size` bytes (`class`: its size class, `None` when oversize)
    /// for `bytes` of storage, after the evictions the cache's limit asks for.
    fn take_new(&mut self, class: Option<u64>, size: u64, bytes: u64) -> Result<Lease<S::Buffer>> {
        self.check_fits(size, size)?;
        let max_total = self.config.max_total_bytes;
        let in_use_after = self.held - self.cached + size;
        // The default policy: the learned budget, widened by the ghost this miss matches (a class
        // the budget evicted and the loop came back to); with a cache limit, the bound alone.
        let learned = self.config.cache_limit_bytes.is_none();
        let ghost = class
            .filter(|_| learned)
            .and_then(|want| self.retention.ghost_for(want));
        let limit = if learned {
            let extra = ghost.unwrap_or(0);
            self.retention.budget(in_use_after, max_total, extra)
        } else {
            max_total
        };
        let evicted = self.evict_under(size, limit, learned);
        let buffer = match self.storage.alloc(size) {
            Ok(b) => b,
            Err(e) => return Err(self.refused(e, size, evicted)),
        };
        self.held += size;
        self.in_use += 1;
        self.note_in_use(size, bytes as i64, 1);
        if learned {
            self.retention.missed(ghost, size, class.is_some(), max_total);
        }
        self.retention.saw(in_use_after);
        self.count_miss(class, size, bytes, evicted);
        Ok(Lease {
            buffer,
            size,
            requested: bytes,
            cached: class.is_some(),
        })
    }

    /// Evicts (oldest first) until a new buffer of `size` fits under `limit`, telling the learned
    /// policy when it is the one in force: `(buffers, bytes)` evicted.
    fn evict_under(&mut self, size: u64, limit: u64, learned: bool) -> (u64, u64) {
        // Evict (oldest first) until the new buffer fits under the limit; the check above
        // guarantees the cache covers the bound, and the budget evicts only what is cached.
        let (mut evicted, mut evicted_bytes) = (0u64, 0u64);
        while self.held + size > limit {
            let Some(class) = self.evict_oldest() else {
                break;
            };
            if learned {
                self.retention.evicted(class);
            }
            evicted += 1;
            evicted_bytes += class;
        }
        (evicted, evicted_bytes)
    }

    /// The error of a miss the device refused (`e`) after the checks, once the `(buffers, bytes)`
    /// `evicted` for it are reported.
    fn refused(&self, e: Error, size: u64, (evicted, evicted_bytes): (u64, u64)) -> Error {
        // The device refused after the checks (it ran out of memory of its own): the
        // evictions already happened and are real; report them, then fail.
        self.ledger.pool_changed(PoolDelta {
            held: -(evicted_bytes as i64),
            cached: -(evicted_bytes as i64),
            buffers: -(evicted as i64),
            evictions: evicted,
            ..Default::default()
        });
        match e {
            Error::OutOfMemory { detail, .. } => self.out_of_memory(size, &detail),
            other => other,
        }
    }

    /// Reports a miss to the ledger: the new buffer of `size` for `bytes` of storage, and the
    /// `(buffers, bytes)` evicted for it.
    fn count_miss(&self, class: Option<u64>, size: u64, bytes: u64, (evicted, evicted_bytes): (u64, u64)) {
        self.ledger.pool_changed(PoolDelta {
            held: size as i64 - evicted_bytes as i64,
            cached: -(evicted_bytes as i64),
            buffers: 1 - evicted as i64,
            padding: (size - bytes) as i64,
            misses: 1,
            evictions: evicted,
            oversize: class.is_none() as u64,
            ..Default::default()
        });
        self.ledger.storage_acquired(bytes);
    }

    /// Takes a buffer back: cached for reuse, or destroyed if it was exact-size.
    pub fn release(&mut self, lease: Lease<S::Buffer>) {
        self.ledger.storage_released(lease.requested);
        self.in_use -= 1;
        self.note_in_use(lease.size, -(lease.requested as i64), -1);
        let padding = -((lease.size - lease.requested) as i64);
        if lease.cached && !self.draining {
            let stamp = self.next_stamp;
            self.next_stamp += 1;
            self.free.entry(lease.size).or_default().push_back(Cached {
                buffer: lease.buffer,
                stamp,
            });
            self.lru.insert(stamp, lease.size);
            self.cached += lease.size;
            self.cached_count += 1;
            self.ledger.pool_changed(PoolDelta {
                cached: lease.size as i64,
                padding,
                ..Default::default()
            });
            if let Some(limit) = self.config.cache_limit_bytes {
                self.trim_to(limit);
            }
        } else {
            self.storage.dealloc(lease.buffer);
            self.held -= lease.size;
            self.ledger.pool_changed(PoolDelta {
                held: -(lease.size as i64),
                buffers: -1,
                padding,
                ..Default::default()
            });
        }
    }

    fn note_in_use(&mut self, size: u64, requested: i64, buffers: i64) {
        let e = self.in_use_by_size.entry(size).or_default();
        e.0 = (e.0 as i64 + buffers) as u64;
        e.1 = (e.1 as i64 + requested) as u64;
        if e.0 == 0 {
            self.in_use_by_size.remove(&size);
        }
    }

    fn never_fits(&self, size: u64) -> Error {
        self.out_of_memory(
            size,
            &format!(
                "; it never fits: the device's largest storage buffer is {} bytes",
                self.storage.max_buffer_size()
            ),
        )
    }

    fn out_of_memory(&self, size: u64, detail: &str) -> Error {
        Error::OutOfMemory {
            requested: size,
            live_bytes: self.ledger.live_bytes.load(std::sync::atomic::Ordering::Relaxed),
            pool_bytes: self.held,
            bound: self.config.max_total_bytes,
            detail: detail.to_string(),
            forensics: None,
        }
    }
}

impl<S: Storage> Drop for Pool<S> {
    fn drop(&mut self) {
        self.clear_cache();
        self.ledger.bound_changed(-(self.config.max_total_bytes as i64));
    }
}

impl<S: Storage> Pool<S> {
    /// Current figures.
    pub fn usage(&self) -> PoolUsage {
        PoolUsage {
            bytes_held: self.held,
            bytes_cached: self.cached,
            buffers_in_use: self.in_use,
            buffers_cached: self.cached_count,
            cached_by_class: self
                .free
                .iter()
                .map(|(&c, q)| (c, q.len() as u64, c * q.len() as u64))
                .collect(),
            in_use_by_class: self
                .in_use_by_size
                .iter()
                .map(|(&c, &(n, r))| (c, n, r))
                .collect(),
        }
    }
}
