//! `watch`: run a loop, sample `metrics()` after every iteration, and diagnose the samples.

use super::{diagnose, metrics, next_iteration, reset_peak, sessions, Diagnosis};

/// Options of [`watch`].
#[derive(Debug, Clone, Default)]
pub struct WatchOptions {
    /// Iterations before the window (compilation, pool warm-up, representative shapes).
    pub warmup: u64,
    /// Iterations in the window.
    pub iterations: u64,
    /// Judge only this session's figures (its label); `None`: the process's.
    pub session: Option<String>,
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

/// Runs `f(i)` `warmup + iterations` times, advancing the iteration counter before each call;
/// synchronises every session in `sessions` and samples `metrics()` before the first iteration and
/// after every one, then diagnoses the samples ([`diagnose_samples`](super::diagnose_samples)). The peak gauges are reset (as
/// by [`reset_peak`]) before the first sample, so peaks describe the watched workload.
pub async fn watch(
    sessions: &[&crate::Session],
    options: WatchOptions,
    mut f: impl AsyncFnMut(u64) -> crate::Result<()>,
) -> crate::Result<Diagnosis> {
    async fn sync_all(sessions: &[&crate::Session]) -> crate::Result<()> {
        for s in sessions {
            if !s.is_disposed() {
                s.sync().await?;
            }
        }
        Ok(())
    }
    if options.iterations == 0 {
        return Err(crate::Error::InvalidArgument(
            "watch needs at least one iteration after warm-up".into(),
        ));
    }
    if let Some(label) = &options.session {
        if !self::sessions().iter().any(|s| &s.label == label) {
            return Err(crate::Error::InvalidArgument(format!(
                "watch: no live session is labelled '{label}'"
            )));
        }
    }
    sync_all(sessions).await?;
    reset_peak();
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
        f(i).await?;
        sync_all(sessions).await?;
        last = metrics();
        sampler.push(&last);
    }
    sampler.finish(last)
}
