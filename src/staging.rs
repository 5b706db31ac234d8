//! Readback staging buffers (`MAP_READ | COPY_DST`): a readback copies into one, maps it and reads
//! it on the host. Instead of a buffer made and destroyed per readback, a session keeps a few for
//! reuse — rounded to the pool's size classes, best fit up to half again as large, at most
//! [`MAX_CACHED`] buffers and [`MAX_CACHED_BYTES`] (or a quarter of the pool's bound) kept, least
//! recently used dropped first — and counts every one it holds, mapping or kept, in
//! `compute.memory/staging_bytes` and `staging_buffers`. A larger readback gets an exact-size
//! buffer, destroyed after. A failed or abandoned readback leaves the figures as they were (its
//! buffer, if made for it, destroyed). `clear` (the session's `clearCache()`) destroys the kept
//! ones; `drain` (dispose, device loss, the last handle) also stops keeping, so the figures return
//! to zero.

use std::sync::Mutex;

use crate::accounting::Ledger;
use crate::pool::SizeClasses;

/// Staging buffers kept for reuse, at most.
pub const MAX_CACHED: usize = 4;
/// Bytes of staging buffers kept for reuse, at most (and the largest readback whose buffer is kept).
pub const MAX_CACHED_BYTES: u64 = 64 << 20;

/// A staging buffer handed to one readback.
struct Staged {
    buffer: wgpu::Buffer,
    size: u64,
    /// Made for this readback (not a kept one).
    fresh: bool,
}

struct Inner {
    /// Kept buffers, least recently used first.
    free: Vec<Staged>,
    draining: bool,
    /// Bytes kept at most: [`MAX_CACHED_BYTES`], or a quarter of the session's pool bound if less.
    limit: u64,
}

/// One session's staging buffers.
pub(crate) struct Staging {
    inner: Mutex<Inner>,
}

impl Default for Staging {
    fn default() -> Self {
        Staging {
            inner: Mutex::new(Inner {
                free: Vec::new(),
                draining: false,
                limit: MAX_CACHED_BYTES,
            }),
        }
    }
}

/// A staging buffer lent to one readback: given back, or — if the readback is abandoned (its
/// future dropped) or fails with the buffer in doubt — destroyed and counted out when this drops.
pub(crate) struct Lent<'a> {
    staging: &'a Staging,
    ledger: &'a Ledger,
    staged: Option<Staged>,
}

impl Lent<'_> {
    /// The buffer.
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.staged.as_ref().expect("lent until given back").buffer
    }

    /// The readback succeeded (`ok`), or failed with the buffer unmapped and sound. A kept buffer
    /// goes back to the kept ones either way; one made for this readback is kept on success and
    /// destroyed on failure, so a failed readback changes no figure.
    pub fn give_back(mut self, ok: bool) {
        let Some(staged) = self.staged.take() else { return };
        if ok || !staged.fresh {
            self.staging.give(staged, self.ledger);
        } else {
            destroy(staged, self.ledger);
        }
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(staged) = self.staged.take() {
            destroy(staged, self.ledger);
        }
    }
}

impl Staging {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps at most a quarter of `pool_bound` bytes (never more than [`MAX_CACHED_BYTES`]), so a
    /// tightly bounded session holds little beyond its bound in staging.
    pub fn set_pool_bound(&self, pool_bound: u64) {
        self.inner().limit = MAX_CACHED_BYTES.min(pool_bound / 4);
    }

    /// Lends a buffer of at least `bytes`: a kept one that fits (the smallest, up to half again as
    /// large as the class), else a new one (counted).
    pub fn lend<'a>(&'a self, device: &wgpu::Device, bytes: u64, ledger: &'a Ledger) -> Lent<'a> {
        Lent {
            staging: self,
            ledger,
            staged: Some(self.take(device, bytes, ledger)),
        }
    }

    fn take(&self, device: &wgpu::Device, bytes: u64, ledger: &Ledger) -> Staged {
        let size = if bytes > MAX_CACHED_BYTES {
            bytes
        } else {
            SizeClasses::default().class_for(bytes).unwrap_or(bytes)
        };
        {
            let mut inner = self.inner();
            let best = (inner.free.iter().enumerate())
                .filter(|(_, s)| s.size >= size && s.size <= size + size / 2)
                .min_by_key(|(_, s)| s.size)
                .map(|(i, _)| i);
            if let Some(i) = best {
                return inner.free.remove(i);
            }
        }
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("affon readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        ledger.staging_changed(size as i64, 1);
        Staged {
            buffer,
            size,
            fresh: true,
        }
    }

    /// Takes a buffer back (unmapped): kept for the next readback, or destroyed.
    fn give(&self, mut staged: Staged, ledger: &Ledger) {
        let mut inner = self.inner();
        if inner.draining || staged.size > inner.limit {
            drop(inner);
            destroy(staged, ledger);
            return;
        }
        staged.fresh = false;
        inner.free.push(staged);
        let mut dropped = Vec::new();
        while inner.free.len() > MAX_CACHED || inner.free.iter().map(|s| s.size).sum::<u64>() > inner.limit {
            dropped.push(inner.free.remove(0));
        }
        drop(inner);
        for s in dropped {
            destroy(s, ledger);
        }
    }

    /// Destroys the kept buffers (`clearCache()`); returns their bytes.
    pub fn clear(&self, ledger: &Ledger) -> u64 {
        let free = std::mem::take(&mut self.inner().free);
        let bytes = free.iter().map(|s| s.size).sum();
        for s in free {
            destroy(s, ledger);
        }
        bytes
    }

    /// Destroys the kept buffers and keeps none from now on (dispose, device loss, the last handle).
    pub fn drain(&self, ledger: &Ledger) {
        self.inner().draining = true;
        self.clear(ledger);
    }
}

fn destroy(s: Staged, ledger: &Ledger) {
    s.buffer.destroy();
    ledger.staging_changed(-(s.size as i64), -1);
}
