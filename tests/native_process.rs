//! Process-wide figures and environment configuration. One test, so nothing else in this binary
//! creates sessions or sets variables concurrently.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use affon::telemetry::{self, find};
use affon::{DType, Session, SessionOptions};

fn value(scope: &str, name: &str) -> u64 {
    find(&telemetry::metrics(), scope, name).unwrap_or_else(|| panic!("{scope}/{name} missing")) as u64
}

#[test]
fn process_metrics_sum_sessions_and_environment_configures_pools() {
    // Every required record exists, with its kind.
    let recs = telemetry::metrics();
    for (scope, names) in [
        (
            "compute.storage",
            &[
                "live_bytes",
                "peak_bytes",
                "live_tensors",
                "allocations",
                "deallocations",
            ][..],
        ),
        (
            "compute.memory",
            &[
                "pool_bytes",
                "pool_cached_bytes",
                "pool_peak_bytes",
                "pool_hits",
                "pool_misses",
                "pool_evictions",
                "pool_max_total_bytes",
                "oversize_allocations",
                "device_buffers",
            ][..],
        ),
    ] {
        for n in names {
            assert!(find(&recs, scope, n).is_some(), "{scope}/{n}");
        }
    }

    // Two sessions: the process figures are their sum; per-session records carry labels.
    let a = Session::new(SessionOptions {
        label: Some("a".into()),
        ..Default::default()
    })
    .unwrap();
    let b = Session::new(SessionOptions {
        label: Some("b".into()),
        pool: affon::PoolOptions {
            max_total_bytes: Some(1 << 20),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    let ta = a.zeros(&[10], DType::Float32).unwrap();
    let tb = b.zeros(&[300], DType::Int32).unwrap();
    assert_eq!(value("compute.storage", "live_bytes"), 40 + 1200);
    assert_eq!(value("compute.storage", "live_tensors"), 2);
    assert_eq!(value("compute.memory", "pool_bytes"), 256 + 1280);
    assert_eq!(
        value("compute.memory", "pool_max_total_bytes"),
        (2 << 30) + (1 << 20)
    );
    let labelled = telemetry::metrics()
        .into_iter()
        .find(|r| r.name == "live_bytes" && r.labels.as_ref().is_some_and(|l| l["session"] == "b"))
        .unwrap();
    assert_eq!(labelled.value, 1200.0);
    // live bytes per origin: process-wide one record per origin summed over the sessions, largest
    // first; per session in origin order
    let ones = a.ones(&[100], DType::Float32).unwrap();
    let by_origin = |session: Option<&str>| -> Vec<(String, f64)> {
        let recs = telemetry::metrics().into_iter();
        recs.filter(|r| r.name == "live_bytes_by_origin")
            .filter(|r| {
                r.labels
                    .as_ref()
                    .and_then(|l| l.get("session"))
                    .map(String::as_str)
                    == session
            })
            .map(|r| (r.labels.as_ref().unwrap()["origin"].clone(), r.value))
            .collect()
    };
    let pairs = |v: &[(&str, f64)]| v.iter().map(|&(o, b)| (o.to_string(), b)).collect::<Vec<_>>();
    assert_eq!(by_origin(None), pairs(&[("zeros", 1240.0), ("ones", 400.0)]));
    assert_eq!(by_origin(Some("a")), pairs(&[("ones", 400.0), ("zeros", 40.0)]));
    assert_eq!(by_origin(Some("b")), pairs(&[("zeros", 1200.0)]));
    drop(ones);
    assert_eq!(
        by_origin(None),
        pairs(&[("zeros", 1240.0)]),
        "an origin with nothing live goes"
    );
    drop(ta);
    drop(tb);
    assert!(by_origin(None).is_empty());
    assert_eq!(value("compute.storage", "live_bytes"), 0);
    assert_eq!(value("compute.storage", "peak_bytes"), 1640);
    telemetry::reset_peak();
    assert_eq!(value("compute.storage", "peak_bytes"), 0);
    drop(a);
    drop(b); // handles dropped and no tensors left: pools are gone, bounds removed
    assert_eq!(value("compute.memory", "pool_max_total_bytes"), 0);
    assert_eq!(value("compute.memory", "pool_bytes"), 0);

    // Environment configuration, including the seed's Metal spellings; options win.
    std::env::set_var("AFFON_POOL_MAX_TOTAL_BYTES", "8MiB");
    std::env::set_var("AFFON_METAL_POOL_SIZE_CLASSES", "8");
    let s = Session::new(SessionOptions::default()).unwrap();
    assert_eq!(s.pool_config().max_total_bytes, 8 << 20);
    assert_eq!(
        s.pool_config().size_classes,
        affon::SizeClasses::Ladder { steps: 8 }
    );
    let o = Session::new(SessionOptions {
        pool: affon::PoolOptions {
            max_total_bytes: Some(4096),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    assert_eq!(o.pool_config().max_total_bytes, 4096);
    std::env::set_var("AFFON_POOL_OVERSIZE_THRESHOLD_BYTES", "big");
    let before = common::ledger::ledger();
    let e = Session::new(SessionOptions::default()).unwrap_err();
    common::ledger::assert_unchanged(
        &before,
        &common::ledger::ledger(),
        "a malformed environment value",
    );
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    assert!(
        e.to_string().contains("AFFON_POOL_OVERSIZE_THRESHOLD_BYTES"),
        "{e}"
    );
    // a value that is not UTF-8 is malformed too, never read as unset
    std::env::set_var("AFFON_POOL_OVERSIZE_THRESHOLD_BYTES", "1MiB");
    {
        use std::os::unix::ffi::OsStrExt;
        std::env::set_var("AFFON_POOL_IDLE_TRIM_MS", std::ffi::OsStr::from_bytes(b"10\xff"));
    }
    let before = common::ledger::ledger();
    let e = Session::new(SessionOptions::default()).unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    assert!(e.to_string().contains("AFFON_POOL_IDLE_TRIM_MS"), "{e}");
    common::ledger::assert_unchanged(&before, &common::ledger::ledger(), "a refused session");
    for k in [
        "AFFON_POOL_MAX_TOTAL_BYTES",
        "AFFON_METAL_POOL_SIZE_CLASSES",
        "AFFON_POOL_OVERSIZE_THRESHOLD_BYTES",
        "AFFON_POOL_IDLE_TRIM_MS",
    ] {
        std::env::remove_var(k);
    }
    // a device allowing fewer than 128 invocations a workgroup fits no kernel set: refused,
    // nothing counted, its label free again
    let before = common::ledger::ledger();
    let narrow = Session::new(SessionOptions {
        label: Some("narrow".into()),
        workgroup_limit: Some(64),
        ..Default::default()
    });
    let Err(e) = narrow else {
        panic!("64 invocations fit no kernel set")
    };
    assert_eq!(e.code(), "UNSUPPORTED", "{e}");
    assert!(e.to_string().contains("64 invocations"), "{e}");
    common::ledger::assert_unchanged(&before, &common::ledger::ledger(), "a device too narrow");
    let wide = Session::new(SessionOptions {
        label: Some("narrow".into()),
        workgroup_limit: Some(128),
        ..Default::default()
    })
    .expect("the refused session's label is free");
    drop(wide);
}
