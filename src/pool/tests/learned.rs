//! The learned budget (`retention.rs`) on the loops it has to tell apart, on the CPU stand-in.

use super::*;

/// The default policy on the growing-shapes loop of the browser bench (`[i+1, 1024]` floats, its
/// square and a 4-byte sum each iteration): the pool stays within a quarter over the largest set of
/// buffers in use, at every point, and the classes it leaves behind go.
#[test]
fn growing_shapes_keep_the_pool_near_the_largest_live_set() {
    let mut p = pool(2 << 30, 64 << 20);
    let mut peak_in_use = 0;
    for i in 0..200u64 {
        let t = p.acquire((i + 1) * 4096).unwrap();
        let sq = p.acquire((i + 1) * 4096).unwrap();
        let s = p.acquire(4).unwrap();
        peak_in_use = u64::max(peak_in_use, t.size + sq.size + s.size);
        let u = p.usage();
        assert!(
            u.bytes_held * 4 <= peak_in_use * 5,
            "iteration {i}: {} held, peak in use {peak_in_use}",
            u.bytes_held
        );
        for l in [t, sq, s] {
            p.release(l);
        }
    }
    // the last class of 800 KiB is 896 KiB: two of them and the 256-byte one, nothing else
    let u = p.usage();
    assert_eq!(u.cached_by_class, vec![(256, 1, 256), (917_504, 2, 1_835_008)]);
    let s = snap(&p);
    assert_eq!(s.pool_bytes, 1_835_264);
    assert_eq!(
        s.pool_evictions,
        s.pool_misses - 3,
        "every class left behind went"
    );
    // an unbounded cache (MLX's limit at the bound) keeps one buffer per class visited
    let mut all = pool_limited(2 << 30, 64 << 20, Some(2 << 30));
    for i in 0..200u64 {
        let ls = [(i + 1) * 4096, (i + 1) * 4096, 4].map(|b| all.acquire(b).unwrap());
        ls.into_iter().for_each(|l| all.release(l));
    }
    assert!(
        snap(&all).pool_bytes > 5 * s.pool_bytes,
        "{}",
        snap(&all).pool_bytes
    );
}

/// A loop cycling through ten sizes: the budget evicts on the first pass (it cannot tell the loop
/// from growth yet), the second pass comes back to every evicted class and earns it, and from the
/// third pass on every request is a hit — with no more cached than an unbounded cache holds.
#[test]
fn a_cycling_loop_earns_back_what_the_budget_evicted() {
    let mut p = pool(2 << 30, 64 << 20);
    let sizes: Vec<u64> = (1..=10).map(|k| k * 4096 + 1000).collect();
    let pass = |p: &mut Pool<FakeDevice>| {
        let before = snap(p).pool_misses;
        for &b in &sizes {
            let a = p.acquire(b).unwrap();
            let c = p.acquire(b).unwrap();
            p.release(a);
            p.release(c);
        }
        snap(p).pool_misses - before
    };
    let mut classes: Vec<u64> = sizes.iter().map(|&b| p.rounded(b)).collect();
    classes.dedup();
    assert_eq!(classes.len(), 9, "two sizes share the 40 KiB class");
    assert_eq!(pass(&mut p), 18, "first pass: two buffers of each class are new");
    assert!(snap(&p).pool_evictions > 0, "the budget evicted on the way");
    let second = pass(&mut p);
    assert!(second > 0 && second <= 18, "{second}");
    let held = snap(&p).pool_bytes;
    for _ in 0..3 {
        assert_eq!(pass(&mut p), 0, "every later pass hits");
    }
    let s = snap(&p);
    assert_eq!(s.pool_bytes, held, "and the pool plateaued");
    // an unbounded cache holds two buffers of each class
    let bytes: u64 = classes.iter().map(|c| 2 * c).sum();
    assert!(s.pool_cached_bytes <= bytes, "{} > {bytes}", s.pool_cached_bytes);
    assert_eq!(
        s.pool_cached_bytes, 305_152,
        "best fit serves some sizes from the next class"
    );
}

/// Two tensors growing at different rates (`[i, 1024]` floats beside two `[i, 4096]`): the small
/// one keeps arriving at classes the large ones left (a ghost each time), but each new class of the
/// large ones is a miss no ghost explains, and the credit decays — the pool stays within 1.4× its
/// largest buffers in use at every point (without the decay it reached 1.88×).
#[test]
fn growth_at_two_rates_does_not_accumulate_credit() {
    let mut p = pool(2 << 30, 64 << 20);
    let (mut peak, mut worst) = (0u64, 0f64);
    for i in 1..400u64 {
        let ls = [i * 1024, i * 4096, i * 4096].map(|b| p.acquire(b).unwrap());
        peak = peak.max(ls.iter().map(|l| l.size).sum());
        ls.into_iter().for_each(|l| p.release(l));
        worst = worst.max(snap(&p).pool_bytes as f64 / peak as f64);
    }
    assert!(worst < 1.4, "held / largest in use reached {worst:.2}");
}

/// One pass of the bench's growing loop (`[i+1, 1024]` floats, its square, a 4-byte sum); its misses.
fn growing_pass(p: &mut Pool<FakeDevice>) -> u64 {
    let before = snap(p).pool_misses;
    for i in 0..200u64 {
        let ls = [(i + 1) * 4096, (i + 1) * 4096, 4].map(|b| p.acquire(b).unwrap());
        ls.into_iter().for_each(|l| p.release(l));
    }
    snap(p).pool_misses - before
}

/// The growing loop run again from the start is a cycle: its second pass comes back to every class
/// the first evicted and earns it back; from the third on nothing misses.
#[test]
fn a_growing_loop_run_again_is_learned_as_a_cycle() {
    let mut p = pool(2 << 30, 64 << 20);
    assert_eq!(growing_pass(&mut p), 55);
    assert_eq!(snap(&p).pool_bytes, 1_835_264);
    assert_eq!(growing_pass(&mut p), 48, "the second pass earns the classes back");
    assert_eq!(growing_pass(&mut p), 0);
    assert_eq!(snap(&p).pool_bytes, 8_519_936);
}

/// An idle trim gives back every cached buffer (counted as evictions), leaves buffers in use alone
/// and keeps what the budget learned: the loop run after it makes its classes anew without
/// evicting any (its misses refill what was trimmed, they are not growth that decays the credit)
/// and the pass after that misses nothing. Refilled in order, the cache holds one buffer per class
/// the loop visits (10.9 MiB, what an unbounded cache holds), inside the learned budget; before the
/// trim, evictions on the way in had left 8.1 MiB serving the same loop by best fit.
#[test]
fn an_idle_trim_keeps_what_the_budget_learned() {
    let mut p = pool(2 << 30, 64 << 20);
    for _ in 0..3 {
        growing_pass(&mut p);
    }
    let held = p.acquire(4096).unwrap(); // a hit: stays in use through the trim
    let before = snap(&p);
    assert_eq!(p.trim_idle(), 8_519_936 - 4096);
    let after = snap(&p);
    assert_eq!((after.pool_bytes, after.pool_cached_bytes), (4096, 0));
    assert_eq!(after.device_buffers, 1);
    assert_eq!(
        after.pool_evictions - before.pool_evictions,
        before.device_buffers - 1
    );
    assert_eq!(p.storage().alive.len(), 1, "the trimmed buffers were destroyed");
    p.release(held);
    let evictions = snap(&p).pool_evictions;
    assert_eq!(
        growing_pass(&mut p),
        54,
        "the first pass's misses less the buffer kept in use"
    );
    assert_eq!(
        snap(&p).pool_evictions,
        evictions,
        "and none is evicted: the budget was kept"
    );
    let mut unbounded = pool_limited(2 << 30, 64 << 20, Some(2 << 30));
    growing_pass(&mut unbounded);
    assert_eq!(snap(&p).pool_bytes, snap(&unbounded).pool_bytes);
    assert_eq!(snap(&p).pool_bytes, 11_403_520);
    assert_eq!(growing_pass(&mut p), 0);
}
