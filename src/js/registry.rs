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

/// What becomes of a handle's object that nobody disposed once nothing holds it
/// (`Tensor::forget`, `Session::forget`: still accounted, counted as forgotten, or released with
/// `releaseOnCollect`).
pub(crate) trait Forget {
    fn forget(self);
}

impl Forget for crate::tensor::Tensor {
    fn forget(self) {
        crate::tensor::Tensor::forget(self)
    }
}

impl Forget for crate::session::Session {
    fn forget(self) {
        crate::session::Session::forget(self)
    }
}

/// A handle's object, held by the handle itself or by work that outlives the call that started it
/// (a readback waiting for the device, `telemetry.watch` across its iterations). Whichever lets go
/// last forgets it: a handle collected meanwhile must not have its object *disposed* when that work
/// ends, as dropping the last plain `Rc` would (a disposed tensor's `forget` leaves it as it is).
pub(crate) struct Held<T: Forget>(Option<Rc<T>>);

impl<T: Forget> Held<T> {
    pub(crate) fn new(t: Rc<T>) -> Self {
        Held(Some(t))
    }
}

impl<T: Forget> Drop for Held<T> {
    fn drop(&mut self) {
        if let Some(Ok(t)) = self.0.take().map(Rc::try_unwrap) {
            t.forget();
        }
    }
}

impl<T: Forget> std::ops::Deref for Held<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.0.as_deref().expect("held until dropped")
    }
}
