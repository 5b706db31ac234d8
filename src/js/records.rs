//! The hot telemetry reads, built in JS from numbers: `telemetry.metrics()` (the values cross as
//! one `Float64Array` read in place, the layout as JSON only when it changes) and
//! `session.memory()` (four numbers, one object literal). Conversion only: what the records say
//! comes from `crate::telemetry::frame` and the session's ledger.

use wasm_bindgen::prelude::*;

use super::{to_js, to_value, JsResult};
use crate::session::MemoryInfo;

thread_local! {
    /// The parsed layout of the last `metrics()` call and its hash.
    static LAYOUT: std::cell::RefCell<Option<(u64, JsValue)>> = const { std::cell::RefCell::new(None) };
}

#[wasm_bindgen(inline_js = r#"
let memory = null, view = null;
const parseJson = JSON.parse, freeze = Object.freeze;
export function affon_layout(text) {
  // The layout from JSON: every entry has its own `dist` and `labels` (null when none), so the
  // records are built from own fields only; each labels object is frozen (the records share it)
  const layout = parseJson(text);
  for (let i = 0; i < layout.length; i++) if (layout[i].labels !== null) freeze(layout[i].labels);
  return layout;
}
export function affon_records_memory(m) { memory = m; }
export function affon_memory_info(numTensors, numBytes, numDataBuffers, peakBytes) {
  // `session.memory()`: one object literal in serde's field order (no reasons: nothing is estimated)
  return { numTensors, numBytes, numDataBuffers, peakBytes, unreliable: false, reasons: [] };
}
export function affon_build_records(layout, ptr, len) {
  // The values are read in place from wasm memory (`len` f64 at byte offset `ptr`): no copy.
  // One object per record, fields in the order serde writes them (records compare as JSON);
  // a record's `labels` is its layout entry's object, frozen (shared by every call's records).
  // A view of memory that grew is detached: its length is 0 (the memory is not shared: no threads).
  if (view === null || view.length === 0) view = new Float64Array(memory.buffer);
  const out = new Array(layout.length);
  let j = ptr >>> 3;
  const end = j + len;
  for (let i = 0; i < layout.length; i++) {
    const t = layout[i];
    // whole literals, one per shape: no property added after creation
    if (t.dist) {
      const value = view[j], count = view[j + 1], sum = view[j + 2], min = view[j + 3], max = view[j + 4], mean = view[j + 5];
      j += 6;
      out[i] = t.labels
        ? { scope: t.scope, name: t.name, kind: t.kind, unit: t.unit, value, count, sum, min, max, mean, labels: t.labels }
        : { scope: t.scope, name: t.name, kind: t.kind, unit: t.unit, value, count, sum, min, max, mean };
    } else {
      const value = view[j++];
      out[i] = t.labels
        ? { scope: t.scope, name: t.name, kind: t.kind, unit: t.unit, value, labels: t.labels }
        : { scope: t.scope, name: t.name, kind: t.kind, unit: t.unit, value };
    }
  }
  // a layout that does not fit the values (made by another emit than theirs) gives null: the caller
  // makes it again, never a throw through the wasm frames
  return j === end ? out : null;
}
"#)]
extern "C" {
    fn affon_records_memory(memory: &JsValue);
    fn affon_layout(text: &str) -> JsValue;
    fn affon_build_records(layout: &JsValue, ptr: u32, len: u32) -> JsValue;
    fn affon_memory_info(num_tensors: f64, num_bytes: f64, num_data_buffers: f64, peak_bytes: f64)
        -> JsValue;
}

thread_local! {
    /// Whether `affon_build_records` has been given the wasm memory.
    static MEMORY_GIVEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

pub(super) fn metrics() -> JsResult<JsValue> {
    use crate::telemetry::frame::{emit, Layout, Values};
    // The values cross as one Float64Array; the layout (names, kinds, units, labels) crosses
    // as JSON only when it changed, and `affon_build_records` makes the objects from both.
    if !MEMORY_GIVEN.with(|g| g.replace(true)) {
        affon_records_memory(&wasm_bindgen::memory());
    }
    // A layout that does not fit its values (records added between the two emits) is made again.
    for _ in 0..2 {
        let mut v = Values::default();
        emit(&mut v);
        // No borrow is held while the layout is made (parsing it runs JS).
        let cached = LAYOUT.with(|c| {
            c.borrow()
                .as_ref()
                .filter(|(h, _)| *h == v.hash)
                .map(|(_, l)| l.clone())
        });
        let layout = match cached {
            Some(l) => l,
            None => {
                let mut l = Layout::default();
                emit(&mut l);
                let layout = affon_layout(&serde_json::Value::Array(l.0).to_string());
                LAYOUT.with(|c| *c.borrow_mut() = Some((v.hash, layout.clone())));
                layout
            }
        };
        // `v.values` lives until the call returns: JS reads it in place
        let records = affon_build_records(&layout, v.values.as_ptr() as usize as u32, v.values.len() as u32);
        if !records.is_null() {
            return Ok(records);
        }
        LAYOUT.with(|c| *c.borrow_mut() = None);
    }
    Err(to_js(crate::error::Error::Unsupported(
        "metrics: the set of records changed while they were read".into(),
    )))
}

/// `session.memory()` as a JS object; the general conversion when there are reasons to give.
pub(super) fn memory_info(m: &MemoryInfo) -> JsResult<JsValue> {
    if m.unreliable || !m.reasons.is_empty() {
        return to_value(m);
    }
    Ok(affon_memory_info(
        m.num_tensors as f64,
        m.num_bytes as f64,
        m.num_data_buffers as f64,
        m.peak_bytes as f64,
    ))
}
