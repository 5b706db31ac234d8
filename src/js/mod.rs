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
// Taken at load, before a page could replace them: what affon builds for its callers is made with
// these, so no setter or getter a page put on Object.prototype, Error.prototype or a caller's own
// object runs (or throws) in the middle of an affon call.
const NativeError = Error, define = Object.defineProperty, getProto = Object.getPrototypeOf,
  describe = Object.getOwnPropertyDescriptor, ownKeys = Object.keys, isArray = Array.isArray;
const own = (o, k, value) => define(o, k, { value, writable: true, enumerable: true, configurable: true });
export function affon_own(o, k, v) { own(o, k, v); }

export function affon_error(message, code, oom, owners, pool) {
  // An AffonError: its fields defined, as an assignment would make them, but without running setters
  const err = new NativeError(message);
  own(err, 'name', 'AffonError');
  own(err, 'code', code);
  if (oom.length === 4) {
    own(err, 'requestedBytes', oom[0]); own(err, 'liveBytes', oom[1]);
    own(err, 'poolBytes', oom[2]); own(err, 'boundBytes', oom[3]);
  }
  if (owners !== undefined) own(err, 'owners', owners);
  if (pool !== undefined) own(err, 'pool', pool);
  return err;
}

const TypedArrayProto = getProto(Int8Array.prototype), intrinsic = (k) => describe(TypedArrayProto, k).get;
const taBuffer = intrinsic('buffer'), taOffset = intrinsic('byteOffset'), taLength = intrinsic('length'),
  taName = intrinsic(Symbol.toStringTag);
const viewCtors = new Map(['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array',
  'Int32Array', 'Uint32Array', 'Float16Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']
  .filter((n) => typeof globalThis[n] === 'function').map((n) => [n, globalThis[n]]));
export function affon_typed_view(v) {
  // A fresh view of the same type over a TypedArray's own memory, its fields read from the engine's
  // slots (an own `length`, `subarray` or `constructor` on the caller's array is not consulted);
  // null for a detached buffer or anything that is not a TypedArray
  try {
    const C = viewCtors.get(taName.call(v));
    return C ? new C(taBuffer.call(v), taOffset.call(v), taLength.call(v)) : null;
  } catch (e) { return null; }
}

export function affon_plain(v) {
  // Plain data read from a caller's value once, inside one try: own enumerable properties of
  // objects and the elements of arrays, copied (depth ≤ 8, ≤ 2^20 elements an array); a getter or
  // trap that throws gives [false, its message]. Options and snapshots are parsed from the copy.
  const copy = (x, depth) => {
    if (x === null || typeof x !== 'object') return x;
    if (depth > 8) throw new NativeError('nested more than 8 deep');
    if (isArray(x)) {
      const n = x.length;
      if (!(n <= 1048576)) throw new NativeError(`more than 2^20 elements (${n})`);
      const out = [];
      for (let i = 0; i < n; i++) own(out, i, copy(x[i], depth + 1));
      return out;
    }
    const out = {};
    for (const k of ownKeys(x)) own(out, k, copy(x[k], depth + 1));
    return out;
  };
  try { return [true, copy(v, 0)]; } catch (e) { return [false, e instanceof NativeError ? e.message : String(e)]; }
}

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
    fn affon_error(message: &str, code: &str, oom: &[f64], owners: JsValue, pool: JsValue) -> JsValue;
    /// Defines `o[k] = v` as an own data property (no setter runs).
    pub(crate) fn affon_own(o: &JsValue, k: &str, v: &JsValue);
    /// A fresh view over a TypedArray's memory, read from its slots, or null.
    pub(crate) fn affon_typed_view(v: &JsValue) -> JsValue;
    /// `[true, copy]` or `[false, message]`: see `safe::plain`.
    pub(crate) fn affon_plain(v: &JsValue) -> js_sys::Array;
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

/// Converts an [`Error`] into a thrown `Error` with `name === 'AffonError'` and a stable `code`,
/// built in JS with its fields defined (no page setter runs while it is made).
pub(crate) fn to_js(e: Error) -> JsValue {
    let (mut oom, mut owners, mut pool) = (vec![], JsValue::UNDEFINED, JsValue::UNDEFINED);
    if let Error::OutOfMemory {
        requested,
        live_bytes,
        pool_bytes,
        bound,
        forensics,
        ..
    } = &e
    {
        oom = vec![
            *requested as f64,
            *live_bytes as f64,
            *pool_bytes as f64,
            *bound as f64,
        ];
        if let Some(f) = forensics {
            owners = to_value(&f.owners).unwrap_or(JsValue::UNDEFINED);
            pool = to_value(&f.pool).unwrap_or(JsValue::UNDEFINED);
        }
    }
    affon_error(&e.to_string(), e.code(), &oom, owners, pool)
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
