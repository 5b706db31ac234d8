//! Eager ops on [`Tensor`]: each infers the result with [`crate::ops::infer`], takes the output
//! from the pool and records the same kernel a program node would ([`crate::kernels::record`]).

use crate::composite::Eager;
pub(crate) use crate::eager::apply;
use crate::eager::deferred;
use crate::error::{Error, Result};
use crate::ops::{compose, infer, BinaryOp, Op, ReduceOp, UnaryOp};
use crate::tensor::Tensor;

/// Runs a composite eagerly: first dry (inference only), admitting every value it will make at
/// once, so it fails before its first kernel; then for real.
macro_rules! run_composite {
    ([$first:expr $(, $x:expr)*], |$g:ident, $v:ident $(, $w:ident)*| $body:expr) => {{
        let first: &Tensor = $first;
        let s = &first.core.session;
        s.check_open()?;
        for t in [first $(, $x)*] {
            t.check_live()?;
            if !t.belongs_to(s) {
                return Err(Error::InvalidArgument(format!(
                    "{t:?} belongs to session '{}', not '{}'",
                    t.core.session.label, s.label
                )));
            }
        }
        let meta = |t: &Tensor| (t.shape().iter().map(|&d| Some(d)).collect::<Vec<_>>(), t.dtype());
        let mut dry = compose::Dry { made: vec![] };
        {
            let $g = &mut dry;
            let $v = &meta(first);
            $(let $w = &meta($x);)*
            $body?;
        }
        let sizes: Vec<u64> = dry.made.iter().map(|b| b.unwrap_or(0)).collect();
        let _admitted = s.admit(&sizes)?;
        let $g = &mut Eager::new(s);
        let $v = &$g.arg(first);
        $(let $w = &$g.arg($x);)*
        let out = $body?;
        $g.finish(out)
    }};
}

impl Tensor {
    /// Batch normalisation with given statistics (TF.js `batchNorm`): parameters broadcast.
    pub fn batch_norm(
        &self,
        mean: &Tensor,
        variance: &Tensor,
        offset: Option<&Tensor>,
        scale: Option<&Tensor>,
        epsilon: f64,
    ) -> Result<Tensor> {
        match (offset, scale) {
            (Some(o), Some(sc)) => run_composite!([self, mean, variance, o, sc], |g, v, m, va, of, scl| {
                compose::batch_norm(g, v, m, va, Some(of), Some(scl), epsilon)
            }),
            (Some(o), None) => run_composite!([self, mean, variance, o], |g, v, m, va, of| {
                compose::batch_norm(g, v, m, va, Some(of), None, epsilon)
            }),
            (None, Some(sc)) => run_composite!([self, mean, variance, sc], |g, v, m, va, scl| {
                compose::batch_norm(g, v, m, va, None, Some(scl), epsilon)
            }),
            (None, None) => run_composite!([self, mean, variance], |g, v, m, va| {
                compose::batch_norm(g, v, m, va, None, None, epsilon)
            }),
        }
    }

    /// `matmul` with either operand's last two axes transposed first.
    pub fn matmul_t(&self, other: &Tensor, transpose_a: bool, transpose_b: bool) -> Result<Tensor> {
        run_composite!([self, other], |g, v, w| compose::matmul_t(
            g,
            v,
            w,
            transpose_a,
            transpose_b
        ))
    }

    /// Elements of `self` where the bool `cond` holds, else of `other`; all three broadcast (TF.js
    /// `where(cond, self, other)`).
    pub fn select(&self, cond: &Tensor, other: &Tensor) -> Result<Tensor> {
        apply(&self.core.session, &Op::Where {}, &[self, cond, other])
    }

    /// `select(cond, value)` with `value` a scalar of this tensor's dtype (a JS number operand), made
    /// for the op and freed after it; checked before anything is made.
    pub fn select_scalar(&self, cond: &Tensor, value: f64) -> Result<Tensor> {
        let s = &self.core.session;
        s.check_open()?;
        self.check_live()?;
        cond.check_live()?;
        cond.check_in(s, "where")?; // before the scalar is made: a rejected call moves no counter
        let dims = |t: &Tensor| t.shape().iter().map(|&d| Some(d)).collect::<Vec<_>>();
        let args = [
            (dims(self), self.dtype()),
            (dims(cond), cond.dtype()),
            (vec![], self.dtype()),
        ];
        let (out, _) = infer(&Op::Where {}, &args)?;
        self.dtype().word_from_f64(value)?;
        let out: Vec<usize> = out.into_iter().map(|d| d.unwrap_or(0)).collect();
        let _admitted = s.admit(&[4, crate::shape::byte_length(&out)?])?;
        let scalar = crate::tensor::scalar_in(s, value, self.dtype())?;
        apply(s, &Op::Where {}, &[self, cond, &scalar])
    }

    /// Consecutive slices along `axis` of these sizes, one of them may be `-1`: what the others
    /// leave (TF.js `split` with an array).
    pub fn split(&self, sizes: &[i64], axis: i64) -> Result<Vec<Tensor>> {
        self.split_by(&compose::SplitSizes::Sizes(sizes.to_vec()), axis)
    }

    /// `parts` equal consecutive slices along `axis` (TF.js `split` with a number).
    pub fn split_parts(&self, parts: i64, axis: i64) -> Result<Vec<Tensor>> {
        self.split_by(&compose::SplitSizes::Parts(parts), axis)
    }

    /// `split` as TF.js's `numOrSizes` says: checked whole before anything is made.
    pub fn split_by(&self, how: &compose::SplitSizes, axis: i64) -> Result<Vec<Tensor>> {
        self.check_live()?;
        let ax = infer::axis("split", axis, self.shape().len())?;
        let sizes = compose::split_sizes(self.shape()[ax], how)?;
        self.split_sizes(&sizes, axis)
    }

    fn split_sizes(&self, sizes: &[usize], axis: i64) -> Result<Vec<Tensor>> {
        let s = &self.core.session;
        s.check_open()?;
        self.check_live()?;
        let meta = (
            self.shape().iter().map(|&d| Some(d)).collect::<Vec<_>>(),
            self.dtype(),
        );
        let mut dry = compose::Dry { made: vec![] };
        compose::split(&mut dry, &meta, sizes, axis)?;
        let _admitted = s.admit(&dry.made.iter().map(|b| b.unwrap_or(0)).collect::<Vec<_>>())?;
        let mut g = Eager::new(s);
        let x = g.arg(self);
        let parts = compose::split(&mut g, &x, sizes, axis)?;
        g.finish_all(parts)
    }
}

/// `concat` / `stack` of eager tensors (one session): inferred dry and admitted first.
pub(crate) fn join(tensors: &[&Tensor], axis: i64, stack: bool) -> Result<Tensor> {
    let first = tensors
        .first()
        .ok_or_else(|| Error::InvalidArgument("concat/stack needs at least one tensor".into()))?;
    let s = &first.core.session;
    s.check_open()?;
    for t in tensors {
        t.check_live()?;
        if !t.belongs_to(s) {
            return Err(Error::InvalidArgument(format!(
                "{t:?} belongs to another session"
            )));
        }
    }
    let metas: Vec<_> = tensors
        .iter()
        .map(|t| (t.shape().iter().map(|&d| Some(d)).collect::<Vec<_>>(), t.dtype()))
        .collect();
    let refs: Vec<&_> = metas.iter().collect();
    let mut dry = compose::Dry { made: vec![] };
    if stack {
        compose::stack(&mut dry, &refs, axis)?;
    } else {
        compose::concat(&mut dry, &refs, axis)?;
    }
    let _admitted = s.admit(&dry.made.iter().map(|b| b.unwrap_or(0)).collect::<Vec<_>>())?;
    let mut g = Eager::new(s);
    let args: Vec<_> = tensors.iter().map(|t| g.arg(t)).collect();
    let refs: Vec<&_> = args.iter().collect();
    let out = if stack {
        compose::stack(&mut g, &refs, axis)?
    } else {
        compose::concat(&mut g, &refs, axis)?
    };
    g.finish(out)
}

macro_rules! eager_unary {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        impl Tensor {$(
            #[doc = concat!("Elementwise ", $doc, " (op table: `", $js, "`).")]
            pub fn $m(&self) -> Result<Tensor> {
                apply(&self.core.session, &Op::Unary(UnaryOp::$v), &[self])
            }
        )*}
    };
}
crate::unary_table!(eager_unary);

macro_rules! eager_binary {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        impl Tensor {$(
            #[doc = concat!("Elementwise ", $doc, " with NumPy broadcasting (op table: `", $js, "`).")]
            pub fn $m(&self, other: &Tensor) -> Result<Tensor> {
                apply(&self.core.session, &Op::Binary(BinaryOp::$v), &[self, other])
            }
        )*}
    };
}
crate::binary_table!(eager_binary);

macro_rules! eager_reduce {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        impl Tensor {$(
            #[doc = concat!($doc, " Over `axes` (empty: all); `keep_dims` keeps them as 1.")]
            pub fn $m(&self, axes: &[i64], keep_dims: bool) -> Result<Tensor> {
                let op = Op::Reduce { op: ReduceOp::$v, axes: axes.to_vec(), keep_dims };
                apply(&self.core.session, &op, &[self])
            }
        )*}
    };
}
crate::reduce_table!(eager_reduce);

impl Tensor {
    /// `self op value`, `value` of this tensor's dtype (TensorFlow.js's number operands): a
    /// parameter word of the kernel when the op is deferred, else a scalar made for the op and freed
    /// after it. Checked before anything is made: a failure changes nothing.
    pub fn binary_scalar(&self, op: BinaryOp, value: f64) -> Result<Tensor> {
        let s = &self.core.session;
        s.check_open()?;
        self.check_live()?;
        let dims = self.shape().iter().map(|&d| Some(d)).collect();
        let (out, _) = infer(&Op::Binary(op), &[(dims, self.dtype()), (vec![], self.dtype())])?;
        let word = self.dtype().word_from_f64(value)?;
        let out: Vec<usize> = out.into_iter().map(|d| d.unwrap_or(0)).collect();
        let op = Op::Binary(op);
        if crate::tensor::lazy::defers(&op, &[self], self.dtype()) {
            // deferred: the number is a parameter word of the pending kernel (no buffer), so
            // `x.mul(2).add(1)` is one kernel, and `x.mul(3)` shares `x.mul(2)`'s pipeline
            let steps = crate::tensor::lazy::scalar_step(&op);
            let shapes = [self.shape(), &[]];
            return deferred(s, &op, &steps, &[word], &[self], &shapes, (out, self.dtype()));
        }
        let _admitted = s.admit(&[4, crate::shape::byte_length(&out)?])?;
        let scalar = crate::tensor::scalar_in(s, value, self.dtype())?; // freed after the op
        apply(s, &op, &[self, &scalar])
    }

    /// Matrix product over the last two dims; leading dims broadcast.
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        apply(
            &self.core.session,
            &Op::MatMul {
                transpose_a: false,
                transpose_b: false,
            },
            &[self, other],
        )
    }

    /// Applies any op (the JS layer's single entry point).
    pub fn apply(&self, op: &Op, others: &[&Tensor]) -> Result<Tensor> {
        let mut args = vec![self];
        args.extend_from_slice(others);
        apply(&self.core.session, op, &args)
    }
}

macro_rules! eager_table {
    (surfaced: [$($e:tt),* $(,)?], internal: [$($i:tt),* $(,)?] $(,)?) => {
        impl Tensor {
            $(eager_table!(@one $e);)*
        }
    };
    (@one ($m:ident, $v:ident, $js:literal, $doc:literal, $k:path, [$a0:ident $(, $a:ident)*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt $($rest:tt)*)) => {
        #[doc = $doc]
        #[doc = concat!("\n\nThe op table's `", $js, "` (`ops/table.rs`); optional attributes (JS defaults):")]
        $(#[doc = concat!("`", stringify!($o), "` = `", stringify!($od), "`")])*
        pub fn $m(&self, $($a: &Tensor,)* $($f: impl Into<$ft>,)* $($o: impl Into<$ot>,)*) -> Result<Tensor> {
            let op = Op::$v { $($f: $f.into(),)* $($o: $o.into(),)* };
            apply(&self.core.session, &op, &[self, $($a),*])
        }
    };
}
crate::kernel_table!(eager_table);

macro_rules! eager_composites {
    ($(($m:ident, $js:literal, $doc:literal, [$a0:ident $(, $a:ident)*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*],
        |$g:ident| $body:expr)),* $(,)?) => {
        impl Tensor {$(
            #[doc = $doc]
            #[doc = concat!("\n\nThe op table's composite `", $js, "` (`ops/table.rs`); JS defaults:")]
            $(#[doc = concat!("`", stringify!($o), "` = `", stringify!($od), "`")])*
            pub fn $m(&self, $($a: &Tensor,)* $($f: impl Into<$ft>,)* $($o: impl Into<$ot>,)*) -> Result<Tensor> {
                $(let $f: $ft = $f.into();)*
                $(let $o: $ot = $o.into();)*
                run_composite!([self $(, $a)*], |$g, $a0 $(, $a)*| $body)
            }
        )*}
    };
}
crate::composite_table!(eager_composites);
