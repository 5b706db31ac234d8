//! Tensor data from JS: a TypedArray copied once when its words are the tensor's own, anything
//! else converted value by value, and nested arrays flattened with their shape.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{value, wrong};
use crate::dtype::DType;
use crate::error::invalid_arg;
use crate::js::{to_js, JsResult};
use crate::session::{host_oom, host_vec};

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
            let view = crate::js::safe::words_view(v);
            return view
                .map(Data::Words)
                .ok_or_else(|| wrong(what, "a TypedArray over a live ArrayBuffer", v));
        }
        let typed = js_sys::ArrayBuffer::is_view(v) && !v.is_instance_of::<js_sys::DataView>();
        if typed {
            // read through a view of its own: a `length` or `subarray` on the caller's array
            // could change between the reads below and make a copy's lengths disagree
            return crate::js::safe::typed_view(v)
                .map(Data::Values)
                .ok_or_else(|| wrong(what, "a TypedArray over a live ArrayBuffer", v));
        }
        if crate::js::safe::is_array(v) {
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

    /// The raw words (own-dtype arrays), copied once into memory reserved fallibly
    /// (`OUT_OF_MEMORY`, never an abort, when the host cannot hold them).
    pub(crate) fn words(&self) -> JsResult<Option<Vec<u32>>> {
        match self {
            Data::Words(a) => {
                let n = a.length() as usize;
                let mut out: Vec<u32> = Vec::new();
                out.try_reserve_exact(n)
                    .map_err(|_| to_js(host_oom(n as u64 * 4)))?;
                // SAFETY: `out` has room for the view's `n` words, which the copy writes in full
                unsafe {
                    a.raw_copy_to_ptr(out.as_mut_ptr());
                    out.set_len(n);
                }
                Ok(Some(out))
            }
            Data::Values(_) => Ok(None),
        }
    }

    /// The values as numbers (everything else), in memory reserved fallibly.
    pub(crate) fn values(&self, what: &str) -> JsResult<Vec<f64>> {
        let Data::Values(v) = self else {
            return Ok(vec![]);
        };
        let n = self.len();
        if let Some(a) = v.dyn_ref::<js_sys::BigInt64Array>() {
            let mut raw = host_vec(n, |_| 0i64).map_err(to_js)?;
            a.copy_to(&mut raw);
            return host_vec(n, |i| raw[i] as f64).map_err(to_js);
        }
        if let Some(a) = v.dyn_ref::<js_sys::BigUint64Array>() {
            let mut raw = host_vec(n, |_| 0u64).map_err(to_js)?;
            a.copy_to(&mut raw);
            return host_vec(n, |i| raw[i] as f64).map_err(to_js);
        }
        if js_sys::ArrayBuffer::is_view(v) {
            // converted a block at a time: never a second full-size copy on the JS side
            const BLOCK: u32 = 1 << 16;
            let mut out = host_vec(n, |_| 0f64).map_err(to_js)?;
            let view: &js_sys::Uint8Array = v.unchecked_ref(); // `subarray` is generic over views
            for (k, chunk) in out.chunks_mut(BLOCK as usize).enumerate() {
                let start = k as u32 * BLOCK;
                let part = view.subarray(start, start + chunk.len() as u32);
                js_sys::Float64Array::new(&part).copy_to(chunk);
            }
            return Ok(out);
        }
        let a = crate::js::safe::array(what, v, u32::MAX)?; // `of` admitted only arrays here
        let mut out = host_vec(n.min(a.length() as u64), |_| 0f64).map_err(to_js)?;
        for (i, x) in out.iter_mut().enumerate() {
            *x = value(&format!("{what}[{i}]"), &a.get(i as u32))?;
        }
        Ok(out)
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
        if !crate::js::safe::is_array(v) {
            if depth != shape.len() {
                return Err(to_js(invalid_arg!(
                    "{what}: ragged nesting: a value where an array of {} was expected",
                    shape[depth]
                )));
            }
            // grown fallibly: a huge nested array is OUT_OF_MEMORY, never an abort
            out.try_reserve(1)
                .map_err(|_| to_js(host_oom((out.len() as u64 + 1) * 8)))?;
            out.push(value(what, v)?);
            return Ok(());
        }
        if depth > 32 {
            return Err(to_js(invalid_arg!("{what}: nested more than 32 deep")));
        }
        let a = crate::js::safe::array(what, v, u32::MAX)?;
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
    use crate::js::safe;
    safe::is_array(v) && safe::array("", v, u32::MAX).is_ok_and(|a| a.iter().any(|x| safe::is_array(&x)))
}
