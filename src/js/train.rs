//! Training from JS: `p.grad(y, xs)`, `p.sgd(states, grads, options)`, `p.adam(states, grads,
//! options)` (API.md "Gradients and optimizers"). Conversion only; the rules are in
//! `program/grad.rs` and `program/optim.rs`.

use wasm_bindgen::prelude::*;

use super::args::Options;
use super::program::JsProgram;
use super::{to_js, JsResult};
use crate::program::{Adam, Sgd};

#[wasm_bindgen(js_class = Program)]
impl JsProgram {
    /// Reverse-mode gradients of the scalar float32 node `y` with respect to each of `xs`, as
    /// nodes of this program (same shapes). `INVALID_PROGRAM` for a non-scalar `y` or a gradient
    /// through an integer value; a rejected call adds no node.
    #[wasm_bindgen(unchecked_return_type = "ProgramNode[]")]
    pub fn grad(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode")] y: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode[]")] xs: JsValue,
    ) -> JsResult<js_sys::Array> {
        let y = self.arg("grad: y", &y)?;
        let xs = self.nodes("grad: xs", &xs)?;
        let ids = self.inner_mut().grad(y, &xs).map_err(to_js)?;
        Ok(ids.into_iter().map(|id| JsValue::from(self.node(id))).collect())
    }

    /// Stochastic gradient descent: `w ← w − lr·g` (with `momentum`, a `<state>/velocity` slot).
    pub fn sgd(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode[]")] states: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode[]")] grads: JsValue,
        #[wasm_bindgen(unchecked_param_type = "{ learningRate: number; momentum?: number }")]
        options: JsValue,
    ) -> JsResult<()> {
        let (states, grads) = (
            self.nodes("sgd: states", &states)?,
            self.nodes("sgd: grads", &grads)?,
        );
        let o = Options::parse("sgd: options", &options, &["learningRate", "momentum"])?;
        let opts = Sgd {
            learning_rate: o.number("sgd", "learningRate", None)?,
            momentum: o.number("sgd", "momentum", Some(0.0))?,
        };
        self.inner_mut().sgd(&states, &grads, opts).map_err(to_js)
    }

    /// Adam with `<state>/m`, `<state>/v` slots and a step counter `adam/t` (TF.js's formulas and
    /// defaults: learningRate 0.001, beta1 0.9, beta2 0.999, epsilon 1e-7).
    pub fn adam(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode[]")] states: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode[]")] grads: JsValue,
        #[wasm_bindgen(
            unchecked_optional_param_type = "{ learningRate?: number; beta1?: number; beta2?: number; epsilon?: number }"
        )]
        options: JsValue,
    ) -> JsResult<()> {
        let (states, grads) = (
            self.nodes("adam: states", &states)?,
            self.nodes("adam: grads", &grads)?,
        );
        let o = Options::parse(
            "adam: options",
            &options,
            &["learningRate", "beta1", "beta2", "epsilon"],
        )?;
        let d = Adam::default();
        let opts = Adam {
            learning_rate: o.number("adam", "learningRate", Some(d.learning_rate))?,
            beta1: o.number("adam", "beta1", Some(d.beta1))?,
            beta2: o.number("adam", "beta2", Some(d.beta2))?,
            epsilon: o.number("adam", "epsilon", Some(d.epsilon))?,
        };
        self.inner_mut().adam(&states, &grads, opts).map_err(to_js)
    }
}
