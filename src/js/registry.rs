//! Finding the Rust object behind a JS handle passed inside a plain value (an `inputs` object, a
//! `tidy` result, `keep(t)`): wasm-bindgen only converts direct `&T` parameters. A handle is
//! recognised by its class prototype (recorded once when the classes are patched) and resolved
//! by id through a table of weak references, so a look-alike object never resolves.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use wasm_bindgen::prelude::*;

pub(crate) struct Registry<T> {
    proto: RefCell<JsValue>,
    live: RefCell<HashMap<u64, Weak<T>>>,
}

impl<T> Registry<T> {
    pub(crate) fn new() -> Self {
        Registry {
            proto: RefCell::new(JsValue::UNDEFINED),
            live: RefCell::new(HashMap::new()),
        }
    }

    pub(crate) fn set_proto(&self, proto: JsValue) {
        *self.proto.borrow_mut() = proto;
    }

    pub(crate) fn insert(&self, id: u64, v: &Rc<T>) {
        self.live.borrow_mut().insert(id, Rc::downgrade(v));
    }

    pub(crate) fn remove(&self, id: u64) {
        self.live.borrow_mut().remove(&id);
    }

    /// The object behind `v`, if `v` is a live handle of this class.
    pub(crate) fn resolve(&self, v: &JsValue) -> Option<Rc<T>> {
        if !v.is_object() {
            return None;
        }
        let proto = crate::js::safe::prototype(v);
        if !proto.eq(&*self.proto.borrow()) {
            return None;
        }
        let id = js_sys::Reflect::get(v, &"id".into()).ok()?.as_f64()? as u64;
        self.live.borrow().get(&id)?.upgrade()
    }
}
