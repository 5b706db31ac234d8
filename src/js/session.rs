//! `Session` for JS.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{describe, dtype_arg, shape_arg, to_js, to_value, JsResult, JsTensor};
use crate::error::{invalid_arg, Error};
use crate::pool::{PoolOptions, SizeClasses};
use crate::session::{Session, SessionOptions};

/// A device, its buffer pool and the tensors made on it.
#[wasm_bindgen(js_name = Session)]
pub struct JsSession {
    inner: Option<Session>,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OptionsArg {
    pool: Option<PoolArg>,
    label: Option<String>,
    capture_stacks: Option<bool>,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PoolArg {
    max_total_bytes: Option<f64>,
    oversize_threshold_bytes: Option<f64>,
    size_classes: Option<ClassesArg>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum ClassesArg {
    Steps(f64),
    List(Vec<f64>),
}

fn byte_option(name: &str, v: Option<f64>) -> crate::Result<Option<u64>> {
    v.map(|b| {
        if b.is_finite() && b.fract() == 0.0 && (0.0..=9.007_199_254_740_991e15).contains(&b) {
            Ok(b as u64)
        } else {
            Err(invalid_arg!(
                "pool.{name} must be a non-negative integer number of bytes, got {b}"
            ))
        }
    })
    .transpose()
}

fn parse_options(options: JsValue) -> crate::Result<SessionOptions> {
    if options.is_undefined() || options.is_null() {
        return Ok(SessionOptions::default());
    }
    // serde-wasm-bindgen looks struct fields up by name, so unknown keys are checked here.
    check_keys(
        &options,
        &["pool", "label", "captureStacks"],
        "Session.create options",
    )?;
    if let Ok(pool) = js_sys::Reflect::get(&options, &"pool".into()) {
        check_keys(
            &pool,
            &["maxTotalBytes", "oversizeThresholdBytes", "sizeClasses"],
            "options.pool",
        )?;
    }
    let o: OptionsArg =
        serde_wasm_bindgen::from_value(options).map_err(|e| invalid_arg!("Session.create options: {e}"))?;
    let p = o.pool.unwrap_or_default();
    let size_classes = match p.size_classes {
        None => None,
        Some(ClassesArg::Steps(s)) if s.fract() == 0.0 && (1.0..=64.0).contains(&s) => {
            Some(SizeClasses::ladder(s as u32)?)
        }
        Some(ClassesArg::Steps(s)) => {
            return Err(invalid_arg!(
                "pool.sizeClasses steps must be 1, 2, 4, 8, 16, 32 or 64, got {s}"
            ))
        }
        Some(ClassesArg::List(l)) => Some(SizeClasses::explicit(
            l.into_iter()
                .map(|b| byte_option("sizeClasses[]", Some(b)).map(|b| b.unwrap_or(0)))
                .collect::<crate::Result<_>>()?,
        )?),
    };
    Ok(SessionOptions {
        pool: PoolOptions {
            max_total_bytes: byte_option("maxTotalBytes", p.max_total_bytes)?,
            oversize_threshold_bytes: byte_option("oversizeThresholdBytes", p.oversize_threshold_bytes)?,
            size_classes,
        },
        label: o.label,
        capture_stacks: o.capture_stacks.unwrap_or(false),
    })
}

fn check_keys(obj: &JsValue, allowed: &[&str], context: &str) -> crate::Result<()> {
    if !obj.is_object() {
        return Ok(()); // undefined is fine; other non-objects fail in deserialisation
    }
    for k in js_sys::Object::keys(obj.unchecked_ref::<js_sys::Object>()).iter() {
        let k = k.as_string().unwrap_or_default();
        if !allowed.contains(&k.as_str()) {
            return Err(invalid_arg!(
                "{context}: unknown option '{k}' (expected one of {allowed:?})"
            ));
        }
    }
    Ok(())
}

/// Reads tensor data: a TypedArray, or an array of numbers/booleans.
fn data_arg(data: &JsValue) -> JsResult<Vec<f64>> {
    if let Some(f) = data.dyn_ref::<js_sys::Float32Array>() {
        return Ok(f.to_vec().into_iter().map(f64::from).collect());
    }
    if data.is_instance_of::<js_sys::Int32Array>()
        || data.is_instance_of::<js_sys::Uint32Array>()
        || data.is_instance_of::<js_sys::Uint8Array>()
        || data.is_instance_of::<js_sys::Int16Array>()
        || data.is_instance_of::<js_sys::Uint16Array>()
        || data.is_instance_of::<js_sys::Int8Array>()
        || data.is_instance_of::<js_sys::Uint8ClampedArray>()
        || data.is_instance_of::<js_sys::Float64Array>()
    {
        return Ok(js_sys::Float64Array::new(data).to_vec());
    }
    if js_sys::Array::is_array(data) {
        return js_sys::Array::from(data)
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_f64()
                    .or_else(|| v.as_bool().map(|b| b as u8 as f64))
                    .ok_or_else(|| {
                        to_js(invalid_arg!(
                            "data[{i}] is {}, expected a number or boolean",
                            describe(&v)
                        ))
                    })
            })
            .collect();
    }
    Err(to_js(invalid_arg!(
        "data must be a TypedArray or an array of numbers, got {}",
        describe(data)
    )))
}

impl JsSession {
    pub(crate) fn placeholder() -> JsSession {
        JsSession { inner: None }
    }

    fn get(&self) -> JsResult<&Session> {
        self.inner
            .as_ref()
            .ok_or_else(|| to_js(Error::Disposed("session placeholder".into())))
    }

    fn open(&self) -> JsResult<&Session> {
        let s = self.get()?;
        if s.is_disposed() {
            return Err(to_js(Error::SessionDisposed(format!("'{}'", s.label()))));
        }
        Ok(s)
    }
}

#[wasm_bindgen(js_class = Session)]
impl JsSession {
    /// Acquires an adapter and device. `options`: `{ pool?: { maxTotalBytes?,
    /// oversizeThresholdBytes?, sizeClasses? }, label?, captureStacks? }`.
    pub async fn create(options: JsValue) -> JsResult<JsSession> {
        super::install_dispose_symbols();
        let options = parse_options(options).map_err(to_js)?;
        let session = Session::create(options).await.map_err(to_js)?;
        Ok(JsSession { inner: Some(session) })
    }

    /// A tensor from a TypedArray or number[]; dtype defaults to `'float32'`.
    pub fn tensor(&self, data: JsValue, shape: JsValue, dtype: Option<String>) -> JsResult<JsTensor> {
        let s = self.open()?;
        let shape = shape_arg(&shape)?;
        let dtype = dtype_arg(dtype)?;
        let data = data_arg(&data)?;
        s.tensor_from_f64(&data, &shape, dtype)
            .map(JsTensor::new)
            .map_err(to_js)
    }

    /// A tensor of zeros.
    pub fn zeros(&self, shape: JsValue, dtype: Option<String>) -> JsResult<JsTensor> {
        let s = self.open()?;
        s.zeros(&shape_arg(&shape)?, dtype_arg(dtype)?)
            .map(JsTensor::new)
            .map_err(to_js)
    }

    /// A tensor of ones.
    pub fn ones(&self, shape: JsValue, dtype: Option<String>) -> JsResult<JsTensor> {
        let s = self.open()?;
        s.ones(&shape_arg(&shape)?, dtype_arg(dtype)?)
            .map(JsTensor::new)
            .map_err(to_js)
    }

    /// A tensor with every element `value`.
    pub fn fill(&self, shape: JsValue, value: JsValue, dtype: Option<String>) -> JsResult<JsTensor> {
        let s = self.open()?;
        let shape = shape_arg(&shape)?;
        let dtype = dtype_arg(dtype)?;
        let v = value
            .as_f64()
            .or_else(|| value.as_bool().map(|b| b as u8 as f64))
            .ok_or_else(|| {
                to_js(invalid_arg!(
                    "fill value must be a number, got {}",
                    describe(&value)
                ))
            })?;
        s.fill(&shape, v, dtype).map(JsTensor::new).map_err(to_js)
    }

    /// `{numTensors, numBytes, numDataBuffers, peakBytes, unreliable, reasons}` for this session.
    pub fn memory(&self) -> JsResult<JsValue> {
        to_value(&self.get()?.memory())
    }

    /// Waits for all queued device work.
    pub async fn sync(&self) -> JsResult<()> {
        self.open()?.sync().await.map_err(to_js)
    }

    /// Destroys the pool's cached buffers; returns the bytes released.
    #[wasm_bindgen(js_name = clearCache)]
    pub fn clear_cache(&self) -> JsResult<f64> {
        Ok(self.get()?.clear_cache() as f64)
    }

    /// The adapter: `{backend, name, vendor, architecture, deviceType, driver, maxBufferSize, …}`.
    #[wasm_bindgen(getter)]
    pub fn adapter(&self) -> JsResult<JsValue> {
        to_value(self.get()?.adapter())
    }

    /// The pool configuration in force.
    #[wasm_bindgen(getter, js_name = poolConfig)]
    pub fn pool_config(&self) -> JsResult<JsValue> {
        to_value(&self.get()?.pool_config())
    }

    /// The pool's current figures (cached bytes by size class included).
    #[wasm_bindgen(js_name = poolUsage)]
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

    /// Prevents new work; live tensors keep their storage until disposed. Idempotent.
    pub fn dispose(&self) {
        if let Some(s) = &self.inner {
            s.dispose();
        }
    }
}
