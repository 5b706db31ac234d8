//! Per-iteration series and the trend rules verdicts are judged by (see `diagnose.rs`).
//!
//! A series is one figure read from each sample (`metrics()` after an iteration). The window is the
//! samples from the end of warm-up to the last one. Its trend is:
//! - **sustained** — it rises through the window: split into thirds, each third's maximum *and*
//!   minimum are above the previous third's (both envelopes rise: a rise that continues, not one
//!   that happened once or a fluctuation; a sawtooth whose lows climb, as a growing JS heap between
//!   collections, counts). With fewer than four samples (the three-snapshot form) any rise is
//!   sustained;
//! - **stopped** — it ended higher than it started but the rise did not continue (a bounded queue
//!   filling, a table built once, a larger input seen once);
//! - **flat** — otherwise.

use std::collections::BTreeMap;

use super::MetricRecord;

/// The figures of one sample that verdicts read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Point {
    pub live: f64,
    pub tensors: f64,
    pub peak: f64,
    pub pool: f64,
    pub cached: f64,
    pub runtime: f64,
    /// The JS heap alone (part of `runtime`; 0 where there is none).
    pub heap: f64,
    /// The sample has a JS heap figure (`runtime.memory/js_heap_used_bytes`).
    pub heap_seen: bool,
    /// The sample comes from a web page (it has `runtime.memory/wasm_memory_bytes`).
    pub web: bool,
    pub origins: BTreeMap<String, f64>,
}

fn labelled<'a>(r: &'a MetricRecord, session: Option<&str>) -> Option<&'a BTreeMap<String, String>> {
    match (&r.labels, session) {
        (None, None) => Some(const { &BTreeMap::new() }),
        (Some(l), Some(s)) if l.get("session").map(String::as_str) == Some(s) => Some(l),
        _ => None,
    }
}

fn value(s: &[MetricRecord], scope: &str, name: &str, session: Option<&str>) -> f64 {
    s.iter()
        .find(|r| {
            r.scope == scope
                && r.name == name
                && labelled(r, session).is_some_and(|l| l.len() == session.is_some() as usize)
        })
        .map(|r| r.value)
        .unwrap_or(0.0)
}

/// Reads a sample. With `session`, tensor and pool figures are that session's labelled records
/// (runtime memory is the process's: it cannot be attributed).
pub(crate) fn point(s: &[MetricRecord], session: Option<&str>) -> Point {
    let [resident, heap, wasm] = [
        "process_resident_bytes",
        "js_heap_used_bytes",
        "wasm_memory_bytes",
    ]
    .map(|n| value(s, "runtime.memory", n, None));
    let origins = s
        .iter()
        .filter(|r| r.scope == "compute.storage" && r.name == "live_bytes_by_origin")
        .filter_map(|r| {
            let l = r.labels.as_ref()?;
            let want = session.map(str::to_string);
            (l.get("session").cloned() == want).then(|| Some((l.get("origin")?.clone(), r.value)))?
        })
        .collect();
    Point {
        live: value(s, "compute.storage", "live_bytes", session),
        tensors: value(s, "compute.storage", "live_tensors", session),
        peak: value(s, "compute.storage", "peak_bytes", session),
        pool: value(s, "compute.memory", "pool_bytes", session),
        cached: value(s, "compute.memory", "pool_cached_bytes", session),
        runtime: resident + heap + wasm,
        heap: heap.max(0.0),
        heap_seen: has(s, "js_heap_used_bytes"),
        web: has(s, "wasm_memory_bytes"),
        origins,
    }
}

fn has(s: &[MetricRecord], name: &str) -> bool {
    s.iter()
        .any(|r| r.scope == "runtime.memory" && r.name == name && r.labels.is_none())
}

/// Points of a page whose JS heap figure is sampled now and then (`measureUserAgentSpecificMemory`
/// resolves later than the first samples) take the nearest figure seen — the one before, else the
/// first after — so a heap that appears mid-series is not read as growth from 0. A series with no
/// heap figure is left as it is (the heap unobserved: a finding).
pub(crate) fn fill_heap(pts: &mut [Point]) {
    let Some(first) = pts.iter().find(|p| p.heap_seen).map(|p| p.heap) else {
        return;
    };
    let mut last = first;
    for p in pts.iter_mut() {
        if p.heap_seen {
            last = p.heap;
        } else {
            p.heap = last;
            p.runtime += last;
        }
    }
}

/// A JS heap rise inside the window counts as runtime growth only from this much: the heap holds
/// garbage until V8 collects it — the young generation's up to its semi-spaces (at most 16 MiB on
/// 64-bit), and what outlived a scavenge until a major collection, which a short window may never
/// see — so a smaller rise, even one whose lows climb across scavenges, cannot be told from garbage
/// by sampling `usedJSHeapSize` (a steady training loop's 1.35 MB over 300 steps in CI's Chromium
/// was called process growth).
const JS_HEAP_FLOOR: f64 = 8.0 * 1024.0 * 1024.0;

/// The runtime figure a verdict counts through `window`: all of it, or — when the JS heap rose by
/// less than `JS_HEAP_FLOOR` — all but the heap's rise since the window began, which is returned
/// too (for a finding).
pub(crate) fn counted_runtime(window: &[Point]) -> (Vec<f64>, Option<f64>) {
    let heap: Vec<f64> = window.iter().map(|p| p.heap).collect();
    let (first, last) = (
        heap.first().copied().unwrap_or(0.0),
        heap.last().copied().unwrap_or(0.0),
    );
    let all = window.iter().map(|p| p.runtime);
    if last <= first || last - first >= JS_HEAP_FLOOR {
        return (all.collect(), None);
    }
    (
        all.zip(&heap).map(|(r, h)| r - (h - first)).collect(),
        Some(last - first),
    )
}

/// Bytes as a diagnosis says them: B, KiB or MiB, one decimal.
pub(crate) fn fmt_bytes(b: f64) -> String {
    let a = b.abs();
    if a >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    } else if a >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

/// How a series moved through the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trend {
    Flat,
    Stopped,
    Sustained,
}

fn max(w: &[f64]) -> f64 {
    w.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

fn min(w: &[f64]) -> f64 {
    w.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The trend of a window of values (see the module docs).
pub(crate) fn trend(w: &[f64]) -> Trend {
    let (Some(&first), Some(&last)) = (w.first(), w.last()) else {
        return Trend::Flat;
    };
    if w.len() < 4 {
        return if last > first {
            Trend::Sustained
        } else {
            Trend::Flat
        };
    }
    let k = w.len() / 3;
    let (a, b, c) = (&w[..k], &w[k..w.len() - k], &w[w.len() - k..]);
    // both envelopes rise: the highs (a leak's steps) and the lows (a JS heap's level between
    // collections, which swings by more than it grows over a third)
    if max(a) < max(b) && max(b) < max(c) && min(a) < min(b) && min(b) < min(c) {
        Trend::Sustained
    } else if last > first || max(w) > first {
        Trend::Stopped
    } else {
        Trend::Flat
    }
}

fn median(w: &[f64]) -> f64 {
    let mut v = w.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    }
}

/// What a figure adds over the whole window, estimated from its last two thirds: the rise from
/// the median of the middle third to the median of the last, scaled from the distance between
/// their centres to the window's length. A burst in the first third (a driver or allocator
/// warming up) is left out, and one step in a few samples (a heap reserving more once, the last
/// sample landing on a collection's peak) moves a median little, while a figure that grows all
/// along gives its full rate. Windows under four samples: last minus first.
pub(crate) fn late_rise(w: &[f64]) -> f64 {
    let n = w.len();
    if n < 4 {
        return match (w.first(), w.last()) {
            (Some(a), Some(b)) => b - a,
            _ => 0.0,
        };
    }
    let k = n / 3;
    let (b, c) = (&w[k..n - k], &w[n - k..]);
    (median(c) - median(b)) * (n - 1) as f64 / ((n - k) as f64 / 2.0)
}

/// The largest drop from a running peak inside the window: how much the figure swings on its own
/// (a JS heap between collections). A growth smaller than this is noise.
pub(crate) fn swing(w: &[f64]) -> f64 {
    let mut peak = f64::NEG_INFINITY;
    let mut drop: f64 = 0.0;
    for &x in w {
        peak = peak.max(x);
        drop = drop.max(peak - x);
    }
    drop
}

/// Whether a growth of `delta` in a figure at `level` is material: at least `floor` bytes, 2 % of
/// the figure's own size, and more than it swings by itself.
pub(crate) fn material(delta: f64, level: f64, floor: f64, swing: f64) -> bool {
    delta >= floor && delta >= 0.02 * level && delta > swing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trends() {
        let linear: Vec<f64> = (0..31).map(|i| 16.0 * i as f64).collect();
        assert_eq!(trend(&linear), Trend::Sustained);
        // one kept output every 10 iterations: still sustained
        let tenth: Vec<f64> = (0..31).map(|i| ((i + 9) / 10) as f64).collect();
        assert_eq!(trend(&tenth), Trend::Sustained);
        // a queue of 10 filling in the first third, then full
        let queue: Vec<f64> = (0..31).map(|i| (i.min(10)) as f64).collect();
        assert_eq!(trend(&queue), Trend::Stopped);
        // a table built once in the middle
        let table: Vec<f64> = (0..31).map(|i| if i >= 15 { 100.0 } else { 0.0 }).collect();
        assert_eq!(trend(&table), Trend::Stopped);
        // fluctuation around a level
        let noise: Vec<f64> = (0..31).map(|i| ((i * 7) % 5) as f64).collect();
        assert_ne!(trend(&noise), Trend::Sustained);
        // a JS heap: a sawtooth of 24 MiB between collections whose lows climb 1 MiB an iteration
        let heap: Vec<f64> = (0..25).map(|i| (85 + i + 8 * (i % 4)) as f64).collect();
        assert_eq!(trend(&heap), Trend::Sustained);
        assert_eq!(trend(&[3.0; 31]), Trend::Flat);
        // three snapshots: any rise
        assert_eq!(trend(&[1.0, 2.0]), Trend::Sustained);
        assert_eq!(trend(&[2.0, 2.0]), Trend::Flat);
        assert_eq!(swing(&[1.0, 5.0, 2.0, 6.0, 6.0]), 3.0);
        assert!(!material(512.0, 1e6, 65536.0, 0.0));
        assert!(material(1e6, 1e6, 65536.0, 1000.0));
        assert!(!material(3e6, 1e9, 1.0, 0.0), "3 MB of a 1 GB heap is under 2 %");
    }

    #[test]
    fn late_rise_is_the_rate_of_the_last_two_thirds() {
        // a linear rise of 16 per sample over 25 samples: 24 steps of 16
        let linear: Vec<f64> = (0..25).map(|i| 16.0 * i as f64).collect();
        assert_eq!(late_rise(&linear), 16.0 * 24.0);
        // a burst in the first third, then flat: no rise
        let burst: Vec<f64> = (0..25)
            .map(|i| if i < 4 { 1e6 * i as f64 } else { 3e6 })
            .collect();
        assert_eq!(late_rise(&burst), 0.0);
        // a creep of 2.9 KiB per sample and one 680 KB step in the last sample (a JS heap in
        // Chromium, seen in CI): the creep's rate, not the step scaled to the window
        let mut creep: Vec<f64> = (0..25).map(|i| 5.1e6 + 2900.0 * i as f64).collect();
        creep[24] += 680e3;
        let r = late_rise(&creep);
        assert!((r - 2900.0 * 24.0).abs() < 2900.0 * 3.0, "{r}");
        // one kept output every tenth iteration: steps, still the average rate
        let tenth: Vec<f64> = (0..31).map(|i| (1000 * ((i + 9) / 10)) as f64).collect();
        let r = late_rise(&tenth);
        assert!((2000.0..=4500.0).contains(&r), "{r}");
        // three snapshots
        assert_eq!(late_rise(&[1.0, 5.0, 9.0]), 8.0);
    }
}
