//! The verdict rules on hand-made snapshots.

use super::*;
use crate::telemetry::{record, MetricKind};
use std::collections::BTreeMap;

fn snap(live: f64, peak: f64, pool: f64, runtime: f64, origins: &[(&str, f64)]) -> Vec<MetricRecord> {
    let mut v = vec![
        record("compute.storage", "live_bytes", MetricKind::Gauge, "bytes", live),
        record("compute.storage", "peak_bytes", MetricKind::Gauge, "bytes", peak),
        record("compute.memory", "pool_bytes", MetricKind::Gauge, "bytes", pool),
        record(
            "runtime.memory",
            "process_resident_bytes",
            MetricKind::Gauge,
            "bytes",
            runtime,
        ),
    ];
    for (o, b) in origins {
        let mut r = record(
            "compute.storage",
            "live_bytes_by_origin",
            MetricKind::Gauge,
            "bytes",
            *b,
        );
        r.labels = Some(BTreeMap::from([("origin".into(), o.to_string())]));
        v.push(r);
    }
    v
}

fn verdict(b: Vec<MetricRecord>, w: Vec<MetricRecord>, a: Vec<MetricRecord>) -> Diagnosis {
    diagnose(Snapshots {
        before: b,
        warm: w,
        after: a,
        warmup: Some(5),
        iterations: Some(10),
        synchronized: true,
    })
}

#[test]
fn each_rule_gives_its_verdict() {
    let mib = (1u64 << 20) as f64;
    let d = verdict(
        snap(0., 0., 0., 50. * mib, &[]),
        snap(100., 200., 512., 50. * mib, &[("square", 100.)]),
        snap(1100., 1200., 1536., 50. * mib, &[("square", 1100.)]),
    );
    assert_eq!(d.verdict, Verdict::OwnershipLeak);
    assert_eq!(d.grown_origins, vec!["square"]);
    assert_eq!(d.evidence[0].per_iteration, Some(100.0));
    assert!(d.summary.contains("'square'"), "{}", d.summary);
    let d = verdict(
        snap(0., 0., 0., 0., &[]),
        snap(4., 400., 512., 0., &[]),
        snap(4., 800., 1024., 0., &[]),
    );
    assert_eq!(d.verdict, Verdict::ShapeGrowth);
    let d = verdict(
        snap(0., 0., 0., 0., &[]),
        snap(4., 400_000., 900_000., 0., &[]),
        snap(4., 400_000., 900_000., 0., &[]),
    );
    assert_eq!(d.verdict, Verdict::PoolRetention);
    let d = verdict(
        snap(0., 0., 0., 0., &[]),
        snap(4., 400_000., 500_000., 0., &[]),
        snap(4., 400_000., 500_000., 0., &[]),
    );
    assert_eq!(d.verdict, Verdict::Steady);
    // tiny tensors: 20 B of work, 512 B of pool rounding — steady, with the warm-up a finding
    let d = verdict(
        snap(0., 0., 0., 0., &[]),
        snap(0., 20., 512., 0., &[]),
        snap(0., 20., 512., 0., &[]),
    );
    assert_eq!(d.verdict, Verdict::Steady);
    assert_eq!(d.findings[0].kind, "pool-warm-up");
    let d = verdict(
        snap(0., 0., 0., 50. * mib, &[]),
        snap(4., 4000., 5000., 50. * mib, &[]),
        snap(4., 4000., 5000., 60. * mib, &[]),
    );
    assert_eq!(d.verdict, Verdict::ProcessGrowth);
}

/// A JS heap that creeps by 2.9 KiB an iteration and steps by 680 KB in the last sample (the
/// runtime series of a steady KV-cache decode loop in CI's Chromium) is steady; the same window
/// growing 64 KiB every iteration is process growth.
#[test]
fn one_late_step_of_the_runtime_is_not_process_growth() {
    let creep: Vec<f64> = (0..33).map(|i| 5.1e6 + 2900.0 * i as f64).collect();
    let mut stepped = creep.clone();
    stepped[32] += 680e3;
    let samples = |r: &[f64]| -> Vec<Vec<MetricRecord>> {
        r.iter().map(|&v| snap(5608., 13864., 15872., v, &[])).collect()
    };
    let d = diagnose_samples(&samples(&stepped), 8, None, true).unwrap();
    assert_eq!(d.verdict, Verdict::Steady, "{}", d.summary);
    let growing: Vec<f64> = (0..33).map(|i| 5.1e6 + 65536.0 * i as f64).collect();
    let d = diagnose_samples(&samples(&growing), 8, None, true).unwrap();
    assert_eq!(d.verdict, Verdict::ProcessGrowth, "{}", d.summary);
}

/// Samples whose runtime memory is a JS heap and wasm memory (as in Chromium).
fn heap_samples(heap: &[f64], wasm: &[f64]) -> Vec<Vec<MetricRecord>> {
    heap.iter()
        .zip(wasm)
        .map(|(&h, &w)| {
            let mut s = snap(5608., 13864., 15872., 0., &[]);
            s.push(record(
                "runtime.memory",
                "js_heap_used_bytes",
                MetricKind::Gauge,
                "bytes",
                h,
            ));
            s.push(record(
                "runtime.memory",
                "wasm_memory_bytes",
                MetricKind::Gauge,
                "bytes",
                w,
            ));
            s
        })
        .collect()
}

/// A JS heap that rises 4.6 KiB an iteration through 300 iterations (a steady training loop's
/// garbage in CI's Chromium: 1.35 MB, called process growth before) is steady, with the rise a
/// finding, and so is one whose lows climb 256 KiB a collection (garbage promoted by scavenges,
/// waiting for a major collection); a heap whose lows climb 1.5 MiB a collection (11 MiB through
/// the window) is process growth, as are a heap that rises 20 MiB without a drop and wasm memory
/// growing 64 KiB an iteration beside a small heap rise.
#[test]
fn a_small_js_heap_rise_is_not_process_growth() {
    let n = 320;
    let flat = vec![1.8e6; n];
    let creep: Vec<f64> = (0..n).map(|i| 4.6e6 + 4700.0 * i as f64).collect();
    let d = diagnose_samples(&heap_samples(&creep, &flat), 20, None, true).unwrap();
    assert_eq!(d.verdict, Verdict::Steady, "{}", d.summary);
    assert!(
        d.findings.iter().any(|f| f.kind == "js-heap-below-floor"),
        "{:?}",
        d.findings
    );
    // collected every 40 iterations (1.56 MB of garbage) down to a floor that climbs each time
    let sawtooth = |climb: f64| -> Vec<f64> {
        (0..n)
            .map(|i| 4.6e6 + climb * (i / 40) as f64 + 40e3 * (i % 40) as f64)
            .collect()
    };
    let d = diagnose_samples(&heap_samples(&sawtooth(262144.0), &flat), 20, None, true).unwrap();
    assert_eq!(d.verdict, Verdict::Steady, "{}", d.summary);
    let d = diagnose_samples(&heap_samples(&sawtooth(1572864.0), &flat), 20, None, true).unwrap();
    assert_eq!(d.verdict, Verdict::ProcessGrowth, "{}", d.summary);
    let kept: Vec<f64> = (0..n).map(|i| 4.6e6 + 65536.0 * i as f64).collect();
    let d = diagnose_samples(&heap_samples(&kept, &flat), 20, None, true).unwrap();
    assert_eq!(d.verdict, Verdict::ProcessGrowth, "{}", d.summary);
    let wasm: Vec<f64> = (0..n).map(|i| 1.8e6 + 65536.0 * i as f64).collect();
    let d = diagnose_samples(&heap_samples(&creep, &wasm), 20, None, true).unwrap();
    assert_eq!(d.verdict, Verdict::ProcessGrowth, "{}", d.summary);
    // the rate said is wasm memory's (64 KiB an iteration), the heap's rise named apart
    assert!(
        d.summary
            .contains("64.0 KiB per iteration (the JS heap's 1.3 MiB left out)"),
        "{}",
        d.summary
    );
}

/// A web page's samples with no JS heap figure carry `js-heap-unobserved` whatever the verdict (here
/// steady, and an ownership leak); with the figure, or natively (no wasm memory), they do not. A heap
/// figure that first appears mid-series (a sampled `measureUserAgentSpecificMemory`) is taken back to
/// the start, not read as growth from 0; the snapshot form carries the finding too.
#[test]
fn an_unobserved_js_heap_is_a_finding_on_every_web_diagnosis() {
    let unobserved = |d: &Diagnosis| d.findings.iter().any(|f| f.kind == "js-heap-unobserved");
    let n = 30;
    let web = |heap: Option<&dyn Fn(usize) -> f64>, live: f64| -> Vec<Vec<MetricRecord>> {
        (0..n)
            .map(|i| {
                let mut s = snap(5608. + live * i as f64, 13864., 15872., 0., &[]);
                s.retain(|r| r.scope != "runtime.memory");
                s.push(record(
                    "runtime.memory",
                    "wasm_memory_bytes",
                    MetricKind::Gauge,
                    "bytes",
                    1.8e6,
                ));
                if let Some(h) = heap {
                    let v = h(i);
                    if v >= 0.0 {
                        s.push(record(
                            "runtime.memory",
                            "js_heap_used_bytes",
                            MetricKind::Gauge,
                            "bytes",
                            v,
                        ));
                    }
                }
                s
            })
            .collect()
    };
    let d = diagnose_samples(&web(None, 0.0), 5, None, true).unwrap();
    assert_eq!(d.verdict, Verdict::Steady, "{}", d.summary);
    assert!(unobserved(&d), "{:?}", d.findings);
    let f = d
        .findings
        .iter()
        .find(|f| f.kind == "js-heap-unobserved")
        .unwrap();
    assert!(
        f.summary.contains("--enable-precise-memory-info")
            && f.summary.contains("measureUserAgentSpecificMemory")
    );
    let d = diagnose_samples(&web(None, 4096.0), 5, None, true).unwrap();
    assert_eq!(d.verdict, Verdict::OwnershipLeak, "{}", d.summary);
    assert!(unobserved(&d), "on a leak too: {:?}", d.findings);
    let flat = |_: usize| 4.6e6;
    let d = diagnose_samples(&web(Some(&flat), 0.0), 5, None, true).unwrap();
    assert!(!unobserved(&d), "{:?}", d.findings);
    // the heap's first figure arrives at sample 12: steady, and observed
    let late = |i: usize| if i < 12 { -1.0 } else { 40e6 };
    let d = diagnose_samples(&web(Some(&late), 0.0), 5, None, true).unwrap();
    assert_eq!(d.verdict, Verdict::Steady, "{}", d.summary);
    assert!(!unobserved(&d), "{:?}", d.findings);
    // native samples have no JS heap to miss
    let native: Vec<Vec<MetricRecord>> = (0..n).map(|_| snap(5608., 13864., 15872., 5e6, &[])).collect();
    let d = diagnose_samples(&native, 5, None, true).unwrap();
    assert!(!unobserved(&d), "{:?}", d.findings);
    // the three-snapshot form
    let s = web(None, 0.0);
    let d = diagnose(Snapshots {
        before: s[0].clone(),
        warm: s[5].clone(),
        after: s[29].clone(),
        warmup: None,
        iterations: None,
        synchronized: true,
    });
    assert!(unobserved(&d), "{:?}", d.findings);
}
