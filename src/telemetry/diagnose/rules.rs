//! The rules of a diagnosis over measured figures (see the module docs of `diagnose.rs`): the
//! verdict, its summary and evidence, and the findings — one rule each, returning an optional
//! finding.

use super::figures::{per, Figures, POOL_FLOOR, RUNTIME_FLOOR};
use super::types::{Evidence, Finding, Verdict};
use crate::telemetry::series::{fmt_bytes, swing, Trend};

/// What decided the verdict.
pub(super) struct Decision {
    /// Sustained, material growths other than live bytes: shape growth first, then largest first.
    pub growths: Vec<(f64, Verdict)>,
    /// Whether live bytes rose sustained (an ownership leak).
    pub leak: bool,
    /// The verdict.
    pub verdict: Verdict,
}

/// Decides the verdict: a leak, else the first growth, else a pool plateau, else steady.
pub(super) fn decide(f: &Figures) -> Decision {
    let growths = growths(f);
    let leak = f.live_t == Trend::Sustained && f.live.delta > 0.0;
    let verdict = if leak {
        Verdict::OwnershipLeak
    } else if let Some(&(_, v)) = growths.first() {
        v
    } else if pool_plateau(f) {
        Verdict::PoolRetention
    } else {
        Verdict::Steady
    };
    Decision {
        growths,
        leak,
        verdict,
    }
}

/// Sustained, material growths other than live bytes, shape growth first, then largest first.
fn growths(f: &Figures) -> Vec<(f64, Verdict)> {
    let mut growths: Vec<(f64, Verdict)> = Vec::new();
    if f.peak_t == Trend::Sustained && f.peak.delta > 0.0 {
        growths.push((f.peak.delta, Verdict::ShapeGrowth));
    }
    if f.pool_t == Trend::Sustained && f.pool_material {
        growths.push((f.pool.delta, Verdict::PoolRetention));
    }
    if f.runtime_t == Trend::Sustained && f.runtime_material {
        growths.push((
            f.counted[f.counted.len() - 1] - f.counted[0],
            Verdict::ProcessGrowth,
        ));
    }
    // A rising peak explains a rising pool (new sizes need new classes): shape growth comes first.
    growths.sort_by(|x, y| {
        let shape = |v: Verdict| v == Verdict::ShapeGrowth;
        shape(y.1).cmp(&shape(x.1)).then(y.0.total_cmp(&x.0))
    });
    growths
}

/// Whether the pool warmed up by a material amount and by more than 1.5 × the working set.
fn pool_plateau(f: &Figures) -> bool {
    f.warm_up_pool >= POOL_FLOOR && f.warm_up_pool > 1.5 * f.working
}

/// The verdict's summary and its evidence, most telling first.
pub(super) fn summary(f: &Figures, d: &Decision) -> (String, Vec<Evidence>) {
    let (live, peak, pool, cached) = (&f.live, &f.peak, &f.pool, &f.cached);
    match d.verdict {
        Verdict::OwnershipLeak => leak_summary(f),
        Verdict::ShapeGrowth => (
            format!(
                "live bytes are flat but the peak rose by {}: later iterations use larger shapes (not a leak)",
                per(peak)
            ),
            vec![peak.clone(), live.clone(), pool.clone()],
        ),
        Verdict::PoolRetention if !d.growths.is_empty() => (
            format!(
                "live bytes and peak are flat; the pool is still caching new sizes (+{}): retention for reuse, bounded by pool_max_total_bytes",
                per(pool)
            ),
            vec![pool.clone(), cached.clone(), live.clone()],
        ),
        Verdict::PoolRetention => (
            format!(
                "live bytes are flat; the pool warmed up by {} and plateaued at {} — {:.1}× the working set of {}: retention for reuse, not a leak",
                fmt_bytes(f.warm_up_pool),
                fmt_bytes(f.a.pool),
                f.warm_up_pool / f.working.max(1.0),
                fmt_bytes(f.working)
            ),
            vec![pool.clone(), cached.clone(), peak.clone(), live.clone()],
        ),
        Verdict::ProcessGrowth => (
            format!(
                "tensor storage and the pool are flat, but runtime memory rose by {}: the JS heap, runtime or driver grows, not tensors",
                f.runtime_rose,
            ),
            vec![f.runtime.clone(), live.clone(), pool.clone()],
        ),
        Verdict::Steady => (
            format!(
                "steady: live bytes ({}), peak and pool bytes are flat after warm-up",
                fmt_bytes(live.after)
            ),
            vec![live.clone(), pool.clone(), peak.clone()],
        ),
    }
}

/// An ownership leak's summary (naming up to three grown origins) and evidence.
fn leak_summary(f: &Figures) -> (String, Vec<Evidence>) {
    let who = if f.grown.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = f
            .grown
            .iter()
            .take(3)
            .map(|(o, d)| format!("'{o}' (+{})", fmt_bytes(*d)))
            .collect();
        format!("; growing: {}", list.join(", "))
    };
    let s = format!(
        "live tensor bytes rose by {} ({} tensors){who}: something keeps outputs or states without disposing them",
        per(&f.live),
        f.tensors.delta
    );
    let mut e = vec![f.live.clone(), f.tensors.clone()];
    e.extend(f.origin_ev.iter().cloned());
    (s, e)
}

/// The verdict's evidence, then each of the main figures it left out.
pub(super) fn with_main_figures(mut evidence: Vec<Evidence>, f: &Figures) -> Vec<Evidence> {
    for e in [&f.live, &f.peak, &f.pool, &f.cached, &f.runtime] {
        if !evidence.iter().any(|x| x.metric == e.metric) {
            evidence.push(e.clone());
        }
    }
    evidence
}

/// What moved without deciding the verdict, in the order of the rules below.
pub(super) fn findings(f: &Figures, d: &Decision) -> Vec<Finding> {
    let mut found: Vec<Finding> = bounded_growth(f, d).into_iter().collect();
    found.extend(d.growths.iter().filter_map(|&g| also_grew(f, d, g)));
    let rules: [fn(&Figures, &Decision) -> Option<Finding>; 5] = [
        larger_input,
        pool_warm_up,
        js_heap_below_floor,
        runtime_growth,
        js_heap_unobserved,
    ];
    found.extend(rules.iter().filter_map(|rule| rule(f, d)));
    found
}

/// A finding of `kind`.
fn finding(kind: &str, summary: String) -> Finding {
    Finding {
        kind: kind.into(),
        summary,
    }
}

/// `bounded-growth`: live bytes rose in the window, but not sustained.
fn bounded_growth(f: &Figures, d: &Decision) -> Option<Finding> {
    if d.leak || f.live_t == Trend::Flat {
        return None;
    }
    let rise = f.window.iter().map(|p| p.live).fold(f64::NEG_INFINITY, f64::max) - f.w.live;
    Some(finding(
        "bounded-growth",
        format!(
            "live bytes rose by {} during the window and then stopped (a bounded queue filling, a table built once): not a leak while it stays bounded",
            fmt_bytes(rise)
        ),
    ))
}

/// `shape-growth`, `pool-growth` or `runtime-growth`: a sustained growth `(delta, v)` that did
/// not decide the verdict (all of them under a leak, but a peak the leak itself explains).
fn also_grew(f: &Figures, d: &Decision, (delta, v): (f64, Verdict)) -> Option<Finding> {
    // under a leak, a peak that rose by no more than live bytes is the leak itself, not larger shapes
    let peak_is_leak = d.leak && v == Verdict::ShapeGrowth && f.peak.delta <= f.live.delta;
    let undecided = v != d.verdict || d.leak;
    if !undecided || peak_is_leak {
        return None;
    }
    let (kind, what) = match v {
        Verdict::ShapeGrowth => ("shape-growth", "the peak (larger shapes)"),
        Verdict::PoolRetention => ("pool-growth", "the pool"),
        _ => (
            "runtime-growth",
            "runtime memory (JS heap, wasm memory or resident bytes)",
        ),
    };
    Some(finding(kind, format!("{what} also grew by {}", fmt_bytes(delta))))
}

/// `larger-input`: the peak rose once and stayed, without deciding shape growth.
fn larger_input(f: &Figures, d: &Decision) -> Option<Finding> {
    if !(f.peak_t == Trend::Stopped && f.peak.delta > 0.0 && d.verdict != Verdict::ShapeGrowth) {
        return None;
    }
    Some(finding(
        "larger-input",
        format!(
            "the peak rose by {} once and then stayed: a larger input than warm-up saw",
            fmt_bytes(f.peak.delta)
        ),
    ))
}

/// `pool-warm-up`: the pool moved but was not counted; says which test it failed.
fn pool_warm_up(f: &Figures, d: &Decision) -> Option<Finding> {
    let pool_moved = f.pool.delta.max(f.warm_up_pool);
    if !(d.verdict != Verdict::PoolRetention
        && pool_moved > 0.0
        && !d.growths.iter().any(|g| g.1 == Verdict::PoolRetention))
    {
        return None;
    }
    // say which test it failed
    let why = if pool_moved < POOL_FLOOR {
        "below the 64 KiB floor".to_string()
    } else if f.pool.delta > 0.0 && f.pool_t != Trend::Sustained {
        "it did not keep growing through the window".to_string()
    } else if f.pool.delta > 0.0 {
        format!(
            "not material against its size ({}) and swing",
            fmt_bytes(f.a.pool)
        )
    } else {
        format!("within 1.5× the working set ({})", fmt_bytes(f.working))
    };
    Some(finding(
        "pool-warm-up",
        format!(
            "the pool grew by {} (size-class rounding and cached buffers): not counted, {why}",
            fmt_bytes(pool_moved)
        ),
    ))
}

/// `js-heap-below-floor`: a JS heap rise left out of the counted runtime figure.
fn js_heap_below_floor(f: &Figures, _: &Decision) -> Option<Finding> {
    let rise = f.uncollected.filter(|&r| r >= RUNTIME_FLOOR)?;
    Some(finding(
        "js-heap-below-floor",
        format!("the JS heap rose by {} in the window: not counted, below the 8 MiB that sampling can tell from garbage V8 has yet to collect (watch longer, or take a heap snapshot)", fmt_bytes(rise)),
    ))
}

/// `runtime-growth`: runtime memory rose without a sustained, material trend.
fn runtime_growth(f: &Figures, d: &Decision) -> Option<Finding> {
    if !(d.verdict != Verdict::ProcessGrowth
        && f.runtime.delta >= RUNTIME_FLOOR
        && f.uncollected.is_none()
        && !d.growths.iter().any(|g| g.1 == Verdict::ProcessGrowth))
    {
        return None;
    }
    Some(finding(
        "runtime-growth",
        format!(
            "runtime memory rose by {} without a sustained, material trend (it swings by {} on its own): not counted",
            fmt_bytes(f.runtime.delta),
            fmt_bytes(swing(&f.counted))
        ),
    ))
}

/// `js-heap-unobserved`: the samples are a web page's and none has a JS heap figure, so a leak of JS
/// objects cannot move any figure judged here — on every diagnosis of such a page, whatever its verdict.
fn js_heap_unobserved(f: &Figures, _: &Decision) -> Option<Finding> {
    f.heap_unobserved.then(|| {
        finding(
            "js-heap-unobserved",
            "the JS heap is not observed in this page (Chromium reports performance.memory as one fixed bucket \
             unless started with --enable-precise-memory-info; other browsers not at all), so JS objects kept \
             each iteration (arrays, closures, handles) cannot be seen here: this verdict covers device, pool \
             and wasm memory only. To see the JS heap, start Chromium with --enable-precise-memory-info, or serve \
             the page cross-origin isolated (Cross-Origin-Opener-Policy: same-origin, \
             Cross-Origin-Embedder-Policy: require-corp), where affon samples \
             performance.measureUserAgentSpecificMemory()"
                .into(),
        )
    })
}
