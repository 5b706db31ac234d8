//! Tensor data from JS: a TypedArray copied once when its words are the tensor's own, anything
//! else converted value by value, and nested arrays flattened with their shape.

use wasm_bindgen::prelude::*;

use super::{value, wrong};
use crate::dtype::DType;
use crate::error::invalid_arg;
use crate::host::{host_oom, host_vec};
use crate::js::{to_js, JsResult};

/// Tensor data as it arrives: its length is known before any of it is copied into wasm memory.
/// A TypedArray is held as a fresh view over its memory, read from the engine's slots: its length
/// and contents are read and copied without consulting the caller's own fields or a page's change
/// to `%TypedArray%.prototype` (a `length` that changes between two reads cannot make a copy's
/// lengths disagree).
pub(crate) enum Data {
    /// A TypedArray whose elements are 32-bit words of the tensor's own dtype: copied once.
    Words(JsValue),
    /// Any other TypedArray (BigInt arrays included): converted as it is copied (`kind`, see
    /// `affon_copy_typed`: 1 numbers, 2 BigInt64, 3 BigUint64).
    Typed(JsValue, u32),
    /// An array of numbers/booleans.
    Values(JsValue),
}

impl Data {
    /// Classifies `v` for a tensor of `dtype`.
    pub(crate) fn of(what: &str, v: &JsValue, dtype: DType) -> JsResult<Data> {
        if let Some(tag) = crate::js::safe::typed_tag(v) {
            let view = crate::js::safe::typed_view(v)
                .ok_or_else(|| wrong(what, "a TypedArray over a live ArrayBuffer", v))?;
            let own = matches!(
                (dtype, tag.as_str()),
                (DType::Float32, "Float32Array")
                    | (DType::Int32, "Int32Array")
                    | (DType::Uint32, "Uint32Array")
            );
            let kind = match tag.as_str() {
                "BigInt64Array" => 2,
                "BigUint64Array" => 3,
                _ => 1,
            };
            return Ok(if own {
                Data::Words(view)
            } else {
                Data::Typed(view, kind)
            });
        }
        if crate::js::safe::is_array(v) {
            return Ok(Data::Values(v.clone()));
        }
        Err(wrong(what, "a TypedArray, an array of numbers or a number", v))
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> u64 {
        match self {
            Data::Words(v) | Data::Typed(v, _) => crate::js::affon_typed_length(v) as u64,
            Data::Values(v) => js_sys::Reflect::get(v, &"length".into())
                .ok()
                .and_then(|l| l.as_f64())
                .unwrap_or(0.0) as u64,
        }
    }

    /// The raw words (own-dtype arrays), copied once into memory reserved fallibly
    /// (`OUT_OF_MEMORY`, never an abort, when the host cannot hold them).
    pub(crate) fn words(&self, what: &str) -> JsResult<Option<Vec<u32>>> {
        match self {
            Data::Words(v) => Ok(Some(copy_typed(what, v, self.len(), 0)?)),
            _ => Ok(None),
        }
    }

    /// The values as numbers (everything else), in memory reserved fallibly.
    pub(crate) fn values(&self, what: &str) -> JsResult<Vec<f64>> {
        let n = self.len();
        match self {
            Data::Words(_) => Ok(vec![]),
            Data::Typed(v, 2) => {
                let raw: Vec<i64> = copy_typed(what, v, n, 2)?;
                host_vec(n, |i| raw[i] as f64).map_err(to_js)
            }
            Data::Typed(v, 3) => {
                let raw: Vec<u64> = copy_typed(what, v, n, 3)?;
                host_vec(n, |i| raw[i] as f64).map_err(to_js)
            }
            Data::Typed(v, _) => copy_typed(what, v, n, 1),
            Data::Values(v) => {
                let a = crate::js::safe::array(what, v, u32::MAX)?; // `of` admitted only arrays here
                let mut out = host_vec(n.min(a.length() as u64), |_| 0f64).map_err(to_js)?;
                for (i, x) in out.iter_mut().enumerate() {
                    *x = value(&format!("{what}[{i}]"), &a.get(i as u32))?;
                }
                Ok(out)
            }
        }
    }
}

/// The first `n` elements of the TypedArray view `v`, as `T` (`kind`: 0 its 32-bit words, 1 f64,
/// 2 i64, 3 u64), written by the engine's `set()` straight into memory reserved fallibly here.
fn copy_typed<T: Copy>(what: &str, v: &JsValue, n: u64, kind: u32) -> JsResult<Vec<T>> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>() as u64);
    let count = u32::try_from(n).map_err(|_| to_js(host_oom(bytes)))?;
    let mut out: Vec<T> = Vec::new();
    out.try_reserve_exact(count as usize)
        .map_err(|_| to_js(host_oom(bytes)))?;
    let ptr = out.as_mut_ptr() as usize as u32;
    if !crate::js::affon_copy_typed(v, &wasm_bindgen::memory(), ptr, count, kind) {
        return Err(to_js(invalid_arg!(
            "{what} could not be read (its buffer was detached or resized)"
        )));
    }
    // SAFETY: the copy wrote `count` elements of `T` at `ptr`, inside the reserved capacity (the
    // engine's set() checks the destination view's bounds before it writes anything)
    unsafe { out.set_len(count as usize) };
    Ok(out)
}

/// Nested arrays of numbers/booleans (`[[1, 2], [3, 4]]`) or a plain number: their shape and the
/// values in row-major order. Ragged nesting (siblings of different lengths or depths) is
/// `INVALID_ARGUMENT`. Each array's length is given to `fits` before the array is read: every
/// dimension of data a tensor can hold is at most its element count, so an array of 2^30 holes is
/// refused there, not walked.
pub(crate) fn nested(
    what: &str,
    v: &JsValue,
    fits: &dyn Fn(u64) -> JsResult<()>,
) -> JsResult<(Vec<usize>, Vec<f64>)> {
    struct Walk<'a> {
        what: &'a str,
        fits: &'a dyn Fn(u64) -> JsResult<()>,
    }
    fn walk(w: &Walk, v: &JsValue, depth: usize, shape: &mut Vec<usize>, out: &mut Vec<f64>) -> JsResult<()> {
        let what = w.what;
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
        let a = crate::js::safe::array_within(what, v, w.fits)?;
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
            walk(w, &x, depth + 1, shape, out)?;
        }
        Ok(())
    }
    let (mut shape, mut out) = (vec![], vec![]);
    walk(&Walk { what, fits }, v, 0, &mut shape, &mut out)?;
    Ok((shape, out))
}

/// Whether `v` is an array whose first entry is an array (nested data), read without walking the
/// rest: an array with an array further on is read as flat data, whose length is checked against
/// its shape first, and refused at that entry (`INVALID_ARGUMENT`, as ragged nesting is).
pub(crate) fn is_nested(v: &JsValue) -> bool {
    use crate::js::safe;
    safe::is_array(v) && js_sys::Reflect::get(v, &0.into()).is_ok_and(|x| safe::is_array(&x))
}
