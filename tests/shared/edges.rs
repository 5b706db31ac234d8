//! The core's promises at the edges, on both targets: every failure is decided before anything is
//! acquired (the whole ledger is compared before and after with `ledger.rs`), assignments read their
//! sources as of the start of the run, grids larger than 65,535 workgroups are split, tidy scopes
//! and caches stay bounded, forgotten handles can be released.
#![allow(dead_code)]

use std::collections::HashMap;

use affon::{telemetry, DType, Program, Session, Tensor};

use crate::ledger::{fails_unchanged, ledger};

fn mib(n: u64) -> u64 {
    n << 20
}

/// Fills the pool's cache with `n` disposed buffers of 256 KiB (so a failure that evicted
/// before failing would show in `pool_evictions` and `pool_cached_bytes`).
fn warm_cache(s: &Session, n: usize) {
    let ts: Vec<Tensor> = (0..n)
        .map(|_| s.zeros(&[64 * 1024], DType::Float32).unwrap())
        .collect();
    drop(ts);
    assert!(s.pool_usage().bytes_cached >= n as u64 * 256 * 1024);
}

/// Creation paths: sizes are checked in 64-bit arithmetic before any host vector or device buffer
/// exists; a request above the device's largest buffer fails before the pool evicts anything.
/// `s` has a bound of at least 8 GiB, so only the device limit stops these.
pub async fn creation_limits(s: &Session) {
    warm_cache(s, 3);
    let cached = s.pool_usage().bytes_cached;
    // 2^30 float32 = 4 GiB: above the default 2 GiB bound or the device, never a host vector.
    fails_unchanged("OUT_OF_MEMORY", "randomNormal([1 << 30])", || {
        s.random_normal(&[1 << 30], 0.0, 1.0, 1)
    });
    fails_unchanged("OUT_OF_MEMORY", "randomUniform([1 << 30])", || {
        s.random_uniform(&[1 << 30], 0.0, 1.0, 1)
    });
    fails_unchanged("INVALID_ARGUMENT", "zeros([65536, 65536]): 2^32 elements", || {
        s.zeros(&[65536, 65536], DType::Float32)
    });
    fails_unchanged("INVALID_ARGUMENT", "a product past u64", || {
        s.zeros(&[1 << 31, 1 << 31, 1 << 31], DType::Float32)
    });
    fails_unchanged("SHAPE_MISMATCH", "4 values for 2^31 elements", || {
        s.tensor(&[1.0f32; 4], &[1 << 31])
    });
    // The device limit: one element more than the largest storage binding.
    let max = s
        .adapter()
        .max_storage_buffer_binding_size
        .min(s.adapter().max_buffer_size);
    let over = max / 4 + 1;
    assert!(
        over <= u32::MAX as u64,
        "the device limit {max} is reachable with a u32 element count"
    );
    let e = fails_unchanged("OUT_OF_MEMORY", "zeros above the device's largest buffer", || {
        s.zeros(&[over as usize], DType::Float32)
    });
    assert!(e.to_string().contains("never fits"), "{e}");
    fails_unchanged(
        "OUT_OF_MEMORY",
        "randomNormal above the device's largest buffer",
        || s.random_normal(&[over as usize], 0.0, 1.0, 1),
    );
    assert_eq!(s.pool_usage().bytes_cached, cached, "nothing was evicted");
    s.clear_cache();
}

/// A pool of 1 MiB with a warm cache: an eager op whose output cannot fit fails without evicting.
pub async fn eager_op_out_of_room(s: &Session) {
    let x = s.ones(&[128, 1024], DType::Float32).unwrap(); // 512 KiB
    let y = s.ones(&[1, 1024], DType::Float32).unwrap(); // 4 KiB
    warm_cache(s, 1);
    let cached = s.pool_usage().bytes_cached;
    // 512 KiB + 4 KiB live, 256 KiB cached: another 512 KiB does not fit under 1 MiB.
    fails_unchanged("OUT_OF_MEMORY", "x.add(y) past the bound", || x.add(&y));
    fails_unchanged("OUT_OF_MEMORY", "x.transpose() past the bound", || {
        x.transpose(None)
    });
    fails_unchanged("SHAPE_MISMATCH", "matmul with mismatched inner dims", || {
        x.matmul(&x)
    });
    fails_unchanged("INVALID_ARGUMENT", "reshape to an impossible target", || {
        x.reshape([1 << 40, 1 << 40])
    });
    fails_unchanged("INVALID_ARGUMENT", "reduce over a missing axis", || {
        x.sum(&[5], false)
    });
    assert_eq!(s.pool_usage().bytes_cached, cached);
    // After the failures the session works, and the same op fits once x's room is freed.
    let small = y.add(&y).unwrap();
    assert_eq!(small.read::<f32>().await.unwrap(), vec![2.0; 1024]);
}

/// x [256, 256] (256 KiB) → four 256 KiB outputs: 1 MiB more than is free under a 1 MiB bound,
/// though the first two would fit. The run fails before its first dispatch; nothing moves —
/// peaks, hits, misses, evictions, compiles, the plan cache, and the state.
fn four_outputs() -> Program {
    let mut p = Program::new("four_outputs");
    let x = p.input("x", DType::Float32, &[-1, 256]).unwrap();
    let acc = p.state("acc", DType::Float32, &[4]).unwrap();
    let a = p.transpose(x, None).unwrap();
    let b = p.softmax(x, -1).unwrap();
    let c = p.transpose(b, None).unwrap();
    let d = p.softmax(a, -1).unwrap();
    let one = p.constant(&[1.0; 4], &[4], DType::Float32).unwrap();
    let next = p.add(acc, one).unwrap();
    p.assign("acc", next).unwrap();
    for (name, n) in [("a", a), ("b", b), ("c", c), ("d", d)] {
        p.output(name, n).unwrap();
    }
    p
}

/// See [`four_outputs`].
pub async fn run_out_of_room_mid_program(s: &Session) {
    let exe = s.compile(&four_outputs()).unwrap();
    let state = exe.create_state(&[]).unwrap();
    let small = s.ones(&[4, 256], DType::Float32).unwrap();
    drop(exe.run(&[("x", &small)], Some(&state)).unwrap()); // acc = 1
    let x = s.ones(&[256, 256], DType::Float32).unwrap();
    warm_cache(s, 1);
    let plan = exe
        .memory_plan(&HashMap::from([("x".to_string(), vec![256, 256])]))
        .unwrap();
    assert_eq!(plan.output_bytes, 4 * 256 * 1024);
    let exec_before = s.stats();
    let entries = exe.cache_entries();
    let e = fails_unchanged("OUT_OF_MEMORY", "a run whose peak exceeds the bound", || {
        exe.run(&[("x", &x)], Some(&state))
    });
    assert!(e.to_string().contains("at once"), "{e}");
    let exec_after = s.stats();
    assert_eq!(
        (exec_after.compiles, exec_after.dispatches, exec_after.executions),
        (
            exec_before.compiles,
            exec_before.dispatches,
            exec_before.executions
        ),
        "a failed run compiles, dispatches and executes nothing"
    );
    assert_eq!(exe.cache_entries(), entries, "a failed run caches no plan");
    let acc = state.get("acc").unwrap();
    assert_eq!(
        acc.read::<f32>().await.unwrap(),
        vec![1.0; 4],
        "the state is as it was"
    );
    drop(acc);
    drop(x);
    // With room again the same shapes run, and compile once.
    let x = s.ones(&[64, 256], DType::Float32).unwrap();
    let outs = exe.run(&[("x", &x)], Some(&state)).unwrap();
    assert_eq!(outs.len(), 4);
    assert_eq!(s.stats().compiles, exec_before.compiles + 1);
}

/// createState is all or nothing: a bad init for the second slot, or slots that cannot all fit,
/// leave nothing behind.
pub async fn create_state_all_or_nothing(s: &Session) {
    let mut p = Program::new("two_states");
    let a = p.state("a", DType::Float32, &[4]).unwrap();
    let b = p.state("b", DType::Float32, &[128, 1024]).unwrap();
    let sa = p.sum(a, &[], false).unwrap();
    let sb = p.sum(b, &[], false).unwrap();
    let y = p.add(sa, sb).unwrap();
    p.output("y", y).unwrap();
    let exe = s.compile(&p).unwrap();
    let wrong = s.ones(&[128, 1024], DType::Int32).unwrap();
    let a0 = s.ones(&[4], DType::Float32).unwrap();
    fails_unchanged("DTYPE_MISMATCH", "second slot of the wrong dtype", || {
        exe.create_state(&[("a", &a0), ("b", &wrong)])
    });
    fails_unchanged("INVALID_ARGUMENT", "an unknown slot", || {
        exe.create_state(&[("c", &a0)])
    });
    let big = s.ones(&[100, 1024], DType::Float32).unwrap(); // 400 KiB: 512 KiB + 400 KiB live
    fails_unchanged("OUT_OF_MEMORY", "slots that cannot all fit", || {
        exe.create_state(&[])
    });
    drop((wrong, big));
    let st = exe.create_state(&[("a", &a0)]).unwrap();
    assert_eq!(st.byte_length(), 16 + 512 * 1024);
}

/// `assign('a', b); assign('b', a)` swaps; a ring of three rotates; every assign reads its source
/// as of the start of the run.
pub async fn assignments_read_old_values(s: &Session) {
    let mut p = Program::new("rotate");
    let a = p.state("a", DType::Float32, &[2]).unwrap();
    let b = p.state("b", DType::Float32, &[2]).unwrap();
    let c = p.state("c", DType::Float32, &[2]).unwrap();
    let sum = p.add(a, b).unwrap();
    p.assign("a", b).unwrap();
    p.assign("b", c).unwrap();
    p.assign("c", a).unwrap();
    p.output("sum", sum).unwrap();
    let exe = s.compile(&p).unwrap();
    let init = |v: f32| s.tensor(&[v, v + 0.5], &[2]).unwrap();
    let (ta, tb, tc) = (init(1.0), init(2.0), init(3.0));
    let st = exe.create_state(&[("a", &ta), ("b", &tb), ("c", &tc)]).unwrap();
    let read = |name: &str| {
        let t = st.get(name).unwrap();
        async move { t.read::<f32>().await.unwrap()[0] }
    };
    let mut expect = [1.0f32, 2.0, 3.0];
    for run in 0..4 {
        let out = exe.run(&[], Some(&st)).unwrap();
        let sum = out[0].1.read::<f32>().await.unwrap();
        assert_eq!(
            sum[0],
            expect[0] + expect[1],
            "run {run}: outputs read the old values"
        );
        expect = [expect[1], expect[2], expect[0]];
        let got = [read("a").await, read("b").await, read("c").await];
        assert_eq!(got, expect, "run {run}: a ring of states rotates");
    }
    // A swap, as API.md writes it.
    let mut p = Program::new("swap");
    let a = p.state("a", DType::Int32, &[3]).unwrap();
    let b = p.state("b", DType::Int32, &[3]).unwrap();
    p.assign("a", b).unwrap();
    p.assign("b", a).unwrap();
    let exe = s.compile(&p).unwrap();
    let (ta, tb) = (
        s.tensor(&[1i32, 2, 3], &[3]).unwrap(),
        s.tensor(&[7i32, 8, 9], &[3]).unwrap(),
    );
    let st = exe.create_state(&[("a", &ta), ("b", &tb)]).unwrap();
    drop(exe.run(&[], Some(&st)).unwrap());
    let get = |n: &str| st.get(n).unwrap();
    assert_eq!(get("a").read::<i32>().await.unwrap(), vec![7, 8, 9]);
    assert_eq!(get("b").read::<i32>().await.unwrap(), vec![1, 2, 3]);
    let plan = exe.memory_plan(&HashMap::new()).unwrap();
    assert_eq!(
        plan.intermediate_bytes, 24,
        "both old values are staged: 2 × 12 bytes"
    );
    assert_eq!(plan.peak_bytes, 24);
}

/// Element counts past 65,535 × 256 (a 2-D grid of elementwise and of reduction workgroups) run,
/// against values computed here.
pub async fn grids_past_the_workgroup_limit(s: &Session) {
    let n = 1usize << 24; // 16,777,216 elements: 65,536 workgroups of 256, a 2-D grid
    let x = s.fill(&[n], 1.5, DType::Float32).unwrap();
    let y = x.mul(&x).unwrap();
    // every row's max and min are 2.25: every element was written (a fresh buffer holds zeros), the
    // last included; 65,536 rows is a 2-D grid of reduction workgroups too
    let rows = y.reshape([1 << 16, 256]).unwrap();
    let hi = rows.max(&[1], false).unwrap().read::<f32>().await.unwrap();
    let lo = rows.min(&[1], false).unwrap().read::<f32>().await.unwrap();
    assert_eq!(hi.len(), 1 << 16);
    assert!(hi.iter().chain(&lo).all(|&v| v == 2.25), "every element is 1.5²");
    drop((x, y, rows));
}

/// Convolution, pooling and gather outputs past 65,535 × 256 elements (2-D grids), against values
/// computed here: a 1×1 depthwise scale, a 1×1 max pool and a gather of rows, each over 2²⁴ + 4096
/// elements, checked at the first, a middle and the last element.
pub async fn nn_grids_past_the_workgroup_limit(s: &Session) {
    use affon::ops::{Pad, Pair};
    let (h, w) = (4097usize, 4096usize); // 16,781,312 elements
    let x = s.fill(&[1, h, w, 1], 1.5, DType::Float32).unwrap();
    let two = s.fill(&[1, 1, 1, 1], 2.0, DType::Float32).unwrap();
    let d = x
        .depthwise_conv2d(&two, Pair::ONE, Pad::VALID, Pair::ONE)
        .unwrap();
    let m = d.max_pool(Pair::ONE, Pair::ONE, Pad::VALID).unwrap();
    let v = m.read::<f32>().await.unwrap();
    assert_eq!(v.len(), h * w);
    for i in [0, h * w / 2, h * w - 1] {
        assert_eq!(v[i], 3.0, "element {i}");
    }
    let rows = m.reshape([h as i64, w as i64]).unwrap();
    let idx = s.tensor(&[4096i32, 0], &[2]).unwrap();
    let g = rows.gather(&idx, 0).unwrap().read::<f32>().await.unwrap();
    assert_eq!(g.len(), 2 * w);
    assert!(g.iter().all(|&e| e == 3.0));
    drop((x, d, m, rows));
}

/// Matmuls past 65,535 workgroups per dimension: a batch of 65,537 products (z) and one row of
/// 65,535 × 64 + 5 columns (x), split into several dispatches, against values computed here. (Run
/// natively: on SwiftShader's 2 cores 65,537 workgroups of 256 threads take longer than a test may.)
pub async fn matmul_grids_past_the_workgroup_limit(s: &Session) {
    // a batch of 65,537 [1,1]×[1,2] products: more than 65,535 workgroups along z
    let batch = 65_537usize;
    let a: Vec<f32> = (0..batch).map(|i| (i % 7) as f32).collect();
    let b: Vec<f32> = (0..batch * 2).map(|i| (i % 5) as f32 - 2.0).collect();
    let ta = s.tensor(&a, &[batch, 1, 1]).unwrap();
    let tb = s.tensor(&b, &[batch, 1, 2]).unwrap();
    let out = ta.matmul(&tb).unwrap().read::<f32>().await.unwrap();
    for i in [0, 1, 65_534, 65_535, 65_536] {
        for j in 0..2 {
            let want = a[i] as f64 * b[i * 2 + j] as f64;
            assert_eq!(out[i * 2 + j] as f64, want, "batch {i} col {j}");
        }
    }
    // One row of 65,535 × 64 + 5 columns: more than 65,535 tiles along x for either kernel.
    let cols = 65_535 * 64 + 5;
    let row = s.fill(&[1, 1], 2.0, DType::Float32).unwrap();
    let wide: Vec<f32> = (0..cols).map(|i| (i % 1000) as f32).collect();
    let tw = s.tensor(&wide, &[1, cols]).unwrap();
    let out = row.matmul(&tw).unwrap().read::<f32>().await.unwrap();
    for j in [0, 1, 64 * 65_535 - 1, 64 * 65_535, cols - 1] {
        assert_eq!(out[j] as f64, 2.0 * wide[j] as f64, "column {j}");
    }
}

/// A tidy of 10,000 ops, each result disposed at once, keeps host entries for live tensors only.
pub async fn long_tidy_stays_small(s: &Session) {
    let x = s.ones(&[3], DType::Float32).unwrap();
    let mut most = 0;
    s.tidy(|| {
        for _ in 0..10_000 {
            let y = x.square().unwrap();
            y.dispose();
            most = most.max(s.scope_entries());
        }
    });
    assert!(most <= 128, "a tidy of finished tensors held {most} entries");
    assert_eq!(s.scope_entries(), 0);
}

/// The specialisation cache keeps at most 64 entries; evictions are counted; a failed run caches
/// nothing.
pub async fn specialisation_cache_is_bounded(s: &Session) {
    let mut p = Program::new("shapes");
    let x = p.input("x", DType::Float32, &[-1]).unwrap();
    let y = p.neg(x).unwrap();
    p.output("y", y).unwrap();
    let exe = s.compile(&p).unwrap();
    let before = s.stats();
    for n in 1..=70 {
        let t = s.ones(&[n], DType::Float32).unwrap();
        drop(exe.run(&[("x", &t)], None).unwrap());
    }
    let after = s.stats();
    assert_eq!(exe.cache_entries(), affon::MAX_SPECIALISATIONS);
    assert_eq!(after.compiles - before.compiles, 70);
    assert_eq!(
        after.executable_cache_evictions - before.executable_cache_evictions,
        6
    );
    assert_eq!(
        after.executable_cache_entries - before.executable_cache_entries,
        64
    );
    exe.dispose();
    assert_eq!(
        s.stats().executable_cache_entries,
        before.executable_cache_entries
    );
}

/// Forgotten handles (what the JS layer reports when the GC takes a handle without `dispose()`)
/// stay accounted until `release_forgotten`, which reports what it released; a disposed session
/// releases its own; a forgotten session stays open for its children.
pub async fn forgotten_handles_release(s: &Session) {
    let t = s.ones(&[10], DType::Float32).unwrap();
    let mut p = Program::new("with_constant");
    let c = p.constant(&[1.0; 6], &[6], DType::Float32).unwrap();
    let st = p.state("s", DType::Float32, &[5]).unwrap();
    let y = p.neg(c).unwrap();
    p.output("y", y).unwrap();
    p.assign("s", st).unwrap();
    let exe = s.compile(&p).unwrap();
    let state = exe.create_state(&[]).unwrap();
    let live = s.stats().live_bytes;
    t.forget();
    exe.forget();
    state.forget();
    assert_eq!(s.stats().live_bytes, live, "forgotten storage stays accounted");
    let (_, count, bytes) = telemetry::forgotten();
    assert!(count >= 3 && bytes >= 40 + 24 + 20);
    let (handles, released) = telemetry::release_forgotten();
    assert_eq!((handles, released), (3, 40 + 24 + 20));
    assert_eq!(s.stats().live_bytes, live - 84);
    assert_eq!(telemetry::release_forgotten(), (0, 0), "idempotent");
}

/// A session whose handle is forgotten stays open for its tensors; disposing a session releases
/// its forgotten handles.
pub async fn forgotten_session(make: Session, other: &Session) {
    let t = make.ones(&[4], DType::Float32).unwrap();
    let kept = make.ones(&[8], DType::Float32).unwrap();
    make.forget(); // as if the GC took the Session handle
    let y = t.add(&t).unwrap(); // still works: GC timing never changes a result
    assert_eq!(y.read::<f32>().await.unwrap(), vec![2.0; 4]);
    drop((t, y));
    kept.forget();
    let before = ledger();
    let _ = other; // another session's figures are unaffected either way
    let (handles, bytes) = telemetry::release_forgotten();
    assert_eq!((handles, bytes), (1, 32));
    assert_ne!(before, ledger());
}

/// Disposing a session releases its own forgotten handles.
pub async fn dispose_releases_forgotten(s: Session) {
    let t = s.ones(&[16], DType::Float32).unwrap();
    t.forget();
    assert_eq!(s.stats().live_bytes, 64);
    s.dispose();
    assert_eq!(s.stats().live_bytes, 0);
    assert_eq!(telemetry::release_forgotten(), (0, 0));
}

/// Memory plans of shapes past 2^32 bytes are exact in 64-bit arithmetic on every target (pure:
/// no device); a node whose result would exceed the element limit is rejected.
pub fn plans_past_4_gib() {
    let mut p = Program::new("big");
    let x = p.input("x", DType::Float32, &[-1, 65_535]).unwrap();
    let e = p.exp(x).unwrap();
    let t = p.transpose(e, None).unwrap();
    let s = p.sum(t, &[0], false).unwrap();
    p.output("s", s).unwrap();
    let elems = 65_535u64 * 65_535; // 4,294,836,225 elements (< 2^32)
    let plan = p
        .memory_plan(&HashMap::from([("x".to_string(), vec![65_535, 65_535])]))
        .unwrap();
    // exp (17,179,344,900 B) and transpose live together, then the output of 65,535 floats
    assert_eq!(plan.intermediate_bytes, 2 * elems * 4);
    assert_eq!(plan.output_bytes, 65_535 * 4);
    assert_eq!(plan.peak_bytes, 2 * elems * 4);
    let mut q = Program::new("too_big");
    let a = q.input("a", DType::Float32, &[-1, 1]).unwrap();
    let b = q.input("b", DType::Float32, &[1, -1]).unwrap();
    let c = q.add(a, b).unwrap();
    q.output("c", c).unwrap();
    let shapes = HashMap::from([
        ("a".to_string(), vec![65_536, 1]),
        ("b".to_string(), vec![1, 65_536]),
    ]);
    let e = q.memory_plan(&shapes).unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    let r = q.memory_plan(&HashMap::from([
        ("a".to_string(), vec![1 << 16, 1]),
        ("b".to_string(), vec![1, 1 << 15]),
    ]));
    assert_eq!(r.unwrap().output_bytes, (1u64 << 31) * 4);
}
