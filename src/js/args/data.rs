//! Tensor data from JS: a TypedArray copied once when its words are the tensor's own, anything
//! else converted value by value, and nested arrays flattened with their shape.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{value, wrong};
use crate::dtype::DType;
use crate::error::invalid_arg;
use crate::js::{to_js, JsResult};

/// Tensor data as it arrives: its length is known before any of it is copied into wasm memory.
pub(crate) enum Data {
    /// A TypedArray whose elements are 32-bit words of the tensor's own dtype: copied once.
    Words(js_sys::Uint32Array),
    /// Any other TypedArray (BigInt arrays included) or an array of numbers/booleans.
    Values(JsValue),
}

impl Data {
    /// Classifies `v` for a tensor of `dtype`.
    pub(crate) fn of(what: &str, v: &JsValue, dtype: DType) -> JsResult<Data> {
        let own = match dtype {
            DType::Float32 => v.is_instance_of::<js_sys::Float32Array>(),
            DType::Int32 => v.is_instance_of::<js_sys::Int32Array>(),
            DType::Uint32 => v.is_instance_of::<js_sys::Uint32Array>(),
            DType::Bool => false,
        };
        if own {
            let buf = js_sys::Reflect::get(v, &"buffer".into())?;
            let off = js_sys::Reflect::get(v, &"byteOffset".into())?
                .as_f64()
                .unwrap_or(0.0);
            let len = js_sys::Reflect::get(v, &"length".into())?.as_f64().unwrap_or(0.0);
            return Ok(Data::Words(js_sys::Uint32Array::new_with_byte_offset_and_length(
                &buf, off as u32, len as u32,
            )));
        }
        let typed = js_sys::ArrayBuffer::is_view(v) && !v.is_instance_of::<js_sys::DataView>();
        if typed || js_sys::Array::is_array(v) {
            return Ok(Data::Values(v.clone()));
        }
        Err(wrong(what, "a TypedArray, an array of numbers or a number", v))
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> u64 {
        let v: &JsValue = match self {
            Data::Words(a) => a.as_ref(),
            Data::Values(v) => v,
        };
        js_sys::Reflect::get(v, &"length".into())
            .ok()
            .and_then(|l| l.as_f64())
            .unwrap_or(0.0) as u64
    }

    /// The raw words (own-dtype arrays).
    pub(crate) fn words(&self) -> Option<Vec<u32>> {
        match self {
            Data::Words(a) => Some(a.to_vec()),
            Data::Values(_) => None,
        }
    }

    /// The values as numbers (everything else).
    pub(crate) fn values(&self, what: &str) -> JsResult<Vec<f64>> {
        let Data::Values(v) = self else {
            return Ok(vec![]);
        };
        if let Some(a) = v.dyn_ref::<js_sys::BigInt64Array>() {
            return Ok(a.to_vec().into_iter().map(|x| x as f64).collect());
        }
        if let Some(a) = v.dyn_ref::<js_sys::BigUint64Array>() {
            return Ok(a.to_vec().into_iter().map(|x| x as f64).collect());
        }
        if js_sys::ArrayBuffer::is_view(v) {
            return Ok(js_sys::Float64Array::new(v).to_vec());
        }
        js_sys::Array::from(v)
            .iter()
            .enumerate()
            .map(|(i, x)| value(&format!("{what}[{i}]"), &x))
            .collect()
    }
}

/// Nested arrays of numbers/booleans (`[[1, 2], [3, 4]]`) or a plain number: their shape and the
/// values in row-major order. Ragged nesting (siblings of different lengths or depths) is
/// `INVALID_ARGUMENT`.
pub(crate) fn nested(what: &str, v: &JsValue) -> JsResult<(Vec<usize>, Vec<f64>)> {
    fn walk(
        what: &str,
        v: &JsValue,
        depth: usize,
        shape: &mut Vec<usize>,
        out: &mut Vec<f64>,
    ) -> JsResult<()> {
        if !js_sys::Array::is_array(v) {
            if depth != shape.len() {
                return Err(to_js(invalid_arg!(
                    "{what}: ragged nesting: a value where an array of {} was expected",
                    shape[depth]
                )));
            }
            out.push(value(what, v)?);
            return Ok(());
        }
        if depth > 32 {
            return Err(to_js(invalid_arg!("{what}: nested more than 32 deep")));
        }
        let a = js_sys::Array::from(v);
        let n = a.length() as usize;
        if depth == shape.len() {
            if !out.is_empty() {
                return Err(to_js(invalid_arg!(
                    "{what}: ragged nesting: an array where a value was expected"
                )));
            }
            shape.push(n);
        } else if shape[depth] != n {
            return Err(to_js(invalid_arg!(
                "{what}: ragged nesting: an array of {n} where its siblings have {}",
                shape[depth]
            )));
        }
        for x in a.iter() {
            walk(what, &x, depth + 1, shape, out)?;
        }
        Ok(())
    }
    let (mut shape, mut out) = (vec![], vec![]);
    walk(what, v, 0, &mut shape, &mut out)?;
    Ok((shape, out))
}

/// Whether `v` is an array with an array inside (nested data).
pub(crate) fn is_nested(v: &JsValue) -> bool {
    js_sys::Array::is_array(v) && js_sys::Array::from(v).iter().any(|x| js_sys::Array::is_array(&x))
}
