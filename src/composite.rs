//! Composites (`ops/compose.rs`) run eagerly, with their elementwise chains fused: the builder
//! does not run an elementwise primitive when it is called, it adds it to a pending chain (as a
//! program's fusion would: `program/fusion.rs`), and runs the chain as **one** kernel when a value
//! is needed — by a primitive that is not elementwise (a reduction reads the chain as it reduces,
//! never writing it) or by a broadcast (a chain is read only at its own shape). A chain that is
//! the result becomes a pending tensor (`lazy.rs`): computed when needed, and an elementwise op
//! after it (a `clipByValue` after a `batchNorm`) joins its kernel.
//! So `batchNorm` is one pass over `x` after a small one over the statistics (not three), and
//! `clipByValue` one (not two); finite bounds and epsilons are written into the kernel, not
//! uploaded (WGSL has no infinite constants: an infinite bound is a scalar tensor). Each fused step is the primitive's own WGSL function on the same element values, so
//! results are those of the primitives run one by one (within float rounding: a shader compiler
//! may contract a multiply and an add inside one kernel).
//!
//! The composite is admitted before it starts as if every primitive made its value (`Dry`), so it
//! never fails midway at the memory bound; fused, it makes fewer.

use std::marker::PhantomData;

use crate::dtype::DType;
use crate::eager::{apply_now as apply, record_into};
use crate::error::{Error, Result};
use crate::ops::{compose, infer, Dims, Op};
use crate::platform::Shared;
use crate::program::fusion::{append_steps, chainable, Group, Ref, Step, MAX_EAGER_STEPS, MAX_LEAVES};
use crate::tensor::SessionShared;
use crate::tensor::Tensor;

/// A tensor a value reads: the caller's, or one the composite made.
#[derive(Clone)]
pub(crate) enum Src<'a> {
    Arg(&'a Tensor),
    Made(Shared<Tensor>),
}

impl Src<'_> {
    fn tensor(&self) -> &Tensor {
        match self {
            Src::Arg(t) => t,
            Src::Made(t) => t,
        }
    }
}

/// A pending elementwise chain: steps over leaves, not yet run.
pub(crate) struct Chain<'a> {
    steps: Vec<Step>,
    leaves: Vec<Src<'a>>,
    shape: Vec<usize>,
    dtype: DType,
    /// Its tensor, once something needed it.
    ran: std::cell::RefCell<Option<Shared<Tensor>>>,
}

/// A value of an eager composite.
pub(crate) enum Val<'a> {
    Tensor(Src<'a>),
    /// A scalar constant, as its 32-bit word (an epsilon, a bound).
    Scalar(u32, DType),
    Chain(Chain<'a>),
}

/// The eager builder of composites in one session; `'a` is the caller's tensors' lifetime.
pub(crate) struct Eager<'s, 'a>(&'s Shared<SessionShared>, PhantomData<&'a Tensor>);

impl<'s, 'a> Eager<'s, 'a> {
    pub(crate) fn new(s: &'s Shared<SessionShared>) -> Self {
        Eager(s, PhantomData)
    }

    /// The caller's tensor as a value.
    pub(crate) fn arg(&self, t: &'a Tensor) -> Val<'a> {
        Val::Tensor(Src::Arg(t))
    }

    /// The composite's result as a tensor of its own. (A composite makes its result: it cannot
    /// return an argument, and when it returns, no other value holds what it made.)
    pub(crate) fn finish(&mut self, v: Val<'a>) -> Result<Tensor> {
        if let Val::Chain(c) = &v {
            if c.ran.borrow().is_none() {
                return self.defer(c);
            }
        }
        let src = self.tensor_of(&v)?;
        drop(v);
        let held = || Error::InvalidProgram("an eager composite returned a value it does not own".into());
        match src {
            Src::Made(t) => Shared::try_unwrap(t).map_err(|_| held()),
            Src::Arg(_) => Err(held()),
        }
    }

    /// [`Eager::finish`] for each of several results.
    pub(crate) fn finish_all(&mut self, vs: Vec<Val<'a>>) -> Result<Vec<Tensor>> {
        vs.into_iter().map(|v| self.finish(v)).collect()
    }

    /// The tensor holding `v`: a chain runs (once), a scalar is made.
    fn tensor_of(&mut self, v: &Val<'a>) -> Result<Src<'a>> {
        match v {
            Val::Tensor(s) => Ok(s.clone()),
            Val::Scalar(w, d) => {
                let value = d.word_to_f64(*w);
                Ok(Src::Made(Shared::new(crate::tensor::scalar_in(
                    self.0, value, *d,
                )?)))
            }
            Val::Chain(c) => {
                if let Some(t) = c.ran.borrow().as_ref() {
                    return Ok(Src::Made(t.clone()));
                }
                let t = Shared::new(self.run(c, None)?);
                *c.ran.borrow_mut() = Some(t.clone());
                Ok(Src::Made(t))
            }
        }
    }

    /// A chain that is the composite's result, as a pending tensor (`lazy.rs`): computed when
    /// needed, and an op after it (a clip after a batchNorm) joins it. The tensors the composite
    /// made that it reads are held until then.
    fn defer(&mut self, c: &Chain<'_>) -> Result<Tensor> {
        let s = self.0;
        let name = c.steps[c.steps.len() - 1].op.name();
        let out = {
            let _submission = s.submission(); // as every acquisition
            Tensor::allocate(s, c.shape.clone(), c.dtype, name.to_string())?
        };
        let leaves: Vec<&Tensor> = c.leaves.iter().map(Src::tensor).collect();
        let made: Vec<Shared<Tensor>> = c
            .leaves
            .iter()
            .filter_map(|l| match l {
                Src::Made(t) => Some(t.clone()),
                Src::Arg(_) => None,
            })
            .collect();
        crate::tensor::lazy::defer(s, &c.steps, &[], &leaves, &out, &made);
        let shapes: Vec<&[usize]> = leaves.iter().map(|t| t.shape()).collect();
        s.upper.scopes.observe(&s.ledger, name, &shapes, &[&out]);
        Ok(out)
    }

    /// Runs a chain into a new tensor — through `consumer`, a reduction of it, when given.
    fn run(&mut self, c: &Chain<'_>, consumer: Option<(&Op, Vec<usize>, DType)>) -> Result<Tensor> {
        let s = self.0;
        let leaves: Vec<&Tensor> = c.leaves.iter().map(Src::tensor).collect();
        let root = &c.steps[c.steps.len() - 1];
        // one primitive on tensors alone: its own kernel
        let plain: Option<Vec<&Tensor>> = root
            .args
            .iter()
            .map(|r| match r {
                Ref::Leaf(k) => Some(leaves[*k]),
                _ => None,
            })
            .collect();
        if let (1, None, Some(args)) = (c.steps.len(), &consumer, plain) {
            return apply(s, &root.op, &args);
        }
        let (op, shape, dtype) = match &consumer {
            Some((op, shape, dtype)) => ((*op).clone(), shape.clone(), *dtype),
            None => (root.op.clone(), c.shape.clone(), c.dtype),
        };
        let group = Group {
            steps: c.steps.clone(),
            leaves: (0..leaves.len()).collect(),
            producer: None,
            consumer: consumer.map(|(op, _, _)| (op.clone(), c.shape.clone())),
            params: vec![],
        };
        let shapes: Vec<&[usize]> = leaves.iter().map(|t| t.shape()).collect();
        record_into(s, shape, dtype, op.name(), &shapes, 0, |ctx, enc, out| {
            let operands = leaves.iter().map(|t| t.operand()).collect::<Result<Vec<_>>>()?;
            crate::kernels::record_group(ctx, enc, &group, &operands, out)
        })
    }

    /// Adds `op` on `args` to a chain, or `None` when it cannot join one (then it runs).
    fn extend(
        &mut self,
        op: &Op,
        args: &[&Val<'a>],
        shape: &[usize],
        dtype: DType,
    ) -> Result<Option<Chain<'a>>> {
        let mut steps: Vec<Step> = vec![];
        let mut leaves: Vec<Src<'a>> = vec![];
        let mut refs = vec![];
        let leaf = |leaves: &mut Vec<Src<'a>>, src: Src<'a>| {
            let at = leaves
                .iter()
                .position(|l| Shared::ptr_eq(&l.tensor().core, &src.tensor().core));
            Ref::Leaf(at.unwrap_or_else(|| {
                leaves.push(src);
                leaves.len() - 1
            }))
        };
        for a in args {
            refs.push(match a {
                Val::Scalar(w, d) if *d != DType::Float32 || f32::from_bits(*w).is_finite() => Ref::Const(*w),
                Val::Chain(c) if c.ran.borrow().is_none() && c.shape == shape && c.dtype == dtype => {
                    // the chain's steps join this one's, its leaves renumbered
                    Ref::Step(append_steps(&mut steps, &c.steps, |r| match r {
                        Ref::Leaf(k) => leaf(&mut leaves, c.leaves[k].clone()),
                        other => other,
                    }))
                }
                other => {
                    let src = self.tensor_of(other)?;
                    leaf(&mut leaves, src)
                }
            });
        }
        if leaves.is_empty() || leaves.len() > MAX_LEAVES || steps.len() >= MAX_EAGER_STEPS {
            return Ok(None);
        }
        steps.push(Step {
            op: op.clone(),
            args: refs,
        });
        Ok(Some(Chain {
            steps,
            leaves,
            shape: shape.to_vec(),
            dtype,
            ran: Default::default(),
        }))
    }
}

impl<'a> compose::Graph for Eager<'_, 'a> {
    type V = Val<'a>;

    fn op(&mut self, op: Op, args: &[&Val<'a>]) -> Result<Val<'a>> {
        let metas = args.iter().map(|a| self.meta(a)).collect::<Result<Vec<_>>>()?;
        let (dims, dtype) = infer(&op, &metas)?;
        let shape: Vec<usize> = dims.into_iter().map(|d| d.unwrap_or(0)).collect();
        if chainable(&op) && metas.iter().all(|(_, d)| *d == dtype) {
            if let Some(c) = self.extend(&op, args, &shape, dtype)? {
                return Ok(Val::Chain(c));
            }
        }
        // a reduction reads a pending chain of its input's dtype as it reduces
        if let (Op::Reduce { .. }, [Val::Chain(c)]) = (&op, args) {
            if c.ran.borrow().is_none() && c.dtype == dtype {
                let t = self.run(c, Some((&op, shape, dtype)))?;
                return Ok(Val::Tensor(Src::Made(Shared::new(t))));
            }
        }
        let srcs = args
            .iter()
            .map(|a| self.tensor_of(a))
            .collect::<Result<Vec<_>>>()?;
        let tensors: Vec<&Tensor> = srcs.iter().map(Src::tensor).collect();
        Ok(Val::Tensor(Src::Made(Shared::new(apply(self.0, &op, &tensors)?))))
    }

    fn scalar(&mut self, value: f64, dtype: DType) -> Result<Val<'a>> {
        Ok(Val::Scalar(dtype.word_from_f64(value)?, dtype))
    }

    fn constant(&mut self, data: &[f64], shape: &[usize], dtype: DType) -> Result<Val<'a>> {
        let t = crate::tensor::constant_in(self.0, data, shape, dtype, "constant")?;
        Ok(Val::Tensor(Src::Made(Shared::new(t))))
    }

    fn meta(&self, v: &Val<'a>) -> Result<(Dims, DType)> {
        let (shape, dtype) = match v {
            Val::Tensor(s) => {
                let t = s.tensor();
                t.check_live()?;
                (t.shape().to_vec(), t.dtype())
            }
            Val::Scalar(_, d) => (vec![], *d),
            Val::Chain(c) => (c.shape.clone(), c.dtype),
        };
        Ok((shape.into_iter().map(Some).collect(), dtype))
    }
}
