//! Trace export in the Chrome Trace Event format (opens in Perfetto and `chrome://tracing`): while
//! a trace runs, every ledger change of a session adds a counter event (its live, pool and cached
//! bytes), runs, syncs and readbacks add complete-span events, and each `nextIteration()` a
//! process-wide instant event carrying the iteration number. Knows nothing of wgpu or JS.
//!
//! Off by default; one relaxed atomic load per ledger change when off. The buffer is bounded
//! ([`MAX_EVENTS`]); events past it are counted in the trace's metadata, not kept.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Events a trace keeps at most.
pub const MAX_EVENTS: usize = 1 << 20;

static TRACING: AtomicBool = AtomicBool::new(false);
static EVENTS: Mutex<Trace> = Mutex::new(Trace {
    events: Vec::new(),
    dropped: 0,
    threads: Vec::new(),
});

struct Trace {
    events: Vec<serde_json::Value>,
    dropped: u64,
    /// `(tid, session label)` of every session that appeared.
    threads: Vec<(u64, String)>,
}

fn trace() -> std::sync::MutexGuard<'static, Trace> {
    EVENTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether a trace is running.
pub(crate) fn enabled() -> bool {
    TRACING.load(Ordering::Relaxed)
}

/// Adds `event`; `track` names the session track it is on (`None`: a process-wide event).
fn push(track: Option<(u64, &str)>, event: serde_json::Value) {
    let mut t = trace();
    if let Some((tid, label)) = track {
        if !t.threads.iter().any(|(id, _)| *id == tid) {
            t.threads.push((tid, label.to_string()));
        }
    }
    if t.events.len() < MAX_EVENTS {
        t.events.push(event);
    } else {
        t.dropped += 1;
    }
}

fn micros(ms: f64) -> f64 {
    (ms * 1000.0).max(0.0)
}

/// A counter sample of one session's memory figures (one counter track per session).
pub(crate) fn counter(tid: u64, label: &str, live: u64, pool: u64, cached: u64) {
    let ts = micros(crate::platform::now_ms());
    push(
        Some((tid, label)),
        serde_json::json!({
            "name": format!("memory {label}"), "cat": "affon.memory", "ph": "C", "ts": ts,
            "pid": 1, "tid": tid,
            "args": { "live_bytes": live, "pool_bytes": pool, "cached_bytes": cached },
        }),
    );
}

/// A complete span (`ph: "X"`) from `start_ms` to now, on the session's track.
pub(crate) fn span(tid: u64, label: &str, name: &str, cat: &str, start_ms: f64, args: serde_json::Value) {
    let end = crate::platform::now_ms();
    push(
        Some((tid, label)),
        serde_json::json!({
            "name": name, "cat": cat, "ph": "X", "ts": micros(start_ms),
            "dur": micros(end - start_ms), "pid": 1, "tid": tid, "args": args,
        }),
    );
}

/// A process-wide instant event marking that iteration `n` began (`telemetry.nextIteration()`), so
/// a trace can be read, and re-opened in the panel, by iterations as well as by time.
pub(crate) fn iteration(n: u64) {
    let ts = micros(crate::platform::now_ms());
    push(
        None,
        serde_json::json!({
            "name": "iteration", "cat": "affon.iteration", "ph": "i", "s": "p", "ts": ts,
            "pid": 1, "tid": 0, "args": { "iteration": n },
        }),
    );
}

/// Starts a trace (discarding any events of a previous one).
pub fn start() {
    let mut t = trace();
    t.events.clear();
    t.dropped = 0;
    t.threads.clear();
    TRACING.store(true, Ordering::SeqCst);
}

/// Stops the trace and returns it: `{traceEvents, displayTimeUnit: "ms", otherData}`, with
/// metadata events naming the process (`affon`) and each session's track. Without a running trace
/// the event list is empty.
pub fn stop() -> serde_json::Value {
    TRACING.store(false, Ordering::SeqCst);
    let mut t = trace();
    let mut events = vec![serde_json::json!({
        "name": "process_name", "ph": "M", "ts": 0, "pid": 1, "tid": 0, "args": { "name": "affon" },
    })];
    for (tid, label) in &t.threads {
        events.push(serde_json::json!({
            "name": "thread_name", "ph": "M", "ts": 0, "pid": 1, "tid": tid,
            "args": { "name": format!("session {label}") },
        }));
    }
    events.append(&mut t.events);
    let dropped = std::mem::take(&mut t.dropped);
    t.threads.clear();
    serde_json::json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": { "producer": format!("affon {}", env!("CARGO_PKG_VERSION")), "droppedEvents": dropped },
    })
}
