//! Telemetry in headless Chromium on WebGPU: every verdict case (the same code as natively), owner
//! attribution, the report, OOM forensics, and the browser-only features — forgotten handles found
//! through garbage collection, creating stacks, `watch` over a JS function, the JS heap.
#![cfg(target_arch = "wasm32")]

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/programs.rs"]
mod programs;

#[path = "shared/diagnosis.rs"]
mod diagnosis;

use affon::js::JsSession;
use affon::{PoolOptions, Session, SessionOptions};
use ledger::{field, nums};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn session(label: &str) -> Session {
    Session::create(SessionOptions {
        label: Some(label.into()),
        ..Default::default()
    })
    .await
    .expect("WebGPU adapter required")
}

/// wasm-bindgen-test interleaves async tests at await points, and these cases read process-wide
/// metrics, so everything runs in this one test, in order.
#[wasm_bindgen_test]
async fn telemetry_in_the_browser() {
    verdicts_attribution_report_and_forensics().await;
    forgotten_handles_are_detected_and_stay_accounted().await;
    captured_stacks_reach_the_users_frame().await;
    js_watch_diagnoses_js_functions_and_reports().await;
}

async fn verdicts_attribution_report_and_forensics() {
    diagnosis::forgets_one_output_per_iteration(&session("forgotten-output").await).await;
    diagnosis::keeps_every_tenth_output(&session("every-tenth").await).await;
    diagnosis::keeps_old_states(&session("old-states").await).await;
    diagnosis::growing_shapes(&session("growing-shapes").await).await;
    diagnosis::cycles_distinct_sizes(&session("distinct-sizes").await).await;
    diagnosis::steady_loop(&session("steady").await).await;
    diagnosis::grows_a_host_array(&session("host-array").await).await;
    diagnosis::live_tensor_attribution(&session("attribution").await).await;
    diagnosis::report_fields(&session("report").await).await;
    diagnosis::watch_refusals_and_a_lost_neighbour(&session("refusals").await, &session("lost").await).await;
    let small = Session::create(SessionOptions {
        pool: PoolOptions {
            max_total_bytes: Some(64 << 10),
            ..Default::default()
        },
        ..Default::default()
    })
    .await
    .unwrap();
    diagnosis::out_of_memory_forensics(&small).await;
}

#[wasm_bindgen(inline_js = r#"
const tick = () => new Promise((r) => setTimeout(r, 0));

export async function forgottenHandles(Session, telemetry) {
  const session = await Session.create({ label: 'gc' });
  const before = telemetry.forgotten();
  const live0 = session.memory().numBytes;
  (() => { for (let i = 0; i < 5; i++) session.fill([256], i); })();   // handles dropped, never disposed
  for (let i = 0; i < 20 && telemetry.forgotten().handles - before.handles < 5; i++) {
    globalThis.gc();
    await tick();
  }
  const after = telemetry.forgotten();
  const group = telemetry.liveTensors().find((g) => g.origin === 'fill');
  const out = { handles: after.handles - before.handles, tensors: after.tensors - before.tensors,
                bytes: after.bytes - before.bytes, stillAccounted: session.memory().numBytes - live0,
                groupForgotten: group?.forgotten ?? -1 };
  // a handle let go while its read waits for the device (`free()` is what the collector runs):
  // the read still resolves, and the tensor is forgotten — still accounted — when it does
  const reading = session.fill([64], 7);
  const pending = reading.toArray();
  reading.free();
  const whileReading = telemetry.forgotten().handles - after.handles;
  const values = await pending;
  out.readWhileFreed = [whileReading, values.length, values[0],
                        telemetry.forgotten().handles - after.handles, telemetry.forgotten().bytes - after.bytes,
                        session.memory().numBytes - live0];
  // an executable and a state dropped without dispose(): their storage stays accounted too
  const Program = globalThis.__affonProgramClass;
  (() => {
    const p = new Program('gc-model');
    const x = p.input('x', 'float32', [4]);
    const acc = p.state('acc', 'float32', [4]);
    p.output('y', p.add(p.add(x, acc), p.constant([1, 2, 3, 4], [4])));
    const exe = session.compile(p);
    exe.createState();
  })();
  for (let i = 0; i < 20 && !telemetry.liveTensors().some((g) => g.origin === "state 'acc' of program 'gc-model'" && g.forgotten === 1); i++) {
    globalThis.gc();
    await tick();
  }
  const groups = telemetry.liveTensors();
  out.constantForgotten = groups.find((g) => g.origin === "constant of program 'gc-model'")?.forgotten ?? -1;
  out.stateForgotten = groups.find((g) => g.origin === "state 'acc' of program 'gc-model'")?.forgotten ?? -1;
  // a session handle let go while `watch` holds every live session across its iterations: when the
  // watch ends the session is forgotten (nothing observable: ops on its tensors keep working), not
  // disposed by the watch letting go last
  const watched = await Session.create({ label: 'gc-watched' });
  const onWatched = watched.ones([16]);
  await telemetry.watch((i) => { if (i === 1) watched.free(); }, { warmup: 2, iterations: 3 });
  const opAfter = (() => { try { const q = onWatched.square(); q.dispose(); return 'no error'; } catch (e) { return e.code; } })();
  out.sessionFreedWhileWatched = `${opAfter}|${(await onWatched.toArray().catch((e) => e)).length ?? 'error'}`;
  onWatched.dispose();
  // opting in: collected handles give their storage back
  const releasing = await Session.create({ label: 'gc-release', releaseOnCollect: true });
  (() => { for (let i = 0; i < 5; i++) releasing.zeros([256]); })();
  for (let i = 0; i < 20 && releasing.memory().numBytes > 0; i++) { globalThis.gc(); await tick(); }
  out.released = releasing.memory().numBytes;
  return out;
}

export async function stacks(Session, telemetry) {
  const session = await Session.create({ label: 'stacks', captureStacks: true });
  function makeWeights() { return session.randomNormal([32, 32], { seed: 7 }); }
  const w = makeWeights();
  const g = telemetry.liveTensors().find((x) => x.origin === 'randomNormal');
  const out = { stack: g?.stack ?? '' };
  w.dispose();
  // a page's own stack formatting calls back into affon: affon must not run it mid-call (it used to
  // re-enter the session from inside an allocation), and must leave Error's fields as they were
  // (V8 reads stackTraceLimit without running getters, but an accessor there means no stack at all)
  let hookCalls = 0;
  const byHook = [];
  const hook = (e, frames) => { hookCalls++; byHook.push(session.ones([4])); return 'formatted by the page'; };
  Error.prepareStackTrace = hook;
  const limit = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
  Object.defineProperty(Error, 'stackTraceLimit', { get() { return 20; }, configurable: true });
  let made;
  try {
    made = (function makeUnderHook() { return session.ones([16]); })();
    out.hookedStack = telemetry.liveTensors().find((x) => x.origin === 'ones')?.stack ?? '';
    out.hookCalls = hookCalls;
    out.hookRestored = Error.prepareStackTrace === hook;
    out.limitRestored = typeof Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit').get === 'function';
  } finally {
    Object.defineProperty(Error, 'stackTraceLimit', limit);
  }
  out.pageStack = new Error('x').stack; // the page's formatting still applies to its own errors
  out.hookCallsAfter = hookCalls;
  delete Error.prepareStackTrace;
  out.live = session.memory().numTensors; // made, and the one the page's hook made
  made.dispose();
  out.liveAfter = session.memory().numTensors;
  out.limitBack = Error.stackTraceLimit;
  byHook.forEach((t) => t.dispose());
  session.dispose();
  return out;
}

export async function jsWatch(Session, telemetry) {
  const session = await Session.create({ label: 'js-watch' });
  const x = session.ones([1000]);
  const junk = [];
  const grow = await telemetry.watch(() => {
    session.tidy(() => x.square().sum()).dispose();
    for (let i = 0; i < 20000; i++) junk.push({ i, s: 'x'.repeat(16) + i });
  }, { warmup: 5, iterations: 20 });
  const kept = [];
  const leak = await telemetry.watch(async () => { kept.push(x.square()); await Promise.resolve(); },
                                     { warmup: 3, iterations: 10 });
  const threw = await telemetry.watch(() => { throw new Error('boom'); }).then(() => 'no error', (e) => e.message);
  const report = telemetry.report({ program: 'square', inputs: [{ name: 'x', shape: [1000], dtype: 'float32' }],
                                    diagnosis: leak });
  const m = telemetry.metrics();
  const rt = (n) => m.find((r) => r.scope === 'runtime.memory' && r.name === n)?.value;
  return { grow: grow.verdict, growSummary: grow.summary, leak: leak.verdict, leakOrigins: leak.grownOrigins,
           threw, reportVerdict: report.diagnosis.verdict, reportTarget: report.platform.target,
           reportUa: typeof report.platform.userAgent, reportAdapter: report.sessions.find((s) => s.label === 'js-watch')?.adapter?.architecture,
           wasm: rt('wasm_memory_bytes'), heap: rt('js_heap_used_bytes'), junk: junk.length,
           oom: await oomFromJs(Session) };
}

async function oomFromJs(Session) {
  const s = await Session.create({ pool: { maxTotalBytes: 65536 } });
  const keep = [s.ones([8192]), s.ones([4096])];
  try { s.zeros([8192]); return 'no error'; } catch (e) {
    return `${e.code}|${e.owners?.[0]?.origin}|${e.owners?.[0]?.bytes}|${e.pool?.bytesHeld}|${e.boundBytes}`;
  } finally { keep.forEach((t) => t.dispose()); }
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = forgottenHandles)]
    async fn forgotten_handles(session_class: JsValue, telemetry: JsValue) -> JsValue;
    async fn stacks(session_class: JsValue, telemetry: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = jsWatch)]
    async fn js_watch(session_class: JsValue, telemetry: JsValue) -> JsValue;
}

/// The exported classes, as JS values (the same objects `pkg/affon.js` exports).
async fn classes() -> (JsValue, JsValue) {
    let p: JsValue = affon::js::JsProgram::new("probe".into()).unwrap().into();
    let program_class = field(&p, "constructor");
    js_sys::Reflect::set(&js_sys::global(), &"__affonProgramClass".into(), &program_class).unwrap();
    let s: JsValue = JsSession::create(JsValue::UNDEFINED)
        .await
        .map(JsValue::from)
        .expect("WebGPU adapter required");
    let session_class = field(&s, "constructor");
    let telemetry = field(&JsValue::from(affon::js::JsTelemetry::instance()), "constructor");
    (session_class, telemetry)
}

async fn forgotten_handles_are_detected_and_stay_accounted() {
    let (s, t) = classes().await;
    let out = forgotten_handles(s, t).await;
    assert_eq!(
        field(&out, "handles").as_f64(),
        Some(5.0),
        "five collected handles detected"
    );
    assert_eq!(field(&out, "tensors").as_f64(), Some(5.0));
    assert_eq!(field(&out, "bytes").as_f64(), Some(5.0 * 1024.0));
    assert_eq!(
        field(&out, "stillAccounted").as_f64(),
        Some(5.0 * 1024.0),
        "deterministic: still accounted"
    );
    assert_eq!(field(&out, "groupForgotten").as_f64(), Some(5.0));
    // freed while its read waited: not forgotten until the read ends, then forgotten and still
    // accounted (before, the read's end disposed it: 0 handles, 5 KiB)
    assert_eq!(
        nums(&field(&out, "readWhileFreed")),
        vec![0.0, 64.0, 7.0, 1.0, 256.0, 5.0 * 1024.0 + 256.0],
        "[forgotten while reading, values read, value, forgotten after, forgotten bytes, accounted]"
    );
    assert_eq!(
        field(&out, "sessionFreedWhileWatched").as_string().as_deref(),
        Some("no error|16"),
        "a session freed during watch stays open for its tensors"
    );
    assert_eq!(
        field(&out, "released").as_f64(),
        Some(0.0),
        "releaseOnCollect gives storage back"
    );
}

async fn captured_stacks_reach_the_users_frame() {
    let (s, t) = classes().await;
    let out = stacks(s, t).await;
    let stack = field(&out, "stack").as_string().unwrap();
    let first = stack.lines().next().unwrap_or_default();
    assert!(
        first.contains("makeWeights"),
        "the first frame is the caller's: {stack}"
    );
    assert!(
        !stack.contains("wasm-function") && !stack.contains("__wbg"),
        "trimmed: {stack}"
    );
    // a page's Error.prepareStackTrace that calls into the session is not run by the capture, an
    // accessor on Error.stackTraceLimit does not stop it; the stack is the engine's, both are put back
    let num = |k: &str| field(&out, k).as_f64();
    let hooked = field(&out, "hookedStack").as_string().unwrap();
    let first = hooked.lines().next().unwrap_or_default();
    assert!(first.contains("makeUnderHook"), "{hooked}");
    assert_eq!(num("hookCalls"), Some(0.0), "the page's hook is not run by affon");
    assert_eq!(field(&out, "hookRestored").as_bool(), Some(true));
    assert_eq!(field(&out, "limitRestored").as_bool(), Some(true));
    assert_eq!(
        field(&out, "pageStack").as_string().as_deref(),
        Some("formatted by the page")
    );
    assert_eq!(num("hookCallsAfter"), Some(1.0));
    assert_eq!(num("live"), Some(2.0));
    assert_eq!(num("liveAfter"), Some(1.0));
    assert_eq!(
        num("limitBack"),
        Some(10.0),
        "Error.stackTraceLimit as the engine set it"
    );
}

async fn js_watch_diagnoses_js_functions_and_reports() {
    let (s, t) = classes().await;
    let out = js_watch(s, t).await;
    let str_of = |k: &str| field(&out, k).as_string().unwrap_or_default();
    assert_eq!(str_of("grow"), "process-growth", "{}", str_of("growSummary"));
    assert_eq!(str_of("leak"), "ownership-leak");
    assert_eq!(
        js_sys::Array::from(&field(&out, "leakOrigins"))
            .get(0)
            .as_string()
            .as_deref(),
        Some("square")
    );
    assert_eq!(str_of("threw"), "boom", "the function's own error propagates");
    assert_eq!(str_of("reportVerdict"), "ownership-leak");
    assert_eq!(str_of("reportTarget"), "web");
    assert_eq!(str_of("reportUa"), "string");
    assert_eq!(str_of("reportAdapter"), "swiftshader");
    assert!(field(&out, "wasm").as_f64().unwrap() > 0.0);
    assert!(
        field(&out, "heap").as_f64().unwrap() > 0.0,
        "Chromium reports the JS heap"
    );
    assert_eq!(str_of("oom"), "OUT_OF_MEMORY|ones|49152|49152|65536");
}
