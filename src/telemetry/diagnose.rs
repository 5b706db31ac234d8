//! Diagnosis: classify a trend from three snapshots (before warm-up, after warm-up, after the
//! steady iterations) into the seed's categories.
//!
//! The rules, in order (all differences are between `warm` and `after`):
//! 1. **ownership-leak** — `compute.storage/live_bytes` rose. Accounting is exact, so any rise is
//!    storage someone still owns; evidence names the origins whose live bytes grew.
//! 2. **shape-growth** — live bytes flat, `compute.storage/peak_bytes` rose: later work used larger
//!    shapes.
//! 3. **pool-retention** (warming) — live and peak flat, `compute.memory/pool_bytes` still rising:
//!    the pool is caching new size classes.
//! 4. **process-growth** — live, peak and pool flat, but `runtime.memory` (resident bytes, wasm
//!    memory or JS heap) rose by more than 4 MiB and 5 % (less is within a JS heap's normal swing between
//!    collections): the runtime, driver or JS heap, not tensors.
//! 5. **pool-retention** — all flat, and during warm-up the pool grew by more than 1.5 × the
//!    workload's working set (peak live bytes during warm-up above the baseline live bytes) — more than
//!    size-class rounding explains: buffers retained for reuse, not a leak. (`watch` resets the peak
//!    gauges before its first snapshot so the peak is the workload's own.)
//! 6. **steady** — otherwise.

use std::collections::BTreeMap;

use super::MetricRecord;

/// The verdicts (API.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Live and pool bytes flat after warm-up.
    Steady,
    /// Live tensor bytes rise with each iteration.
    OwnershipLeak,
    /// Live bytes stable; the pool warmed up and plateaued (retention for reuse).
    PoolRetention,
    /// Live bytes stable; peak rising because later work uses larger shapes.
    ShapeGrowth,
    /// Only process/runtime memory rises.
    ProcessGrowth,
}

/// One fact behind a verdict.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// `scope/name` of a metric, or `origin:<origin>` for live bytes of one origin.
    pub metric: String,
    /// Value before warm-up.
    pub before: f64,
    /// Value after warm-up.
    pub warm: f64,
    /// Value after the steady iterations.
    pub after: f64,
    /// `after - warm`.
    pub delta: f64,
    /// `delta / iterations`, when the iteration count is known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub per_iteration: Option<f64>,
}

/// The three snapshots and how they were taken (kept in a diagnosis for reports).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshots {
    /// Before warm-up.
    pub before: Vec<MetricRecord>,
    /// After warm-up.
    pub warm: Vec<MetricRecord>,
    /// After the steady iterations.
    pub after: Vec<MetricRecord>,
    /// Warm-up iterations, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub warmup: Option<u64>,
    /// Steady iterations between `warm` and `after`, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub iterations: Option<u64>,
    /// Whether device work was synchronised before each snapshot.
    pub synchronized: bool,
}

/// `Diagnosis = { verdict, summary, evidence[] }` (plus the snapshots it was made from).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    /// The classification.
    pub verdict: Verdict,
    /// One sentence a person can act on.
    pub summary: String,
    /// The figures behind it, most telling first.
    pub evidence: Vec<Evidence>,
    /// Origins whose live bytes grew between `warm` and `after`, largest growth first.
    pub grown_origins: Vec<String>,
    /// The snapshots.
    pub snapshots: Snapshots,
}

fn value(s: &[MetricRecord], scope: &str, name: &str) -> f64 {
    super::find(s, scope, name).unwrap_or(0.0)
}

fn by_origin(s: &[MetricRecord]) -> BTreeMap<String, f64> {
    s.iter()
        .filter(|r| r.scope == "compute.storage" && r.name == "live_bytes_by_origin")
        .filter_map(|r| Some((r.labels.as_ref()?.get("origin")?.clone(), r.value)))
        .collect()
}

fn runtime_total(s: &[MetricRecord]) -> f64 {
    [
        "process_resident_bytes",
        "js_heap_used_bytes",
        "wasm_memory_bytes",
    ]
    .iter()
    .map(|n| value(s, "runtime.memory", n))
    .sum()
}

fn fmt_bytes(b: f64) -> String {
    let a = b.abs();
    if a >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else if a >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

/// Classifies `snapshots` (see the module docs for the rules).
pub fn diagnose(snapshots: Snapshots) -> Diagnosis {
    let (b, w, a) = (&snapshots.before, &snapshots.warm, &snapshots.after);
    let n = snapshots.iterations.filter(|&n| n > 0);
    let ev = |metric: &str, get: &dyn Fn(&[MetricRecord]) -> f64| {
        let (vb, vw, va) = (get(b), get(w), get(a));
        Evidence {
            metric: metric.to_string(),
            before: vb,
            warm: vw,
            after: va,
            delta: va - vw,
            per_iteration: n.map(|n| (va - vw) / n as f64),
        }
    };
    let m = |scope: &'static str, name: &'static str| {
        ev(&format!("{scope}/{name}"), &move |s: &[MetricRecord]| {
            value(s, scope, name)
        })
    };
    let live = m("compute.storage", "live_bytes");
    let peak = m("compute.storage", "peak_bytes");
    let pool = m("compute.memory", "pool_bytes");
    let cached = m("compute.memory", "pool_cached_bytes");
    let tensors = m("compute.storage", "live_tensors");
    let runtime = ev("runtime.memory/total", &runtime_total);

    let (ow, oa) = (by_origin(w), by_origin(a));
    let mut grown: Vec<(String, f64)> = oa
        .iter()
        .map(|(o, &v)| (o.clone(), v - ow.get(o).copied().unwrap_or(0.0)))
        .filter(|(_, d)| *d > 0.0)
        .collect();
    grown.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    let origin_ev: Vec<Evidence> = grown
        .iter()
        .map(|(o, _)| {
            ev(&format!("origin:{o}"), &|s: &[MetricRecord]| {
                by_origin(s).get(o).copied().unwrap_or(0.0)
            })
        })
        .collect();
    let per = |e: &Evidence| match e.per_iteration {
        Some(p) => format!("{} per iteration", fmt_bytes(p)),
        None => format!("{} in total", fmt_bytes(e.delta)),
    };

    // JS heaps rise and fall between collections by a few MiB: only a larger, sustained rise counts.
    let runtime_rose = runtime.delta > (4u64 << 20) as f64 && runtime.delta > 0.05 * runtime.warm;
    let (verdict, summary, mut evidence) = if live.delta > 0.0 {
        let who = if grown.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = grown
                .iter()
                .take(3)
                .map(|(o, d)| format!("'{o}' (+{})", fmt_bytes(*d)))
                .collect();
            format!("; growing: {}", list.join(", "))
        };
        let s = format!(
            "live tensor bytes rose by {} ({} tensors){who}: something keeps outputs or states without disposing them",
            per(&live),
            tensors.delta
        );
        let mut e = vec![live.clone(), tensors.clone()];
        e.extend(origin_ev);
        (Verdict::OwnershipLeak, s, e)
    } else if peak.delta > 0.0 {
        let s = format!(
            "live bytes are flat but the peak rose by {}: later iterations use larger shapes (not a leak)",
            per(&peak)
        );
        (
            Verdict::ShapeGrowth,
            s,
            vec![peak.clone(), live.clone(), pool.clone()],
        )
    } else if pool.delta > 0.0 {
        let s = format!(
            "live bytes and peak are flat; the pool is still caching new sizes (+{}): retention for reuse, bounded by pool_max_total_bytes",
            per(&pool)
        );
        (
            Verdict::PoolRetention,
            s,
            vec![pool.clone(), cached.clone(), live.clone()],
        )
    } else if runtime_rose {
        let s = format!(
            "tensor storage and the pool are flat, but runtime memory rose by {}: the JS heap, runtime or driver grows, not tensors",
            per(&runtime)
        );
        (
            Verdict::ProcessGrowth,
            s,
            vec![runtime.clone(), live.clone(), pool.clone()],
        )
    } else if pool.warm - pool.before > 1.5 * (peak.warm - live.before).max(0.0) && pool.warm > pool.before {
        let working = (peak.warm - live.before).max(0.0);
        let s = format!(
            "live bytes are flat; the pool warmed up by {} and plateaued at {} — {:.1}× the working set of {}: retention for reuse, not a leak",
            fmt_bytes(pool.warm - pool.before),
            fmt_bytes(pool.after),
            (pool.warm - pool.before) / working.max(1.0),
            fmt_bytes(working)
        );
        (
            Verdict::PoolRetention,
            s,
            vec![pool.clone(), cached.clone(), peak.clone(), live.clone()],
        )
    } else {
        let s = format!(
            "steady: live bytes ({}), peak and pool bytes are flat after warm-up",
            fmt_bytes(live.after)
        );
        (Verdict::Steady, s, vec![live.clone(), pool.clone(), peak.clone()])
    };
    for e in [live, peak, pool, cached, runtime] {
        if !evidence.iter().any(|x| x.metric == e.metric) {
            evidence.push(e);
        }
    }
    Diagnosis {
        verdict,
        summary,
        evidence,
        grown_origins: grown.into_iter().map(|(o, _)| o).collect(),
        snapshots,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::{record, MetricKind};

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
            snap(4., 4000., 9000., 0., &[]),
            snap(4., 4000., 9000., 0., &[]),
        );
        assert_eq!(d.verdict, Verdict::PoolRetention);
        let d = verdict(
            snap(0., 0., 0., 0., &[]),
            snap(4., 4000., 5000., 0., &[]),
            snap(4., 4000., 5000., 0., &[]),
        );
        assert_eq!(d.verdict, Verdict::Steady);
        let d = verdict(
            snap(0., 0., 0., 50. * mib, &[]),
            snap(4., 4000., 5000., 50. * mib, &[]),
            snap(4., 4000., 5000., 60. * mib, &[]),
        );
        assert_eq!(d.verdict, Verdict::ProcessGrowth);
    }
}
