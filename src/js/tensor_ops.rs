//! `Tensor`'s op methods, and `Session`'s over lists of tensors (`concat`, `stack`): each comes from
//! the op tables (unary, binary, reductions, kernels with attributes, composites), converts its JS
//! arguments and applies the op through the core.

use wasm_bindgen::prelude::*;

use super::args;
use super::session::JsSession;
use super::tensor::JsTensor;
use super::{to_js, JsResult};
use crate::ops::{BinaryOp, Op, ReduceOp, UnaryOp};

macro_rules! js_unary {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        #[wasm_bindgen(js_class = Tensor)]
        impl JsTensor {$(
            #[doc = concat!("Elementwise ", $doc, ".")]
            #[wasm_bindgen(js_name = $js)]
            pub fn $m(&self) -> JsResult<JsTensor> {
                self.op(Op::Unary(UnaryOp::$v), &[])
            }
        )*}
    };
}
crate::unary_table!(js_unary);

macro_rules! js_binary {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        #[wasm_bindgen(js_class = Tensor)]
        impl JsTensor {$(
            #[doc = concat!("Elementwise ", $doc, " with broadcasting; `other` may be a number (a scalar of this dtype).")]
            #[wasm_bindgen(js_name = $js)]
            pub fn $m(
                &self,
                #[wasm_bindgen(unchecked_param_type = "Tensor | number")] other: JsValue,
            ) -> JsResult<JsTensor> {
                self.binary(BinaryOp::$v, &other)
            }
        )*}
    };
}
crate::binary_table!(js_binary);

macro_rules! js_reduce {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        #[wasm_bindgen(js_class = Tensor)]
        impl JsTensor {$(
            #[doc = concat!($doc, " Over `axes` (a number or array; all when absent).")]
            #[wasm_bindgen(js_name = $js)]
            pub fn $m(
                &self,
                #[wasm_bindgen(unchecked_optional_param_type = "Axes")] axes: JsValue,
                #[wasm_bindgen(js_name = keepDims, unchecked_optional_param_type = "boolean")] keep_dims: JsValue,
            ) -> JsResult<JsTensor> {
                self.reduce(ReduceOp::$v, axes, keep_dims)
            }
        )*}
    };
}
crate::reduce_table!(js_reduce);

macro_rules! js_tensor_table {
    (surfaced: [$($e:tt),* $(,)?], internal: [$($i:tt),* $(,)?] $(,)?) => {
        $(js_tensor_table!(@one $e);)*
    };
    (@one ($m:ident, $v:ident, $js:literal, $doc:literal, $k:path, [$a0:ident $(, $a:ident)*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt $($rest:tt)*)) => {
        #[wasm_bindgen(js_class = Tensor)]
        impl JsTensor {
        #[doc = $doc]
        #[wasm_bindgen(js_name = $js)]
        pub fn $m(
            &self,
            $(#[wasm_bindgen(unchecked_param_type = "Tensor")] $a: JsValue,)*
            $(#[wasm_bindgen(js_name = $fk, unchecked_param_type = $fts)] $f: JsValue,)*
            $(#[wasm_bindgen(js_name = $ok, unchecked_optional_param_type = $ots)] $o: JsValue,)*
        ) -> JsResult<JsTensor> {
            self.live()?; // a disposed tensor is DISPOSED whatever the arguments
            let op = Op::$v {
                $($f: args::attr(concat!($js, ": ", $fk), &$f)?,)*
                $($o: args::attr_or(concat!($js, ": ", $ok), &$o, || <$ot>::from($od))?,)*
            };
            self.op(op, &[$((stringify!($a), &$a)),*])
        }
        }
    };
}
crate::kernel_table!(js_tensor_table);

macro_rules! js_tensor_composites {
    ($($e:tt),* $(,)?) => {
        $(js_tensor_composites!(@one $e);)*
    };
    (@one ($m:ident, $js:literal, $doc:literal, list [$l:ident],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*],
        |$g:ident| $body:expr)) => {
        #[wasm_bindgen(js_class = Session)]
        impl JsSession {
            #[doc = $doc]
            #[wasm_bindgen(js_name = $js)]
            pub fn $m(
                &self,
                #[wasm_bindgen(unchecked_param_type = "Tensor[]")] $l: JsValue,
                $(#[wasm_bindgen(js_name = $fk, unchecked_param_type = $fts)] $f: JsValue,)*
                $(#[wasm_bindgen(js_name = $ok, unchecked_optional_param_type = $ots)] $o: JsValue,)*
            ) -> JsResult<JsTensor> {
                let s = self.open()?;
                let $l = args::tensors(concat!($js, ": ", stringify!($l)), &$l)?;
                let $l: Vec<&crate::Tensor> = $l.iter().map(|t| t.as_ref()).collect();
                $(let $f: $ft = args::attr(concat!($js, ": ", $fk), &$f)?;)*
                $(let $o: $ot = args::attr_or(concat!($js, ": ", $ok), &$o, || <$ot>::from($od))?;)*
                s.$m(&$l, $($f,)* $($o,)*).map(JsTensor::new).map_err(to_js)
            }
        }
    };
    (@one ($m:ident, $js:literal, $doc:literal, [$a0:ident $(, $a:ident)*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*] -> many,
        |$g:ident| $body:expr)) => {
        #[wasm_bindgen(js_class = Tensor)]
        impl JsTensor {
            #[doc = $doc]
            #[wasm_bindgen(js_name = $js, unchecked_return_type = "Tensor[]")]
            pub fn $m(
                &self,
                $(#[wasm_bindgen(unchecked_param_type = "Tensor")] $a: JsValue,)*
                $(#[wasm_bindgen(js_name = $fk, unchecked_param_type = $fts)] $f: JsValue,)*
                $(#[wasm_bindgen(js_name = $ok, unchecked_optional_param_type = $ots)] $o: JsValue,)*
            ) -> JsResult<js_sys::Array> {
                let t = self.live()?; // a disposed tensor is DISPOSED whatever the arguments
                $(let $a = args::tensor(concat!($js, ": ", stringify!($a)), &$a)?;)*
                $(let $f: $ft = args::attr(concat!($js, ": ", $fk), &$f)?;)*
                $(let $o: $ot = args::attr_or(concat!($js, ": ", $ok), &$o, || <$ot>::from($od))?;)*
                let out = t.$m($(&$a,)* $($f,)* $($o,)*).map_err(to_js)?;
                Ok(out.into_iter().map(|x| JsValue::from(JsTensor::new(x))).collect())
            }
        }
    };
    (@one ($m:ident, $js:literal, $doc:literal, [$a0:ident $(, $a:ident)*]
        $(or_number [$($n:ident),*])? $(optional [$($q:ident),*])?,
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*],
        |$g:ident| $body:expr)) => {
        #[wasm_bindgen(js_class = Tensor)]
        impl JsTensor {
            #[doc = $doc]
            #[wasm_bindgen(js_name = $js)]
            pub fn $m(
                &self,
                $(#[wasm_bindgen(unchecked_param_type = "Tensor")] $a: JsValue,)*
                $($(#[wasm_bindgen(unchecked_param_type = "Tensor | number")] $n: JsValue,)*)?
                $($(#[wasm_bindgen(unchecked_optional_param_type = "Tensor")] $q: JsValue,)*)?
                $(#[wasm_bindgen(js_name = $fk, unchecked_param_type = $fts)] $f: JsValue,)*
                $(#[wasm_bindgen(js_name = $ok, unchecked_optional_param_type = $ots)] $o: JsValue,)*
            ) -> JsResult<JsTensor> {
                let t = self.live()?; // a disposed tensor is DISPOSED whatever the arguments
                $(let $a = args::tensor(concat!($js, ": ", stringify!($a)), &$a)?;)*
                $($(let $n = args::tensor_or_number(concat!($js, ": ", stringify!($n)), &$n)?;)*)?
                $($(let $q = args::opt_tensor(concat!($js, ": ", stringify!($q)), &$q)?;)*)?
                $(let $f: $ft = args::attr(concat!($js, ": ", $fk), &$f)?;)*
                $(let $o: $ot = args::attr_or(concat!($js, ": ", $ok), &$o, || <$ot>::from($od))?;)*
                t.$m($(&$a,)* $($($n.map(|x| &**x),)*)? $($($q.as_deref(),)*)? $($f,)* $($o,)*)
                    .map(JsTensor::new)
                    .map_err(to_js)
            }
        }
    };
}
crate::composite_table!(js_tensor_composites);
