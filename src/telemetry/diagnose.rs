//! Diagnosis: classify a trend from per-iteration samples (`watch`, `diagnose({samples, warmup})`)
//! or from three snapshots (`diagnose({before, warm, after})`) into the seed's categories.
//!
//! The figures are series over the window from the end of warm-up to the last sample; their
//! trends (sustained: both the highs and the lows of each third of the window rise; stopped; flat)
//! are defined in `series.rs`. The rules, in order:
//! 1. **ownership-leak** — `compute.storage/live_bytes` rises *sustained* through the window.
//!    Accounting is exact, so any such rise, however small, is storage someone still owns; evidence
//!    names the origins whose live bytes grew. A rise that stops (a bounded queue filling, a table
//!    built once) is a finding (`bounded-growth`), not a leak.
//! 2. Otherwise a sustained rise of the peak is **shape-growth** (later work uses larger shapes; the
//!    pool's rise that comes with it is a finding: new sizes need new classes), and else the
//!    **largest** of the sustained growths of the pool (**pool-retention**: still caching new sizes)
//!    and runtime memory (**process-growth**: resident bytes, wasm memory or JS heap) decides. Pool and runtime growth
//!    count only when *material*: at least 64 KiB (pool) or 1 MiB (runtime), 2 % of the figure's own
//!    size, and more than it swings by itself inside the window (a JS heap between collections).
//! 3. **pool-retention** — nothing grows in the window, but during warm-up the pool grew by a
//!    material amount (≥ 64 KiB) and by more than 1.5 × the workload's working set (peak live bytes
//!    during warm-up above the baseline): buffers retained for reuse. A smaller warm-up (size-class
//!    rounding of tiny tensors) is a finding (`pool-warm-up`).
//! 4. **steady** — otherwise.
//!
//! Whatever moved but did not decide the verdict is listed in `findings`. With a `session`, only
//! that session's labelled records count (runtime memory is the process's).

use super::series::{counted_runtime, fmt_bytes, late_rise, material, point, swing, trend, Point, Trend};
use super::MetricRecord;

mod sampler;
mod types;
pub(crate) use sampler::Sampler;
pub use types::{Diagnosis, Evidence, Finding, Series, Snapshots, Verdict};

/// Classifies three snapshots (see the module docs for the rules).
pub fn diagnose(snapshots: Snapshots) -> Diagnosis {
    let samples = [
        snapshots.before.clone(),
        snapshots.warm.clone(),
        snapshots.after.clone(),
    ];
    let mut d = judge(&samples, 1, snapshots.iterations, None);
    d.snapshots = snapshots;
    d
}

/// Classifies per-iteration samples: `samples[0]` before the first iteration, then one after each;
/// the first `warmup` iterations are warm-up. With `session`, only its labelled figures count.
pub fn diagnose_samples(
    samples: &[Vec<MetricRecord>],
    warmup: usize,
    session: Option<&str>,
    synchronized: bool,
) -> crate::Result<Diagnosis> {
    if samples.len() < 2 || warmup >= samples.len() - 1 {
        return Err(crate::Error::InvalidArgument(format!(
            "diagnose needs at least one sample after warm-up: {} samples, warmup {warmup}",
            samples.len()
        )));
    }
    let pts: Vec<Point> = samples.iter().map(|s| point(s, session)).collect();
    let snaps = [&samples[0], &samples[warmup], &samples[samples.len() - 1]];
    Ok(diagnose_points(&pts, snaps, warmup, session, synchronized))
}

pub(super) fn diagnose_points(
    pts: &[Point],
    [before, warm, after]: [&Vec<MetricRecord>; 3],
    warmup: usize,
    session: Option<&str>,
    synchronized: bool,
) -> Diagnosis {
    let iterations = (pts.len() - 1 - warmup) as u64;
    let mut d = judge_points(pts, warmup, Some(iterations));
    d.snapshots = Snapshots {
        before: before.clone(),
        warm: warm.clone(),
        after: after.clone(),
        warmup: Some(warmup as u64),
        iterations: Some(iterations),
        synchronized,
    };
    d.series = Some(Series {
        live_bytes: pts.iter().map(|p| p.live).collect(),
        pool_bytes: pts.iter().map(|p| p.pool).collect(),
        peak_bytes: pts.iter().map(|p| p.peak).collect(),
        runtime_bytes: pts.iter().map(|p| p.runtime).collect(),
    });
    d.session = session.map(str::to_string);
    d
}

const POOL_FLOOR: f64 = 64.0 * 1024.0;
const RUNTIME_FLOOR: f64 = 1024.0 * 1024.0;

/// The rules, over `samples` with the window starting at `warm`.
fn judge(
    samples: &[Vec<MetricRecord>],
    warm: usize,
    iterations: Option<u64>,
    session: Option<&str>,
) -> Diagnosis {
    let pts: Vec<Point> = samples.iter().map(|s| point(s, session)).collect();
    let mut d = judge_points(&pts, warm, iterations);
    d.session = session.map(str::to_string);
    d
}

/// The rules over the per-iteration figures `pts`, the window starting at `warm`.
fn judge_points(pts: &[Point], warm: usize, iterations: Option<u64>) -> Diagnosis {
    let (b, w, a) = (&pts[0], &pts[warm], &pts[pts.len() - 1]);
    let window = &pts[warm..];
    let n = iterations.filter(|&n| n > 0);
    let ev = |metric: &str, get: &dyn Fn(&Point) -> f64| {
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
    let col = |get: fn(&Point) -> f64| window.iter().map(get).collect::<Vec<f64>>();
    let live = ev("compute.storage/live_bytes", &|p| p.live);
    let peak = ev("compute.storage/peak_bytes", &|p| p.peak);
    let pool = ev("compute.memory/pool_bytes", &|p| p.pool);
    let cached = ev("compute.memory/pool_cached_bytes", &|p| p.cached);
    let tensors = ev("compute.storage/live_tensors", &|p| p.tensors);
    let runtime = ev("runtime.memory/total", &|p| p.runtime);
    // the runtime figure the rules count: less a JS heap rise too small to tell from garbage
    let (counted, uncollected) = counted_runtime(window);
    let (live_t, peak_t, pool_t, runtime_t) = (
        trend(&col(|p| p.live)),
        trend(&col(|p| p.peak)),
        trend(&col(|p| p.pool)),
        trend(&counted),
    );
    // Pool and runtime growth is material when what the last two thirds of the window add (scaled
    // to the whole window, from medians: `late_rise`) is: a burst early in the window (a driver or
    // allocator warming up) that then creeps by a few bytes is not a trend of material size, nor
    // is one step in the last samples, while a leak grows all along.
    let late = |get: fn(&Point) -> f64| late_rise(&col(get));
    let pool_material = material(late(|p| p.pool), pool.warm, POOL_FLOOR, swing(&col(|p| p.pool)));
    let runtime_material = material(late_rise(&counted), runtime.warm, RUNTIME_FLOOR, swing(&counted));

    let mut grown: Vec<(String, f64)> = a
        .origins
        .iter()
        .map(|(o, &v)| (o.clone(), v - w.origins.get(o).copied().unwrap_or(0.0)))
        .filter(|(_, d)| *d > 0.0)
        .collect();
    grown.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    let origin_ev: Vec<Evidence> = grown
        .iter()
        .map(|(o, _)| {
            ev(&format!("origin:{o}"), &|p| {
                p.origins.get(o).copied().unwrap_or(0.0)
            })
        })
        .collect();
    let per = |e: &Evidence| match e.per_iteration {
        Some(p) => format!("{} per iteration", fmt_bytes(p)),
        None => format!("{} in total", fmt_bytes(e.delta)),
    };
    // what decided a runtime growth: the rise without a JS heap rise left out (named apart)
    let rise = runtime.delta - uncollected.unwrap_or(0.0);
    let counted_rise = Evidence {
        delta: rise,
        per_iteration: n.map(|k| rise / k as f64),
        ..runtime.clone()
    };
    let runtime_rose = match uncollected {
        Some(h) => format!("{} (the JS heap's {} left out)", per(&counted_rise), fmt_bytes(h)),
        None => per(&runtime),
    };
    let mut findings = Vec::new();
    let mut find = |kind: &str, summary: String| {
        findings.push(Finding {
            kind: kind.into(),
            summary,
        })
    };

    // Sustained, material growths other than live bytes, largest first.
    let mut growths: Vec<(f64, Verdict)> = Vec::new();
    if peak_t == Trend::Sustained && peak.delta > 0.0 {
        growths.push((peak.delta, Verdict::ShapeGrowth));
    }
    if pool_t == Trend::Sustained && pool_material {
        growths.push((pool.delta, Verdict::PoolRetention));
    }
    if runtime_t == Trend::Sustained && runtime_material {
        growths.push((counted[counted.len() - 1] - counted[0], Verdict::ProcessGrowth));
    }
    // A rising peak explains a rising pool (new sizes need new classes): shape growth comes first.
    growths.sort_by(|x, y| {
        let shape = |v: Verdict| v == Verdict::ShapeGrowth;
        shape(y.1).cmp(&shape(x.1)).then(y.0.total_cmp(&x.0))
    });
    // how far the pool rose and stayed: by the warm point, or by the end of a window without a
    // trend (a cache that learns a cycling loop's sizes on its second pass keeps them from then
    // on), less what live tensors took of it (a table built once is live, not retained)
    let later = (a.pool - b.pool) - (a.live - b.live).max(0.0);
    let warm_up_pool = (w.pool - b.pool).max(later);
    // the working set: the largest peak seen (a larger input inside the window needs its own
    // buffers, which are not retention)
    let working = (w.peak.max(a.peak) - b.live).max(0.0);
    let pool_plateau = warm_up_pool >= POOL_FLOOR && warm_up_pool > 1.5 * working;

    let leak = live_t == Trend::Sustained && live.delta > 0.0;
    let decided = if leak {
        Verdict::OwnershipLeak
    } else if let Some(&(_, v)) = growths.first() {
        v
    } else if pool_plateau {
        Verdict::PoolRetention
    } else {
        Verdict::Steady
    };
    let (summary, mut evidence) = match decided {
        Verdict::OwnershipLeak => {
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
            (s, e)
        }
        Verdict::ShapeGrowth => (
            format!(
                "live bytes are flat but the peak rose by {}: later iterations use larger shapes (not a leak)",
                per(&peak)
            ),
            vec![peak.clone(), live.clone(), pool.clone()],
        ),
        Verdict::PoolRetention if !growths.is_empty() => (
            format!(
                "live bytes and peak are flat; the pool is still caching new sizes (+{}): retention for reuse, bounded by pool_max_total_bytes",
                per(&pool)
            ),
            vec![pool.clone(), cached.clone(), live.clone()],
        ),
        Verdict::PoolRetention => (
            format!(
                "live bytes are flat; the pool warmed up by {} and plateaued at {} — {:.1}× the working set of {}: retention for reuse, not a leak",
                fmt_bytes(warm_up_pool),
                fmt_bytes(a.pool),
                warm_up_pool / working.max(1.0),
                fmt_bytes(working)
            ),
            vec![pool.clone(), cached.clone(), peak.clone(), live.clone()],
        ),
        Verdict::ProcessGrowth => (
            format!(
                "tensor storage and the pool are flat, but runtime memory rose by {}: the JS heap, runtime or driver grows, not tensors",
                runtime_rose,
            ),
            vec![runtime.clone(), live.clone(), pool.clone()],
        ),
        Verdict::Steady => (
            format!(
                "steady: live bytes ({}), peak and pool bytes are flat after warm-up",
                fmt_bytes(live.after)
            ),
            vec![live.clone(), pool.clone(), peak.clone()],
        ),
    };

    // Findings: what moved without deciding.
    if !leak && live_t != Trend::Flat {
        let rise = window.iter().map(|p| p.live).fold(f64::NEG_INFINITY, f64::max) - w.live;
        find(
            "bounded-growth",
            format!(
                "live bytes rose by {} during the window and then stopped (a bounded queue filling, a table built once): not a leak while it stays bounded",
                fmt_bytes(rise)
            ),
        );
    }
    // under a leak, a peak that rose by no more than live bytes is the leak itself, not larger shapes
    let peak_is_leak = |v: Verdict| leak && v == Verdict::ShapeGrowth && peak.delta <= live.delta;
    for &(delta, v) in growths
        .iter()
        .filter(|(_, v)| (*v != decided || leak) && !peak_is_leak(*v))
    {
        let (kind, what) = match v {
            Verdict::ShapeGrowth => ("shape-growth", "the peak (larger shapes)"),
            Verdict::PoolRetention => ("pool-growth", "the pool"),
            _ => (
                "runtime-growth",
                "runtime memory (JS heap, wasm memory or resident bytes)",
            ),
        };
        find(kind, format!("{what} also grew by {}", fmt_bytes(delta)));
    }
    if peak_t == Trend::Stopped && peak.delta > 0.0 && decided != Verdict::ShapeGrowth {
        find(
            "larger-input",
            format!(
                "the peak rose by {} once and then stayed: a larger input than warm-up saw",
                fmt_bytes(peak.delta)
            ),
        );
    }
    let pool_moved = pool.delta.max(warm_up_pool);
    if decided != Verdict::PoolRetention
        && pool_moved > 0.0
        && !growths.iter().any(|g| g.1 == Verdict::PoolRetention)
    {
        // say which test it failed
        let why = if pool_moved < POOL_FLOOR {
            "below the 64 KiB floor".to_string()
        } else if pool.delta > 0.0 && pool_t != Trend::Sustained {
            "it did not keep growing through the window".to_string()
        } else if pool.delta > 0.0 {
            format!("not material against its size ({}) and swing", fmt_bytes(a.pool))
        } else {
            format!("within 1.5× the working set ({})", fmt_bytes(working))
        };
        find(
            "pool-warm-up",
            format!(
                "the pool grew by {} (size-class rounding and cached buffers): not counted, {why}",
                fmt_bytes(pool_moved)
            ),
        );
    }
    if let Some(rise) = uncollected.filter(|&r| r >= RUNTIME_FLOOR) {
        find(
            "js-heap-below-floor",
            format!("the JS heap rose by {} in the window: not counted, below the 8 MiB that sampling can tell from garbage V8 has yet to collect (watch longer, or take a heap snapshot)", fmt_bytes(rise)),
        );
    }
    if decided != Verdict::ProcessGrowth
        && runtime.delta >= RUNTIME_FLOOR
        && uncollected.is_none()
        && !growths.iter().any(|g| g.1 == Verdict::ProcessGrowth)
    {
        find(
            "runtime-growth",
            format!(
                "runtime memory rose by {} without a sustained, material trend (it swings by {} on its own): not counted",
                fmt_bytes(runtime.delta),
                fmt_bytes(swing(&counted))
            ),
        );
    }
    for e in [live, peak, pool, cached, runtime] {
        if !evidence.iter().any(|x| x.metric == e.metric) {
            evidence.push(e);
        }
    }
    Diagnosis {
        verdict: decided,
        summary,
        evidence,
        grown_origins: if leak {
            grown.into_iter().map(|(o, _)| o).collect()
        } else {
            vec![]
        },
        snapshots: Snapshots {
            before: vec![],
            warm: vec![],
            after: vec![],
            warmup: None,
            iterations,
            synchronized: false,
        },
        series: None,
        findings,
        session: None,
    }
}

#[cfg(test)]
mod tests;
