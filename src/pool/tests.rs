//! The pool's policy on a CPU stand-in: no GPU needed.

use super::*;
use proptest::prelude::*;

// best fit within an admitted call
mod admitted;
// the learned budget's loops
mod learned;
// pool_padding_bytes
mod padding;

/// A stand-in device: hands out numbered buffers and remembers which are alive.
#[derive(Default)]
struct FakeDevice {
    next: u64,
    alive: std::collections::BTreeMap<u64, u64>,
    log: Vec<String>,
    fail_next_alloc: bool,
    /// The largest buffer the stand-in device makes (`None`: no limit).
    max: Option<u64>,
}

impl Storage for FakeDevice {
    type Buffer = u64;
    fn alloc(&mut self, size: u64) -> Result<u64> {
        if std::mem::take(&mut self.fail_next_alloc) {
            return Err(Error::OutOfMemory {
                requested: size,
                live_bytes: 0,
                pool_bytes: 0,
                bound: 0,
                detail: ": device refused".into(),
                forensics: None,
            });
        }
        self.next += 1;
        self.alive.insert(self.next, size);
        self.log.push(format!("alloc {} {size}", self.next));
        Ok(self.next)
    }
    fn dealloc(&mut self, b: u64) {
        assert!(self.alive.remove(&b).is_some(), "double free of {b}");
        self.log.push(format!("free {b}"));
    }
    fn max_buffer_size(&self) -> u64 {
        self.max.unwrap_or(u64::MAX)
    }
}

/// A request above the device's largest buffer fails before anything is evicted: the ledger and
/// the cache are exactly as they were (the evict-then-fail path of the device limit).
#[test]
fn the_device_limit_is_checked_before_evicting() {
    let mut p = pool(1 << 20, 1 << 20);
    p.storage_mut().max = Some(300 * 1024);
    let leases: Vec<_> = (0..3).map(|_| p.acquire(256 * 1024).unwrap()).collect();
    for l in leases {
        p.release(l);
    }
    let before = snap(&p);
    let log = p.storage().log.len();
    let e = p.acquire(600 * 1024).unwrap_err(); // fits the bound after evicting, not the device
    assert_eq!(e.code(), "OUT_OF_MEMORY");
    assert!(e.to_string().contains("never fits"), "{e}");
    assert_eq!(snap(&p), before, "no counter moved");
    assert_eq!(p.storage().log.len(), log, "nothing was freed or made");
    assert_eq!(p.usage().buffers_cached, 3);
    // check_fits agrees with acquire and changes nothing either
    assert!(p.check_fits(512 * 1024, 256 * 1024).is_ok());
    assert_eq!(
        p.check_fits(1 << 21, 256 * 1024).unwrap_err().code(),
        "OUT_OF_MEMORY"
    );
    assert_eq!(
        p.check_fits(400 * 1024, 400 * 1024).unwrap_err().code(),
        "OUT_OF_MEMORY"
    );
    assert_eq!(snap(&p), before);
}

fn pool(max: u64, oversize: u64) -> Pool<FakeDevice> {
    pool_limited(max, oversize, None)
}

fn pool_limited(max: u64, oversize: u64, cache_limit: Option<u64>) -> Pool<FakeDevice> {
    let config = PoolConfig {
        max_total_bytes: max,
        cache_limit_bytes: cache_limit,
        idle_trim_ms: 0,
        oversize_threshold_bytes: oversize,
        size_classes: SizeClasses::default(),
    };
    Pool::new(FakeDevice::default(), config, Arc::new(Ledger::standalone()))
}

#[test]
fn the_cache_limit_releases_least_recently_released_first() {
    let mut p = pool_limited(1 << 20, 1 << 16, Some(2048));
    let (a, b, c) = (
        p.acquire(1024).unwrap(),
        p.acquire(1024).unwrap(),
        p.acquire(1024).unwrap(),
    );
    p.release(b); // buffer 2: oldest
    p.release(a); // 2048 cached: at the limit, nothing released
    assert_eq!(snap(&p).pool_evictions, 0);
    p.release(c); // 3072 > 2048: buffer 2 goes
    assert!(!p.storage().alive.contains_key(&2));
    assert!(p.storage().alive.contains_key(&1) && p.storage().alive.contains_key(&3));
    let s = snap(&p);
    assert_eq!(
        (
            s.pool_evictions,
            s.pool_bytes,
            s.pool_cached_bytes,
            s.device_buffers
        ),
        (1, 2048, 2048, 2)
    );
    // releasing a buffer larger than the limit empties the cache oldest first — buffer 1, then
    // the big one itself; a buffer in use is never touched
    let big = p.acquire(4096).unwrap();
    let small = p.acquire(1024).unwrap(); // a hit on buffer 3 (most recently released)
    assert_eq!(small.buffer, 3);
    p.release(big);
    let s = snap(&p);
    assert_eq!(
        (
            s.pool_bytes,
            s.pool_cached_bytes,
            s.device_buffers,
            s.pool_evictions
        ),
        (1024, 0, 1, 3)
    );
    p.release(small);
    assert_eq!(snap(&p).pool_cached_bytes, 1024);
    // limit 0 caches nothing
    let mut z = pool_limited(1 << 20, 1 << 16, Some(0));
    let t = z.acquire(1000).unwrap();
    z.release(t);
    let s = snap(&z);
    assert_eq!(
        (
            s.pool_bytes,
            s.pool_cached_bytes,
            s.device_buffers,
            s.pool_evictions
        ),
        (0, 0, 0, 1)
    );
}

fn snap(p: &Pool<FakeDevice>) -> crate::accounting::LedgerSnapshot {
    p.ledger().snapshot()
}

#[test]
fn reuse_is_by_class_and_counts_hits_and_misses() {
    let mut p = pool(1 << 20, 1 << 16);
    let a = p.acquire(1000).unwrap(); // class 1024
    assert_eq!(a.size, 1024);
    p.release(a);
    let b = p.acquire(1020).unwrap(); // same class: a hit
    assert_eq!(b.buffer, 1);
    let s = snap(&p);
    assert_eq!((s.pool_hits, s.pool_misses, s.device_buffers), (1, 1, 1));
    assert_eq!(
        (s.live_bytes, s.peak_bytes, s.pool_bytes, s.pool_cached_bytes),
        (1020, 1020, 1024, 0)
    );
    p.release(b);
    let s = snap(&p);
    assert_eq!(
        (s.live_bytes, s.live_tensors, s.pool_bytes, s.pool_cached_bytes),
        (0, 0, 1024, 1024)
    );
    assert_eq!((s.allocations, s.deallocations), (2, 2));
}

#[test]
fn eviction_is_least_recently_released_first() {
    // a cache limit at the bound: the bound alone evicts (the learned budget is off)
    let mut p = pool_limited(4096, 1 << 16, Some(4096));
    let a = p.acquire(1024).unwrap(); // buffer 1
    let b = p.acquire(1024).unwrap(); // buffer 2
    let c = p.acquire(1024).unwrap(); // buffer 3
    p.release(b); // released first: oldest
    p.release(a);
    p.release(c);
    // 3072 held, all cached. A 2048-byte miss needs 1024 more room than is free under 4096.
    let d = p.acquire(2048).unwrap();
    assert_eq!(p.storage().log.last().unwrap(), "alloc 4 2048");
    assert!(p.storage().log.contains(&"free 2".to_string()));
    assert!(!p.storage().alive.contains_key(&2));
    assert!(p.storage().alive.contains_key(&1) && p.storage().alive.contains_key(&3));
    let s = snap(&p);
    assert_eq!(
        (
            s.pool_evictions,
            s.pool_bytes,
            s.pool_cached_bytes,
            s.device_buffers
        ),
        (1, 4096, 2048, 3)
    );
    p.release(d);
}

#[test]
fn the_bound_fails_cleanly_without_evicting() {
    let mut p = pool(4096, 1 << 16);
    let a = p.acquire(2048).unwrap();
    let b = p.acquire(1024).unwrap();
    p.release(b); // 1024 cached, 2048 in use
    let before = snap(&p);
    let usage = p.usage();
    let e = p.acquire(3072).unwrap_err();
    match &e {
        Error::OutOfMemory {
            requested,
            live_bytes,
            pool_bytes,
            bound,
            ..
        } => {
            assert_eq!(
                (*requested, *live_bytes, *pool_bytes, *bound),
                (3072, 2048, 3072, 4096)
            );
        }
        other => panic!("expected OUT_OF_MEMORY, got {other:?}"),
    }
    assert_eq!(e.code(), "OUT_OF_MEMORY");
    assert!(e.to_string().contains("requested 3072 bytes"), "{e}");
    assert_eq!(snap(&p), before, "a failed acquire changes no counter");
    assert_eq!(p.usage(), usage, "nor evicts anything");
    // and the pool keeps working: this one fits by evicting the cached 1024
    let c = p.acquire(2048).unwrap();
    assert_eq!(snap(&p).pool_evictions, 1);
    p.release(a);
    p.release(c);
}

#[test]
fn a_device_refusal_is_out_of_memory_and_leaves_accounting_exact() {
    let mut p = pool(1 << 20, 1 << 16);
    p.storage.fail_next_alloc = true;
    let before = snap(&p);
    let e = p.acquire(512).unwrap_err();
    assert_eq!(e.code(), "OUT_OF_MEMORY");
    assert!(e.to_string().contains("device refused"));
    assert_eq!(snap(&p), before);
}

#[test]
fn oversize_requests_are_exact_and_released_to_the_device() {
    let mut p = pool(1 << 20, 4096);
    let a = p.acquire(4100).unwrap();
    assert_eq!(a.size, 4100, "exact size above the threshold");
    let s = snap(&p);
    assert_eq!(
        (s.oversize_allocations, s.pool_bytes, s.device_buffers),
        (1, 4100, 1)
    );
    p.release(a);
    let s = snap(&p);
    assert_eq!((s.pool_bytes, s.pool_cached_bytes, s.device_buffers), (0, 0, 0));
    assert!(p.storage().alive.is_empty());
    // at the threshold exactly: still pooled
    let b = p.acquire(4096).unwrap();
    p.release(b);
    assert_eq!(snap(&p).pool_cached_bytes, 4096);
}

#[test]
fn clear_cache_releases_only_cached_buffers() {
    let mut p = pool(1 << 20, 1 << 16);
    let a = p.acquire(300).unwrap();
    let b = p.acquire(3000).unwrap();
    p.release(b);
    assert_eq!(p.clear_cache(), 3072);
    let s = snap(&p);
    assert_eq!(
        (s.pool_bytes, s.pool_cached_bytes, s.device_buffers, s.live_bytes),
        (320, 0, 1, 300)
    );
    p.release(a);
}

#[test]
fn a_drained_pool_returns_every_release_to_the_device() {
    let mut p = pool(1 << 20, 1 << 16);
    let a = p.acquire(1024).unwrap();
    let b = p.acquire(1024).unwrap();
    p.release(b);
    p.drain();
    assert_eq!(snap(&p).pool_cached_bytes, 0);
    p.release(a);
    let s = snap(&p);
    assert_eq!((s.pool_bytes, s.device_buffers, s.live_bytes), (0, 0, 0));
    assert!(p.storage().alive.is_empty());
}

#[test]
fn the_bound_is_summed_while_the_pool_lives() {
    let ledger = Arc::new(Ledger::standalone());
    let p = Pool::new(FakeDevice::default(), PoolConfig::default(), ledger.clone());
    let q = Pool::new(
        FakeDevice::default(),
        PoolConfig {
            max_total_bytes: 1000,
            ..Default::default()
        },
        ledger.clone(),
    );
    assert_eq!(
        ledger.snapshot().pool_max_total_bytes,
        config::DEFAULT_MAX_TOTAL_BYTES + 1000
    );
    drop(q);
    drop(p);
    assert_eq!(ledger.snapshot().pool_max_total_bytes, 0);
}

#[derive(Debug, Clone)]
enum Op {
    Acquire(u64),
    Release(usize),
    Clear,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u64..20_000).prop_map(|n| Op::Acquire(n * 4)),
        3 => any::<usize>().prop_map(Op::Release),
        1 => Just(Op::Clear),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn accounting_invariants_hold_for_any_sequence(ops in proptest::collection::vec(op(), 1..200)) {
        let mut p = pool(256 * 1024, 32 * 1024);
        let mut live: Vec<Lease<u64>> = Vec::new();
        for op in ops {
            match op {
                Op::Acquire(n) => match p.acquire(n) {
                    Ok(l) => live.push(l),
                    Err(e) => prop_assert_eq!(e.code(), "OUT_OF_MEMORY"),
                },
                Op::Release(i) if !live.is_empty() => {
                    let l = live.swap_remove(i % live.len());
                    p.release(l);
                }
                Op::Release(_) => {}
                Op::Clear => { p.clear_cache(); }
            }
            let s = snap(&p);
            let u = p.usage();
            prop_assert_eq!(s.live_bytes, live.iter().map(|l| l.requested).sum::<u64>());
            prop_assert_eq!(s.live_tensors, live.len() as u64);
            prop_assert!(s.peak_bytes >= s.live_bytes);
            prop_assert!(s.pool_peak_bytes >= s.pool_bytes);
            prop_assert!(s.pool_bytes <= 256 * 1024, "bound exceeded: {}", s.pool_bytes);
            prop_assert_eq!(s.pool_bytes, u.bytes_held);
            prop_assert_eq!(s.pool_bytes, p.storage().alive.values().sum::<u64>());
            prop_assert_eq!(s.device_buffers, p.storage().alive.len() as u64);
            prop_assert_eq!(s.pool_bytes - s.pool_cached_bytes, live.iter().map(|l| l.size).sum::<u64>());
            prop_assert_eq!(s.allocations - s.deallocations, live.len() as u64);
            // in use by class: requested and rounded bytes add up to the live figures
            let by_class = &u.in_use_by_class;
            prop_assert_eq!(by_class.iter().map(|c| c.2).sum::<u64>(), s.live_bytes);
            prop_assert_eq!(by_class.iter().map(|c| c.0 * c.1).sum::<u64>(), s.pool_bytes - s.pool_cached_bytes);
            prop_assert_eq!(by_class.iter().map(|c| c.1).sum::<u64>(), live.len() as u64);
        }
        for l in live.drain(..) { p.release(l); }
        p.clear_cache();
        let s = snap(&p);
        prop_assert_eq!((s.live_bytes, s.live_tensors, s.pool_bytes, s.pool_cached_bytes, s.device_buffers), (0, 0, 0, 0, 0));
        prop_assert!(p.storage().alive.is_empty());
    }
}
