//! `pool_padding_bytes`: the size-class rounding of the buffers in use, on the CPU stand-in.

use super::*;

/// The rounding of every buffer in use, from the pool's own per-size figures.
fn rounding(p: &Pool<FakeDevice>) -> u64 {
    p.usage()
        .in_use_by_class
        .iter()
        .map(|&(size, n, requested)| size * n - requested)
        .sum()
}

#[test]
fn padding_is_the_rounding_of_buffers_in_use() {
    let mut p = pool(1 << 20, 1 << 16);
    let a = p.acquire(1000).unwrap(); // class 1024: 24 bytes of rounding
    assert_eq!(snap(&p).pool_padding_bytes, 24);
    let b = p.acquire(5000).unwrap(); // class 5120: 120
    assert_eq!(snap(&p).pool_padding_bytes, 24 + 120);
    p.release(b); // cached: none of it is in use
    assert_eq!(snap(&p).pool_padding_bytes, 24);
    // best fit: no free 4096 buffer, so the free 5120 one (within half again) serves 4000 bytes
    let c = p.acquire(4000).unwrap();
    assert_eq!((c.buffer, c.size), (2, 5120));
    assert_eq!(snap(&p).pool_padding_bytes, 24 + 1120);
    // a run's intermediate in a larger planned slot: the slot's extra is rounding too
    let d = p.acquire_at_least(100, 3000).unwrap(); // class 3072
    assert_eq!(snap(&p).pool_padding_bytes, 24 + 1120 + 2972);
    // exact-size (oversize) buffers have none
    let e = p.acquire(70_000).unwrap();
    assert_eq!(e.size, 70_000);
    assert_eq!(snap(&p).pool_padding_bytes, 24 + 1120 + 2972);
    assert_eq!(snap(&p).pool_padding_bytes, rounding(&p));
    for l in [a, c, d, e] {
        p.release(l);
    }
    let s = snap(&p);
    assert_eq!((s.pool_padding_bytes, s.live_bytes), (0, 0));
}

proptest! {
    /// After any sequence of acquires and releases the gauge equals the rounding the pool's
    /// per-size figures give, and the bytes held are what is live plus that rounding plus the cache.
    #[test]
    fn padding_matches_the_pool_after_any_sequence(
        steps in prop::collection::vec((1u64..100_000, any::<bool>(), 0u64..4000), 1..60)
    ) {
        let mut p = pool(64 << 20, 1 << 16);
        let mut held = Vec::new();
        for (bytes, release, slot) in steps {
            if release && !held.is_empty() {
                let l = held.swap_remove(bytes as usize % held.len());
                p.release(l);
            } else {
                held.push(p.acquire_at_least(bytes, bytes.max(slot)).unwrap());
            }
            let s = snap(&p);
            prop_assert_eq!(s.pool_padding_bytes, rounding(&p));
            prop_assert_eq!(s.pool_bytes, s.live_bytes + s.pool_padding_bytes + s.pool_cached_bytes);
        }
    }
}
