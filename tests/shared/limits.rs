//! The core's limits, on both targets: grids larger than 65,535 workgroups are split (elementwise,
//! reductions, nn ops, products), tidy scopes and the specialisation cache stay bounded, forgotten
//! handles and sessions can be released, and plans past 4 GiB are computed in 64-bit arithmetic.
#![allow(dead_code)]

use std::collections::HashMap;

use affon::{telemetry, DType, Program, Session};

use crate::ledger::{ledger, Ledger};

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
    // shapes 7..=70 are cached, 7 the least recently used. A `memory_plan` query for 7 does not
    // keep it (looking changes nothing); a successful run of 9 does
    let run = |n: usize| {
        let t = s.ones(&[n], DType::Float32).unwrap();
        drop(exe.run(&[("x", &t)], None).unwrap());
    };
    let shapes = HashMap::from([("x".to_string(), vec![7])]);
    exe.memory_plan(&shapes).unwrap();
    run(9);
    run(71); // evicts 7
    run(72); // evicts 8 (9 was used)
    let compiles = || s.stats().compiles;
    let c = compiles();
    run(9);
    assert_eq!(compiles() - c, 0, "9 stayed: its run made it the most recent");
    run(7);
    assert_eq!(compiles() - c, 1, "7 was evicted: the query did not keep it");
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
    let label = make.label().to_string();
    let t = make.ones(&[4], DType::Float32).unwrap();
    let kept = make.ones(&[8], DType::Float32).unwrap();
    make.forget(); // as if the GC took the Session handle
    let y = t.add(&t).unwrap(); // still works: GC timing never changes a result
    assert_eq!(y.read::<f32>().await.unwrap(), vec![2.0; 4]);
    drop((t, y));
    kept.forget();
    let other_before = other.stats();
    let before = ledger();
    let (handles, bytes) = telemetry::release_forgotten();
    assert_eq!((handles, bytes), (1, 32));
    let after = ledger();
    // `live_bytes`, process-wide (no labels) or of one session (0 once its records are gone)
    let live = |l: &Ledger, session: Option<&str>| -> f64 {
        l.0.iter()
            .filter(|r| r.1 == "live_bytes")
            .filter(|r| match session {
                None => r.2.is_empty(),
                Some(name) => r.2.contains(&format!("{name:?}")),
            })
            .map(|r| r.3)
            .sum()
    };
    assert_eq!(
        live(&before, None) - live(&after, None),
        32.0,
        "the process's live bytes"
    );
    assert_eq!(
        live(&before, Some(&label)),
        32.0,
        "the forgotten session held only the kept tensor"
    );
    assert_eq!(live(&after, Some(&label)), 0.0, "and holds nothing after");
    assert_eq!(
        other.stats(),
        other_before,
        "another session's figures are unaffected"
    );
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
