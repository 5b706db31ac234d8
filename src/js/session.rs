//! `Session` for JS.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::args;
use super::registry::Held;
use super::session_options::parse_options;
use super::{to_js, to_value, JsExecutable, JsProgram, JsResult, JsTensor};
use crate::error::Error;
use crate::session::Session;

/// The label of the live session behind a JS value that is a `Session` handle.
pub(crate) fn label_of(v: &JsValue) -> Option<String> {
    if !v.is_object() {
        return None;
    }
    let proto = super::safe::prototype(v);
    let is_session = SESSION_PROTO.with(|p| proto == *p.borrow());
    if !is_session {
        return None;
    }
    js_sys::Reflect::get(v, &"label".into()).ok()?.as_string()
}

thread_local! {
    /// The `Session` prototype, recognising session handles passed inside options.
    pub(crate) static SESSION_PROTO: std::cell::RefCell<JsValue> = const { std::cell::RefCell::new(JsValue::UNDEFINED) };
}

/// A device, its buffer pool and the tensors made on it.
#[wasm_bindgen(js_name = Session)]
pub struct JsSession {
    inner: Option<std::rc::Rc<Session>>,
}

/// What one tidy result walk has seen: the objects visited (each once: a result that refers to
/// itself is walked once, not exponentially) and the tensor handles found.
struct Walk {
    seen: js_sys::Set,
    ids: std::collections::HashSet<u64>,
}

impl Walk {
    /// The ids of the tensor handles in `result`.
    fn tensor_ids(result: &JsValue) -> std::collections::HashSet<u64> {
        let mut walk = Walk {
            seen: js_sys::Set::new(&JsValue::UNDEFINED),
            ids: Default::default(),
        };
        walk.visit(result, 0);
        walk.ids
    }

    /// Walks a tidy result for tensor handles: a Tensor, or arrays / objects of them — plain, class
    /// instances, with no prototype, as TF.js walks any container — by their own enumerable fields,
    /// read through calls that catch (an object whose properties cannot be read is not looked into;
    /// a typed array's elements are not walked).
    fn visit(&mut self, v: &JsValue, depth: usize) {
        if depth > 32 || !v.is_object() || self.seen.has(v) {
            return;
        }
        self.seen.add(v);
        if let Some(t) = JsTensor::resolve(v) {
            self.ids.insert(t.id());
        } else if super::safe::typed_tag(v).is_none() {
            for (_, x) in super::safe::entries("", v).unwrap_or_default() {
                self.visit(&x, depth + 1);
            }
        }
    }
}

impl Drop for JsSession {
    /// Runs when the JS handle is collected or `free()`d without `dispose()`: the session stays
    /// open for its children (see `Session::forget`).
    fn drop(&mut self) {
        if let Some(s) = self.inner.take() {
            drop(Held::new(s));
        }
    }
}

impl JsSession {
    pub(crate) fn placeholder() -> JsSession {
        JsSession { inner: None }
    }

    fn get(&self) -> JsResult<&Session> {
        self.inner
            .as_deref()
            .ok_or_else(|| to_js(Error::Disposed("session placeholder".into())))
    }

    pub(super) fn open(&self) -> JsResult<&Session> {
        let s = self.get()?;
        if s.is_disposed() {
            return Err(to_js(Error::SessionDisposed(format!("'{}'", s.label()))));
        }
        Ok(s)
    }
}

#[wasm_bindgen(js_class = Session)]
impl JsSession {
    /// Acquires an adapter and device. `options`: `{ pool?: { maxTotalBytes?, cacheLimitBytes?,
    /// oversizeThresholdBytes?, sizeClasses?, idleTrimMs? }, label?, captureStacks?,
    /// releaseOnCollect? }`.
    pub async fn create(
        #[wasm_bindgen(unchecked_optional_param_type = "SessionOptions")] options: JsValue,
    ) -> JsResult<JsSession> {
        super::install_dispose_symbols();
        let options = parse_options(options).map_err(to_js)?;
        let session = std::rc::Rc::new(Session::create(options).await.map_err(to_js)?);
        Ok(JsSession { inner: Some(session) })
    }

    /// `{numTensors, numBytes, numDataBuffers, peakBytes, unreliable, reasons}` for this session.
    #[wasm_bindgen(unchecked_return_type = "MemoryInfo")]
    pub fn memory(&self) -> JsResult<JsValue> {
        super::records::memory_info(&self.get()?.memory())
    }

    /// Waits for all queued device work (the pending batch is submitted before this returns).
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn sync(&self) -> js_sys::Promise {
        let sync = self.open().map(|s| s.sync());
        super::started(async move {
            sync?.await.map_err(to_js)?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Destroys the pool's cached buffers; returns the bytes released.
    #[wasm_bindgen(js_name = clearCache)]
    pub fn clear_cache(&self) -> JsResult<f64> {
        Ok(self.get()?.clear_cache() as f64)
    }

    /// The adapter: `{backend, name, vendor, architecture, deviceType, driver, maxBufferSize, …}`.
    #[wasm_bindgen(getter, unchecked_return_type = "AdapterIdentity")]
    pub fn adapter(&self) -> JsResult<JsValue> {
        to_value(self.get()?.adapter())
    }

    /// The pool configuration in force.
    #[wasm_bindgen(getter, js_name = poolConfig, unchecked_return_type = "PoolConfig")]
    pub fn pool_config(&self) -> JsResult<JsValue> {
        to_value(&self.get()?.pool_config())
    }

    /// The pool's current figures (cached bytes by size class included).
    #[wasm_bindgen(js_name = poolUsage, unchecked_return_type = "PoolUsage")]
    pub fn pool_usage(&self) -> JsResult<JsValue> {
        to_value(&self.get()?.pool_usage())
    }

    /// The session's label.
    #[wasm_bindgen(getter)]
    pub fn label(&self) -> String {
        self.inner
            .as_ref()
            .map(|s| s.label().to_string())
            .unwrap_or_default()
    }

    /// Whether `dispose()` has been called.
    #[wasm_bindgen(getter)]
    pub fn disposed(&self) -> bool {
        self.inner.as_ref().is_none_or(|s| s.is_disposed())
    }

    /// Validates and compiles a program.
    pub fn compile(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Program")] program: JsValue,
    ) -> JsResult<JsExecutable> {
        let s = self.open()?;
        let program = JsProgram::resolve("compile: program", &program)?;
        let result = s.compile(&program.borrow());
        result.map(JsExecutable::new).map_err(to_js)
    }

    /// `tidy(fn)` or `tidy(name, fn)`: tensors created inside `fn` and not returned (a Tensor, or
    /// arrays/objects of them) are disposed when it returns. Nests. `fn` must not be async.
    // typed by the generic overloads in types.rs
    #[wasm_bindgen(skip_typescript)]
    pub fn tidy(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string | (() => TidyResult)")] a: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "(() => TidyResult)")] b: JsValue,
    ) -> JsResult<JsValue> {
        let s = self.open()?;
        let f = if a.is_function() || b.is_undefined() { a } else { b };
        let f = args::function("tidy: fn", &f)?;
        // an async function is refused before it runs; another that returns a promise, after
        if super::affon_is_async(&f) {
            return Err(to_js(Session::tidy_refuses_async()));
        }
        s.tidy_with(
            || f.call0(&JsValue::UNDEFINED),
            |v| match v {
                v if v.is_instance_of::<js_sys::Promise>() => Err(to_js(Session::tidy_refuses_async())),
                v if v.is_object() => Ok(Walk::tensor_ids(v)),
                _ => Ok(Default::default()),
            },
        )
    }

    /// Exempts `tensor` from every enclosing tidy scope; returns it.
    #[wasm_bindgen(skip_typescript)]
    pub fn keep(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Tensor")] tensor: JsValue,
    ) -> JsResult<JsValue> {
        let s = self.get()?;
        let t = args::tensor("keep: tensor", &tensor)?;
        s.keep(&t);
        Ok(tensor)
    }

    /// As `tf.profile`: `{newBytes, newTensors, peakBytes, kernels, result}` for `fn` (which may be
    /// async). `fn` is called before this returns, as `tf.profile` calls it (inside the caller's
    /// `tidy`, before the next statement); the promise settles once a promise it returned does.
    #[wasm_bindgen(skip_typescript)]
    pub fn profile(
        &self,
        #[wasm_bindgen(unchecked_param_type = "() => unknown")] f: JsValue,
    ) -> js_sys::Promise {
        let begun = self.open().and_then(|s| {
            let f = args::function("profile: fn", &f)?;
            s.begin_profile().map_err(to_js)?;
            Ok((f, s.profile_end()))
        });
        let (f, end) = match begun {
            Ok(x) => x,
            Err(e) => return js_sys::Promise::reject(&e),
        };
        let result = f.call0(&JsValue::UNDEFINED);
        super::started(async move {
            // a promise is adopted without calling any `then` the page put on it (`safe::settle`)
            let result = match result {
                Ok(v) => super::safe::settle(v).await,
                Err(e) => Err(e),
            };
            let info = end();
            let result = result?;
            let out = to_value(&info)?;
            super::affon_own(&out, "result", &result);
            Ok(out)
        })
    }

    /// Destroys the device, as a device loss would (for testing): new work throws `DEVICE_LOST`;
    /// `dispose()` keeps working and the accounting returns to zero.
    #[wasm_bindgen(js_name = destroyDevice)]
    pub fn destroy_device(&self) -> JsResult<()> {
        self.get()?.destroy_device();
        Ok(())
    }

    /// Whether the device has been lost (or destroyed).
    #[wasm_bindgen(getter, js_name = deviceLost)]
    pub fn device_lost(&self) -> bool {
        self.inner.as_ref().is_some_and(|s| s.is_device_lost())
    }

    /// Prevents new work; live tensors keep their storage until disposed. Idempotent.
    pub fn dispose(&self) {
        if let Some(s) = &self.inner {
            s.dispose();
        }
    }
}
