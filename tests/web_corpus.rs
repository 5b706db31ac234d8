//! The labelled corpus of memory patterns (`shared/corpus_table.rs`) in headless Chromium on
//! WebGPU: every pattern must get its verdict, name its origin and list its finding.
#![cfg(target_arch = "wasm32")]

#[path = "shared/programs.rs"]
mod programs;

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/corpus.rs"]
mod corpus;

#[path = "shared/corpus_table.rs"]
mod corpus_table;

#[path = "shared/trace.rs"]
mod trace;

use affon::js::{JsSession, JsTelemetry};
use affon::{Session, SessionOptions};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn session(label: String) -> Session {
    Session::create(SessionOptions {
        label: Some(label),
        ..Default::default()
    })
    .await
    .expect("WebGPU adapter required")
}

#[wasm_bindgen_test]
async fn every_pattern_gets_its_verdict() {
    let (lines, failures) = corpus::run_all(session).await;
    web_sys::console::log_1(&lines.join("\n").into());
    assert!(
        failures.is_empty(),
        "{} of the corpus failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `startTrace()`/`stopTrace()`: the JSON validates against the Trace Event format.
#[wasm_bindgen_test]
async fn trace_export_is_valid_trace_event_json() {
    trace::trace_of_a_workload(&session("trace-demo".into()).await).await;
}

#[wasm_bindgen(inline_js = r#"
// From JavaScript: watch({session}) judges one session; diagnose({samples, warmup}) from samples
// collected by hand; a trace round-trips as JSON text.
export async function jsSeries(Session, telemetry) {
  const a = await Session.create({ label: 'js-series-a' });
  const b = await Session.create({ label: 'js-series-b' });
  const x = b.ones([64]);
  const leaked = [];
  const loop = () => { leaked.push(a.ones([16])); b.tidy(() => { x.square().sum(); }); };
  const out = {};
  const mine = await telemetry.watch(loop, { warmup: 3, iterations: 12, session: b });
  out.sessionVerdict = mine.verdict;
  out.sessionLabel = mine.session;
  out.seriesLength = mine.series.liveBytes.length;
  const all = await telemetry.watch(loop, { warmup: 3, iterations: 12 });
  out.processVerdict = all.verdict;
  out.byLabel = (await telemetry.watch(loop, { warmup: 3, iterations: 12, session: 'js-series-a' })).verdict;
  const samples = [telemetry.metrics()];
  for (let i = 0; i < 10; i++) { loop(); await a.sync(); samples.push(telemetry.metrics()); }
  const d = telemetry.diagnose({ samples, warmup: 2, session: 'js-series-a' });
  out.samplesVerdict = d.verdict;
  out.samplesOrigin = d.grownOrigins[0];
  out.findingsIsArray = Array.isArray(d.findings);
  try { telemetry.diagnose({ samples: 'no' }); out.badSamples = 'no error'; } catch (e) { out.badSamples = e.code; }
  try { await telemetry.watch(loop, { session: 'nobody' }); out.badSession = 'no error'; } catch (e) { out.badSession = e.code; }
  try { await Session.create({ label: 'js-series-a' }); out.duplicateLabel = 'no error'; } catch (e) { out.duplicateLabel = e.code; }
  telemetry.startTrace();
  const r = b.ones([8]).square();
  await r.toArray();
  const trace = JSON.parse(JSON.stringify(telemetry.stopTrace()));
  out.traceOk = Array.isArray(trace.traceEvents) && trace.traceEvents.every((e) =>
    typeof e.name === 'string' && typeof e.ph === 'string' && Number.isFinite(e.ts) && Number.isInteger(e.pid) && Number.isInteger(e.tid));
  out.traceHasReadback = trace.traceEvents.some((e) => e.ph === 'X' && e.name === 'readback');
  out.traceHasCounter = trace.traceEvents.some((e) => e.ph === 'C' && e.name === 'memory js-series-b');
  leaked.forEach((t) => t.dispose());
  a.dispose(); b.dispose();
  // a Session handle collected (free() runs the same Drop as the GC's finalizer) while its tensor is
  // still used: the session stays open for it, nothing is disposed behind the user's back
  const c = await Session.create({ label: 'collected' });
  const ct = c.ones([4]);
  c.free();
  out.afterCollect = Array.from(await ct.square().toArray()).join();
  ct.dispose();
  return out;
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = jsSeries)]
    async fn js_series(session: JsValue, telemetry: JsValue) -> JsValue;
}

#[wasm_bindgen_test]
async fn js_watch_by_session_samples_and_trace() {
    let s: JsValue = JsSession::create(JsValue::UNDEFINED)
        .await
        .map(JsValue::from)
        .unwrap();
    let class = |v: &JsValue| js_sys::Reflect::get(v, &"constructor".into()).unwrap();
    let t: JsValue = JsTelemetry::instance().into();
    let out = js_series(class(&s), class(&t)).await;
    let get = |k: &str| js_sys::Reflect::get(&out, &k.into()).unwrap();
    let text = |k: &str| get(k).as_string().unwrap_or_else(|| format!("{:?}", get(k)));
    assert_eq!(
        text("sessionVerdict"),
        "steady",
        "another session's leak does not count"
    );
    assert_eq!(text("sessionLabel"), "js-series-b");
    assert_eq!(
        get("seriesLength").as_f64(),
        Some(16.0),
        "a sample before and after each of 15 iterations"
    );
    assert_eq!(text("processVerdict"), "ownership-leak");
    assert_eq!(text("byLabel"), "ownership-leak");
    assert_eq!(text("samplesVerdict"), "ownership-leak");
    assert_eq!(text("samplesOrigin"), "ones");
    assert_eq!(get("findingsIsArray").as_bool(), Some(true));
    assert_eq!(text("badSamples"), "INVALID_ARGUMENT");
    assert_eq!(text("badSession"), "INVALID_ARGUMENT");
    assert_eq!(text("duplicateLabel"), "INVALID_ARGUMENT");
    assert_eq!(
        text("afterCollect"),
        "1,1,1,1",
        "a collected Session handle leaves its tensors working"
    );
    for k in ["traceOk", "traceHasReadback", "traceHasCounter"] {
        assert_eq!(get(k).as_bool(), Some(true), "{k}");
    }
}
