//! Optimizers inside a compiled program: `sgd` (with momentum) and `adam` add their slot states and
//! the assignments that update parameters and slots at the end of each run, so a training step is one
//! `run` and everything it keeps lives in the `ExecutionState` (zero-filled slots, counted in its
//! `byteLength`, readable with `get`). The update formulas are TensorFlow.js's.

use super::{Node, NodeId, Program};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::BinaryOp;

/// `p.sgd` options: `w ← w − lr·g`, or with momentum `v ← momentum·v + g; w ← w − lr·v`
/// (TF.js's `momentum` optimizer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sgd {
    /// The step size.
    pub learning_rate: f64,
    /// 0: plain gradient descent (no slot).
    pub momentum: f64,
}

/// `p.adam` options (TF.js defaults): `m ← β₁m + (1−β₁)g; v ← β₂v + (1−β₂)g²;
/// w ← w − lr · (m / (1−β₁ᵗ)) / (√(v / (1−β₂ᵗ)) + ε)`, `t` counting steps from 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adam {
    /// The step size (default 0.001).
    pub learning_rate: f64,
    /// First-moment decay (default 0.9).
    pub beta1: f64,
    /// Second-moment decay (default 0.999).
    pub beta2: f64,
    /// Added to the root of the second moment (default 1e-7).
    pub epsilon: f64,
}

impl Default for Adam {
    fn default() -> Adam {
        Adam {
            learning_rate: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-7,
        }
    }
}

fn bad(what: String) -> Error {
    Error::InvalidProgram(what)
}

impl Program {
    /// The parameters an optimizer updates, checked: float32 states, one gradient each of the same
    /// shape, none assigned already. Returns their names and shapes.
    fn parameters(
        &self,
        who: &str,
        states: &[NodeId],
        grads: &[NodeId],
    ) -> Result<Vec<(String, Vec<usize>)>> {
        if states.len() != grads.len() || states.is_empty() {
            return Err(bad(format!(
                "{who}: give one gradient per state ({} states, {} gradients)",
                states.len(),
                grads.len()
            )));
        }
        let mut out = vec![];
        for (&s, &g) in states.iter().zip(grads) {
            let Some(Node::State { name, dtype, shape }) = self.nodes.get(s) else {
                return Err(bad(format!(
                    "{who}: node {s} is not a state (optimizers update state slots)"
                )));
            };
            if *dtype != DType::Float32 {
                return Err(bad(format!(
                    "{who}: state '{name}' is {dtype}; only float32 states are trained"
                )));
            }
            let Some((gd, gt)) = self.types.get(g) else {
                return Err(bad(format!("{who}: node {g} does not exist")));
            };
            let same = gd.len() == shape.len() && gd.iter().zip(shape).all(|(a, b)| *a == Some(*b));
            if *gt != DType::Float32 || !same {
                return Err(Error::ShapeMismatch(format!(
                    "{who}: the gradient of '{name}' (node {g}, {gt} {gd:?}) must be float32 of the state's shape {shape:?}"
                )));
            }
            if self.assigns.iter().any(|(a, _)| a == name) || out.iter().any(|(n, _)| n == name) {
                return Err(bad(format!(
                    "{who}: state '{name}' is already assigned (a state an optimizer updates cannot be assigned too)"
                )));
            }
            out.push((name.clone(), shape.clone()));
        }
        Ok(out)
    }

    /// Runs `f`; when it fails, the program is as it was (nodes and assignments).
    fn all_or_nothing(&mut self, f: impl FnOnce(&mut Program) -> Result<()>) -> Result<()> {
        let (nodes, assigns) = (self.nodes.len(), self.assigns.len());
        let r = f(self);
        if r.is_err() {
            self.nodes.truncate(nodes);
            self.types.truncate(nodes);
            self.assigns.truncate(assigns);
        }
        r
    }

    /// Stochastic gradient descent: assigns each state its updated value (and, with momentum, a
    /// `<state>/velocity` slot). `INVALID_PROGRAM` when a state is assigned already; a rejected
    /// call changes nothing.
    pub fn sgd(&mut self, states: &[NodeId], grads: &[NodeId], opts: Sgd) -> Result<()> {
        let params = self.parameters("sgd", states, grads)?;
        self.all_or_nothing(|p| {
            for ((name, shape), (&w, &g)) in params.iter().zip(states.iter().zip(grads)) {
                let step = if opts.momentum != 0.0 {
                    let v = p.state(&format!("{name}/velocity"), DType::Float32, shape)?;
                    let mv = p.binary_scalar(BinaryOp::Mul, v, opts.momentum)?;
                    let v2 = p.add(mv, g)?;
                    p.assign(&format!("{name}/velocity"), v2)?;
                    v2
                } else {
                    g
                };
                let d = p.binary_scalar(BinaryOp::Mul, step, opts.learning_rate)?;
                let w2 = p.sub(w, d)?;
                p.assign(name, w2)?;
            }
            Ok(())
        })
    }

    /// Adam: `<state>/m` and `<state>/v` slots per state and one float32 scalar `adam/t` counting
    /// steps; assigns the updated parameters and slots. One `adam` per program.
    pub fn adam(&mut self, states: &[NodeId], grads: &[NodeId], opts: Adam) -> Result<()> {
        let params = self.parameters("adam", states, grads)?;
        if self.states().any(|s| s.1 == "adam/t") {
            return Err(bad(
                "adam: the program already has an adam optimizer ('adam/t')".into()
            ));
        }
        self.all_or_nothing(|p| {
            let t = p.state("adam/t", DType::Float32, &[])?;
            let t2 = p.binary_scalar(BinaryOp::Add, t, 1.0)?;
            p.assign("adam/t", t2)?;
            // 1 / (1 − βᵗ) for the bias corrections
            let correction = |p: &mut Program, beta: f64| -> Result<NodeId> {
                let b = p.constant(&[beta], &[], DType::Float32)?;
                let bt = p.pow(b, t2)?;
                let n = p.neg(bt)?;
                let one_minus = p.binary_scalar(BinaryOp::Add, n, 1.0)?;
                p.reciprocal(one_minus)
            };
            let (c1, c2) = (correction(p, opts.beta1)?, correction(p, opts.beta2)?);
            for ((name, shape), (&w, &g)) in params.iter().zip(states.iter().zip(grads)) {
                let (mn, vn) = (format!("{name}/m"), format!("{name}/v"));
                let m = p.state(&mn, DType::Float32, shape)?;
                let v = p.state(&vn, DType::Float32, shape)?;
                let bm = p.binary_scalar(BinaryOp::Mul, m, opts.beta1)?;
                let gm = p.binary_scalar(BinaryOp::Mul, g, 1.0 - opts.beta1)?;
                let m2 = p.add(bm, gm)?;
                let bv = p.binary_scalar(BinaryOp::Mul, v, opts.beta2)?;
                let gg = p.square(g)?;
                let gv = p.binary_scalar(BinaryOp::Mul, gg, 1.0 - opts.beta2)?;
                let v2 = p.add(bv, gv)?;
                let mh = p.mul(m2, c1)?;
                let vh = p.mul(v2, c2)?;
                let root = p.sqrt(vh)?;
                let den = p.binary_scalar(BinaryOp::Add, root, opts.epsilon)?;
                let q = p.div(mh, den)?;
                let d = p.binary_scalar(BinaryOp::Mul, q, opts.learning_rate)?;
                let w2 = p.sub(w, d)?;
                p.assign(&mn, m2)?;
                p.assign(&vn, v2)?;
                p.assign(name, w2)?;
            }
            Ok(())
        })
    }
}
