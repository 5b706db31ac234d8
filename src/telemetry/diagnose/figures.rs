//! The figures a diagnosis judges (the rules are in `diagnose.rs` and `rules.rs`): each metric's
//! evidence at the three points, the window's trends, whether the pool's and runtime's growth is
//! material, the origins that grew, the pool's warm-up and the working set.

use super::types::Evidence;
use crate::telemetry::series::{counted_runtime, fmt_bytes, late_rise, material, swing, trend, Point, Trend};

/// Pool growth counts from this many bytes.
pub(super) const POOL_FLOOR: f64 = 64.0 * 1024.0;
/// Runtime growth counts from this many bytes.
pub(super) const RUNTIME_FLOOR: f64 = 1024.0 * 1024.0;

/// The figures of one window, measured once for every rule.
pub(super) struct Figures<'p> {
    /// The sample at the end of warm-up (the window's first).
    pub w: &'p Point,
    /// The last sample.
    pub a: &'p Point,
    /// The samples from the end of warm-up to the last.
    pub window: &'p [Point],
    /// `compute.storage/live_bytes`.
    pub live: Evidence,
    /// `compute.storage/peak_bytes`.
    pub peak: Evidence,
    /// `compute.memory/pool_bytes`.
    pub pool: Evidence,
    /// `compute.memory/pool_cached_bytes`.
    pub cached: Evidence,
    /// `compute.storage/live_tensors`.
    pub tensors: Evidence,
    /// `runtime.memory/total`.
    pub runtime: Evidence,
    /// The runtime figure the rules count through the window: less a JS heap rise too small to
    /// tell from garbage.
    pub counted: Vec<f64>,
    /// That JS heap rise, when it was left out.
    pub uncollected: Option<f64>,
    /// The trend of live bytes through the window.
    pub live_t: Trend,
    /// The trend of the peak.
    pub peak_t: Trend,
    /// The trend of the pool.
    pub pool_t: Trend,
    /// The trend of the counted runtime figure.
    pub runtime_t: Trend,
    /// Whether the pool's growth is of material size.
    pub pool_material: bool,
    /// Whether the runtime's growth is of material size.
    pub runtime_material: bool,
    /// Origins whose live bytes grew through the window with their growth, largest first.
    pub grown: Vec<(String, f64)>,
    /// The evidence of each grown origin, in the same order.
    pub origin_ev: Vec<Evidence>,
    /// How runtime memory rose, as a summary says it.
    pub runtime_rose: String,
    /// How far the pool rose and stayed.
    pub warm_up_pool: f64,
    /// The working set: the largest peak seen above the baseline's live bytes.
    pub working: f64,
    /// Web samples with no JS heap figure in the window: a JS-side leak cannot be seen.
    pub heap_unobserved: bool,
}

/// The three points evidence is read at, and the steady iteration count (`None`: unknown or 0).
struct Ends<'p> {
    b: &'p Point,
    w: &'p Point,
    a: &'p Point,
    n: Option<u64>,
}

impl Ends<'_> {
    /// One metric's evidence: its value at the three points, its rise through the window and rate.
    fn evidence(&self, metric: &str, get: &dyn Fn(&Point) -> f64) -> Evidence {
        let (vb, vw, va) = (get(self.b), get(self.w), get(self.a));
        Evidence {
            metric: metric.to_string(),
            before: vb,
            warm: vw,
            after: va,
            delta: va - vw,
            per_iteration: self.n.map(|n| (va - vw) / n as f64),
        }
    }
}

/// Measures the per-iteration figures `pts`, the window starting at `warm`.
pub(super) fn measure(pts: &[Point], warm: usize, iterations: Option<u64>) -> Figures<'_> {
    let (b, w, a) = (&pts[0], &pts[warm], &pts[pts.len() - 1]);
    let window = &pts[warm..];
    let ends = Ends {
        b,
        w,
        a,
        n: iterations.filter(|&n| n > 0),
    };
    let col = |get: fn(&Point) -> f64| window.iter().map(get).collect::<Vec<f64>>();
    let pool = ends.evidence("compute.memory/pool_bytes", &|p| p.pool);
    let runtime = ends.evidence("runtime.memory/total", &|p| p.runtime);
    // the runtime figure the rules count: less a JS heap rise too small to tell from garbage
    let (counted, uncollected) = counted_runtime(window);
    // Pool and runtime growth is material when what the last two thirds of the window add (scaled
    // to the whole window, from medians: `late_rise`) is: a burst early in the window (a driver or
    // allocator warming up) that then creeps by a few bytes is not a trend of material size, nor
    // is one step in the last samples, while a leak grows all along.
    let pool_material = material(
        late_rise(&col(|p| p.pool)),
        pool.warm,
        POOL_FLOOR,
        swing(&col(|p| p.pool)),
    );
    let runtime_material = material(late_rise(&counted), runtime.warm, RUNTIME_FLOOR, swing(&counted));
    let grown = grown_origins(w, a);
    let origin_ev = grown
        .iter()
        .map(|(o, _)| {
            ends.evidence(&format!("origin:{o}"), &|p| {
                p.origins.get(o).copied().unwrap_or(0.0)
            })
        })
        .collect();
    let (warm_up_pool, working) = warm_up_and_working_set(b, w, a);
    Figures {
        w,
        a,
        window,
        live: ends.evidence("compute.storage/live_bytes", &|p| p.live),
        peak: ends.evidence("compute.storage/peak_bytes", &|p| p.peak),
        cached: ends.evidence("compute.memory/pool_cached_bytes", &|p| p.cached),
        tensors: ends.evidence("compute.storage/live_tensors", &|p| p.tensors),
        live_t: trend(&col(|p| p.live)),
        peak_t: trend(&col(|p| p.peak)),
        pool_t: trend(&col(|p| p.pool)),
        runtime_t: trend(&counted),
        pool_material,
        runtime_material,
        grown,
        origin_ev,
        runtime_rose: runtime_rose(&runtime, uncollected, ends.n),
        warm_up_pool,
        working,
        heap_unobserved: window.iter().all(|p| p.web && !p.heap_seen),
        pool,
        runtime,
        counted,
        uncollected,
    }
}

/// The origins whose live bytes grew from `w` to `a`, with their growth, largest first.
fn grown_origins(w: &Point, a: &Point) -> Vec<(String, f64)> {
    let mut grown: Vec<(String, f64)> = a
        .origins
        .iter()
        .map(|(o, &v)| (o.clone(), v - w.origins.get(o).copied().unwrap_or(0.0)))
        .filter(|(_, d)| *d > 0.0)
        .collect();
    grown.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    grown
}

/// A rise as a summary says it: per iteration when the count is known, else in total.
pub(super) fn per(e: &Evidence) -> String {
    match e.per_iteration {
        Some(p) => format!("{} per iteration", fmt_bytes(p)),
        None => format!("{} in total", fmt_bytes(e.delta)),
    }
}

/// How runtime memory rose, as a summary says it (`n`: the steady iteration count).
fn runtime_rose(runtime: &Evidence, uncollected: Option<f64>, n: Option<u64>) -> String {
    // what decided a runtime growth: the rise without a JS heap rise left out (named apart)
    let rise = runtime.delta - uncollected.unwrap_or(0.0);
    let counted_rise = Evidence {
        delta: rise,
        per_iteration: n.map(|k| rise / k as f64),
        ..runtime.clone()
    };
    match uncollected {
        Some(h) => format!("{} (the JS heap's {} left out)", per(&counted_rise), fmt_bytes(h)),
        None => per(runtime),
    }
}

/// How far the pool rose and stayed, and the working set it is weighed against.
fn warm_up_and_working_set(b: &Point, w: &Point, a: &Point) -> (f64, f64) {
    // how far the pool rose and stayed: by the warm point, or by the end of a window without a
    // trend (a cache that learns a cycling loop's sizes on its second pass keeps them from then
    // on), less what live tensors took of it (a table built once is live, not retained)
    let later = (a.pool - b.pool) - (a.live - b.live).max(0.0);
    let warm_up_pool = (w.pool - b.pool).max(later);
    // the working set: the largest peak seen (a larger input inside the window needs its own
    // buffers, which are not retention)
    let working = (w.peak.max(a.peak) - b.live).max(0.0);
    (warm_up_pool, working)
}
