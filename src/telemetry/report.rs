//! The reproducible memory report of the seed's last section, as JSON: what a bug report needs to
//! separate an application retention bug, an affon storage leak, bounded pool growth and process or
//! driver growth.

use serde_json::{json, Value};

use super::Diagnosis;

/// Where the report runs: OS natively, the browser's user agent on the web.
fn platform() -> Value {
    #[cfg(web)]
    {
        json!({ "target": "web", "userAgent": crate::platform::user_agent() })
    }
    #[cfg(native)]
    {
        json!({ "target": "native", "os": std::env::consts::OS, "arch": std::env::consts::ARCH })
    }
}

/// The affon environment variables that were set (native).
fn environment() -> Value {
    #[cfg(native)]
    {
        let vars: serde_json::Map<String, Value> = std::env::vars()
            .filter(|(k, _)| k.starts_with("AFFON_") || k == "WGPU_BACKEND" || k == "WGPU_ADAPTER_NAME")
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        Value::Object(vars)
    }
    #[cfg(web)]
    {
        json!({})
    }
}

fn figures(s: &[super::MetricRecord]) -> Value {
    let pick = |scope: &str, name: &str| super::find(s, scope, name);
    json!({
        "liveBytes": pick("compute.storage", "live_bytes"),
        "peakBytes": pick("compute.storage", "peak_bytes"),
        "liveTensors": pick("compute.storage", "live_tensors"),
        "poolBytes": pick("compute.memory", "pool_bytes"),
        "poolCachedBytes": pick("compute.memory", "pool_cached_bytes"),
        "runtime": s.iter().filter(|r| r.scope == "runtime.memory" && r.labels.is_none())
            .map(|r| (r.name.to_string(), Value::from(r.value))).collect::<serde_json::Map<_, _>>(),
    })
}

/// Builds the report. `context` is free-form JSON from the caller — typically `{program,
/// inputs: [{name, shape, dtype}], iterations, pattern}` — and `diagnosis` (from `watch` or
/// `diagnose`) supplies the snapshots and verdict. Without a diagnosis the current metrics are the
/// only snapshot.
pub fn report(context: Value, diagnosis: Option<&Diagnosis>) -> Value {
    let now = super::metrics();
    let counters = |name: &str| super::find(&now, "compute.storage", name);
    let exec = |name: &str| super::find(&now, "compute.execution", name);
    let (forgotten_ever, forgotten_live, forgotten_bytes) = super::forgotten();
    let snapshots = diagnosis.map(|d| {
        let s = &d.snapshots;
        json!({
            "baseline": { "synchronized": s.synchronized, "figures": figures(&s.before), "metrics": s.before },
            "warm": { "synchronized": s.synchronized, "figures": figures(&s.warm), "metrics": s.warm },
            "steady": { "synchronized": s.synchronized, "figures": figures(&s.after), "metrics": s.after },
            "warmupIterations": s.warmup,
            "steadyIterations": s.iterations,
        })
    });
    let ctx = |k: &str| context.get(k).cloned().unwrap_or(Value::Null);
    json!({
        "affon": {
            "version": env!("CARGO_PKG_VERSION"),
            "revision": option_env!("AFFON_REVISION").unwrap_or("unknown"),
            "buildMode": if cfg!(debug_assertions) { "debug" } else { "release" },
        },
        "platform": platform(),
        "sessions": super::sessions(),
        "environment": environment(),
        "program": ctx("program"),
        "inputs": ctx("inputs"),
        "iterations": context.get("iterations").cloned()
            .or_else(|| diagnosis.and_then(|d| d.snapshots.iterations).map(Value::from))
            .unwrap_or(Value::Null),
        "context": context,
        "snapshots": snapshots.unwrap_or_else(|| json!({ "current": { "synchronized": false, "figures": figures(&now) } })),
        "diagnosis": diagnosis.map(|d| json!({ "verdict": d.verdict, "summary": d.summary, "evidence": d.evidence, "grownOrigins": d.grown_origins })),
        "ownership": {
            "allocations": counters("allocations"),
            "deallocations": counters("deallocations"),
            "liveTensors": counters("live_tensors"),
            "forgottenHandles": forgotten_ever,
            "forgottenLive": forgotten_live,
            "forgottenBytes": forgotten_bytes,
            "executions": exec("executions"),
            "compiles": exec("compiles"),
            "executableCacheEntries": exec("executable_cache_entries"),
            "owners": super::live_tensors(),
        },
    })
}
