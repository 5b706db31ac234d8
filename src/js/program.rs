//! `Program`, `ProgramNode`, `Executable` and `ExecutionState` for JS.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use wasm_bindgen::prelude::*;

use super::registry::Registry;
use super::{
    describe, dtype_arg, entries, ints_arg, numbers_arg, shape_arg, to_js, to_value, JsResult, JsTensor,
};
use crate::error::{invalid_arg, Error};
use crate::executable::Executable;
use crate::ops::{BinaryOp, Op, ReduceOp, UnaryOp};
use crate::program::{NodeId, Program};
use crate::state::ExecutionState;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// Live state handles, for resolving the `state` argument of `run`.
    pub(crate) static STATES: Registry<ExecutionState> = Registry::new();
}

/// A handle to one node of a program under construction.
#[wasm_bindgen(js_name = ProgramNode)]
#[derive(Clone, Copy)]
pub struct JsNode {
    program: u64,
    id: NodeId,
}

#[wasm_bindgen(js_class = ProgramNode)]
impl JsNode {
    /// The node's index in the program (its id in the JSON form).
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> f64 {
        self.id as f64
    }
}

/// A program: a named graph built with node methods or loaded with `Program.fromJSON`.
#[wasm_bindgen(js_name = Program)]
pub struct JsProgram {
    uid: u64,
    inner: Program,
}

impl JsProgram {
    fn node(&self, id: NodeId) -> JsNode {
        JsNode {
            program: self.uid,
            id,
        }
    }

    fn arg(&self, n: &JsNode) -> JsResult<NodeId> {
        if n.program != self.uid {
            return Err(to_js(Error::InvalidProgram(format!(
                "node {} belongs to another program than '{}'",
                n.id,
                self.inner.name()
            ))));
        }
        Ok(n.id)
    }

    fn push_op(&mut self, op: Op, args: &[&JsNode]) -> JsResult<JsNode> {
        let ids = args.iter().map(|a| self.arg(a)).collect::<JsResult<Vec<_>>>()?;
        let id = self.inner.op(op, &ids).map_err(to_js)?;
        Ok(self.node(id))
    }

    /// The Rust program.
    pub fn program(&self) -> &Program {
        &self.inner
    }
}

fn dims_arg(v: &JsValue) -> JsResult<Vec<i64>> {
    ints_arg("shape", v)
}

#[wasm_bindgen(js_class = Program)]
impl JsProgram {
    /// An empty program called `name`.
    #[wasm_bindgen(constructor)]
    pub fn new(name: String) -> JsProgram {
        JsProgram {
            uid: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            inner: Program::new(&name),
        }
    }

    /// Loads the JSON form (an object or its string). Malformed input is `INVALID_PROGRAM`.
    #[wasm_bindgen(js_name = fromJSON)]
    pub fn from_json(
        #[wasm_bindgen(unchecked_param_type = "ProgramJSON | string")] json: JsValue,
    ) -> JsResult<JsProgram> {
        let text = match json.as_string() {
            Some(s) => s,
            None => js_sys::JSON::stringify(&json)
                .ok()
                .and_then(|s| s.as_string())
                .ok_or_else(|| {
                    to_js(Error::InvalidProgram(format!(
                        "not a program: {}",
                        describe(&json)
                    )))
                })?,
        };
        let inner = Program::from_json(&text).map_err(to_js)?;
        Ok(JsProgram {
            uid: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            inner,
        })
    }

    /// The plain, JSON-serialisable form; `Program.fromJSON(p.toJSON())` is exact.
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "ProgramJSON")]
    pub fn to_json(&self) -> JsResult<JsValue> {
        js_sys::JSON::parse(&self.inner.to_json_string())
    }

    /// The program's name.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.inner.name().to_string()
    }

    /// An input; `-1` dims are dynamic.
    pub fn input(
        &mut self,
        name: String,
        #[wasm_bindgen(unchecked_param_type = "DType")] dtype: String,
        #[wasm_bindgen(unchecked_param_type = "InputShape")] shape: JsValue,
    ) -> JsResult<JsNode> {
        let id = self
            .inner
            .input(&name, dtype_arg(Some(dtype))?, &dims_arg(&shape)?)
            .map_err(to_js)?;
        Ok(self.node(id))
    }

    /// A state slot (lives in an `ExecutionState`).
    pub fn state(
        &mut self,
        name: String,
        #[wasm_bindgen(unchecked_param_type = "DType")] dtype: String,
        #[wasm_bindgen(unchecked_param_type = "Shape")] shape: JsValue,
    ) -> JsResult<JsNode> {
        let id = self
            .inner
            .state(&name, dtype_arg(Some(dtype))?, &shape_arg(&shape)?)
            .map_err(to_js)?;
        Ok(self.node(id))
    }

    /// A constant (held by the compiled executable).
    pub fn constant(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "TensorData | number")] data: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Shape")] shape: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DType")] dtype: Option<String>,
    ) -> JsResult<JsNode> {
        let data = if let Some(x) = data.as_f64() {
            vec![x]
        } else if js_sys::Array::is_array(&data) {
            numbers_arg("data", &data)?
        } else if data.is_object() && js_sys::ArrayBuffer::is_view(&data) {
            js_sys::Float64Array::new(&data).to_vec()
        } else {
            return Err(to_js(invalid_arg!(
                "constant data must be numbers, got {}",
                describe(&data)
            )));
        };
        let id = self
            .inner
            .constant(&data, &shape_arg(&shape)?, dtype_arg(dtype)?)
            .map_err(to_js)?;
        Ok(self.node(id))
    }

    /// Names `node` as output `name`.
    pub fn output(&mut self, name: String, node: &JsNode) -> JsResult<()> {
        let id = self.arg(node)?;
        self.inner.output(&name, id).map_err(to_js)
    }

    /// After each run, state `name` takes the value of `node`.
    pub fn assign(&mut self, name: String, node: &JsNode) -> JsResult<()> {
        let id = self.arg(node)?;
        self.inner.assign(&name, id).map_err(to_js)
    }

    /// A matmul node.
    pub fn matmul(&mut self, a: &JsNode, b: &JsNode) -> JsResult<JsNode> {
        self.push_op(Op::MatMul, &[a, b])
    }

    /// A softmax node (axis default -1).
    pub fn softmax(&mut self, a: &JsNode, axis: Option<f64>) -> JsResult<JsNode> {
        let axis = ints_arg("axis", &js_sys::Array::of1(&axis.unwrap_or(-1.0).into()))?[0];
        self.push_op(Op::Softmax { axis }, &[a])
    }

    /// A reshape node.
    pub fn reshape(
        &mut self,
        a: &JsNode,
        #[wasm_bindgen(unchecked_param_type = "number[]")] shape: JsValue,
    ) -> JsResult<JsNode> {
        self.push_op(
            Op::Reshape {
                shape: ints_arg("shape", &shape)?,
            },
            &[a],
        )
    }

    /// A transpose node (default reverses).
    pub fn transpose(
        &mut self,
        a: &JsNode,
        #[wasm_bindgen(unchecked_optional_param_type = "number[]")] perm: JsValue,
    ) -> JsResult<JsNode> {
        let perm = if perm.is_undefined() || perm.is_null() {
            None
        } else {
            Some(ints_arg("perm", &perm)?)
        };
        self.push_op(Op::Transpose { perm }, &[a])
    }

    /// A cast node.
    pub fn cast(
        &mut self,
        a: &JsNode,
        #[wasm_bindgen(unchecked_param_type = "DType")] dtype: String,
    ) -> JsResult<JsNode> {
        self.push_op(Op::Cast(dtype_arg(Some(dtype))?), &[a])
    }

    /// A copy node.
    #[wasm_bindgen(js_name = clone)]
    pub fn clone_node(&mut self, a: &JsNode) -> JsResult<JsNode> {
        self.push_op(Op::Clone, &[a])
    }
}

macro_rules! node_unary {
    ($($name:ident => $op:ident),* $(,)?) => {
        #[wasm_bindgen(js_class = Program)]
        impl JsProgram {$(
            #[doc = concat!("An elementwise `", stringify!($name), "` node.")]
            pub fn $name(&mut self, a: &JsNode) -> JsResult<JsNode> {
                self.push_op(Op::Unary(UnaryOp::$op), &[a])
            }
        )*}
    };
}
node_unary!(neg => Neg, abs => Abs, square => Square, sqrt => Sqrt, exp => Exp, log => Log,
            relu => Relu, sigmoid => Sigmoid, tanh => Tanh);

macro_rules! node_binary {
    ($($name:ident => $op:ident),* $(,)?) => {
        #[wasm_bindgen(js_class = Program)]
        impl JsProgram {$(
            #[doc = concat!("A broadcasting `", stringify!($name), "` node.")]
            pub fn $name(&mut self, a: &JsNode, b: &JsNode) -> JsResult<JsNode> {
                self.push_op(Op::Binary(BinaryOp::$op), &[a, b])
            }
        )*}
    };
}
node_binary!(add => Add, sub => Sub, mul => Mul, div => Div);

macro_rules! node_reduce {
    ($($name:ident => $op:ident),* $(,)?) => {
        #[wasm_bindgen(js_class = Program)]
        impl JsProgram {$(
            #[doc = concat!("A `", stringify!($name), "` node over `axes` (all when absent).")]
            pub fn $name(
                &mut self,
                a: &JsNode,
                #[wasm_bindgen(unchecked_optional_param_type = "Axes")] axes: JsValue,
                #[wasm_bindgen(js_name = keepDims, unchecked_optional_param_type = "boolean")] keep_dims: Option<bool>,
            ) -> JsResult<JsNode> {
                let axes = if axes.is_undefined() || axes.is_null() {
                    vec![]
                } else if let Some(x) = axes.as_f64() {
                    ints_arg("axes", &js_sys::Array::of1(&x.into()))?
                } else {
                    ints_arg("axes", &axes)?
                };
                self.push_op(Op::Reduce { op: ReduceOp::$op, axes, keep_dims: keep_dims.unwrap_or(false) }, &[a])
            }
        )*}
    };
}
node_reduce!(sum => Sum, mean => Mean, max => Max, min => Min);

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
        for (name, v) in entries("run inputs", &inputs)? {
            let t = JsTensor::expect(&format!("input '{name}'"), &v)?;
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
            js_sys::Reflect::set(&obj, &name.into(), &JsTensor::new(t).into())?;
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
        for (name, v) in entries("createState init", &init)? {
            tensors.push((name.clone(), JsTensor::expect(&format!("state '{name}'"), &v)?));
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
        for (name, v) in entries("memoryPlan inputShapes", &input_shapes)? {
            shapes.insert(name, shape_arg(&v)?);
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

thread_local! {
    /// Executables and states whose JS handle was collected without `dispose()`: kept, so their
    /// storage stays accounted (reported as forgotten) unless the session releases on collect.
    static FORGOTTEN: std::cell::RefCell<Vec<Box<dyn std::any::Any>>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Drop for JsExecutionState {
    /// Runs when the JS handle is collected or `free()`d.
    fn drop(&mut self) {
        STATES.with(|r| r.remove(self.id));
        if let Some(s) = self.inner.take() {
            if !s.is_disposed() && Rc::strong_count(&s) == 1 && !s.mark_forgotten() {
                FORGOTTEN.with(|f| f.borrow_mut().push(Box::new(s)));
            }
        }
    }
}

impl Drop for JsExecutable {
    /// Runs when the JS handle is collected or `free()`d.
    fn drop(&mut self) {
        if let Some(e) = self.inner.take() {
            if !e.is_disposed() && !e.mark_forgotten() {
                FORGOTTEN.with(|f| f.borrow_mut().push(Box::new(e)));
            }
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
    pub fn get(&self, name: String) -> JsResult<JsTensor> {
        self.get_state()?.get(&name).map(JsTensor::new).map_err(to_js)
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
