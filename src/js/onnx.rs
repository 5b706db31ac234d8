//! `Program.fromONNX` and an imported program's `inputs` / `outputs`: converts the bytes and
//! options, imports through the core (`onnx/`).

use wasm_bindgen::prelude::*;

use super::args::{self, describe};
use super::program::JsProgram;
use super::{to_js, to_value, JsResult};
use crate::error::{invalid_arg, Error};
use crate::onnx::OnnxOptions;
use crate::program::Program;

/// The model's bytes: a `Uint8Array` or an `ArrayBuffer` (copied; the caller's buffer is not kept).
fn bytes(v: &JsValue) -> JsResult<Vec<u8>> {
    if let Some(a) = v.dyn_ref::<js_sys::Uint8Array>() {
        return Ok(a.to_vec());
    }
    if v.is_instance_of::<js_sys::ArrayBuffer>() {
        return Ok(js_sys::Uint8Array::new(v).to_vec());
    }
    Err(to_js(invalid_arg!(
        "Program.fromONNX: bytes must be a Uint8Array or an ArrayBuffer holding an ONNX model, got {}",
        describe(v)
    )))
}

/// `{name?, inputShapes?, inputValues?, states?}`.
fn options(v: &JsValue) -> JsResult<OnnxOptions> {
    const KEYS: [&str; 4] = ["name", "inputShapes", "inputValues", "states"];
    let mut o = OnnxOptions::default();
    for (k, x) in args::entries("Program.fromONNX options", v)? {
        match k.as_str() {
            "name" => o.name = Some(args::string("Program.fromONNX: name", &x)?),
            "inputShapes" => {
                for (n, s) in args::entries("Program.fromONNX: inputShapes", &x)? {
                    o.input_shapes
                        .insert(n.clone(), args::ints(&format!("inputShapes.{n}"), &s)?);
                }
            }
            "inputValues" => {
                for (n, s) in args::entries("Program.fromONNX: inputValues", &x)? {
                    let what = format!("inputValues.{n}");
                    let values = match s.as_f64() {
                        Some(one) => vec![one],
                        None => args::numbers(&what, &js_sys::Array::from(&s).into())?,
                    };
                    o.input_values.insert(n, values);
                }
            }
            "states" => {
                return Err(to_js(Error::Unsupported(
                    "Program.fromONNX: states are not implemented yet".into(),
                )))
            }
            _ => {
                return Err(to_js(invalid_arg!(
                    "Program.fromONNX: unknown option '{k}' (expected {KEYS:?})"
                )))
            }
        }
    }
    Ok(o)
}

fn signature(list: Vec<crate::program::Port>) -> JsResult<JsValue> {
    let rows: Vec<_> = list
        .into_iter()
        .map(|(name, d, shape)| serde_json::json!({ "name": name, "dtype": d.to_string(), "shape": shape }))
        .collect();
    to_value(&rows)
}

#[wasm_bindgen(js_class = Program)]
impl JsProgram {
    /// The Program of an ONNX model (`bytes`: a `Uint8Array` or `ArrayBuffer` holding a
    /// `ModelProto`); options `{name?, inputShapes?, inputValues?}` (API.md "Models from ONNX").
    #[wasm_bindgen(js_name = fromONNX)]
    pub fn from_onnx(
        #[wasm_bindgen(unchecked_param_type = "Uint8Array | ArrayBuffer")] bytes_: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ONNXOptions")] options_: JsValue,
    ) -> JsResult<JsProgram> {
        super::install_dispose_symbols();
        let (b, o) = (bytes(&bytes_)?, options(&options_)?);
        let inner = Program::from_onnx(&b, &o).map_err(to_js)?;
        Ok(JsProgram::wrap(inner))
    }

    /// `[{name, dtype, shape}]`: the inputs a run takes (`-1` for a dynamic dim).
    #[wasm_bindgen(
        getter,
        unchecked_return_type = "Array<{ name: string; dtype: DType; shape: number[] }>"
    )]
    pub fn inputs(&self) -> JsResult<JsValue> {
        signature(self.inner_mut().signature().0)
    }

    /// `[{name, dtype, shape}]`: the outputs a run returns.
    #[wasm_bindgen(
        getter,
        unchecked_return_type = "Array<{ name: string; dtype: DType; shape: number[] }>"
    )]
    pub fn outputs(&self) -> JsResult<JsValue> {
        signature(self.inner_mut().signature().1)
    }
}
