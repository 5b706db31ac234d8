//! `Program`, `ProgramNode`, `Executable` and `ExecutionState` for JS.

use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use wasm_bindgen::prelude::*;

use std::cell::RefCell;

use super::args::{self, describe};
use super::registry::Registry;
use super::{to_js, JsResult};
use crate::error::{invalid_arg, Error};
use crate::executable::state::ExecutionState;
use crate::ops::{BinaryOp, Op};
use crate::program::{NodeId, Program};

pub(super) static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// Live state handles, for resolving the `state` argument of `run`.
    pub(crate) static STATES: Registry<ExecutionState> = Registry::new();
    /// Live program handles, for resolving `session.compile(program)`.
    pub(crate) static PROGRAMS: Registry<RefCell<Program>> = Registry::new();
    /// The `ProgramNode` prototype, recognising node handles passed as plain values.
    pub(crate) static NODE_PROTO: RefCell<JsValue> = const { RefCell::new(JsValue::UNDEFINED) };
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

    /// The id of the program handle the node belongs to (used to resolve node arguments).
    #[wasm_bindgen(getter, js_name = programId, skip_typescript)]
    pub fn program_id(&self) -> f64 {
        self.program as f64
    }
}

impl JsNode {
    pub(crate) fn placeholder() -> JsNode {
        JsNode { program: 0, id: 0 }
    }

    /// The node behind a JS value that is a `ProgramNode` handle, read through its getters (a
    /// look-alike object has another prototype; a freed handle's getters throw).
    fn resolve(what: &str, v: &JsValue) -> JsResult<JsNode> {
        let bad = || {
            to_js(invalid_arg!(
                "{what} must be a ProgramNode of this program, got {}",
                describe(v)
            ))
        };
        if !v.is_object() {
            return Err(bad());
        }
        let proto = super::safe::prototype(v);
        if !NODE_PROTO.with(|p| proto == *p.borrow()) {
            return Err(bad());
        }
        let get = |k: &str| js_sys::Reflect::get(v, &k.into()).ok().and_then(|x| x.as_f64());
        match (get("programId"), get("id")) {
            (Some(program), Some(id)) => Ok(JsNode {
                program: program as u64,
                id: id as NodeId,
            }),
            _ => Err(bad()),
        }
    }
}

/// A program: a named graph built with node methods or loaded with `Program.fromJSON`.
#[wasm_bindgen(js_name = Program)]
pub struct JsProgram {
    uid: u64,
    inner: Rc<RefCell<Program>>,
}

impl Drop for JsProgram {
    fn drop(&mut self) {
        PROGRAMS.with(|r| r.remove(self.uid));
    }
}

impl JsProgram {
    pub(super) fn wrap(inner: Program) -> JsProgram {
        let uid = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let inner = Rc::new(RefCell::new(inner));
        PROGRAMS.with(|r| r.insert(uid, &inner));
        JsProgram { uid, inner }
    }

    /// The program behind a JS value that is a `Program` handle, or `INVALID_ARGUMENT`.
    pub(crate) fn resolve(what: &str, v: &JsValue) -> JsResult<Rc<RefCell<Program>>> {
        PROGRAMS
            .with(|r| r.resolve(v))
            .ok_or_else(|| to_js(invalid_arg!("{what} must be a Program, got {}", describe(v))))
    }

    pub(crate) fn placeholder() -> JsProgram {
        JsProgram {
            uid: 0,
            inner: Rc::new(RefCell::new(Program::new(""))),
        }
    }

    fn name_of(&self) -> String {
        self.inner.borrow().name().to_string()
    }
    pub(super) fn node(&self, id: NodeId) -> JsNode {
        JsNode {
            program: self.uid,
            id,
        }
    }

    pub(super) fn arg(&self, what: &str, v: &JsValue) -> JsResult<NodeId> {
        let n = JsNode::resolve(what, v)?;
        if n.program != self.uid {
            return Err(to_js(Error::InvalidProgram(format!(
                "{what}: node {} belongs to another program than '{}'",
                n.id,
                self.name_of()
            ))));
        }
        Ok(n.id)
    }

    pub(super) fn push_binary(&self, op: BinaryOp, a: &JsValue, b: &JsValue) -> JsResult<JsNode> {
        let Some(v) = b.as_f64() else {
            return self.push_op(Op::Binary(op), &[("a", a), ("b", b)]);
        };
        let a = self.arg(&format!("{}: argument 'a'", op.name()), a)?;
        let id = self.inner.borrow_mut().binary_scalar(op, a, v).map_err(to_js)?;
        Ok(self.node(id))
    }

    pub(super) fn push_op(&self, op: Op, args: &[(&str, &JsValue)]) -> JsResult<JsNode> {
        let ids = args
            .iter()
            .map(|(what, v)| self.arg(&format!("{}: argument '{what}'", op.name()), v))
            .collect::<JsResult<Vec<_>>>()?;
        let id = self.inner.borrow_mut().op(op, &ids).map_err(to_js)?;
        Ok(self.node(id))
    }
}

#[wasm_bindgen(js_class = Program)]
impl JsProgram {
    /// An empty program called `name`.
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(unchecked_param_type = "string")] name: JsValue) -> JsResult<JsProgram> {
        super::install_dispose_symbols();
        let program = JsProgram::wrap(Program::new(&args::string("new Program: name", &name)?));
        super::glue::affon_constructing(); // the pointer the glue assigns next is this handle's
        Ok(program)
    }

    /// Loads the JSON form (an object or its string). Malformed input is `INVALID_PROGRAM`; a
    /// value of another kind (`null`, a number, a function) `INVALID_ARGUMENT`.
    #[wasm_bindgen(js_name = fromJSON)]
    pub fn from_json(
        #[wasm_bindgen(unchecked_param_type = "ProgramJSON | string")] json: JsValue,
    ) -> JsResult<JsProgram> {
        super::install_dispose_symbols();
        if !json.is_object() && !json.is_string() {
            return Err(to_js(crate::error::invalid_arg!(
                "Program.fromJSON needs a program's JSON form (an object or its string), got {}",
                describe(&json)
            )));
        }
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
        Ok(JsProgram::wrap(inner))
    }

    /// The plain, JSON-serialisable form; `Program.fromJSON(p.toJSON())` is exact.
    #[wasm_bindgen(js_name = toJSON, unchecked_return_type = "ProgramJSON")]
    pub fn to_json(&self) -> JsResult<JsValue> {
        // the borrow ends before JSON.parse (the page's, if it replaced it) can call back in
        let text = self.inner.borrow().to_json_string();
        js_sys::JSON::parse(&text)
    }

    /// The program's name.
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        self.name_of()
    }

    /// A handle id (unique in the page).
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> f64 {
        self.uid as f64
    }

    /// An input; `-1` dims are dynamic.
    pub fn input(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "DType")] dtype: JsValue,
        #[wasm_bindgen(unchecked_param_type = "InputShape")] shape: JsValue,
    ) -> JsResult<JsNode> {
        let name = args::string("input: name", &name)?;
        let dtype = args::dtype("input: dtype", &dtype)?;
        let shape = args::ints("input: shape", &shape)?;
        let id = self
            .inner
            .borrow_mut()
            .input(&name, dtype, &shape)
            .map_err(to_js)?;
        Ok(self.node(id))
    }

    /// A state slot (lives in an `ExecutionState`).
    pub fn state(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "DType")] dtype: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Shape")] shape: JsValue,
    ) -> JsResult<JsNode> {
        let name = args::string("state: name", &name)?;
        let dtype = args::dtype("state: dtype", &dtype)?;
        let shape = args::shape("state: shape", &shape)?;
        let id = self
            .inner
            .borrow_mut()
            .state(&name, dtype, &shape)
            .map_err(to_js)?;
        Ok(self.node(id))
    }

    /// A constant (held by the compiled executable).
    pub fn constant(
        &self,
        #[wasm_bindgen(unchecked_param_type = "TensorData | number")] data: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Shape")] shape: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DType")] dtype: JsValue,
    ) -> JsResult<JsNode> {
        let shape = args::shape("constant: shape", &shape)?;
        let dtype = args::dtype_or_f32("constant: dtype", &dtype)?;
        let n = crate::shape::element_count(&shape).map_err(to_js)?;
        let data = if let Some(x) = data.as_f64() {
            vec![x]
        } else {
            let d = args::Data::of("constant: data", &data, crate::DType::Bool)?;
            if d.len() != n {
                return Err(to_js(Error::ShapeMismatch(format!(
                    "constant: data has {} elements but shape {shape:?} needs {n}",
                    d.len()
                ))));
            }
            d.values("constant: data")?
        };
        let id = self
            .inner
            .borrow_mut()
            .constant(&data, &shape, dtype)
            .map_err(to_js)?;
        Ok(self.node(id))
    }

    /// Names `node` as output `name`.
    pub fn output(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode")] node: JsValue,
    ) -> JsResult<()> {
        let name = args::string("output: name", &name)?;
        let id = self.arg("output: node", &node)?;
        self.inner.borrow_mut().output(&name, id).map_err(to_js)
    }

    /// After each run, state `name` takes the value of `node` (as of the start of the run).
    pub fn assign(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode")] node: JsValue,
    ) -> JsResult<()> {
        let name = args::string("assign: name", &name)?;
        let id = self.arg("assign: node", &node)?;
        self.inner.borrow_mut().assign(&name, id).map_err(to_js)
    }
}

impl JsProgram {
    pub(super) fn inner_mut(&self) -> std::cell::RefMut<'_, Program> {
        self.inner.borrow_mut()
    }

    /// A node of this program, or a number (a constant of the dtype the op gives it).
    pub(super) fn arg_or_number(&self, what: &str, v: &JsValue) -> JsResult<crate::ops::OrNumber<NodeId>> {
        match v.as_f64() {
            Some(x) => Ok(crate::ops::OrNumber::Number(x)),
            None => self.arg(what, v).map(crate::ops::OrNumber::Value),
        }
    }

    /// A node of this program, `None` when absent.
    pub(super) fn opt_arg(&self, what: &str, v: &JsValue) -> JsResult<Option<NodeId>> {
        match v.is_undefined() || v.is_null() {
            true => Ok(None),
            false => self.arg(what, v).map(Some),
        }
    }

    pub(super) fn nodes(&self, what: &str, v: &JsValue) -> JsResult<Vec<NodeId>> {
        if !super::safe::is_array(v) {
            return Err(to_js(invalid_arg!(
                "{what}: nodes must be an array of ProgramNodes, got {}",
                describe(v)
            )));
        }
        super::safe::array(what, v, super::safe::MAX_LIST)?
            .iter()
            .enumerate()
            .map(|(i, n)| self.arg(&format!("{what}: nodes[{i}]"), &n))
            .collect()
    }

    pub(super) fn composite(
        &self,
        f: impl FnOnce(&mut Program) -> crate::Result<NodeId>,
    ) -> JsResult<JsNode> {
        let id = f(&mut self.inner.borrow_mut()).map_err(to_js)?;
        Ok(self.node(id))
    }
}
