//! Readback staging buffers (`MAP_READ | COPY_DST`): a readback copies into one, maps it and reads
//! it on the host. Instead of a buffer made and destroyed per readback, a session keeps a few for
//! reuse — rounded to the pool's size classes, best fit up to half again as large, at most
//! [`MAX_CACHED`] buffers and [`MAX_CACHED_BYTES`] kept, least recently used dropped first — and
//! counts every one it holds, mapping or kept, in `compute.memory/staging_bytes` and
//! `staging_buffers`. Readbacks above [`MAX_CACHED_BYTES`] get an exact-size buffer, destroyed after.
//! `clear` (the session's `clearCache()`) destroys the kept ones; `drain` (dispose, device loss)
//! also stops keeping, so the figures return to zero.

use std::sync::Mutex;

use crate::accounting::Ledger;
use crate::pool::SizeClasses;

/// Staging buffers kept for reuse, at most.
pub const MAX_CACHED: usize = 4;
/// Bytes of staging buffers kept for reuse, at most (and the largest readback whose buffer is kept).
pub const MAX_CACHED_BYTES: u64 = 64 << 20;

/// A staging buffer handed to one readback.
pub(crate) struct Staged {
    pub buffer: wgpu::Buffer,
    pub size: u64,
}

#[derive(Default)]
struct Inner {
    /// Kept buffers, least recently used first.
    free: Vec<Staged>,
    draining: bool,
}

/// One session's staging buffers.
#[derive(Default)]
pub(crate) struct Staging {
    inner: Mutex<Inner>,
}

impl Staging {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A buffer of at least `bytes`: a kept one that fits (the smallest, up to half again as
    /// large as the class), else a new one (counted).
    pub fn take(&self, device: &wgpu::Device, bytes: u64, ledger: &Ledger) -> Staged {
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
        Staged { buffer, size }
    }

    /// Takes a buffer back (unmapped): kept for the next readback, or destroyed.
    pub fn give(&self, staged: Staged, ledger: &Ledger) {
        let mut inner = self.inner();
        if inner.draining || staged.size > MAX_CACHED_BYTES {
            drop(inner);
            destroy(staged, ledger);
            return;
        }
        inner.free.push(staged);
        let mut dropped = Vec::new();
        while inner.free.len() > MAX_CACHED
            || inner.free.iter().map(|s| s.size).sum::<u64>() > MAX_CACHED_BYTES
        {
            dropped.push(inner.free.remove(0));
        }
        drop(inner);
        for s in dropped {
            destroy(s, ledger);
        }
    }

    /// Destroys a buffer whose readback failed (it may still be mapped).
    pub fn drop_one(&self, staged: Staged, ledger: &Ledger) {
        destroy(staged, ledger);
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

    /// Destroys the kept buffers and keeps none from now on (dispose, device loss).
    pub fn drain(&self, ledger: &Ledger) {
        self.inner().draining = true;
        self.clear(ledger);
    }
}

fn destroy(s: Staged, ledger: &Ledger) {
    s.buffer.destroy();
    ledger.staging_changed(-(s.size as i64), -1);
}
