//! `Tensor` for JS.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::args;
use super::registry::{Held, Registry};
use super::{to_js, JsResult};
use crate::dtype::DType;
use crate::error::Error;
use crate::ops::{BinaryOp, Op, ReduceOp};
use crate::tensor::Tensor;

thread_local! {
    /// Live tensor handles, for resolving tensors inside plain JS values.
    pub(crate) static TENSORS: Registry<Tensor> = Registry::new();
}

/// A tensor owned by its session.
#[wasm_bindgen(js_name = Tensor)]
pub struct JsTensor {
    inner: Option<Rc<Tensor>>,
}

impl Drop for JsTensor {
    /// Runs when the JS handle is collected (wasm-bindgen's finalization registry) or `free()`d:
    /// the core decides what happens to a tensor nobody disposed (`Tensor::forget`).
    fn drop(&mut self) {
        if let Some(t) = self.inner.take() {
            TENSORS.with(|r| r.remove(t.id()));
            drop(Held::new(t));
        }
    }
}

impl JsTensor {
    pub(crate) fn new(t: Tensor) -> JsTensor {
        let t = Rc::new(t);
        TENSORS.with(|r| r.insert(t.id(), &t));
        JsTensor { inner: Some(t) }
    }

    /// The tensor behind a JS value that is a `Tensor` handle.
    pub(crate) fn resolve(v: &JsValue) -> Option<Rc<Tensor>> {
        TENSORS.with(|r| r.resolve(v))
    }

    pub(super) fn op(&self, op: Op, others: &[(&str, &JsValue)]) -> JsResult<JsTensor> {
        let t = self.live()?;
        let others = others
            .iter()
            .map(|(what, v)| args::tensor(&format!("{}: argument '{what}'", op.name()), v))
            .collect::<JsResult<Vec<_>>>()?;
        let refs: Vec<&Tensor> = others.iter().map(|o| o.as_ref()).collect();
        t.apply(&op, &refs).map(JsTensor::new).map_err(to_js)
    }

    pub(super) fn binary(&self, op: BinaryOp, other: &JsValue) -> JsResult<JsTensor> {
        match other.as_f64() {
            Some(v) => {
                let t = self.live()?;
                t.binary_scalar(op, v).map(JsTensor::new).map_err(to_js)
            }
            None => self.op(Op::Binary(op), &[("other", other)]),
        }
    }

    pub(super) fn reduce(&self, op: ReduceOp, axes: JsValue, keep_dims: JsValue) -> JsResult<JsTensor> {
        let name = Op::Reduce {
            op,
            axes: vec![],
            keep_dims: false,
        }
        .name();
        let axes = args::axes(&format!("{name}: axes"), &axes)?;
        let keep_dims = args::bool_or(&format!("{name}: keepDims"), &keep_dims, false)?;
        self.op(Op::Reduce { op, axes, keep_dims }, &[])
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

    pub(crate) fn live(&self) -> JsResult<Held<Tensor>> {
        let t = self
            .inner
            .clone()
            .ok_or_else(|| to_js(Error::Disposed("tensor placeholder".into())))?;
        if t.is_disposed() {
            return Err(to_js(Error::Disposed(format!("{t:?}"))));
        }
        Ok(Held::new(t))
    }
}

/// The TypedArray of a dtype made from a mapped readback: one host copy, made by JS from the mapped
/// memory (`slice`), never through wasm memory; `bool` then narrows each word to a byte.
fn typed_array(dtype: DType, view: &wgpu::BufferView) -> JsValue {
    let bytes = view.as_uint8array().slice(0, view.as_uint8array().length());
    let buffer = bytes.buffer();
    match dtype {
        DType::Float32 => js_sys::Float32Array::new(&buffer).into(),
        DType::Int32 => js_sys::Int32Array::new(&buffer).into(),
        DType::Uint32 => js_sys::Uint32Array::new(&buffer).into(),
        DType::Bool => js_sys::Uint8Array::new(&js_sys::Uint32Array::new(&buffer)).into(),
    }
}

#[wasm_bindgen(js_class = Tensor)]
impl JsTensor {
    /// The dimensions as a plain `number[]`; `[]` is a scalar.
    #[wasm_bindgen(getter, unchecked_return_type = "Shape")]
    pub fn shape(&self) -> JsResult<js_sys::Array> {
        Ok(self
            .tensor()?
            .shape()
            .iter()
            .map(|&d| JsValue::from(d as f64))
            .collect())
    }

    /// `'float32'`, `'int32'`, `'uint32'` or `'bool'`.
    #[wasm_bindgen(getter, unchecked_return_type = "DType")]
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

    /// The single value of a one-element tensor (synchronises device work). Starts at the call:
    /// the copy joins the pending batch and the map is requested before this returns.
    #[wasm_bindgen(unchecked_return_type = "Promise<number>")]
    pub fn item(&self) -> js_sys::Promise {
        let t = self.live();
        super::started(async move { t?.item_f64().await.map_err(to_js) })
    }

    /// The values as a TypedArray matching the dtype (synchronises device work; starts at the
    /// call, as `item()`).
    #[wasm_bindgen(unchecked_return_type = "Promise<AnyTypedArray>")]
    pub fn to_array(&self) -> js_sys::Promise {
        super::started(self.read_array())
    }

    /// Alias of `to_array()`.
    #[wasm_bindgen(js_name = toArray, unchecked_return_type = "Promise<AnyTypedArray>")]
    pub fn to_array_alias(&self) -> js_sys::Promise {
        self.to_array()
    }

    /// Alias of `to_array()` (TF.js `data()`).
    #[wasm_bindgen(unchecked_return_type = "Promise<AnyTypedArray>")]
    pub fn data(&self) -> js_sys::Promise {
        self.to_array()
    }

    /// The values as nested `number[]` arrays of the tensor's shape (a number for a scalar), as
    /// TF.js `array()`.
    #[wasm_bindgen(unchecked_return_type = "Promise<NestedArray>")]
    pub fn array(&self) -> js_sys::Promise {
        let shape = self.live().map(|t| t.shape().to_vec());
        let flat = self.read_array();
        super::started(async move {
            let shape = shape?;
            let flat = flat.await?;
            let dims: Vec<f64> = shape.iter().map(|&d| d as f64).collect();
            Ok(super::affon_nest(&flat, &dims))
        })
    }

    /// Releases the storage to the pool. Idempotent; the handle stays readable.
    pub fn dispose(&self) {
        if let Some(t) = &self.inner {
            t.dispose();
        }
    }
}

impl JsTensor {
    /// The readback behind `to_array()` and `array()`, not yet started.
    fn read_array(&self) -> impl std::future::Future<Output = JsResult<JsValue>> + 'static {
        let t = self.live();
        async move {
            let t = t?;
            let dtype = t.dtype();
            t.read_with(|view| typed_array(dtype, view)).await.map_err(to_js)
        }
    }
}
