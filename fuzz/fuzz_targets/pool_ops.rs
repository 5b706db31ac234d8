//! Sequences of pool operations on a CPU stand-in device; the pool's invariants are checked after
//! every step: live bytes equal the sum of live leases, the bound holds, the ledger matches the
//! device, and everything returns to zero at the end.
#![no_main]

use std::collections::BTreeMap;
use std::sync::Arc;

use affon::accounting::Ledger;
use affon::pool::{Lease, Pool, PoolConfig, SizeClasses, Storage};
use libfuzzer_sys::fuzz_target;

#[derive(Default)]
struct Fake {
    next: u64,
    alive: BTreeMap<u64, u64>,
    refuse: bool,
}

impl Storage for Fake {
    type Buffer = u64;
    fn alloc(&mut self, size: u64) -> affon::Result<u64> {
        if self.refuse {
            return Err(affon::Error::OutOfMemory {
                requested: size,
                live_bytes: 0,
                pool_bytes: 0,
                bound: 0,
                detail: String::new(),
                forensics: None,
            });
        }
        self.next += 1;
        self.alive.insert(self.next, size);
        Ok(self.next)
    }
    fn dealloc(&mut self, b: u64) {
        assert!(self.alive.remove(&b).is_some(), "double free");
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let classes = match data[0] % 3 {
        0 => SizeClasses::default(),
        1 => SizeClasses::ladder(1 << (data[1] % 7)).unwrap(),
        _ => SizeClasses::explicit(vec![256, 1024, 4096, 16384]).unwrap(),
    };
    let bound = 4096 + (data[2] as u64) * 1024;
    // a cache limit from the same byte as the classes: none, 0 (nothing cached) or a few KiB
    let cache_limit = match data[1] % 4 {
        0 | 1 => None,
        2 => Some(0),
        _ => Some((data[2] as u64 % 16) * 1024),
    };
    let config = PoolConfig {
        max_total_bytes: bound,
        cache_limit_bytes: cache_limit,
        oversize_threshold_bytes: 8192,
        size_classes: classes,
        idle_trim_ms: 0, // the timer is the session's; the trim itself is op 6 below
    };
    let ledger = Arc::new(Ledger::standalone());
    let mut pool = Pool::new(Fake::default(), config, ledger.clone());
    let mut live: Vec<Lease<u64>> = Vec::new();
    for chunk in data[3..].chunks(3) {
        let op = chunk[0] % 8;
        let arg = chunk.get(1).copied().unwrap_or(0) as u64 * 256 + chunk.get(2).copied().unwrap_or(0) as u64;
        match op {
            0..=3 => {
                let bytes = (arg % 20_000 + 1) * 4;
                let before = ledger.snapshot();
                match pool.acquire(bytes) {
                    Ok(l) => live.push(l),
                    Err(e) => {
                        assert_eq!(e.code(), "OUT_OF_MEMORY");
                        let after = ledger.snapshot();
                        assert_eq!(
                            after.live_bytes, before.live_bytes,
                            "a failed acquire changes no storage"
                        );
                    }
                }
            }
            4 | 5 if !live.is_empty() => {
                let i = arg as usize % live.len();
                pool.release(live.swap_remove(i));
            }
            6 if arg % 2 == 0 => {
                pool.clear_cache();
            }
            6 => {
                // the idle trim: every cached buffer goes, counted as evictions; in-use ones stay
                let before = ledger.snapshot();
                assert_eq!(pool.trim_idle(), before.pool_cached_bytes);
                let after = ledger.snapshot();
                assert_eq!(after.pool_cached_bytes, 0);
                assert_eq!(after.pool_bytes, before.pool_bytes - before.pool_cached_bytes);
                assert_eq!(
                    after.pool_evictions - before.pool_evictions,
                    before.device_buffers - after.device_buffers
                );
            }
            7 => {} // toggled below
            _ => {}
        }
        if op == 7 {
            // the device refuses the next allocations until toggled back
            let refuse = arg % 2 == 1;
            // SAFETY of the model: only the flag changes
            pool_storage_refuse(&mut pool, refuse);
        }
        let s = ledger.snapshot();
        let u = pool.usage();
        assert_eq!(s.live_bytes, live.iter().map(|l| l.requested).sum::<u64>());
        assert_eq!(s.live_tensors, live.len() as u64);
        assert!(s.peak_bytes >= s.live_bytes);
        assert!(s.pool_bytes <= bound, "bound exceeded");
        assert_eq!(s.pool_bytes, u.bytes_held);
        assert_eq!(s.pool_bytes, pool.storage().alive.values().sum::<u64>());
        assert_eq!(s.device_buffers, pool.storage().alive.len() as u64);
        assert_eq!(
            s.pool_bytes - s.pool_cached_bytes,
            live.iter().map(|l| l.size).sum::<u64>()
        );
        if let Some(limit) = cache_limit {
            assert!(s.pool_cached_bytes <= limit, "cache limit exceeded");
        }
        // in use by class: requested and rounded bytes add up to the live figures
        assert_eq!(u.in_use_by_class.iter().map(|c| c.2).sum::<u64>(), s.live_bytes);
        assert_eq!(
            u.in_use_by_class.iter().map(|c| c.0 * c.1).sum::<u64>(),
            s.pool_bytes - s.pool_cached_bytes
        );
    }
    for l in live.drain(..) {
        pool.release(l);
    }
    pool.clear_cache();
    let s = ledger.snapshot();
    assert_eq!((s.live_bytes, s.pool_bytes, s.device_buffers), (0, 0, 0));
    assert!(pool.storage().alive.is_empty());
});

fn pool_storage_refuse(pool: &mut Pool<Fake>, refuse: bool) {
    pool.storage_mut().refuse = refuse;
}
