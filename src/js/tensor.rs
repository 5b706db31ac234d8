//! `Tensor` for JS.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::{to_js, JsResult};
use crate::dtype::DType;
use crate::error::Error;
use crate::tensor::Tensor;

/// A tensor owned by its session.
#[wasm_bindgen(js_name = Tensor)]
pub struct JsTensor {
    inner: Option<Rc<Tensor>>,
}

impl JsTensor {
    pub(crate) fn new(t: Tensor) -> JsTensor {
        JsTensor {
            inner: Some(Rc::new(t)),
        }
    }

    pub(crate) fn placeholder() -> JsTensor {
        JsTensor { inner: None }
    }

    /// The Rust tensor behind this handle.
    pub fn tensor(&self) -> JsResult<&Tensor> {
        self.inner
            .as_deref()
            .ok_or_else(|| to_js(Error::Disposed("tensor placeholder".into())))
    }

    fn live(&self) -> JsResult<Rc<Tensor>> {
        let t = self
            .inner
            .clone()
            .ok_or_else(|| to_js(Error::Disposed("tensor placeholder".into())))?;
        if t.is_disposed() {
            return Err(to_js(Error::Disposed(format!("{t:?}"))));
        }
        Ok(t)
    }
}

fn typed_array(dtype: DType, words: Vec<u32>) -> JsValue {
    match dtype {
        DType::Float32 => {
            let v: Vec<f32> = words.into_iter().map(f32::from_bits).collect();
            js_sys::Float32Array::from(&v[..]).into()
        }
        DType::Int32 => {
            let v: Vec<i32> = words.into_iter().map(|w| w as i32).collect();
            js_sys::Int32Array::from(&v[..]).into()
        }
        DType::Uint32 => js_sys::Uint32Array::from(&words[..]).into(),
        DType::Bool => {
            let v: Vec<u8> = words.into_iter().map(|w| (w != 0) as u8).collect();
            js_sys::Uint8Array::from(&v[..]).into()
        }
    }
}

#[wasm_bindgen(js_class = Tensor)]
impl JsTensor {
    /// The dimensions as a plain `number[]`; `[]` is a scalar.
    #[wasm_bindgen(getter)]
    pub fn shape(&self) -> JsResult<js_sys::Array> {
        Ok(self
            .tensor()?
            .shape()
            .iter()
            .map(|&d| JsValue::from(d as f64))
            .collect())
    }

    /// `'float32'`, `'int32'`, `'uint32'` or `'bool'`.
    #[wasm_bindgen(getter)]
    pub fn dtype(&self) -> JsResult<String> {
        Ok(self.tensor()?.dtype().name().to_string())
    }

    /// Number of elements.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> JsResult<f64> {
        Ok(self.tensor()?.size() as f64)
    }

    /// Bytes of storage: elements × 4 for every dtype.
    #[wasm_bindgen(getter, js_name = byteLength)]
    pub fn byte_length(&self) -> JsResult<f64> {
        Ok(self.tensor()?.byte_length() as f64)
    }

    /// Whether `dispose()` has been called.
    #[wasm_bindgen(getter)]
    pub fn disposed(&self) -> bool {
        self.inner.as_ref().is_none_or(|t| t.is_disposed())
    }

    /// Id, unique within the session.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> JsResult<f64> {
        Ok(self.tensor()?.id() as f64)
    }

    /// What created it.
    #[wasm_bindgen(getter)]
    pub fn origin(&self) -> JsResult<String> {
        Ok(self.tensor()?.origin().to_string())
    }

    /// The single value of a one-element tensor (synchronises device work).
    pub async fn item(&self) -> JsResult<f64> {
        self.live()?.item_f64().await.map_err(to_js)
    }

    /// The values as a TypedArray matching the dtype (synchronises device work).
    pub async fn to_array(&self) -> JsResult<JsValue> {
        let t = self.live()?;
        let words = t.read_words().await.map_err(to_js)?;
        Ok(typed_array(t.dtype(), words))
    }

    /// Alias of `to_array()`.
    #[wasm_bindgen(js_name = toArray)]
    pub async fn to_array_alias(&self) -> JsResult<JsValue> {
        self.to_array().await
    }

    /// Releases the storage to the pool. Idempotent; the handle stays readable.
    pub fn dispose(&self) {
        if let Some(t) = &self.inner {
            t.dispose();
        }
    }
}
