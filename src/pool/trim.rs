//! Giving cached buffers back: one at a time, least recently released first (the cache limit,
//! the learned budget), down to a limit, all of them (`clearCache()`), after an idle time, and
//! for good when the session is disposed. Each one counted in the ledger as it goes.

use super::{Pool, Storage};
use crate::accounting::PoolDelta;

impl<S: Storage> Pool<S> {
    /// Destroys the least recently released cached buffer, if any; returns its class. The caller
    /// reports the eviction to the ledger.
    pub(super) fn evict_oldest(&mut self) -> Option<u64> {
        let (_, class) = self.lru.pop_first()?;
        let q = self.free.get_mut(&class)?;
        let entry = q.pop_front()?;
        if q.is_empty() {
            self.free.remove(&class);
        }
        self.storage.dealloc(entry.buffer);
        self.held -= class;
        self.cached -= class;
        self.cached_count -= 1;
        Some(class)
    }

    /// Destroys cached buffers, least recently released first, until at most `limit` bytes are
    /// cached (counted as evictions).
    pub(super) fn trim_to(&mut self, limit: u64) {
        let (mut evicted, mut bytes) = (0u64, 0u64);
        while self.cached > limit {
            let Some(class) = self.evict_oldest() else {
                break;
            };
            evicted += 1;
            bytes += class;
        }
        if evicted > 0 {
            self.ledger.pool_changed(PoolDelta {
                held: -(bytes as i64),
                cached: -(bytes as i64),
                buffers: -(evicted as i64),
                evictions: evicted,
                ..Default::default()
            });
        }
    }

    /// Destroys every cached buffer; returns the bytes released. Buffers in use are untouched.
    pub fn clear_cache(&mut self) -> u64 {
        let bytes = self.cached;
        let count = self.cached_count;
        for (_, q) in std::mem::take(&mut self.free) {
            for entry in q {
                self.storage.dealloc(entry.buffer);
            }
        }
        self.lru.clear();
        self.held -= bytes;
        self.cached = 0;
        self.cached_count = 0;
        self.ledger.pool_changed(PoolDelta {
            held: -(bytes as i64),
            cached: -(bytes as i64),
            buffers: -(count as i64),
            ..Default::default()
        });
        bytes
    }

    /// The session has been idle (no acquire, release, op or readback) for `idle_trim_ms`: the
    /// cache is destroyed, counted as evictions, and its bytes returned. What the learned budget
    /// knows (the largest set in use, the credit) is kept, and the trim adds no ghosts: the misses
    /// after an idle time are the price of having given the memory back, not a loop the budget
    /// failed to fit (up to the trimmed bytes they do not decay the credit either).
    pub fn trim_idle(&mut self) -> u64 {
        let bytes = self.cached;
        self.trim_to(0);
        self.retention.trimmed(bytes);
        bytes
    }

    /// Clears the cache and stops caching: every later release destroys its buffer. Used when
    /// a session is disposed, so its remaining tensors give their memory back to the device.
    pub fn drain(&mut self) {
        self.draining = true;
        self.clear_cache();
    }
}
