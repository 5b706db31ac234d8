//! `Executable` and `ExecutionState` for JS: conversion only (the core is `crate::executable` and
//! `crate::state`).

use std::collections::HashMap;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use super::args::{self, describe};
use super::program::{NEXT_ID, STATES};
use super::{to_js, to_value, JsResult};
use crate::error::{invalid_arg, Error};
use crate::executable::state::ExecutionState;
use crate::executable::Executable;
use std::sync::atomic::Ordering;

/// A compiled program.
#[wasm_bindgen(js_name = Executable)]
pub struct JsExecutable {
    inner: Option<Executable>,
}

impl JsExecutable {
    pub(crate) fn new(e: Executable) -> JsExecutable {
        JsExecutable { inner: Some(e) }
    }

    pub(crate) fn placeholder() -> JsExecutable {
        JsExecutable { inner: None }
    }

    fn get(&self) -> JsResult<&Executable> {
        self.inner
            .as_ref()
            .ok_or_else(|| to_js(Error::Disposed("executable placeholder".into())))
    }
}

#[wasm_bindgen(js_class = Executable)]
impl JsExecutable {
    /// The program's name.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.inner
            .as_ref()
            .map(|e| e.name().to_string())
            .unwrap_or_default()
    }

    /// Runs with `inputs` (`{name: Tensor}`) and, for programs with state, an `ExecutionState`.
    /// Returns `{outputName: Tensor}`, tensors owned by the session.
    #[wasm_bindgen(unchecked_return_type = "RunOutputs")]
    pub fn run(
        &self,
        #[wasm_bindgen(unchecked_param_type = "RunInputs")] inputs: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "ExecutionState")] state: JsValue,
    ) -> JsResult<JsValue> {
        let exe = self.get()?;
        let mut tensors = Vec::new();
        for (name, v) in args::entries("run: inputs", &inputs)? {
            let t = args::tensor(&format!("run: input '{name}'"), &v)?;
            tensors.push((name, t));
        }
        let state = if state.is_undefined() || state.is_null() {
            None
        } else {
            Some(STATES.with(|r| r.resolve(&state)).ok_or_else(|| {
                to_js(invalid_arg!(
                    "run: the second argument must be an ExecutionState, got {}",
                    describe(&state)
                ))
            })?)
        };
        let refs: Vec<(&str, &crate::Tensor)> =
            tensors.iter().map(|(n, t)| (n.as_str(), t.as_ref())).collect();
        let outs = exe.run(&refs, state.as_deref()).map_err(to_js)?;
        let obj = js_sys::Object::new();
        for (name, t) in outs {
            // defined, not assigned: a setter on Object.prototype, or an output named `__proto__`,
            // must not run or re-parent the result after the run has committed
            super::affon_own(&obj, &name, &super::JsTensor::new(t).into());
        }
        Ok(obj.into())
    }

    /// A new state: zero-filled, or initialised from `{slot: Tensor}` (copied).
    #[wasm_bindgen(js_name = createState)]
    pub fn create_state(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "Record<string, Tensor>")] init: JsValue,
    ) -> JsResult<JsExecutionState> {
        let exe = self.get()?;
        let mut tensors = Vec::new();
        for (name, v) in args::entries("createState: init", &init)? {
            tensors.push((
                name.clone(),
                args::tensor(&format!("createState: state '{name}'"), &v)?,
            ));
        }
        let refs: Vec<(&str, &crate::Tensor)> =
            tensors.iter().map(|(n, t)| (n.as_str(), t.as_ref())).collect();
        exe.create_state(&refs).map(JsExecutionState::new).map_err(to_js)
    }

    /// `{intermediateBytes, outputBytes, stateBytes, peakBytes}` for these input shapes
    /// (`{inputName: number[]}`, needed only for inputs with dynamic dims).
    #[wasm_bindgen(js_name = memoryPlan, unchecked_return_type = "MemoryPlan")]
    pub fn memory_plan(
        &self,
        #[wasm_bindgen(js_name = inputShapes, unchecked_optional_param_type = "Record<string, Shape>")]
        input_shapes: JsValue,
    ) -> JsResult<JsValue> {
        let mut shapes = HashMap::new();
        for (name, v) in args::entries("memoryPlan: inputShapes", &input_shapes)? {
            let shape = args::shape(&format!("memoryPlan: inputShapes.{name}"), &v)?;
            shapes.insert(name, shape);
        }
        to_value(&self.get()?.memory_plan(&shapes).map_err(to_js)?)
    }

    /// Whether `dispose()` has been called.
    #[wasm_bindgen(getter)]
    pub fn disposed(&self) -> bool {
        self.inner.as_ref().is_none_or(|e| e.is_disposed())
    }

    /// Releases constants and cached specialisations. Idempotent.
    pub fn dispose(&self) {
        if let Some(e) = &self.inner {
            e.dispose();
        }
    }
}

/// The state slots of one executable.
#[wasm_bindgen(js_name = ExecutionState)]
pub struct JsExecutionState {
    id: u64,
    inner: Option<Rc<ExecutionState>>,
}

impl Drop for JsExecutionState {
    /// Runs when the JS handle is collected or `free()`d: the core decides (`forget`).
    fn drop(&mut self) {
        STATES.with(|r| r.remove(self.id));
        if let Some(s) = self.inner.take() {
            if let Ok(s) = Rc::try_unwrap(s) {
                s.forget();
            }
        }
    }
}

impl Drop for JsExecutable {
    /// Runs when the JS handle is collected or `free()`d: the core decides (`forget`).
    fn drop(&mut self) {
        if let Some(e) = self.inner.take() {
            e.forget();
        }
    }
}

impl JsExecutionState {
    fn new(s: ExecutionState) -> JsExecutionState {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let s = Rc::new(s);
        STATES.with(|r| r.insert(id, &s));
        JsExecutionState { id, inner: Some(s) }
    }

    pub(crate) fn placeholder() -> JsExecutionState {
        JsExecutionState { id: 0, inner: None }
    }

    fn get_state(&self) -> JsResult<&ExecutionState> {
        self.inner
            .as_deref()
            .ok_or_else(|| to_js(Error::Disposed("state placeholder".into())))
    }
}

#[wasm_bindgen(js_class = ExecutionState)]
impl JsExecutionState {
    /// A handle id (unique in the page).
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> f64 {
        self.id as f64
    }

    /// A copy of slot `name`, owned by the session.
    pub fn get(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
    ) -> JsResult<super::JsTensor> {
        let name = args::string("get: name", &name)?;
        self.get_state()?
            .get(&name)
            .map(super::JsTensor::new)
            .map_err(to_js)
    }

    /// Bytes of all slots.
    #[wasm_bindgen(getter, js_name = byteLength)]
    pub fn byte_length(&self) -> JsResult<f64> {
        Ok(self.get_state()?.byte_length() as f64)
    }

    /// Whether `dispose()` has been called.
    #[wasm_bindgen(getter)]
    pub fn disposed(&self) -> bool {
        self.inner.as_ref().is_none_or(|s| s.is_disposed())
    }

    /// Releases every slot. Idempotent.
    pub fn dispose(&self) {
        if let Some(s) = &self.inner {
            s.dispose();
        }
    }
}
