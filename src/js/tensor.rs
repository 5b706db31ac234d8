//! `Tensor` for JS.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::registry::Registry;
use super::{describe, dtype_arg, ints_arg, to_js, JsResult};
use crate::dtype::DType;
use crate::error::{invalid_arg, Error};
use crate::ops::{BinaryOp, Op, ReduceOp, UnaryOp};
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

thread_local! {
    /// Tensors whose JS handle was garbage-collected without `dispose()`: kept here so their storage
    /// stays accounted (and reported as forgotten) unless the session opted into release on collect.
    static FORGOTTEN: std::cell::RefCell<Vec<Rc<Tensor>>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Drop for JsTensor {
    /// Runs when the JS handle is collected (wasm-bindgen's finalization registry) or `free()`d.
    fn drop(&mut self) {
        if let Some(t) = self.inner.take() {
            TENSORS.with(|r| r.remove(t.id()));
            if !t.is_disposed() && Rc::strong_count(&t) == 1 {
                let session = &t.core.session;
                session.owners.forget(t.id());
                if !session.info.release_on_collect {
                    FORGOTTEN.with(|f| f.borrow_mut().push(t));
                }
            }
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

    /// Like [`JsTensor::resolve`], or `INVALID_ARGUMENT` naming `what`.
    pub(crate) fn expect(what: &str, v: &JsValue) -> JsResult<Rc<Tensor>> {
        Self::resolve(v).ok_or_else(|| to_js(invalid_arg!("{what} must be a Tensor, got {}", describe(v))))
    }

    fn op(&self, op: Op, others: &[&JsTensor]) -> JsResult<JsTensor> {
        let t = self.live()?;
        let others = others.iter().map(|o| o.live()).collect::<JsResult<Vec<_>>>()?;
        let refs: Vec<&Tensor> = others.iter().map(|o| o.as_ref()).collect();
        t.apply(&op, &refs).map(JsTensor::new).map_err(to_js)
    }

    fn reduce(&self, op: ReduceOp, axes: JsValue, keep_dims: Option<bool>) -> JsResult<JsTensor> {
        let axes = if axes.is_undefined() || axes.is_null() {
            vec![]
        } else if let Some(a) = axes.as_f64() {
            ints_arg("axes", &js_sys::Array::of1(&a.into()))?
        } else {
            ints_arg("axes", &axes)?
        };
        self.op(
            Op::Reduce {
                op,
                axes,
                keep_dims: keep_dims.unwrap_or(false),
            },
            &[],
        )
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

    pub(crate) fn live(&self) -> JsResult<Rc<Tensor>> {
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

    /// The single value of a one-element tensor (synchronises device work).
    pub async fn item(&self) -> JsResult<f64> {
        self.live()?.item_f64().await.map_err(to_js)
    }

    /// The values as a TypedArray matching the dtype (synchronises device work).
    #[wasm_bindgen(unchecked_return_type = "AnyTypedArray")]
    pub async fn to_array(&self) -> JsResult<JsValue> {
        let t = self.live()?;
        let words = t.read_words().await.map_err(to_js)?;
        Ok(typed_array(t.dtype(), words))
    }

    /// Alias of `to_array()`.
    #[wasm_bindgen(js_name = toArray, unchecked_return_type = "AnyTypedArray")]
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

macro_rules! js_unary {
    ($($name:ident => $op:ident),* $(,)?) => {
        #[wasm_bindgen(js_class = Tensor)]
        impl JsTensor {$(
            #[doc = concat!("Elementwise `", stringify!($name), "`.")]
            pub fn $name(&self) -> JsResult<JsTensor> {
                self.op(Op::Unary(UnaryOp::$op), &[])
            }
        )*}
    };
}
js_unary!(neg => Neg, abs => Abs, square => Square, sqrt => Sqrt, exp => Exp, log => Log,
          relu => Relu, sigmoid => Sigmoid, tanh => Tanh);

macro_rules! js_binary {
    ($($name:ident => $op:ident),* $(,)?) => {
        #[wasm_bindgen(js_class = Tensor)]
        impl JsTensor {$(
            #[doc = concat!("Elementwise `", stringify!($name), "` with broadcasting.")]
            pub fn $name(&self, other: &JsTensor) -> JsResult<JsTensor> {
                self.op(Op::Binary(BinaryOp::$op), &[other])
            }
        )*}
    };
}
js_binary!(add => Add, sub => Sub, mul => Mul, div => Div);

macro_rules! js_reduce {
    ($($name:ident => $op:ident),* $(,)?) => {
        #[wasm_bindgen(js_class = Tensor)]
        impl JsTensor {$(
            #[doc = concat!("`", stringify!($name), "` over `axes` (a number or array; all when absent).")]
            pub fn $name(
                &self,
                #[wasm_bindgen(unchecked_optional_param_type = "Axes")] axes: JsValue,
                #[wasm_bindgen(js_name = keepDims, unchecked_optional_param_type = "boolean")] keep_dims: Option<bool>,
            ) -> JsResult<JsTensor> {
                self.reduce(ReduceOp::$op, axes, keep_dims)
            }
        )*}
    };
}
js_reduce!(sum => Sum, mean => Mean, max => Max, min => Min);

#[wasm_bindgen(js_class = Tensor)]
impl JsTensor {
    /// Matrix product over the last two dims; leading dims broadcast.
    pub fn matmul(&self, other: &JsTensor) -> JsResult<JsTensor> {
        self.op(Op::MatMul, &[other])
    }

    /// Softmax along `axis` (default -1).
    pub fn softmax(&self, axis: Option<f64>) -> JsResult<JsTensor> {
        let axis = ints_arg("axis", &js_sys::Array::of1(&axis.unwrap_or(-1.0).into()))?[0];
        self.op(Op::Softmax { axis }, &[])
    }

    /// Same elements, new shape (one entry may be -1).
    pub fn reshape(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number[]")] shape: JsValue,
    ) -> JsResult<JsTensor> {
        self.op(
            Op::Reshape {
                shape: ints_arg("shape", &shape)?,
            },
            &[],
        )
    }

    /// Permutes axes (default reverses).
    pub fn transpose(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "number[]")] perm: JsValue,
    ) -> JsResult<JsTensor> {
        let perm = if perm.is_undefined() || perm.is_null() {
            None
        } else {
            Some(ints_arg("perm", &perm)?)
        };
        self.op(Op::Transpose { perm }, &[])
    }

    /// Converts to `dtype`.
    pub fn cast(&self, #[wasm_bindgen(unchecked_param_type = "DType")] dtype: String) -> JsResult<JsTensor> {
        self.op(Op::Cast(dtype_arg(Some(dtype))?), &[])
    }

    /// A copy with its own storage.
    #[wasm_bindgen(js_name = clone)]
    pub fn clone_tensor(&self) -> JsResult<JsTensor> {
        self.op(Op::Clone, &[])
    }
}
