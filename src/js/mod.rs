//! The wasm-bindgen layer: thin wrappers that convert arguments and errors, holding no logic.
//! Compiled only for wasm32.

mod program;
mod registry;
mod session;
mod telemetry;
mod tensor;
mod types;

pub use program::{JsExecutable, JsExecutionState, JsNode, JsProgram};
pub use session::JsSession;
pub use telemetry::JsTelemetry;
pub use tensor::JsTensor;

use wasm_bindgen::prelude::*;

use crate::error::{invalid_arg, Error};

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
      };
    },
  };
}
"#)]
extern "C" {
    fn affon_patch_dispose(obj: JsValue) -> JsValue;
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
    affon_patch_dispose(JsSession::placeholder().into());
    affon_patch_dispose(JsExecutable::placeholder().into());
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

/// Serialises a value for JS (maps as plain objects).
pub(crate) fn to_value<T: serde::Serialize>(v: &T) -> JsResult<JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::new().serialize_maps_as_objects(true))
        .map_err(|e| to_js(Error::Unsupported(format!("cannot convert a result for JS: {e}"))))
}

/// Reads an array of numbers.
pub(crate) fn numbers_arg(what: &str, v: &JsValue) -> JsResult<Vec<f64>> {
    if !js_sys::Array::is_array(v) {
        return Err(to_js(invalid_arg!(
            "{what} must be an array of numbers, got {}",
            describe(v)
        )));
    }
    js_sys::Array::from(v)
        .iter()
        .map(|x| {
            x.as_f64().ok_or_else(|| {
                to_js(invalid_arg!(
                    "{what} must contain only numbers, got {}",
                    describe(&x)
                ))
            })
        })
        .collect()
}

/// Reads integers (axes, permutations, reshape targets).
pub(crate) fn ints_arg(what: &str, v: &JsValue) -> JsResult<Vec<i64>> {
    numbers_arg(what, v)?
        .into_iter()
        .map(|x| {
            if x.fract() == 0.0 && x.abs() < 9.0e15 {
                Ok(x as i64)
            } else {
                Err(to_js(invalid_arg!("{what} must contain integers, got {x}")))
            }
        })
        .collect()
}

/// Reads a shape given as an array of numbers.
pub(crate) fn shape_arg(shape: &JsValue) -> JsResult<Vec<usize>> {
    if !js_sys::Array::is_array(shape) {
        return Err(to_js(invalid_arg!(
            "shape must be an array of positive integers, got {}",
            describe(shape)
        )));
    }
    crate::shape::dims_from_f64(&numbers_arg("shape", shape)?).map_err(to_js)
}

/// Reads a dtype name, `float32` when absent.
pub(crate) fn dtype_arg(dtype: Option<String>) -> JsResult<crate::DType> {
    dtype
        .map_or(Ok(crate::DType::Float32), |d| crate::DType::parse(&d))
        .map_err(to_js)
}

/// A short description of a JS value for error messages.
pub(crate) fn describe(v: &JsValue) -> String {
    if v.is_undefined() {
        "undefined".into()
    } else if v.is_null() {
        "null".into()
    } else if let Some(s) = v.as_string() {
        format!("'{s}'")
    } else if let Some(n) = v.as_f64() {
        n.to_string()
    } else {
        v.js_typeof().as_string().unwrap_or_default()
    }
}

/// The entries of a plain object, `{}` when undefined/null.
pub(crate) fn entries(what: &str, v: &JsValue) -> JsResult<Vec<(String, JsValue)>> {
    if v.is_undefined() || v.is_null() {
        return Ok(vec![]);
    }
    if !v.is_object() || js_sys::Array::is_array(v) {
        return Err(to_js(invalid_arg!(
            "{what} must be an object of name → value, got {}",
            describe(v)
        )));
    }
    Ok(js_sys::Object::entries(v.unchecked_ref())
        .iter()
        .map(|e| {
            let pair = js_sys::Array::from(&e);
            (pair.get(0).as_string().unwrap_or_default(), pair.get(1))
        })
        .collect())
}
