//! Op-table attributes from JS (`attr` / `attr_or`, called by the methods generated from
//! `ops/table.rs`): each attribute type's conversion, with the same errors as every argument.

use wasm_bindgen::prelude::*;

use super::int_or;
use super::{absent, axes, dtype, ints, number, pairs, wrong};
use crate::dtype::DType;
use crate::js::JsResult;
use crate::ops::{Axes, Pad, Pair};

/// An op-table attribute as JS passes it (the calls are generated from `ops/table.rs`).
pub(crate) trait Attr: Sized {
    fn from_js(what: &str, v: &JsValue) -> JsResult<Self>;
}

/// A required attribute.
pub(crate) fn attr<T: Attr>(what: &str, v: &JsValue) -> JsResult<T> {
    T::from_js(what, v)
}

/// An optional attribute, `default()` when absent.
pub(crate) fn attr_or<T: Attr>(what: &str, v: &JsValue, default: impl FnOnce() -> T) -> JsResult<T> {
    if absent(v) {
        Ok(default())
    } else {
        T::from_js(what, v)
    }
}

impl Attr for i64 {
    fn from_js(what: &str, v: &JsValue) -> JsResult<i64> {
        match v.as_f64() {
            Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Ok(x as i64),
            _ => Err(wrong(what, "an integer", v)),
        }
    }
}

impl Attr for bool {
    fn from_js(what: &str, v: &JsValue) -> JsResult<bool> {
        v.as_bool().ok_or_else(|| wrong(what, "a boolean", v))
    }
}

impl Attr for Vec<i64> {
    fn from_js(what: &str, v: &JsValue) -> JsResult<Vec<i64>> {
        ints(what, v)
    }
}

impl Attr for Option<Vec<i64>> {
    fn from_js(what: &str, v: &JsValue) -> JsResult<Option<Vec<i64>>> {
        ints(what, v).map(Some)
    }
}

impl Attr for DType {
    fn from_js(what: &str, v: &JsValue) -> JsResult<DType> {
        dtype(what, v)
    }
}

fn positive_int(v: &JsValue) -> Option<usize> {
    v.as_f64()
        .filter(|x| x.fract() == 0.0 && *x >= 1.0 && *x <= (1u64 << 31) as f64)
        .map(|x| x as usize)
}

impl Attr for Pair {
    fn from_js(what: &str, v: &JsValue) -> JsResult<Pair> {
        let expected = "a positive integer or a pair [h, w] of them";
        if let Some(n) = positive_int(v) {
            return Ok(Pair(n, n));
        }
        if crate::js::safe::is_array(v) {
            let a = crate::js::safe::array(what, v, 2).unwrap_or_default();
            if a.length() == 2 {
                if let (Some(h), Some(w)) = (positive_int(&a.get(0)), positive_int(&a.get(1))) {
                    return Ok(Pair(h, w));
                }
            }
        }
        Err(wrong(what, expected, v))
    }
}

impl Attr for Pad {
    fn from_js(what: &str, v: &JsValue) -> JsResult<Pad> {
        match (v.as_string().as_deref(), v.as_f64()) {
            (Some("same"), _) => Ok(Pad::SAME),
            (Some("valid"), _) => Ok(Pad::VALID),
            (_, Some(x)) if x.fract() == 0.0 && (0.0..=65536.0).contains(&x) => Ok(Pad::Explicit(x as usize)),
            _ => Err(wrong(what, "'same', 'valid' or a non-negative integer", v)),
        }
    }
}

impl Attr for f64 {
    fn from_js(what: &str, v: &JsValue) -> JsResult<f64> {
        number(what, v)
    }
}

impl Attr for crate::ops::Coords {
    fn from_js(what: &str, v: &JsValue) -> JsResult<crate::ops::Coords> {
        match v.as_f64() {
            Some(_) => Ok(crate::ops::Coords(vec![int_or(what, v, 0)?])),
            None if crate::js::safe::is_array(v) => ints(what, v).map(crate::ops::Coords),
            None => Err(wrong(what, "a number or an array of numbers", v)),
        }
    }
}

impl Attr for Axes {
    fn from_js(what: &str, v: &JsValue) -> JsResult<Axes> {
        axes(what, v).map(Axes)
    }
}

impl Attr for Vec<(i64, i64)> {
    fn from_js(what: &str, v: &JsValue) -> JsResult<Vec<(i64, i64)>> {
        pairs(what, v)
    }
}

impl Attr for crate::ops::SplitSizes {
    fn from_js(what: &str, v: &JsValue) -> JsResult<crate::ops::SplitSizes> {
        super::split_sizes(what, v)
    }
}
