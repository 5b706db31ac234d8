//! The core's promises at the edges, on both targets: every failure is decided before anything is
//! acquired (the whole ledger is compared before and after with `ledger.rs`), and assignments read
//! their sources as of the start of the run. Grids, bounded caches and forgotten handles:
//! `limits.rs`.
#![allow(dead_code)]

use std::collections::HashMap;

use affon::{DType, Program, Session, Tensor};

use crate::ledger::fails_unchanged;

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
