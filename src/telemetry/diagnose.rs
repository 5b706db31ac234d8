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
//! that session's labelled records count (runtime memory is the process's). Samples of a web page
//! with no JS heap figure (Chromium's coarse `performance.memory`, other browsers) carry the
//! `js-heap-unobserved` finding whatever the verdict: a JS-side leak cannot be seen there.

use super::series::{fill_heap, point, Point};
use super::MetricRecord;
use figures::measure;
use rules::{decide, findings, summary, with_main_figures};

mod figures;
mod rules;
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
    Ok(diagnose_points(pts, snaps, warmup, session, synchronized))
}

pub(super) fn diagnose_points(
    mut pts: Vec<Point>,
    [before, warm, after]: [&Vec<MetricRecord>; 3],
    warmup: usize,
    session: Option<&str>,
    synchronized: bool,
) -> Diagnosis {
    fill_heap(&mut pts);
    let iterations = (pts.len() - 1 - warmup) as u64;
    let mut d = judge_points(&pts, warmup, Some(iterations));
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

/// The rules, over `samples` with the window starting at `warm`.
fn judge(
    samples: &[Vec<MetricRecord>],
    warm: usize,
    iterations: Option<u64>,
    session: Option<&str>,
) -> Diagnosis {
    let mut pts: Vec<Point> = samples.iter().map(|s| point(s, session)).collect();
    fill_heap(&mut pts);
    let mut d = judge_points(&pts, warm, iterations);
    d.session = session.map(str::to_string);
    d
}

/// The rules over the per-iteration figures `pts`, the window starting at `warm`.
fn judge_points(pts: &[Point], warm: usize, iterations: Option<u64>) -> Diagnosis {
    let f = measure(pts, warm, iterations);
    let decision = decide(&f);
    let (summary, evidence) = summary(&f, &decision);
    let findings = findings(&f, &decision);
    Diagnosis {
        verdict: decision.verdict,
        summary,
        evidence: with_main_figures(evidence, &f),
        grown_origins: if decision.leak {
            f.grown.into_iter().map(|(o, _)| o).collect()
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
