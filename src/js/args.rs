//! Argument resolution: every exported method takes loosely typed `JsValue`s and resolves them
//! here, so a value of the wrong kind is `INVALID_ARGUMENT` (an `AffonError` naming the argument,
//! what was expected and what was given) and never a wasm-bindgen binding error. Conversion only:
//! what a value means is decided by the core.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{to_js, JsResult};
use crate::dtype::DType;
use crate::error::invalid_arg;
use crate::tensor::Tensor;

mod attrs;
mod data;
pub(crate) use super::safe::describe;
pub(crate) use attrs::{attr, attr_or};
pub(crate) use data::{is_nested, nested, Data};

fn wrong(what: &str, expected: &str, v: &JsValue) -> JsValue {
    to_js(invalid_arg!("{what} must be {expected}, got {}", describe(v)))
}

fn absent(v: &JsValue) -> bool {
    v.is_undefined() || v.is_null()
}

/// A live Tensor handle (a disposed one resolves too: the op then reports `DISPOSED`).
pub(crate) fn tensor(what: &str, v: &JsValue) -> JsResult<Rc<Tensor>> {
    super::JsTensor::resolve(v).ok_or_else(|| wrong(what, "a Tensor", v))
}

/// A Tensor handle, `None` when absent.
pub(crate) fn opt_tensor(what: &str, v: &JsValue) -> JsResult<Option<Rc<Tensor>>> {
    if absent(v) {
        Ok(None)
    } else {
        tensor(what, v).map(Some)
    }
}

/// A Tensor handle or a number (a scalar of the dtype the op gives it).
pub(crate) fn tensor_or_number(what: &str, v: &JsValue) -> JsResult<crate::ops::OrNumber<Rc<Tensor>>> {
    match v.as_f64() {
        Some(x) => Ok(crate::ops::OrNumber::Number(x)),
        None => tensor(what, v).map(crate::ops::OrNumber::Value),
    }
}

/// An array of Tensor handles (read once, at most `safe::MAX_LIST` long).
pub(crate) fn tensors(what: &str, v: &JsValue) -> JsResult<Vec<Rc<Tensor>>> {
    if !super::safe::is_array(v) {
        return Err(wrong(what, "an array of Tensors", v));
    }
    super::safe::array(what, v, super::safe::MAX_LIST)?
        .iter()
        .enumerate()
        .map(|(i, t)| tensor(&format!("{what}[{i}]"), &t))
        .collect()
}

/// A string.
pub(crate) fn string(what: &str, v: &JsValue) -> JsResult<String> {
    v.as_string().ok_or_else(|| wrong(what, "a string", v))
}

/// A finite number.
pub(crate) fn number(what: &str, v: &JsValue) -> JsResult<f64> {
    v.as_f64()
        .filter(|x| x.is_finite())
        .ok_or_else(|| wrong(what, "a finite number", v))
}

/// A finite number, `default` when absent.
pub(crate) fn number_or(what: &str, v: &JsValue, default: f64) -> JsResult<f64> {
    if absent(v) {
        Ok(default)
    } else {
        number(what, v)
    }
}

/// A number or a boolean (tensor values), as a number.
pub(crate) fn value(what: &str, v: &JsValue) -> JsResult<f64> {
    v.as_f64()
        .or_else(|| v.as_bool().map(|b| b as u8 as f64))
        .ok_or_else(|| wrong(what, "a number or a boolean", v))
}

/// An integer (an axis, a seed), `default` when absent.
pub(crate) fn int_or(what: &str, v: &JsValue, default: i64) -> JsResult<i64> {
    if absent(v) {
        return Ok(default);
    }
    match v.as_f64() {
        Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Ok(x as i64),
        _ => Err(wrong(what, "an integer", v)),
    }
}

/// A boolean, `default` when absent.
pub(crate) fn bool_or(what: &str, v: &JsValue, default: bool) -> JsResult<bool> {
    if absent(v) {
        return Ok(default);
    }
    v.as_bool().ok_or_else(|| wrong(what, "a boolean", v))
}

/// A function.
pub(crate) fn function(what: &str, v: &JsValue) -> JsResult<js_sys::Function> {
    v.clone().dyn_into().map_err(|v| wrong(what, "a function", &v))
}

/// An array of numbers.
pub(crate) fn numbers(what: &str, v: &JsValue) -> JsResult<Vec<f64>> {
    if !crate::js::safe::is_array(v) {
        return Err(wrong(what, "an array of numbers", v));
    }
    crate::js::safe::array(what, v, crate::js::safe::MAX_LIST)?
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_f64()
                .ok_or_else(|| wrong(&format!("{what}[{i}]"), "a number", &x))
        })
        .collect()
}

/// An array of integers (axes, permutations, reshape targets, input dims).
pub(crate) fn ints(what: &str, v: &JsValue) -> JsResult<Vec<i64>> {
    numbers(what, v)?
        .into_iter()
        .enumerate()
        .map(|(i, x)| {
            if x.fract() == 0.0 && x.abs() < 9.0e15 {
                Ok(x as i64)
            } else {
                Err(to_js(invalid_arg!("{what}[{i}] must be an integer, got {x}")))
            }
        })
        .collect()
}

/// Reduction axes: one integer, an array of them, or all when absent.
pub(crate) fn axes(what: &str, v: &JsValue) -> JsResult<Vec<i64>> {
    if absent(v) {
        return Ok(vec![]);
    }
    if v.as_f64().is_some() {
        return Ok(vec![int_or(what, v, 0)?]);
    }
    if !crate::js::safe::is_array(v) {
        return Err(wrong(what, "an axis or an array of axes", v));
    }
    ints(what, v)
}

/// `[[before, after], …]`: pairs of non-negative integers.
pub(crate) fn pairs(what: &str, v: &JsValue) -> JsResult<Vec<(i64, i64)>> {
    if !crate::js::safe::is_array(v) {
        return Err(wrong(what, "an array of [before, after] pairs", v));
    }
    crate::js::safe::array(what, v, crate::js::safe::MAX_LIST)?
        .iter()
        .enumerate()
        .map(|(i, p)| match ints(&format!("{what}[{i}]"), &p)?.as_slice() {
            [a, b] => Ok((*a, *b)),
            _ => Err(wrong(&format!("{what}[{i}]"), "a pair [before, after]", &p)),
        })
        .collect()
}

/// `split`'s `numOrSizes`: a number of parts, or an array of sizes (integers; what they may be is
/// the core's `ops::compose::split_sizes`).
pub(crate) fn split_sizes(what: &str, v: &JsValue) -> JsResult<crate::ops::SplitSizes> {
    if v.as_f64().is_some() {
        return Ok(crate::ops::SplitSizes::Parts(int_or(what, v, 1)?));
    }
    let sizes = numbers(what, v)?;
    let int = |(i, &d): (usize, &f64)| -> JsResult<i64> {
        match d.fract() == 0.0 && d.abs() < 9.0e15 {
            true => Ok(d as i64),
            false => Err(wrong(&format!("{what}[{i}]"), "an integer", &d.into())),
        }
    };
    Ok(crate::ops::SplitSizes::Sizes(
        sizes.iter().enumerate().map(int).collect::<JsResult<_>>()?,
    ))
}

/// A shape: an array of positive integers (`[]` is a scalar).
pub(crate) fn shape(what: &str, v: &JsValue) -> JsResult<Vec<usize>> {
    if !crate::js::safe::is_array(v) {
        return Err(wrong(what, "an array of positive integers", v));
    }
    crate::shape::dims_from_f64(&numbers(what, v)?).map_err(to_js)
}

/// A dtype name.
pub(crate) fn dtype(what: &str, v: &JsValue) -> JsResult<DType> {
    let name = v
        .as_string()
        .ok_or_else(|| wrong(what, "'float32', 'int32', 'uint32' or 'bool'", v))?;
    DType::parse(&name).map_err(to_js)
}

/// A dtype name, `float32` when absent.
pub(crate) fn dtype_or_f32(what: &str, v: &JsValue) -> JsResult<DType> {
    if absent(v) {
        Ok(DType::Float32)
    } else {
        dtype(what, v)
    }
}

/// The entries of a plain object, none when absent.
pub(crate) fn entries(what: &str, v: &JsValue) -> JsResult<Vec<(String, JsValue)>> {
    if absent(v) {
        return Ok(vec![]);
    }
    if !v.is_object() || crate::js::safe::is_array(v) || v.is_function() {
        return Err(wrong(what, "an object of name → value", v));
    }
    crate::js::safe::entries(what, v)
}

/// An options object whose keys must be among `allowed`.
pub(crate) struct Options(Vec<(String, JsValue)>);

impl Options {
    pub(crate) fn parse(what: &str, v: &JsValue, allowed: &[&str]) -> JsResult<Options> {
        let e = entries(what, v)?;
        if let Some((k, _)) = e.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
            return Err(to_js(invalid_arg!(
                "{what}: unknown option '{k}' (expected one of {allowed:?})"
            )));
        }
        Ok(Options(e))
    }

    /// A number option, `default` when absent (`None`: required).
    pub(crate) fn number(&self, what: &str, key: &str, default: Option<f64>) -> JsResult<f64> {
        match (self.0.iter().find(|(k, v)| k == key && !absent(v)), default) {
            (Some((_, v)), _) => number(&format!("{what}: {key}"), v),
            (None, Some(d)) => Ok(d),
            (None, None) => Err(to_js(invalid_arg!("{what}: the option '{key}' is required"))),
        }
    }
}
