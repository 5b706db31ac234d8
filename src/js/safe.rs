//! Reading JS values through calls that catch: a Proxy's trap, a revoked Proxy or a throwing
//! getter makes these return an error (or "not an array"), never an exception thrown through the
//! wasm frames (which would leave the instance's stack pointer and borrows as they were at the
//! throw). Every read of a caller's array or object in `js/` goes through here or `Reflect`.

use wasm_bindgen::prelude::*;

use super::{to_js, JsResult};
use crate::error::invalid_arg;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = Array, js_name = isArray)]
    fn is_array_or_throw(v: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Array, js_name = from)]
    fn array_from(v: &JsValue) -> Result<js_sys::Array, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Object, js_name = getPrototypeOf)]
    fn prototype_of(v: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Object, js_name = entries)]
    fn object_entries(v: &JsValue) -> Result<js_sys::Array, JsValue>;
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    fn object_keys(v: &JsValue) -> Result<js_sys::Array, JsValue>;
}

/// Arrays longer than this are refused where shapes, axes and other small lists are read.
pub(crate) const MAX_LIST: u32 = 1 << 20;

/// A fresh view of the same type over the TypedArray `v`'s memory, its buffer, offset and length
/// read from the engine's slots: the caller's own `length`, `subarray` or `constructor` (which
/// could change between two reads) is never consulted. `None` for a detached buffer.
pub(crate) fn typed_view(v: &JsValue) -> Option<JsValue> {
    Some(super::affon_typed_view(v)).filter(|x| !x.is_null())
}

/// `Some("Float32Array")` and so on when `v` is a TypedArray (read from its slot, whatever its
/// prototype chain says), `None` for anything else, a `DataView` included.
pub(crate) fn typed_tag(v: &JsValue) -> Option<String> {
    super::affon_typed_tag(v)
}

/// Plain data copied from the caller's `v` in one catching pass (own enumerable properties of
/// objects, array elements; at most 8 deep, 2^20 elements an array): what serde then parses has
/// no getter or trap left to run. A throwing getter or trap is `INVALID_ARGUMENT`.
pub(crate) fn plain(what: &str, v: &JsValue) -> crate::Result<JsValue> {
    let r = super::affon_plain(v);
    checked(what, &r)?;
    Ok(r.get(1))
}

/// The `names` of the caller's options object `v` (and `nested`'s object, its `nested_names`), each
/// read once by name in one catching pass — inherited fields and getters count, as a by-name read
/// sees them — into objects with no prototype that serde then parses; values are copied as plain
/// data; with them, the nested object's own keys. A throwing getter or trap is `INVALID_ARGUMENT`.
pub(crate) fn pick(
    what: &str,
    v: &JsValue,
    names: &[&str],
    nested: &str,
    nested_names: &[&str],
) -> crate::Result<(JsValue, Vec<String>)> {
    let owned = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let r = super::affon_pick(v, owned(names), nested, owned(nested_names));
    checked(what, &r)?;
    let keys = js_sys::Array::from(&r.get(2)); // affon_pick's own array of strings
    Ok((r.get(1), keys.iter().filter_map(|k| k.as_string()).collect()))
}

/// `affon_plain` / `affon_pick` answer `[true, …]`, or `[false, why]` when a getter or trap threw.
fn checked(what: &str, r: &js_sys::Array) -> crate::Result<()> {
    if r.get(0).as_bool() == Some(true) {
        return Ok(());
    }
    let why = r.get(1).as_string().unwrap_or_default();
    Err(invalid_arg!("{what} could not be read: {why}"))
}

/// Whether `v` is an array (`false` for a revoked Proxy).
pub(crate) fn is_array(v: &JsValue) -> bool {
    is_array_or_throw(v).unwrap_or(false)
}

/// `v`'s prototype, or `null` when reading it throws.
pub(crate) fn prototype(v: &JsValue) -> JsValue {
    prototype_of(v).unwrap_or(JsValue::NULL)
}

/// What a getter or trap threw, in words.
pub(crate) fn thrown(e: &JsValue) -> String {
    use wasm_bindgen::JsCast;
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .unwrap_or_else(|| describe(e))
}

fn unreadable(what: &str, e: JsValue) -> JsValue {
    to_js(invalid_arg!("{what} could not be read: {}", thrown(&e)))
}

/// A copy of the array `v` (its elements read once, by `Array.from`), at most `max` long.
pub(crate) fn array(what: &str, v: &JsValue, max: u32) -> JsResult<js_sys::Array> {
    array_within(what, v, &|n| {
        if n > max as u64 {
            return Err(to_js(invalid_arg!("{what}: at most {max} entries, got {n}")));
        }
        Ok(())
    })
}

/// A copy of the array `v` (its elements read once, by `Array.from`), once `fits` has accepted its
/// length (read first, and nothing else before it is copied).
pub(crate) fn array_within(
    what: &str,
    v: &JsValue,
    fits: &dyn Fn(u64) -> JsResult<()>,
) -> JsResult<js_sys::Array> {
    let n = js_sys::Reflect::get(v, &"length".into())
        .map_err(|e| unreadable(what, e))?
        .as_f64()
        .unwrap_or(0.0);
    fits(n.max(0.0) as u64)?; // (a Proxy's NaN is 0, as Array.from reads it)
    array_from(v).map_err(|e| unreadable(what, e))
}

/// `Object.entries(v)` as `(key, value)` pairs.
pub(crate) fn entries(what: &str, v: &JsValue) -> JsResult<Vec<(String, JsValue)>> {
    let list = object_entries(v).map_err(|e| unreadable(what, e))?;
    Ok(list
        .iter()
        .map(|e| {
            let pair: &js_sys::Array = e.unchecked_ref(); // Object.entries makes [key, value] arrays
            (pair.get(0).as_string().unwrap_or_default(), pair.get(1))
        })
        .collect())
}

/// Whether the caller passed options `v` at all (`undefined` and `null` are none). When it did,
/// `INVALID_ARGUMENT` unless `v` is an object, not an array, whose own keys are all in `allowed`.
pub(crate) fn options_given(what: &str, v: &JsValue, allowed: &[&str]) -> crate::Result<bool> {
    if v.is_undefined() || v.is_null() {
        return Ok(false);
    }
    if !v.is_object() || is_array(v) {
        return Err(invalid_arg!("{what} must be an object, got {}", describe(v)));
    }
    known_keys(what, v, allowed)?;
    Ok(true)
}

/// `INVALID_ARGUMENT` naming the first own key of the object `v` (`Object.keys`) outside
/// `allowed` — a misspelt option is an error, never a default — or saying what reading them threw.
fn known_keys(what: &str, v: &JsValue, allowed: &[&str]) -> crate::Result<()> {
    let list = object_keys(v).map_err(|e| invalid_arg!("{what} could not be read: {}", thrown(&e)))?;
    match list
        .iter()
        .filter_map(|k| k.as_string())
        .find(|k| !allowed.contains(&k.as_str()))
    {
        Some(k) => Err(invalid_arg!(
            "{what}: unknown option '{k}' (expected one of {allowed:?})"
        )),
        None => Ok(()),
    }
}

/// `v` once it settles, when it is a promise (by its prototype chain, as `instanceof` sees it);
/// any other value, a thenable included, as it is. The promise is adopted through the intrinsic
/// `Promise.prototype.then` taken at load (`affon_settle`): no `then` the page put on `v`, on
/// `Promise.prototype` or on the value it fulfils with is ever called — one that settled at once
/// made js-sys's `JsFuture` panic, one that threw went through the wasm frames. Its rejection is
/// the `Err` as it is (what a getter the page put on `v.constructor` throws included).
pub(crate) async fn settle(v: JsValue) -> JsResult<JsValue> {
    use wasm_bindgen::JsCast;
    let fresh = super::affon_settle(&v);
    if fresh.is_null() {
        return Ok(v);
    }
    // affon_settle's fresh promise, fulfilled with { value } (no prototype, an own data field)
    let boxed = wasm_bindgen_futures::JsFuture::from(fresh.unchecked_into::<js_sys::Promise>()).await?;
    Ok(js_sys::Reflect::get(&boxed, &"value".into()).unwrap_or_default())
}

/// A short description of a JS value for error messages: `undefined`, `null`, `'text'`, `3`,
/// `an array of 2`, `a Float32Array of 4`, `a Tensor`, `an object`, `a function`, `a bigint`.
pub(crate) fn describe(v: &JsValue) -> String {
    if v.is_undefined() {
        return "undefined".into();
    }
    if v.is_null() {
        return "null".into();
    }
    if let Some(s) = v.as_string() {
        let short: String = s.chars().take(40).collect();
        return format!("the string '{short}'");
    }
    if let Some(n) = v.as_f64() {
        return format!("the number {n}");
    }
    if let Some(b) = v.as_bool() {
        return format!("the boolean {b}");
    }
    if v.is_bigint() {
        return "a bigint".into();
    }
    if v.is_function() {
        return "a function".into();
    }
    if v.is_symbol() {
        return "a symbol".into();
    }
    if is_array(v) {
        let n = js_sys::Reflect::get(v, &"length".into())
            .ok()
            .and_then(|n| n.as_f64());
        return format!("an array of {}", n.unwrap_or(0.0));
    }
    let ctor = js_sys::Reflect::get(v, &"constructor".into())
        .ok()
        .and_then(|c| js_sys::Reflect::get(&c, &"name".into()).ok())
        .and_then(|n| n.as_string())
        .unwrap_or_default();
    if js_sys::ArrayBuffer::is_view(v) {
        let len = js_sys::Reflect::get(v, &"length".into())
            .ok()
            .and_then(|l| l.as_f64())
            .unwrap_or(0.0);
        return format!("a {ctor} of {len}");
    }
    match ctor.as_str() {
        "" | "Object" => "an object".into(),
        c => format!("a {c}"),
    }
}
