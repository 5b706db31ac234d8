//! The wasm-bindgen layer: thin wrappers that convert arguments and errors, holding no logic.
//! Compiled only for wasm32.

mod args;
mod executable;
mod glue;
mod onnx;
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
pub(crate) use glue::{
    affon_copy_typed, affon_is_async, affon_nest, affon_own, affon_pick, affon_plain, affon_settle,
    affon_typed_length, affon_typed_tag, affon_typed_view,
};
use glue::{affon_error, affon_guard, affon_install_hook, affon_patch_dispose, affon_proto};

thread_local! {
    static PATCHED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs when the module is instantiated (`await init()`): the classes are patched before any page
/// code can call a method, so even a method called on a class's prototype before the first
/// `Session.create` or `new Program` is checked (it threw wasm-bindgen's plain `Error` before).
/// `Session.create`, `new Program` and `Program.fromJSON` still patch them (once) first: a host
/// that does not run wasm-bindgen's start function — wasm-bindgen-test's harness does not — would
/// otherwise get unpatched classes and registries that recognise no handle.
#[wasm_bindgen(start)]
fn start() {
    install_dispose_symbols();
}

/// Installs `[Symbol.dispose]() { this.dispose() }` on every exported class with a `dispose()`,
/// puts every class's methods, getters and `free()` behind a check of the handle (`affon_guard`:
/// a freed handle is `DISPOSED`, a `this` that is not a handle of the class `INVALID_ARGUMENT`),
/// and records the prototypes the registries recognise handles by. Once.
pub(crate) fn install_dispose_symbols() {
    if PATCHED.with(|p| p.replace(true)) {
        return;
    }
    console_error_panic_hook::set_once();
    let guarded = |proto: JsValue, class: &str| {
        affon_guard(&proto, class, class == "Program"); // the one class with a constructor
        proto
    };
    let tensor = guarded(affon_patch_dispose(JsTensor::placeholder().into()), "Tensor");
    tensor::TENSORS.with(|r| r.set_proto(tensor));
    let state = guarded(
        affon_patch_dispose(JsExecutionState::placeholder().into()),
        "ExecutionState",
    );
    program::STATES.with(|r| r.set_proto(state));
    let session_proto = guarded(affon_patch_dispose(JsSession::placeholder().into()), "Session");
    session::SESSION_PROTO.with(|p| *p.borrow_mut() = session_proto);
    guarded(
        affon_patch_dispose(JsExecutable::placeholder().into()),
        "Executable",
    );
    let program = guarded(affon_proto(JsProgram::placeholder().into()), "Program");
    program::PROGRAMS.with(|r| r.set_proto(program));
    let node = guarded(affon_proto(JsNode::placeholder().into()), "ProgramNode");
    program::NODE_PROTO.with(|p| *p.borrow_mut() = node);
    let probe: JsValue = JsTelemetry::instance().into();
    guarded(safe::prototype(&probe), "telemetry");
    let class = js_sys::Reflect::get(&probe, &"constructor".into()).unwrap_or_default();
    affon_install_hook(class, env!("CARGO_PKG_VERSION"));
}

/// Converts an [`Error`] into a thrown `Error` with `name === 'AffonError'` and a stable `code`,
/// built in JS with its fields defined (no page setter runs while it is made).
pub(crate) fn to_js(e: Error) -> JsValue {
    let (mut oom, mut owners, mut pool) = (None, JsValue::UNDEFINED, JsValue::UNDEFINED);
    if let Error::OutOfMemory {
        requested,
        live_bytes,
        pool_bytes,
        bound,
        forensics,
        ..
    } = &e
    {
        oom = Some([*requested, *live_bytes, *pool_bytes, *bound].map(|b| b as f64));
        if let Some(f) = forensics {
            owners = to_value(&f.owners).unwrap_or(JsValue::UNDEFINED);
            pool = to_value(&f.pool).unwrap_or(JsValue::UNDEFINED);
        }
    }
    let [r, l, p, b] = oom.unwrap_or_default();
    affon_error(&e.to_string(), e.code(), oom.is_some(), r, l, p, b, owners, pool)
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
