//! What a diagnosis is made of: the verdict, its evidence and findings, the snapshots and the
//! per-iteration series (API.md `Diagnosis`).

use crate::telemetry::MetricRecord;

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
    /// The snapshots (from samples: the first, the one at the end of warm-up, the last).
    pub snapshots: Snapshots,
    /// Per-iteration figures, when diagnosed from samples.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub series: Option<Series>,
    /// What moved but did not decide the verdict.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// The session whose labelled figures were judged (`None`: the process).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub session: Option<String>,
}

/// Per-iteration figures (one entry per sample: before the first iteration, then after each).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Series {
    /// `compute.storage/live_bytes`.
    pub live_bytes: Vec<f64>,
    /// `compute.memory/pool_bytes`.
    pub pool_bytes: Vec<f64>,
    /// `compute.storage/peak_bytes`.
    pub peak_bytes: Vec<f64>,
    /// The sum of the `runtime.memory` records (resident bytes, wasm memory, JS heap).
    pub runtime_bytes: Vec<f64>,
}

/// Something that moved but did not decide the verdict.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Finding {
    /// `bounded-growth`, `larger-input`, `pool-warm-up`, `pool-growth`, `runtime-growth`,
    /// `shape-growth` or `tensor-growth`.
    pub kind: String,
    /// One sentence.
    pub summary: String,
}
