//! The seed's trend cases, each with the verdict it must get, plus owner attribution, the report
//! and OOM forensics. Written once, run natively and in Chromium. They read process-wide metrics, so
//! each test binary runs them one after another in a single test.
#![allow(dead_code)]

use affon::telemetry::{self, Verdict, WatchOptions};
use affon::{DType, Session, Tensor};

use crate::programs::running_mean;

const OPTS: WatchOptions = WatchOptions::new(10, 30);

fn check(d: &telemetry::Diagnosis, want: Verdict, case: &str) {
    assert_eq!(
        d.verdict, want,
        "{case}: {} — evidence {:?}",
        d.summary, d.evidence
    );
    assert!(!d.summary.is_empty() && !d.evidence.is_empty(), "{case}");
    assert!(
        d.snapshots.synchronized,
        "{case}: watch synchronises before each snapshot"
    );
}

/// A loop that forgets one program output per iteration.
pub async fn forgets_one_output_per_iteration(s: &Session) {
    let exe = s.compile(&running_mean()).unwrap();
    let state = exe.create_state(&[]).unwrap();
    let x = s.ones(&[3, 4], DType::Float32).unwrap();
    let mut forgotten: Vec<Tensor> = vec![];
    let d = telemetry::watch(&[s], OPTS, async |_| {
        let mut out = exe.run(&[("x", &x)], Some(&state))?;
        forgotten.push(out.remove(0).1); // never disposed
        Ok(())
    })
    .await
    .unwrap();
    check(&d, Verdict::OwnershipLeak, "forgotten output");
    assert_eq!(d.grown_origins, vec!["program 'running_mean' output 'y'"]);
    assert_eq!(d.evidence[0].metric, "compute.storage/live_bytes");
    assert_eq!(d.evidence[0].per_iteration, Some(16.0), "16 bytes per iteration");
    assert!(
        d.summary.contains("program 'running_mean' output 'y'"),
        "{}",
        d.summary
    );
}

/// A loop that keeps every tenth output in an array (a slow leak).
/// A long watch of a loop that holds nothing is `steady`: the watch's own sampling (thousands of
/// iterations of figures) must not read as process growth.
pub async fn a_long_watch_of_nothing_is_steady(s: &Session) {
    let x = s.fill(&[4], 1.0, DType::Float32).unwrap();
    let d = telemetry::watch(&[s], WatchOptions::new(5, 3000), async |_| {
        drop(x.square()?);
        Ok(())
    })
    .await
    .unwrap();
    assert_eq!(d.verdict, Verdict::Steady, "{}", d.summary);
}

pub async fn keeps_every_tenth_output(s: &Session) {
    let x = s.ones(&[256], DType::Float32).unwrap();
    let mut kept = vec![];
    let d = telemetry::watch(&[s], OPTS, async |i| {
        let y = x.square()?;
        if i % 10 == 0 {
            kept.push(y);
        }
        Ok(())
    })
    .await
    .unwrap();
    check(&d, Verdict::OwnershipLeak, "every tenth");
    assert_eq!(d.grown_origins, vec!["square"]);
    assert_eq!(
        d.evidence[0].delta,
        3.0 * 1024.0,
        "three kept outputs of 1 KiB during the steady phase"
    );
}

/// Old ExecutionState objects kept in a list.
pub async fn keeps_old_states(s: &Session) {
    let exe = s.compile(&running_mean()).unwrap();
    let x = s.ones(&[3, 4], DType::Float32).unwrap();
    let mut states = vec![];
    let d = telemetry::watch(&[s], OPTS, async |_| {
        let st = exe.create_state(&[])?;
        drop(exe.run(&[("x", &x)], Some(&st))?);
        states.push(st);
        Ok(())
    })
    .await
    .unwrap();
    check(&d, Verdict::OwnershipLeak, "old states");
    assert_eq!(d.grown_origins, vec!["state 'acc' of program 'running_mean'"]);
}

/// A correct loop whose shapes grow every iteration.
pub async fn growing_shapes(s: &Session) {
    let d = telemetry::watch(&[s], OPTS, async |i| {
        let t = s.ones(&[i as usize + 1, 1024], DType::Float32)?;
        let sq = t.square()?;
        let total = sq.sum(&[], false)?;
        assert_eq!(total.item_f64().await?, ((i + 1) * 1024) as f64);
        Ok(())
    })
    .await
    .unwrap();
    check(&d, Verdict::ShapeGrowth, "growing shapes");
}

/// A correct loop cycling through many distinct sizes: the pool warms up, then plateaus.
pub async fn cycles_distinct_sizes(s: &Session) {
    let sizes: Vec<usize> = (1..=10).map(|k| k * 1024 + 250).collect();
    let opts = WatchOptions::new(10, 30);
    let d = telemetry::watch(&[s], opts, async |i| {
        let t = s.ones(&[sizes[i as usize % sizes.len()]], DType::Float32)?;
        let _u = t.mul(&t)?;
        Ok(())
    })
    .await
    .unwrap();
    check(&d, Verdict::PoolRetention, "distinct sizes");
}

/// A correct loop with tidy: steady.
pub async fn steady_loop(s: &Session) {
    let x = s.ones(&[1000], DType::Float32).unwrap();
    let d = telemetry::watch(&[s], OPTS, async |_| {
        let total = s.tidy(|| x.square().and_then(|y| y.sum(&[], false)));
        assert_eq!(total?.item_f64().await?, 1000.0);
        Ok(())
    })
    .await
    .unwrap();
    check(&d, Verdict::Steady, "tidy loop");
}

/// A correct loop that also grows a plain host-side array (process memory, not tensors).
pub async fn grows_a_host_array(s: &Session) {
    let x = s.ones(&[1000], DType::Float32).unwrap();
    let mut junk: Vec<Vec<u8>> = vec![];
    let d = telemetry::watch(&[s], OPTS, async |i| {
        let y = x.square()?;
        drop(y);
        if i >= OPTS.warmup {
            junk.push(vec![(i % 251) as u8 + 1; 2 << 20]); // 2 MiB, touched
        }
        Ok(())
    })
    .await
    .unwrap();
    check(&d, Verdict::ProcessGrowth, "host array");
    assert!(junk.iter().all(|v| v[0] != 0));
}

/// `liveTensors()` attributes eager ops, program outputs, states and constants, with their age.
pub async fn live_tensor_attribution(s: &Session) {
    let mut p = running_mean();
    let c = p.constant(&[1.0, 2.0, 3.0, 4.0], &[4], DType::Float32).unwrap();
    p.output("c", c).unwrap();
    let exe = s.compile(&p).unwrap();
    let it = telemetry::next_iteration();
    let state = exe.create_state(&[]).unwrap();
    let x = s.ones(&[3, 4], DType::Float32).unwrap();
    let sq = x.square().unwrap();
    let out = exe.run(&[("x", &sq)], Some(&state)).unwrap();
    let groups = telemetry::live_tensors();
    let find = |o: &str| {
        groups
            .iter()
            .find(|g| g.origin == o)
            .unwrap_or_else(|| panic!("{o} in {groups:?}"))
    };
    assert_eq!((find("square").count, find("square").bytes), (1, 48));
    assert_eq!(find("program 'running_mean' output 'y'").bytes, 16);
    assert_eq!(find("program 'running_mean' output 'c'").bytes, 16);
    assert_eq!(find("state 'acc' of program 'running_mean'").bytes, 16);
    assert_eq!(find("constant of program 'running_mean'").bytes, 16);
    assert_eq!(find("square").oldest_iteration, it);
    let sorted = groups.windows(2).all(|w| w[0].bytes >= w[1].bytes);
    assert!(sorted, "largest first: {groups:?}");
    drop(out);
    drop(sq);
    assert!(!telemetry::live_tensors().iter().any(|g| g.origin == "square"));
}

/// Every report field is present and consistent.
pub async fn report_fields(s: &Session) {
    let x = s.ones(&[64], DType::Float32).unwrap();
    let d = telemetry::watch(&[s], WatchOptions::new(2, 4), async |_| {
        drop(x.exp()?);
        Ok(())
    })
    .await
    .unwrap();
    let ctx = serde_json::json!({ "program": "exp-loop", "inputs": [{ "name": "x", "shape": [64], "dtype": "float32" }],
                                  "pattern": "eager exp, output disposed" });
    let r = telemetry::report(ctx, Some(&d));
    let get = |path: &str| {
        path.split('.')
            .try_fold(&r, |v, k| v.get(k))
            .unwrap_or_else(|| panic!("report lacks {path}: {r:#}"))
    };
    assert_eq!(get("affon.version"), env!("CARGO_PKG_VERSION"));
    assert!(get("affon.revision").as_str().is_some_and(|s| !s.is_empty()));
    assert!(["debug", "release"].contains(&get("affon.buildMode").as_str().unwrap()));
    assert!(get("platform.target").is_string());
    let sessions = get("sessions").as_array().unwrap();
    assert!(sessions.iter().any(|x| x["label"] == s.label()));
    assert!(sessions
        .iter()
        .all(|x| x["adapter"]["backend"].is_string() && x["pool"]["maxTotalBytes"].is_number()));
    assert!(get("environment").is_object());
    assert_eq!(get("program"), "exp-loop");
    assert_eq!(get("inputs")[0]["shape"][0], 64);
    assert_eq!(get("iterations"), 4);
    for snap in ["baseline", "warm", "steady"] {
        assert_eq!(get(&format!("snapshots.{snap}.synchronized")), true, "{snap}");
        assert!(
            get(&format!("snapshots.{snap}.figures.liveBytes")).is_number(),
            "{snap}"
        );
        assert!(get(&format!("snapshots.{snap}.metrics")).is_array(), "{snap}");
    }
    assert_eq!(get("snapshots.warmupIterations"), 2);
    assert_eq!(get("snapshots.steadyIterations"), 4);
    assert_eq!(get("diagnosis.verdict"), "steady");
    for k in [
        "allocations",
        "deallocations",
        "liveTensors",
        "forgottenHandles",
        "forgottenLive",
        "forgottenBytes",
        "executions",
        "compiles",
        "executableCacheEntries",
        "owners",
    ] {
        assert!(!get(&format!("ownership.{k}")).is_null(), "ownership.{k}");
    }
    assert_eq!(get("context.pattern"), "eager exp, output disposed");
}

/// `OUT_OF_MEMORY` names the largest live owners and the pool state.
pub async fn out_of_memory_forensics(s: &Session) {
    let a = s.ones(&[4096], DType::Float32).unwrap(); // 16 KiB, origin "ones"
    let b = a.square().unwrap(); // 16 KiB, "square"
    let c = b.square().unwrap();
    let before = crate::ledger::ledger();
    let e = s.zeros(&[8192], DType::Float32).unwrap_err();
    crate::ledger::assert_unchanged(&before, &crate::ledger::ledger(), "an out-of-memory zeros");
    let affon::Error::OutOfMemory {
        forensics: Some(f), ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(
        f.owners
            .iter()
            .find(|o| o.origin == "square")
            .map(|o| (o.count, o.bytes)),
        Some((2, 32768))
    );
    assert_eq!(f.owners[0].origin, "square", "largest first");
    assert_eq!(f.bound, 64 << 10);
    assert_eq!(f.pool.bytes_held, 3 * 16384);
    let msg = e.to_string();
    assert!(msg.contains("largest owners: 'square' 32768 bytes in 2"), "{msg}");
    drop((a, b, c));
}

/// What `watch` refuses before it runs anything (no iteration; the peaks not reset): no iteration in
/// the window, more iterations than it keeps samples for. A session whose device is lost does not
/// fail the watch of another one.
pub async fn watch_refusals_and_a_lost_neighbour(s: &Session, lost: &Session) {
    let t = s.ones(&[1024], DType::Float32).unwrap();
    drop(t); // the peak stays above what is live
    let peak = s.stats().peak_bytes;
    let before = crate::ledger::ledger();
    let max = telemetry::MAX_WATCH_ITERATIONS;
    for (w, n) in [(3, 0), (0, max + 1), (max, 1), (u64::MAX, u64::MAX)] {
        let mut calls = 0;
        let e = telemetry::watch(&[s], WatchOptions::new(w, n), async |_| {
            calls += 1;
            Ok(())
        })
        .await
        .unwrap_err();
        assert_eq!(
            (e.code(), calls),
            ("INVALID_ARGUMENT", 0),
            "warmup {w}, iterations {n}"
        );
        assert_eq!(
            s.stats().peak_bytes,
            peak,
            "the peaks are reset only by a watch that runs"
        );
    }
    crate::ledger::assert_unchanged(&before, &crate::ledger::ledger(), "refused watches");
    // a watch whose function fails leaves the peaks as if it had not reset them: the larger of
    // before (a 256 KiB tensor, gone) and what its iterations reached (64 KiB each)
    drop(s.ones(&[65536], DType::Float32).unwrap());
    let high = s.stats().peak_bytes;
    assert!(high >= 262_144);
    let e = telemetry::watch(&[s], WatchOptions::new(1, 3), async |i| {
        drop(s.ones(&[16384], DType::Float32)?);
        match i {
            2 => Err(affon::Error::InvalidArgument("the watched function threw".into())),
            _ => Ok(()),
        }
    })
    .await
    .unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    assert_eq!(s.stats().peak_bytes, high, "a failed watch: the peak before it");
    let d = telemetry::watch(&[s], WatchOptions::new(1, 3), async |_| {
        drop(s.ones(&[16384], DType::Float32)?);
        Ok(())
    })
    .await
    .unwrap();
    assert_eq!(d.verdict, Verdict::Steady, "{}", d.summary);
    assert_eq!(
        s.stats().peak_bytes,
        s.stats().live_bytes + 65536,
        "a watch that runs resets the peaks"
    );
    lost.destroy_device();
    let x = s.fill(&[4], 1.0, DType::Float32).unwrap();
    let opts = WatchOptions {
        session: Some(s.label().to_string()),
        ..WatchOptions::new(2, 10)
    };
    let d = telemetry::watch(&[s, lost], opts, async |_| {
        drop(x.square()?);
        Ok(())
    })
    .await
    .unwrap();
    assert_eq!(d.verdict, Verdict::Steady, "{}", d.summary);
}
