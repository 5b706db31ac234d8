//! Eager ops on [`Tensor`]: each infers the result with [`crate::ops::infer`], takes the output
//! from the pool and records the same kernel a program node would ([`crate::kernels::record`]).

use crate::composite::{Eager, Val};
pub(crate) use crate::eager::apply;
use crate::eager::deferred;
use crate::error::{Error, Result};
use crate::ops::{compose, infer, BinaryOp, Op, OrNumber, ReduceOp, UnaryOp};
use crate::platform::Shared;
use crate::tensor::{SessionShared, Tensor};

/// Runs a composite eagerly in session `s`: checks every tensor its arguments hold (live, of `s`),
/// runs it dry (inference only, [`EagerArg::dry`]) admitting every value it will make at once, so it
/// fails before its first kernel; then for real ([`EagerArg::real`]), finishing its one result or,
/// with `many`, each of several.
macro_rules! run_composite {
    ([$($res:ident)?], $s:expr, |$g:ident, $($x:ident),+| $body:expr) => {{
        let s: &Shared<SessionShared> = $s;
        s.check_open()?;
        let mut held: Vec<&Tensor> = vec![];
        $(EagerArg::tensors(&$x, &mut held);)+
        for t in held {
            t.check_live()?;
            if !t.belongs_to(s) {
                return Err(Error::InvalidArgument(format!(
                    "{t:?} belongs to session '{}', not '{}'",
                    t.core.session.label, s.label
                )));
            }
        }
        let mut dry = compose::Dry { made: vec![] };
        {
            let $g = &mut dry;
            $(let $x = &EagerArg::dry(&$x);)+
            $body?;
        }
        let sizes: Vec<u64> = dry.made.iter().map(|b| b.unwrap_or(0)).collect();
        let _admitted = s.admit(&sizes)?;
        let $g = &mut Eager::new(s);
        $(let $x = &EagerArg::real(&$x, $g);)+
        let out = $body?;
        run_composite!(@finish [$($res)?], $g, out)
    }};
    (@finish [], $g:ident, $out:ident) => {
        $g.finish($out)
    };
    (@finish [many], $g:ident, $out:ident) => {
        $g.finish_all($out)
    };
}

/// A composite's argument as an eager call takes it — a tensor, an optional one, a tensor or a
/// number, a list of tensors: the tensors to check, its shapes for the dry run, its values.
pub(crate) trait EagerArg<'a> {
    /// As the dry run sees it.
    type Dry;
    /// As the real run sees it.
    type Real;
    /// Adds the tensors it holds to `out`.
    fn tensors(&self, out: &mut Vec<&'a Tensor>);
    /// Its shapes and dtypes.
    fn dry(&self) -> Self::Dry;
    /// Its values in `g`.
    fn real(&self, g: &Eager<'_, 'a>) -> Self::Real;
}

type Meta = (crate::ops::Dims, crate::dtype::DType);

fn meta(t: &Tensor) -> Meta {
    (t.shape().iter().map(|&d| Some(d)).collect(), t.dtype())
}

impl<'a> EagerArg<'a> for &'a Tensor {
    type Dry = Meta;
    type Real = Val<'a>;
    fn tensors(&self, out: &mut Vec<&'a Tensor>) {
        out.push(self);
    }
    fn dry(&self) -> Meta {
        meta(self)
    }
    fn real(&self, g: &Eager<'_, 'a>) -> Val<'a> {
        g.arg(self)
    }
}

impl<'a> EagerArg<'a> for Option<&'a Tensor> {
    type Dry = Option<Meta>;
    type Real = Option<Val<'a>>;
    fn tensors(&self, out: &mut Vec<&'a Tensor>) {
        out.extend(*self);
    }
    fn dry(&self) -> Option<Meta> {
        self.map(meta)
    }
    fn real(&self, g: &Eager<'_, 'a>) -> Option<Val<'a>> {
        self.map(|t| g.arg(t))
    }
}

impl<'a> EagerArg<'a> for OrNumber<&'a Tensor> {
    type Dry = OrNumber<Meta>;
    type Real = OrNumber<Val<'a>>;
    fn tensors(&self, out: &mut Vec<&'a Tensor>) {
        if let OrNumber::Value(t) = self {
            out.push(t);
        }
    }
    fn dry(&self) -> OrNumber<Meta> {
        self.map(|t| meta(t))
    }
    fn real(&self, g: &Eager<'_, 'a>) -> OrNumber<Val<'a>> {
        self.map(|t| g.arg(t))
    }
}

impl<'a> EagerArg<'a> for &'a [&'a Tensor] {
    type Dry = Vec<Meta>;
    type Real = Vec<Val<'a>>;
    fn tensors(&self, out: &mut Vec<&'a Tensor>) {
        out.extend(self.iter().copied());
    }
    fn dry(&self) -> Vec<Meta> {
        self.iter().map(|t| meta(t)).collect()
    }
    fn real(&self, g: &Eager<'_, 'a>) -> Vec<Val<'a>> {
        self.iter().map(|t| g.arg(t)).collect()
    }
}

impl<'a> From<&'a Tensor> for OrNumber<&'a Tensor> {
    fn from(t: &'a Tensor) -> OrNumber<&'a Tensor> {
        OrNumber::Value(t)
    }
}

/// Rust's short forms of op-table methods (the table's have every argument).
impl Tensor {
    /// Matrix product over the last two dims; leading dims broadcast (`matmul_t` with neither
    /// operand transposed).
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        self.matmul_t(other, false, false)
    }

    /// `select(cond, value)` with `value` a number: a scalar of this tensor's dtype, made for the op.
    pub fn select_scalar(&self, cond: &Tensor, value: f64) -> Result<Tensor> {
        self.select(cond, value)
    }

    /// Consecutive slices along `axis` of these sizes, one of them may be `-1`: what the others
    /// leave (TF.js `split` with an array).
    pub fn split(&self, sizes: &[i64], axis: i64) -> Result<Vec<Tensor>> {
        self.split_by(sizes, axis)
    }

    /// `parts` equal consecutive slices along `axis` (TF.js `split` with a number).
    pub fn split_parts(&self, parts: i64, axis: i64) -> Result<Vec<Tensor>> {
        self.split_by(parts, axis)
    }
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
    ($($e:tt),* $(,)?) => {
        $(eager_composites!(@one $e);)*
    };
    (@one ($m:ident, $js:literal, $doc:literal, list [$l:ident],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*],
        |$g:ident| $body:expr)) => {
        impl crate::Session {
            #[doc = $doc]
            #[doc = concat!("\n\nThe op table's composite `", $js, "` (`ops/table.rs`); JS defaults:")]
            $(#[doc = concat!("`", stringify!($o), "` = `", stringify!($od), "`")])*
            pub fn $m(&self, $l: &[&Tensor], $($f: impl Into<$ft>,)* $($o: impl Into<$ot>,)*) -> Result<Tensor> {
                $(let $f: $ft = $f.into();)*
                $(let $o: $ot = $o.into();)*
                run_composite!([], self.shared(), |$g, $l| $body)
            }
        }
    };
    (@one ($m:ident, $js:literal, $doc:literal, [$a0:ident $(, $a:ident)*]
        $(or_number [$($n:ident),*])? $(optional [$($q:ident),*])?,
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*] $(-> $res:ident)?,
        |$g:ident| $body:expr)) => {
        impl Tensor {
            #[doc = $doc]
            #[doc = concat!("\n\nThe op table's composite `", $js, "` (`ops/table.rs`); JS defaults:")]
            $(#[doc = concat!("`", stringify!($o), "` = `", stringify!($od), "`")])*
            // one lifetime for every tensor argument: an `or_number` one's `impl Into` needs a name
            #[allow(clippy::needless_lifetimes)]
            pub fn $m<'t>(
                &'t self,
                $($a: &'t Tensor,)*
                $($($n: impl Into<OrNumber<&'t Tensor>>,)*)?
                $($($q: Option<&'t Tensor>,)*)?
                $($f: impl Into<$ft>,)*
                $($o: impl Into<$ot>,)*
            ) -> Result<eager_composites!(@out $($res)?)> {
                let $a0: &Tensor = self;
                $($(let $n: OrNumber<&Tensor> = $n.into();)*)?
                $(let $f: $ft = $f.into();)*
                $(let $o: $ot = $o.into();)*
                run_composite!([$($res)?], &self.core.session,
                    |$g, $a0 $(, $a)* $($(, $n)*)? $($(, $q)*)?| $body)
            }
        }
    };
    (@out) => { Tensor };
    (@out many) => { Vec<Tensor> };
}
crate::composite_table!(eager_composites);
