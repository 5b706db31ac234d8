//! Telemetry (`std:telemetry`): metric records by scope, read from the process ledger, from each
//! live session's ledger and owner table, and from the runtime. Users match on `scope` and `name`,
//! never on position.

pub mod diagnose;
pub(crate) mod frame;
pub mod owners;
mod registry;
pub mod report;
mod series;
mod watch;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use crate::accounting::{LedgerSnapshot, PROCESS};
use owners::OwnerGroup;

pub use diagnose::{diagnose, diagnose_samples, Diagnosis, Evidence, Finding, Series, Snapshots, Verdict};
pub use owners::{current_iteration, next_iteration};
pub use report::report;
pub use watch::{watch, WatchOptions, Watched, MAX_ITERATIONS as MAX_WATCH_ITERATIONS};

pub use registry::SessionInfo;
pub(crate) use registry::{claim_label, register_session};
use registry::{owner_tables, registry};

/// What a record measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricKind {
    /// A current level (may go down).
    Gauge,
    /// A running total since the process started (never goes down).
    Counter,
    /// A set of observations; `count/sum/min/max/mean` are filled.
    Distribution,
}

/// One metric value.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MetricRecord {
    /// `compute.storage`, `compute.memory`, `compute.execution` or `runtime.memory`.
    pub scope: Cow<'static, str>,
    /// Name within the scope, e.g. `live_bytes`.
    pub name: Cow<'static, str>,
    /// Gauge, counter or distribution.
    pub kind: MetricKind,
    /// `bytes`, `tensors`, `buffers`, `events`, …
    pub unit: Cow<'static, str>,
    /// The level (gauge), running total (counter) or mean (distribution).
    pub value: f64,
    /// Distributions only: observations.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub count: Option<f64>,
    /// Distributions only: sum of observations.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sum: Option<f64>,
    /// Distributions only: smallest observation (0 when none).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub min: Option<f64>,
    /// Distributions only: largest observation.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub max: Option<f64>,
    /// Distributions only: `sum / count` (0 when none).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mean: Option<f64>,
    /// Labels (`{session}` for per-session records); absent on process-wide records.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub labels: Option<BTreeMap<String, String>>,
}

/// `telemetry.startTrace()`: starts recording a Chrome Trace Event trace (see [`crate::trace`]).
pub fn start_trace() {
    crate::trace::start();
}

/// `telemetry.stopTrace()`: stops the trace and returns `{traceEvents, displayTimeUnit, otherData}`.
pub fn stop_trace() -> serde_json::Value {
    crate::trace::stop()
}

/// `telemetry.releaseForgotten()`: releases the storage of every handle the JS garbage collector
/// took without `dispose()` (kept until now so figures never depend on GC timing), in every
/// session. Returns `(handles, bytes)` released. A disposed session releases its own.
pub fn release_forgotten() -> (u64, u64) {
    let stores: Vec<_> = registry().iter().filter_map(|r| r.forgotten.upgrade()).collect();
    stores.iter().fold((0, 0), |(h, b), s| {
        let (h2, b2) = s.release();
        (h + h2, b + b2)
    })
}

/// Live sessions whose device has been lost.
pub fn devices_lost() -> u64 {
    let s = registry();
    s.iter()
        .filter(|r| r.ledger.strong_count() > 0 && r.lost.load(Ordering::SeqCst))
        .count() as u64
}

/// The open sessions' report information.
pub fn sessions() -> Vec<SessionInfo> {
    let s = registry();
    s.iter()
        .filter(|r| r.holds_label())
        .filter_map(|r| r.info.upgrade())
        .map(|i| (*i).clone())
        .collect()
}

/// `telemetry.liveTensors()`: live storage of every session grouped by origin, largest first.
pub fn live_tensors() -> Vec<OwnerGroup> {
    let mut groups = BTreeMap::new();
    for o in owner_tables() {
        o.group_into(&mut groups);
    }
    owners::sorted(groups)
}

/// `telemetry.storages()`: every live storage of every session, oldest first (by id), at most
/// `limit` of them (the largest kept when there are more).
pub fn storages(limit: usize) -> Vec<owners::StorageInfo> {
    let mut all = vec![];
    for r in registry().iter() {
        if let Some(o) = r.owners.upgrade() {
            o.storages_into(&r.label, &mut all);
        }
    }
    if all.len() > limit {
        all.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.id.cmp(&b.id)));
        all.truncate(limit);
    }
    all.sort_by_key(|s| s.id);
    all
}

/// Handles collected without `dispose()`: `(ever detected, still-live storages, their bytes)`.
pub fn forgotten() -> (u64, u64, u64) {
    let (mut ever, mut count, mut bytes) = (0, 0, 0);
    for o in owner_tables() {
        let (c, b) = o.forgotten_live();
        ever += o.forgotten_handles();
        count += c;
        bytes += b;
    }
    (ever, count, bytes)
}

pub(crate) fn record(
    scope: &'static str,
    name: &'static str,
    kind: MetricKind,
    unit: &'static str,
    value: f64,
) -> MetricRecord {
    MetricRecord {
        scope: Cow::Borrowed(scope),
        name: Cow::Borrowed(name),
        kind,
        unit: Cow::Borrowed(unit),
        value,
        count: None,
        sum: None,
        min: None,
        max: None,
        mean: None,
        labels: None,
    }
}

/// One ledger figure: `(scope, name, kind, unit, value)`.
type LedgerRow = (&'static str, &'static str, MetricKind, &'static str, u64);

/// The `(scope, name, kind, unit, value)` rows of one ledger: storage, memory, then execution.
fn ledger_rows(s: &LedgerSnapshot) -> impl Iterator<Item = LedgerRow> {
    storage_rows(s)
        .into_iter()
        .chain(memory_rows(s))
        .chain(execution_rows(s))
}

/// The ledger's `compute.storage` rows.
fn storage_rows(s: &LedgerSnapshot) -> [LedgerRow; 5] {
    use MetricKind::{Counter as C, Gauge as G};
    [
        ("compute.storage", "live_bytes", G, "bytes", s.live_bytes),
        ("compute.storage", "peak_bytes", G, "bytes", s.peak_bytes),
        ("compute.storage", "live_tensors", G, "tensors", s.live_tensors),
        ("compute.storage", "allocations", C, "tensors", s.allocations),
        ("compute.storage", "deallocations", C, "tensors", s.deallocations),
    ]
}

/// The ledger's `compute.memory` rows.
fn memory_rows(s: &LedgerSnapshot) -> [LedgerRow; 16] {
    use MetricKind::{Counter as C, Gauge as G};
    [
        ("compute.memory", "pool_bytes", G, "bytes", s.pool_bytes),
        (
            "compute.memory",
            "pool_cached_bytes",
            G,
            "bytes",
            s.pool_cached_bytes,
        ),
        ("compute.memory", "pool_peak_bytes", G, "bytes", s.pool_peak_bytes),
        ("compute.memory", "pool_hits", C, "events", s.pool_hits),
        ("compute.memory", "pool_misses", C, "events", s.pool_misses),
        ("compute.memory", "pool_evictions", C, "buffers", s.pool_evictions),
        (
            "compute.memory",
            "pool_max_total_bytes",
            G,
            "bytes",
            s.pool_max_total_bytes,
        ),
        (
            "compute.memory",
            "oversize_allocations",
            C,
            "events",
            s.oversize_allocations,
        ),
        ("compute.memory", "device_buffers", G, "buffers", s.device_buffers),
        (
            "compute.memory",
            "pool_padding_bytes",
            G,
            "bytes",
            s.pool_padding_bytes,
        ),
        ("compute.memory", "staging_bytes", G, "bytes", s.staging_bytes),
        (
            "compute.memory",
            "staging_buffers",
            G,
            "buffers",
            s.staging_buffers,
        ),
        ("compute.memory", "param_bytes", G, "bytes", s.param_bytes),
        ("compute.memory", "param_buffers", G, "buffers", s.param_buffers),
        ("compute.memory", "texture_bytes", G, "bytes", s.texture_bytes),
        ("compute.memory", "textures", G, "textures", s.textures),
    ]
}

/// The ledger's `compute.execution` rows.
fn execution_rows(s: &LedgerSnapshot) -> [LedgerRow; 14] {
    use MetricKind::{Counter as C, Gauge as G};
    [
        ("compute.execution", "executions", C, "runs", s.executions),
        ("compute.execution", "dispatches", C, "dispatches", s.dispatches),
        ("compute.execution", "compiles", C, "specialisations", s.compiles),
        (
            "compute.execution",
            "executable_cache_entries",
            G,
            "specialisations",
            s.executable_cache_entries,
        ),
        (
            "compute.execution",
            "executable_cache_evictions",
            C,
            "specialisations",
            s.executable_cache_evictions,
        ),
        (
            "compute.execution",
            "pipeline_cache_entries",
            G,
            "pipelines",
            s.pipeline_cache_entries,
        ),
        (
            "compute.execution",
            "pipeline_cache_evictions",
            C,
            "pipelines",
            s.pipeline_cache_evictions,
        ),
        ("compute.execution", "upload_bytes", C, "bytes", s.upload_bytes),
        (
            "compute.execution",
            "download_bytes",
            C,
            "bytes",
            s.download_bytes,
        ),
        ("compute.execution", "transfers", C, "transfers", s.transfers),
        ("compute.execution", "syncs", C, "syncs", s.syncs),
        ("compute.execution", "fixups", C, "copies", s.fixups),
        ("compute.execution", "submits", C, "command buffers", s.submits),
        (
            "compute.execution",
            "bind_group_cache_entries",
            G,
            "bind groups",
            s.bind_group_cache_entries,
        ),
    ]
}

/// Records for one ledger, optionally labelled.
pub fn ledger_records(s: &LedgerSnapshot, labels: Option<&BTreeMap<String, String>>) -> Vec<MetricRecord> {
    let mut out: Vec<MetricRecord> = ledger_rows(s)
        .map(|(scope, name, kind, unit, v)| MetricRecord {
            labels: labels.cloned(),
            ..record(scope, name, kind, unit, v as f64)
        })
        .collect();
    let n = s.run_time_count as f64;
    let ms = |us: u64| us as f64 / 1000.0;
    let sum = ms(s.run_time_sum_us);
    out.push(MetricRecord {
        count: Some(n),
        sum: Some(sum),
        min: Some(if n > 0.0 { ms(s.run_time_min_us) } else { 0.0 }),
        max: Some(ms(s.run_time_max_us)),
        mean: Some(if n > 0.0 { sum / n } else { 0.0 }),
        labels: labels.cloned(),
        ..record(
            "compute.execution",
            "run_time",
            MetricKind::Distribution,
            "ms",
            if n > 0.0 { sum / n } else { 0.0 },
        )
    });
    out
}

/// The process-wide snapshot (all sessions) with the `runtime.memory` records and forgotten-handle
/// figures, then live bytes per origin (`compute.storage/live_bytes_by_origin`, labelled
/// `{origin}`), then one labelled set per live session (`{session}`), each followed by that
/// session's live bytes per origin (`{session, origin}`).
pub fn metrics() -> Vec<MetricRecord> {
    let mut r = frame::Records::default();
    frame::emit(&mut r);
    r.0
}

/// [`reset_peak`], returning what undoes it: a call that resets the peaks and then fails
/// (`watch` whose function throws) puts each back to the larger of before and since.
pub(crate) fn reset_peak_undoably() -> impl FnOnce() {
    let saved = PROCESS.reset_peak_saved();
    let sessions: Vec<_> = registry()
        .iter()
        .filter_map(|r| r.ledger.upgrade())
        .map(|l| {
            let peaks = l.reset_peak_saved();
            (l, peaks)
        })
        .collect();
    move || {
        PROCESS.keep_peaks(saved);
        sessions.iter().for_each(|(l, peaks)| l.keep_peaks(*peaks));
    }
}

/// Resets every peak gauge (process-wide and per session) to its current value.
pub fn reset_peak() {
    PROCESS.reset_peak();
    for r in registry().iter() {
        if let Some(l) = r.ledger.upgrade() {
            l.reset_peak();
        }
    }
}

/// The value of the unlabelled (process-wide) record `scope/name`, if present.
pub fn find(records: &[MetricRecord], scope: &str, name: &str) -> Option<f64> {
    records
        .iter()
        .find(|r| r.scope == scope && r.name == name && r.labels.is_none())
        .map(|r| r.value)
}
