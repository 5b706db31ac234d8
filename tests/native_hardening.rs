//! Hardening natively: disposed objects, cross-session use, NaN/Infinity, device loss, threads, soak.
#![cfg(not(target_arch = "wasm32"))]

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/programs.rs"]
mod programs;

#[path = "shared/hardening.rs"]
mod hardening;

use affon::{DType, PoolOptions, Program, Session, SessionOptions};
use pollster::block_on;

fn session() -> Session {
    Session::new(SessionOptions::default()).expect("a GPU adapter is required")
}

#[test]
fn disposed_objects_in_every_method() {
    block_on(hardening::disposed_objects_in_every_method(&session()));
}

#[test]
fn cross_session_use() {
    block_on(hardening::cross_session_use(&session(), &session()));
}

#[test]
fn wide_sizes_never_wrap() {
    block_on(hardening::wide_sizes_never_wrap(&session()));
}

#[test]
fn nan_and_infinity_propagate() {
    block_on(hardening::nan_and_infinity_propagate(&session()));
}

#[test]
fn device_loss() {
    block_on(hardening::device_loss(&session()));
}

#[test]
fn soak_10000_runs() {
    let s = Session::new(SessionOptions {
        pool: PoolOptions {
            max_total_bytes: Some(1 << 20),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let (warm, end, max_pool) = block_on(hardening::soak(&s, 10_000));
    println!("soak native: live after warm-up {warm} B, at end {end} B, max pool {max_pool} B (bound 1 MiB)");
}

/// Several threads creating, running and disposing on one session: every counter exact at the end.
#[test]
fn threads_share_one_session() {
    let s = session();
    let mut p = Program::new("affine");
    let x = p.input("x", DType::Float32, &[-1, 8]).unwrap();
    let w = p.constant(&[0.5; 64], &[8, 8], DType::Float32).unwrap();
    let y = p.matmul(x, w).unwrap();
    let r = p.relu(y).unwrap();
    p.output("y", r).unwrap();
    let exe = s.compile(&p).unwrap();
    let base = s.stats();
    const THREADS: usize = 4;
    const ITERS: usize = 100;
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let (s, exe) = (&s, &exe);
            scope.spawn(move || {
                for i in 0..ITERS {
                    let v = (t * ITERS + i) as f32;
                    let x = s.fill(&[2, 8], v as f64, DType::Float32).unwrap();
                    let sq = x.square().unwrap();
                    let out = exe.run(&[("x", &x)], None).unwrap();
                    let got = out[0].1.to_vec::<f32>().unwrap();
                    assert_eq!(got, vec![4.0 * v; 16], "thread {t} iteration {i}");
                    assert_eq!(sq.to_vec::<f32>().unwrap()[0], v * v);
                }
            });
        }
    });
    let end = s.stats();
    let n = (THREADS * ITERS) as u64;
    assert_eq!(end.live_bytes, base.live_bytes, "everything released");
    assert_eq!(end.live_tensors, base.live_tensors);
    assert_eq!(end.executions - base.executions, n);
    // relu runs in the matmul's store (an epilogue): no intermediate
    assert_eq!(end.allocations - base.allocations, n * 3, "x, x², y");
    assert_eq!(end.deallocations - base.deallocations, n * 3);
    assert_eq!(
        end.compiles - base.compiles,
        1,
        "one specialisation, compiled once"
    );
    assert_eq!(end.download_bytes - base.download_bytes, n * (64 + 64));
}

/// A label names one session's records: another session cannot take it while the first is open
/// (the refused creation moves no record); once the first is disposed the label is free at once —
/// though its tensor and its handle live on (API.md) — its per-session records stop, and only the
/// new session's records carry the label.
#[test]
fn session_labels_free_once_their_session_is_disposed() {
    let label = "label-reuse";
    let opts = || SessionOptions {
        label: Some(label.into()),
        ..Default::default()
    };
    let labels = format!("{{\"session\": \"{label}\"}}");
    let refused = |what: &str| {
        let e = ledger::fails_unchanged("INVALID_ARGUMENT", what, || Session::new(opts()));
        assert!(e.to_string().contains(label), "{what}: {e}");
    };
    let named = || -> Vec<f64> {
        ledger::ledger()
            .0
            .into_iter()
            .filter(|(_, n, l, _)| n == "live_bytes" && *l == labels)
            .map(|r| r.3)
            .collect()
    };
    let a = Session::new(opts()).unwrap();
    let t = a.zeros(&[256], DType::Float32).unwrap();
    assert_eq!(named(), vec![1024.0]);
    refused("a second session under an open session's label");
    a.dispose();
    assert_eq!(named(), Vec::<f64>::new(), "a disposed session's records stop");
    let b = Session::new(opts()).expect("a disposed session's label is free at once");
    let _u = b.zeros(&[16], DType::Float32).unwrap();
    assert_eq!(
        named(),
        vec![64.0],
        "one live_bytes record under the label: the new session's"
    );
    assert_eq!(
        t.to_vec::<f32>().unwrap(),
        vec![0.0; 256],
        "the old session's tensor lives on"
    );
    refused("the label again, now the new session's");
    t.dispose();
    drop(a); // the first handle outlived the reuse
}
