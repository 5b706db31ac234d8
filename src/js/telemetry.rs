//! `telemetry` for JS: a class of static methods, so `telemetry.metrics()` reads naturally and
//! `pkg/std-telemetry.js` can re-export it as `std:telemetry`'s default.

use wasm_bindgen::prelude::*;

use super::args::describe;
use super::safe::thrown;
use super::{to_js, to_value, JsResult};
use crate::error::{invalid_arg, Error};
use crate::telemetry::{MetricRecord, Snapshots, WatchOptions};

fn records(what: &str, v: &JsValue) -> JsResult<Vec<MetricRecord>> {
    let v = crate::js::safe::plain(&format!("diagnose: '{what}'"), v).map_err(to_js)?;
    serde_wasm_bindgen::from_value(v).map_err(|e| {
        to_js(invalid_arg!(
            "diagnose: '{what}' must be a telemetry.metrics() snapshot ({e})"
        ))
    })
}

fn json_of(v: &JsValue) -> JsResult<serde_json::Value> {
    if v.is_undefined() || v.is_null() {
        return Ok(serde_json::Value::Null);
    }
    // JSON.stringify throws on a BigInt, a cycle or a throwing toJSON: that is a bad argument too
    let text = js_sys::JSON::stringify(v)
        .map_err(|e| {
            to_js(invalid_arg!(
                "report context is not JSON-serialisable: {}",
                thrown(&e)
            ))
        })?
        .as_string()
        .unwrap_or_default();
    serde_json::from_str(&text)
        .map_err(|e| to_js(invalid_arg!("report context is not JSON-serialisable: {e}")))
}

/// The options `allowed` of the object `v` of `what`, each read once by name (inherited fields and
/// getters count, as in `Session.create`; a throwing one is `INVALID_ARGUMENT`), those not
/// `undefined` kept. `undefined` or `null` is none; anything but an object (an array too), or an own
/// key outside `allowed`, is `INVALID_ARGUMENT` (a misspelt option is an error, never a default).
fn options(what: &str, v: &JsValue, allowed: &[&str]) -> JsResult<Vec<(String, JsValue)>> {
    if !super::safe::options_given(what, v, allowed).map_err(to_js)? {
        return Ok(Vec::new());
    }
    let mut read = Vec::new();
    for &k in allowed {
        let x = js_sys::Reflect::get(v, &k.into())
            .map_err(|e| to_js(invalid_arg!("{what}: '{k}' could not be read: {}", thrown(&e))))?;
        if !x.is_undefined() {
            read.push((k.to_string(), x));
        }
    }
    Ok(read)
}

/// The value of `k` among `entries`, `undefined` when absent.
fn get(entries: &[(String, JsValue)], k: &str) -> JsValue {
    let found = entries.iter().find(|(n, _)| n == k);
    found.map(|(_, v)| v.clone()).unwrap_or_default()
}

/// The count option `k` among `entries`, `default` when absent (the rule is the core's).
fn count(entries: &[(String, JsValue)], k: &str, default: u64) -> JsResult<u64> {
    let v = get(entries, k);
    if v.is_undefined() {
        return Ok(default);
    }
    let x = v.as_f64().ok_or_else(|| {
        to_js(invalid_arg!(
            "'{k}' must be a non-negative integer, got {}",
            describe(&v)
        ))
    })?;
    crate::host::count_from_f64(&format!("'{k}'"), x).map_err(to_js)
}

/// The boolean option `k` among `entries`: absent is `false`, anything but a boolean `INVALID_ARGUMENT`.
fn flag(entries: &[(String, JsValue)], k: &str) -> JsResult<bool> {
    let v = get(entries, k);
    if v.is_undefined() {
        return Ok(false);
    }
    v.as_bool()
        .ok_or_else(|| to_js(invalid_arg!("'{k}' must be a boolean, got {}", describe(&v))))
}

/// Process-wide metric records and peak reset.
#[wasm_bindgen(js_name = telemetry)]
pub struct JsTelemetry;

impl JsTelemetry {
    /// An instance; its `constructor` is the `telemetry` class object (the hook and tests use it).
    pub fn instance() -> JsTelemetry {
        JsTelemetry
    }
}

#[wasm_bindgen(js_class = telemetry)]
impl JsTelemetry {
    /// `MetricRecord[]`: the process-wide records, then labelled records per live session.
    #[wasm_bindgen(unchecked_return_type = "MetricRecord[]")]
    pub fn metrics() -> JsResult<JsValue> {
        super::records::metrics()
    }

    /// Resets every peak gauge to its current value.
    #[wasm_bindgen(js_name = resetPeak)]
    pub fn reset_peak() {
        crate::telemetry::reset_peak()
    }

    /// `[{origin, count, bytes, oldestIteration, forgotten, stack?}]`: live storage grouped by
    /// origin, largest first.
    #[wasm_bindgen(js_name = liveTensors, unchecked_return_type = "OwnerGroup[]")]
    pub fn live_tensors() -> JsResult<JsValue> {
        to_value(&crate::telemetry::live_tensors())
    }

    /// `[{id, session, origin, bytes, iteration, forgotten, stack?}]`: every live storage, oldest
    /// first (at most `limit`, default 5000: the largest are kept) — the panel's per-storage timeline.
    #[wasm_bindgen(unchecked_return_type = "StorageInfo[]")]
    pub fn storages(
        #[wasm_bindgen(unchecked_optional_param_type = "number")] limit: JsValue,
    ) -> JsResult<JsValue> {
        let limit = super::args::number_or("storages: limit", &limit, 5000.0)?;
        let limit = crate::host::count_from_f64("storages: limit", limit).map_err(to_js)?;
        // a limit past what this target can count means no limit (never wrapped to a small one)
        to_value(&crate::telemetry::storages(
            usize::try_from(limit).unwrap_or(usize::MAX),
        ))
    }

    /// `{handles, tensors, bytes}`: handles collected without `dispose()` (ever), and the storages of
    /// those still held (accounted until released).
    #[wasm_bindgen(unchecked_return_type = "Forgotten")]
    pub fn forgotten() -> JsResult<JsValue> {
        let (handles, tensors, bytes) = crate::telemetry::forgotten();
        to_value(&serde_json::json!({ "handles": handles, "tensors": tensors, "bytes": bytes }))
    }

    /// Starts recording a trace (Chrome Trace Event format): counter tracks of live, pool and cached
    /// bytes per session, spans for runs, syncs and readbacks.
    #[wasm_bindgen(js_name = startTrace)]
    pub fn start_trace() {
        crate::telemetry::start_trace();
    }

    /// Stops the trace: `{traceEvents, displayTimeUnit, otherData}` — save it as JSON and open it in
    /// Perfetto (ui.perfetto.dev) or `chrome://tracing`.
    #[wasm_bindgen(js_name = stopTrace, unchecked_return_type = "TraceJSON")]
    pub fn stop_trace() -> JsResult<JsValue> {
        js_sys::JSON::parse(&crate::telemetry::stop_trace().to_string())
    }

    /// Releases the storage of every handle the garbage collector took without `dispose()` (kept,
    /// accounted, until now); returns `{handles, bytes}` released.
    #[wasm_bindgen(js_name = releaseForgotten, unchecked_return_type = "ReleasedForgotten")]
    pub fn release_forgotten() -> JsResult<JsValue> {
        let (handles, bytes) = crate::telemetry::release_forgotten();
        to_value(&serde_json::json!({ "handles": handles, "bytes": bytes }))
    }

    /// `[{session, adapter, config, usage}]` for every live session in this page: the pool's settings
    /// and figures, cached bytes broken down by size class (`usage.cachedByClass`: `[class, buffers,
    /// bytes]`).
    #[wasm_bindgen(unchecked_return_type = "PoolSnapshot[]")]
    pub fn pools() -> JsResult<JsValue> {
        to_value(&crate::Session::pools())
    }

    /// The current iteration (what `nextIteration()` last returned), without advancing it.
    pub fn iteration() -> f64 {
        crate::telemetry::current_iteration() as f64
    }

    /// Advances the iteration counter that live storage records its age in; returns the new value.
    #[wasm_bindgen(js_name = nextIteration)]
    pub fn next_iteration() -> f64 {
        crate::telemetry::next_iteration() as f64
    }

    /// Classifies `{samples, warmup, session?}` (per-iteration `metrics()` snapshots: before the
    /// first iteration, then after each) or `{before, warm, after}` (three snapshots; optional
    /// `iterations`, `warmup`, `synchronized`) into a Diagnosis `{verdict, summary, evidence,
    /// grownOrigins, findings, series?, snapshots}`.
    #[wasm_bindgen(unchecked_return_type = "Diagnosis")]
    pub fn diagnose(
        #[wasm_bindgen(unchecked_param_type = "DiagnoseInput")] input: JsValue,
    ) -> JsResult<JsValue> {
        const SAMPLES: [&str; 4] = ["samples", "warmup", "session", "synchronized"];
        const SNAPSHOTS: [&str; 6] = ["before", "warm", "after", "iterations", "warmup", "synchronized"];
        if !input.is_object() || super::safe::is_array(&input) {
            return Err(to_js(invalid_arg!(
                "diagnose needs {{samples, warmup}} or {{before, warm, after}}, got {}",
                describe(&input)
            )));
        }
        // every key of either form, each once
        let mut all = SAMPLES.to_vec();
        all.extend(SNAPSHOTS.iter().filter(|k| !SAMPLES.contains(k)));
        let e = options("diagnose", &input, &all)?;
        let samples = get(&e, "samples");
        let (form, allowed) = match samples.is_undefined() {
            true => ("{before, warm, after}", &SNAPSHOTS[..]),
            false => ("{samples}", &SAMPLES[..]),
        };
        if let Some((k, _)) = e.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
            return Err(to_js(invalid_arg!(
                "diagnose: '{k}' is not an option of the {form} form (expected one of {allowed:?})"
            )));
        }
        if !samples.is_undefined() {
            if !super::safe::is_array(&samples) {
                return Err(to_js(invalid_arg!(
                    "diagnose: samples must be an array of metrics() snapshots, got {}",
                    describe(&samples)
                )));
            }
            let list = super::safe::array("diagnose: samples", &samples, super::safe::MAX_LIST)?
                .iter()
                .enumerate()
                .map(|(i, s)| records(&format!("samples[{i}]"), &s))
                .collect::<JsResult<Vec<_>>>()?;
            let warmup = usize::try_from(count(&e, "warmup", 0)?).unwrap_or(usize::MAX);
            let session = session_label("diagnose", &get(&e, "session"))?;
            let synchronized = flag(&e, "synchronized")?;
            let d = crate::telemetry::diagnose_samples(&list, warmup, session.as_deref(), synchronized);
            return to_value(&d.map_err(to_js)?);
        }
        let n = count(&e, "iterations", 0)?;
        let w = count(&e, "warmup", 0)?;
        let snapshots = Snapshots {
            before: records("before", &get(&e, "before"))?,
            warm: records("warm", &get(&e, "warm"))?,
            after: records("after", &get(&e, "after"))?,
            warmup: (w > 0).then_some(w),
            iterations: (n > 0).then_some(n),
            synchronized: flag(&e, "synchronized")?,
        };
        to_value(&crate::telemetry::diagnose(snapshots))
    }

    /// Runs `fn(i)` (sync or async) `warmup + iterations` times, synchronising every live session
    /// and sampling after every iteration, and diagnoses. Options: `{warmup = 5, iterations = 20,
    /// session}` (`session`: a Session or its label; only its figures count).
    #[wasm_bindgen(unchecked_return_type = "Diagnosis")]
    pub async fn watch(
        #[wasm_bindgen(unchecked_param_type = "(iteration: number) => unknown")] f: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "WatchOptions")] options: JsValue,
    ) -> JsResult<JsValue> {
        let f = super::args::function("watch: fn", &f)?;
        let e = self::options("watch options", &options, &["warmup", "iterations", "session"])?;
        let defaults = WatchOptions::default();
        let opts = WatchOptions {
            warmup: count(&e, "warmup", defaults.warmup)?,
            iterations: count(&e, "iterations", defaults.iterations)?,
            session: session_label("watch", &get(&e, "session"))?,
        };
        let sessions = crate::Session::live();
        let refs: Vec<&crate::Session> = sessions.iter().collect();
        let thrown = std::cell::RefCell::new(None);
        let run = async |i: u64| -> crate::Result<()> {
            let r = f.call1(&JsValue::UNDEFINED, &(i as f64).into());
            // a promise is adopted without calling any `then` the page put on it (`safe::settle`)
            let r = match r {
                Ok(v) => super::safe::settle(v).await.map(drop),
                Err(e) => Err(e),
            };
            r.map_err(|e| {
                *thrown.borrow_mut() = Some(e);
                Error::InvalidArgument("the watched function threw".into())
            })
        };
        let d = crate::telemetry::watch(&refs, opts, run).await;
        if let Some(e) = thrown.take() {
            return Err(e);
        }
        to_value(&d.map_err(to_js)?)
    }

    /// The reproducible memory report as a JSON object. `context`: `{program, inputs, iterations,
    /// pattern, diagnosis}` — all optional; `diagnosis` (from `watch`/`diagnose`) supplies the
    /// baseline/warm/steady snapshots.
    #[wasm_bindgen(unchecked_return_type = "MemoryReport")]
    pub fn report(
        #[wasm_bindgen(unchecked_optional_param_type = "ReportContext")] context: JsValue,
    ) -> JsResult<JsValue> {
        let mut ctx = json_of(&context)?;
        let diagnosis = match ctx.as_object_mut().and_then(|o| o.remove("diagnosis")) {
            Some(d) => Some(
                serde_json::from_value::<crate::telemetry::Diagnosis>(d)
                    .map_err(|e| to_js(invalid_arg!("report: 'diagnosis' is not a Diagnosis ({e})")))?,
            ),
            None => None,
        };
        let r = crate::telemetry::report(ctx, diagnosis.as_ref());
        js_sys::JSON::parse(&r.to_string())
    }
}

/// A session given as a `Session` handle or its label; `None` when absent.
fn session_label(what: &str, v: &JsValue) -> JsResult<Option<String>> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    if let Some(s) = v.as_string() {
        return Ok(Some(s));
    }
    super::session::label_of(v).map(Some).ok_or_else(|| {
        to_js(invalid_arg!(
            "{what}: session must be a Session or its label, got {}",
            describe(v)
        ))
    })
}
