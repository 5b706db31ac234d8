//! The wasm-bindgen layer: thin wrappers that convert arguments and errors, holding no logic.
//! Compiled only for wasm32.

mod args;
mod executable;
mod program;
mod program_ops;
mod records;
mod registry;
mod safe;
mod session;
mod session_options;
mod session_tensors;
mod telemetry;
mod tensor;
mod tensor_ops;
mod train;
mod types;

pub use executable::{JsExecutable, JsExecutionState};
pub use program::{JsNode, JsProgram};
pub use session::JsSession;
pub use telemetry::JsTelemetry;
pub use tensor::JsTensor;

use wasm_bindgen::prelude::*;

use crate::error::Error;

#[wasm_bindgen(inline_js = r#"
export function affon_patch_dispose(obj) {
  // wasm-bindgen's default [Symbol.dispose] is free(), which would make the handle unreadable;
  // affon's [Symbol.dispose]() does exactly what dispose() does.
  const proto = Object.getPrototypeOf(obj);
  if (typeof Symbol.dispose === 'symbol') {
    Object.defineProperty(proto, Symbol.dispose, {
      value: function () { this.dispose(); },
      configurable: true,
      writable: true,
    });
  }
  obj.free();
  return proto;
}

export function affon_proto(obj) {
  // The class prototype handles are recognised by; the placeholder instance is freed.
  const proto = Object.getPrototypeOf(obj);
  obj.free();
  return proto;
}

export function affon_words_view(v) {
  // the 32-bit words under a 4-byte TypedArray, or null when its fields cannot make a view (a forged
  // object, a detached buffer, a `length` defined on the instance): see safe::words_view
  try { return new Uint32Array(v.buffer, v.byteOffset, v.length); } catch (e) { return null; }
}

export function affon_nest(flat, shape) {
  // flat values → nested arrays of `shape`, innermost dimension first: no recursion, whatever the rank
  let level = Array.from(flat);
  for (let k = shape.length - 1; k >= 0; k--) {
    const d = shape[k], next = new Array(level.length / d);
    for (let i = 0; i < next.length; i++) next[i] = level.slice(i * d, (i + 1) * d);
    level = next;
  }
  return level[0];
}

export function affon_install_hook(telemetry, version) {
  // The page-side hook the DevTools panel reads (chrome.devtools.inspectedWindow.eval).
  if (globalThis.__AFFON_DEVTOOLS_HOOK__) return;
  globalThis.__AFFON_DEVTOOLS_HOOK__ = {
    version,
    telemetry,
    snapshot() {
      return {
        time: Date.now(),
        iteration: telemetry.iteration(),
        metrics: telemetry.metrics(),
        liveTensors: telemetry.liveTensors(),
        pools: telemetry.pools(),
        forgotten: telemetry.forgotten(),
        storages: telemetry.storages(2000),
      };
    },
  };
}
"#)]
extern "C" {
    fn affon_patch_dispose(obj: JsValue) -> JsValue;
    fn affon_proto(obj: JsValue) -> JsValue;
    /// Nested arrays of `shape` (no zero dims) over `flat`; the value itself for a scalar.
    pub(crate) fn affon_nest(flat: &JsValue, shape: &[f64]) -> JsValue;
    fn affon_words_view(v: &JsValue) -> JsValue;
    fn affon_install_hook(telemetry: JsValue, version: &str);
}

thread_local! {
    static PATCHED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs `[Symbol.dispose]() { this.dispose() }` on every exported class with a `dispose()`,
/// and records the prototypes the registries recognise handles by. Once.
pub(crate) fn install_dispose_symbols() {
    if PATCHED.with(|p| p.replace(true)) {
        return;
    }
    console_error_panic_hook::set_once();
    tensor::TENSORS.with(|r| r.set_proto(affon_patch_dispose(JsTensor::placeholder().into())));
    program::STATES.with(|r| r.set_proto(affon_patch_dispose(JsExecutionState::placeholder().into())));
    let session_proto = affon_patch_dispose(JsSession::placeholder().into());
    session::SESSION_PROTO.with(|p| *p.borrow_mut() = session_proto);
    affon_patch_dispose(JsExecutable::placeholder().into());
    program::PROGRAMS.with(|r| r.set_proto(affon_proto(JsProgram::placeholder().into())));
    let node = affon_proto(JsNode::placeholder().into());
    program::NODE_PROTO.with(|p| *p.borrow_mut() = node);
    let probe: JsValue = JsTelemetry::instance().into();
    let class = js_sys::Reflect::get(&probe, &"constructor".into()).unwrap_or_default();
    affon_install_hook(class, env!("CARGO_PKG_VERSION"));
}

/// Converts an [`Error`] into a thrown `Error` with `name === 'AffonError'` and a stable `code`.
pub(crate) fn to_js(e: Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    err.set_name("AffonError");
    let set = |k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(&err, &k.into(), &v);
    };
    set("code", e.code().into());
    if let Error::OutOfMemory {
        requested,
        live_bytes,
        pool_bytes,
        bound,
        forensics,
        ..
    } = &e
    {
        set("requestedBytes", (*requested as f64).into());
        set("liveBytes", (*live_bytes as f64).into());
        set("poolBytes", (*pool_bytes as f64).into());
        set("boundBytes", (*bound as f64).into());
        if let Some(f) = forensics {
            if let Ok(v) = to_value(&f.owners) {
                set("owners", v);
            }
            if let Ok(v) = to_value(&f.pool) {
                set("pool", v);
            }
        }
    }
    err.into()
}

/// `Result` whose error is a JS `AffonError`.
pub(crate) type JsResult<T> = Result<T, JsValue>;

/// A promise for `fut`, started now: its work up to its first wait (a readback's copy and map
/// request, a sync's submission) is done before this returns, in the caller's task. A
/// `wasm_bindgen` async method would only start in a later microtask, behind the flush that the
/// calls before it scheduled, so a readback right after a call took two submissions (the call's
/// work, then the copy) where one does. The first poll uses a no-op waker; the promise's task polls
/// again (registering its own) before anything it waits for can resolve.
pub(crate) fn started<T: Into<JsValue>>(
    fut: impl std::future::Future<Output = JsResult<T>> + 'static,
) -> js_sys::Promise {
    use std::task::{Context, Poll, Waker};
    let mut fut = Box::pin(fut);
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(Ok(v)) => js_sys::Promise::resolve(&v.into()),
        Poll::Ready(Err(e)) => js_sys::Promise::reject(&e),
        Poll::Pending => wasm_bindgen_futures::future_to_promise(async move { fut.await.map(Into::into) }),
    }
}

/// Serialises a value for JS (maps as plain objects).
pub(crate) fn to_value<T: serde::Serialize>(v: &T) -> JsResult<JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true))
        .map_err(|e| to_js(Error::Unsupported(format!("cannot convert a result for JS: {e}"))))
}
