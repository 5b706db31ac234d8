//! Trace export on both targets: the JSON `stopTrace()` returns is validated against the Trace Event
//! format (the fields Perfetto and `chrome://tracing` read) and carries what API.md promises.
#![allow(dead_code)]

use affon::{telemetry, DType, Session};
use serde_json::Value;

const PHASES: [&str; 20] = [
    "B", "E", "X", "i", "I", "C", "M", "b", "e", "n", "s", "t", "f", "P", "O", "N", "D", "R", "c", "(",
];

/// Checks `trace` against the Trace Event format: a `traceEvents` array of objects, each with a
/// string `name`, a known phase `ph`, integer `pid`/`tid`, a non-negative numeric `ts`; complete
/// events (`X`) with a non-negative `dur`; counters (`C`) with numeric `args`; metadata (`M`) naming
/// a process or thread.
pub fn validate(trace: &Value) -> Result<(), String> {
    let events = trace["traceEvents"].as_array().ok_or("no traceEvents array")?;
    if !matches!(trace["displayTimeUnit"].as_str(), Some("ms" | "ns")) {
        return Err("displayTimeUnit must be ms or ns".into());
    }
    for (i, e) in events.iter().enumerate() {
        let bad = |why: &str| Err(format!("event {i} {why}: {e}"));
        let Some(name) = e["name"].as_str().filter(|n| !n.is_empty()) else {
            return bad("has no name");
        };
        let Some(ph) = e["ph"].as_str().filter(|p| PHASES.contains(p)) else {
            return bad("has no known ph");
        };
        if e["pid"].as_u64().is_none() || e["tid"].as_u64().is_none() {
            return bad("needs integer pid and tid");
        }
        if !e["ts"].as_f64().is_some_and(|t| t >= 0.0 && t.is_finite()) {
            return bad("needs a finite ts ≥ 0");
        }
        match ph {
            "X" if !e["dur"].as_f64().is_some_and(|d| d >= 0.0) => return bad("(X) needs dur ≥ 0"),
            "C" => {
                let args = e["args"].as_object().ok_or("counter without args")?;
                if args.is_empty() || !args.values().all(Value::is_number) {
                    return bad("(C) needs numeric args");
                }
            }
            "M" if !(["process_name", "thread_name"].contains(&name) && e["args"]["name"].is_string()) => {
                return bad("(M) must name a process or thread")
            }
            _ => {}
        }
    }
    Ok(())
}

/// A traced workload: counters follow the ledger, spans cover the run, the sync and the readback.
pub async fn trace_of_a_workload(s: &Session) {
    let exe = s.compile(&crate::programs::running_mean()).unwrap();
    let state = exe.create_state(&[]).unwrap();
    telemetry::start_trace();
    let iteration = telemetry::next_iteration();
    let x = s.ones(&[3, 4], DType::Float32).unwrap();
    let y = x.square().unwrap();
    let out = exe.run(&[("x", &y)], Some(&state)).unwrap();
    s.sync().await.unwrap();
    assert_eq!(out[0].1.read::<f32>().await.unwrap(), vec![3.0; 4]);
    drop((x, y, out));
    let live_at_stop = s.stats().live_bytes;
    let trace = telemetry::stop_trace();
    let text = trace.to_string();
    let trace: Value = serde_json::from_str(&text).expect("the trace is JSON");
    validate(&trace).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let tid = events
        .iter()
        .find(|e| e["ph"] == "M" && e["args"]["name"] == format!("session {}", s.label()))
        .and_then(|e| e["tid"].as_u64())
        .expect("the session's track is named");
    let spans: Vec<&str> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["tid"] == tid)
        .filter_map(|e| e["name"].as_str())
        .collect();
    for want in ["run:running_mean", "sync", "readback"] {
        assert!(spans.contains(&want), "span {want} in {spans:?}");
    }
    // the iteration mark: a process-wide instant carrying the number nextIteration() returned
    assert!(
        events.iter().any(|e| e["ph"] == "i"
            && e["name"] == "iteration"
            && e["s"] == "p"
            && e["args"]["iteration"].as_u64() == Some(iteration)),
        "an instant event for iteration {iteration}"
    );
    let counters: Vec<&Value> = events
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == format!("memory {}", s.label()))
        .collect();
    // x, y, the run's intermediate/outputs: every acquire and release is a counter event
    assert!(counters.len() >= 8, "{} counter events", counters.len());
    let last = counters.last().unwrap();
    assert_eq!(
        last["args"]["live_bytes"].as_u64(),
        Some(live_at_stop),
        "the track ends at the ledger's value"
    );
    let highest = counters
        .iter()
        .filter_map(|c| c["args"]["live_bytes"].as_u64())
        .max()
        .unwrap();
    assert!(
        highest >= live_at_stop + 48 + 48 + 16,
        "x, y and the output were live at once"
    );
    // an empty trace (stop without start) is still valid
    let empty = telemetry::stop_trace();
    validate(&empty).unwrap();
    assert_eq!(
        empty["traceEvents"].as_array().map(|e| e.len()),
        Some(1),
        "only the process name"
    );
}
