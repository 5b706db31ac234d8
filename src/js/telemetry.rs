//! `telemetry` for JS: a class of static methods, so `telemetry.metrics()` reads naturally and
//! `pkg/std-telemetry.js` can re-export it as `std:telemetry`'s default.

use wasm_bindgen::prelude::*;

use super::{to_value, JsResult};

/// Process-wide metric records and peak reset.
#[wasm_bindgen(js_name = telemetry)]
pub struct JsTelemetry;

#[wasm_bindgen(js_class = telemetry)]
impl JsTelemetry {
    /// `MetricRecord[]`: the process-wide records, then labelled records per live session.
    pub fn metrics() -> JsResult<JsValue> {
        to_value(&crate::telemetry::metrics())
    }

    /// Resets every peak gauge to its current value.
    #[wasm_bindgen(js_name = resetPeak)]
    pub fn reset_peak() {
        crate::telemetry::reset_peak()
    }
}
