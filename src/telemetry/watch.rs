//! `watch`: run a loop, sample `metrics()` after every iteration, and diagnose the samples.

use super::{diagnose, metrics, next_iteration, sessions, Diagnosis};

/// Options of [`watch`]; the default is 5 warm-up iterations and 20 in the window (TF.js users'
/// loops settle within a few iterations; 20 points give the trend tests room).
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Iterations before the window (compilation, pool warm-up, representative shapes).
    pub warmup: u64,
    /// Iterations in the window.
    pub iterations: u64,
    /// Judge only this session's figures (its label); `None`: the process's.
    pub session: Option<String>,
}

impl Default for WatchOptions {
    fn default() -> WatchOptions {
        WatchOptions::new(5, 20)
    }
}

impl WatchOptions {
    /// `warmup` then `iterations`, judged on the process's figures.
    pub const fn new(warmup: u64, iterations: u64) -> WatchOptions {
        WatchOptions {
            warmup,
            iterations,
            session: None,
        }
    }
}

/// A session as [`watch`] sees it: what it synchronises between iterations (`Session` is one).
pub trait Watched {
    /// Its label (what `WatchOptions::session` names).
    fn label(&self) -> &str;
    /// Whether it was disposed (nothing to wait for).
    fn is_disposed(&self) -> bool;
    /// Whether its device is lost.
    fn is_device_lost(&self) -> bool;
    /// Waits until its queued device work has completed.
    fn sync(&self) -> impl std::future::Future<Output = crate::Result<()>>;
}

/// The most iterations (warm-up included) one [`watch`] runs: it keeps a sample of each.
pub const MAX_ITERATIONS: u64 = 1_000_000;

/// Runs `f(i)` `warmup + iterations` times, advancing the iteration counter before each call;
/// synchronises every session in `sessions` and samples `metrics()` before the first iteration and
/// after every one, then diagnoses the samples ([`diagnose_samples`](super::diagnose_samples)). The peak gauges are reset (as
/// by [`reset_peak`](super::reset_peak)) before the first sample, so peaks describe the watched workload.
pub async fn watch<S: Watched>(
    sessions: &[&S],
    options: WatchOptions,
    mut f: impl AsyncFnMut(u64) -> crate::Result<()>,
) -> crate::Result<Diagnosis> {
    // a session whose device is lost has nothing in flight to wait for (and its sync would fail
    // the watch of a session that works); the one watched fails as it would anywhere
    let watched = |s: &S| options.session.as_deref().is_none_or(|l| s.label() == l);
    let sync_all = async || -> crate::Result<()> {
        for s in sessions {
            if !s.is_disposed() && (!s.is_device_lost() || watched(s)) {
                s.sync().await?;
            }
        }
        Ok(())
    };
    if options.iterations == 0 {
        return Err(crate::Error::InvalidArgument(
            "watch needs at least one iteration after warm-up".into(),
        ));
    }
    // one sample is kept per iteration: the count is bounded before anything is reserved
    if options.warmup.saturating_add(options.iterations) > MAX_ITERATIONS {
        return Err(crate::Error::InvalidArgument(format!(
            "watch: warmup + iterations must be at most {MAX_ITERATIONS}, got {} + {}",
            options.warmup, options.iterations
        )));
    }
    if let Some(label) = &options.session {
        if !self::sessions().iter().any(|s| &s.label == label) {
            return Err(crate::Error::InvalidArgument(format!(
                "watch: no live session is labelled '{label}'"
            )));
        }
    }
    sync_all().await?;
    // a watch that fails (its function throws) leaves the peaks as if it had not reset them
    let undo = super::reset_peak_undoably();
    let total = options.warmup + options.iterations;
    let mut sampler = diagnose::Sampler::new(
        metrics(),
        options.warmup as usize,
        total as usize,
        options.session.clone(),
    );
    let mut last = vec![];
    for i in 0..total {
        next_iteration();
        let step = match f(i).await {
            Ok(()) => sync_all().await,
            Err(e) => Err(e),
        };
        if let Err(e) = step {
            undo();
            return Err(e);
        }
        last = metrics();
        sampler.push(&last);
    }
    let d = sampler.finish(last);
    if d.is_err() {
        undo();
    }
    d
}
