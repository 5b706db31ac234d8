//! What `watch` keeps while it runs: per-iteration figures, not whole record sets.

use super::{diagnose_points, Diagnosis};
use crate::telemetry::series::{point, Point};
use crate::telemetry::MetricRecord;

/// What a watch keeps per iteration: the figures the rules read (not the whole record set, so a
/// long watch does not itself grow the process), plus full snapshots at the start, the end of
/// warm-up and the end.
pub(crate) struct Sampler {
    session: Option<String>,
    /// Every iteration's figures, allocated and touched up front so sampling adds nothing to the
    /// process while it runs; `taken` of them are filled.
    points: Vec<Point>,
    taken: usize,
    before: Vec<MetricRecord>,
    warm: Vec<MetricRecord>,
    warmup: usize,
}

impl Sampler {
    /// A sampler for `total` iterations after the `first` sample.
    pub(crate) fn new(
        first: Vec<MetricRecord>,
        warmup: usize,
        total: usize,
        session: Option<String>,
    ) -> Sampler {
        let mut points = vec![Point::default(); total + 1];
        points[0] = point(&first, session.as_deref());
        let warm = if warmup == 0 { first.clone() } else { vec![] };
        Sampler {
            session,
            points,
            taken: 1,
            before: first,
            warm,
            warmup,
        }
    }

    /// Takes the sample after an iteration.
    pub(crate) fn push(&mut self, m: &[MetricRecord]) {
        // the rules read origins only at the start, the end of warm-up and the end
        let prev = self.taken - 1;
        if prev != 0 && prev != self.warmup {
            self.points[prev].origins.clear();
        }
        if self.taken == self.points.len() {
            self.points.push(Point::default());
        }
        self.points[self.taken] = point(m, self.session.as_deref());
        if self.taken == self.warmup {
            self.warm = m.to_vec();
        }
        self.taken += 1;
    }

    /// The diagnosis, with `last` (the final sample, already pushed) as the `after` snapshot.
    pub(crate) fn finish(mut self, last: Vec<MetricRecord>) -> crate::Result<Diagnosis> {
        self.points.truncate(self.taken);
        if self.points.len() < 2 || self.warmup >= self.points.len() - 1 {
            return Err(crate::Error::InvalidArgument(
                "diagnose needs at least one sample after warm-up".into(),
            ));
        }
        let snaps = [&self.before, &self.warm, &last];
        Ok(diagnose_points(
            self.points,
            snaps,
            self.warmup,
            self.session.as_deref(),
            true,
        ))
    }
}
