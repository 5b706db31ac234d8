//! The `Program` builder's node methods, all from the op tables (unary, binary, reductions, kernels
//! with attributes, composites): each converts its JS arguments and records the node (or nodes)
//! through `program.rs`.

use wasm_bindgen::prelude::*;

use super::args;
use super::program::{JsNode, JsProgram};
use super::{to_js, JsResult};
use crate::ops::{BinaryOp, Op, ReduceOp, UnaryOp};

macro_rules! js_node_unary {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        #[wasm_bindgen(js_class = Program)]
        impl JsProgram {$(
            #[doc = concat!("An elementwise ", $doc, " node.")]
            #[wasm_bindgen(js_name = $js)]
            pub fn $m(&self, #[wasm_bindgen(unchecked_param_type = "ProgramNode")] a: JsValue) -> JsResult<JsNode> {
                self.push_op(Op::Unary(UnaryOp::$v), &[("a", &a)])
            }
        )*}
    };
}
crate::unary_table!(js_node_unary);

macro_rules! js_node_binary {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        #[wasm_bindgen(js_class = Program)]
        impl JsProgram {$(
            #[doc = concat!("A broadcasting ", $doc, " node; `b` may be a number (a constant of `a`'s dtype).")]
            #[wasm_bindgen(js_name = $js)]
            pub fn $m(
                &self,
                #[wasm_bindgen(unchecked_param_type = "ProgramNode")] a: JsValue,
                #[wasm_bindgen(unchecked_param_type = "ProgramNode | number")] b: JsValue,
            ) -> JsResult<JsNode> {
                self.push_binary(BinaryOp::$v, &a, &b)
            }
        )*}
    };
}
crate::binary_table!(js_node_binary);

macro_rules! node_reduce {
    ($(($m:ident, $v:ident, $js:literal, $rule:ident, $doc:literal, $body:literal, $grad:tt $($rest:tt)*)),* $(,)?) => {
        #[wasm_bindgen(js_class = Program)]
        impl JsProgram {$(
            #[doc = concat!("A `", $js, "` node over `axes` (all when absent): ", $doc)]
            #[wasm_bindgen(js_name = $js)]
            pub fn $m(
                &self,
                #[wasm_bindgen(unchecked_param_type = "ProgramNode")] a: JsValue,
                #[wasm_bindgen(unchecked_optional_param_type = "Axes")] axes: JsValue,
                #[wasm_bindgen(js_name = keepDims, unchecked_optional_param_type = "boolean")] keep_dims: JsValue,
            ) -> JsResult<JsNode> {
                let axes = args::axes(concat!($js, ": axes"), &axes)?;
                let keep_dims = args::bool_or(concat!($js, ": keepDims"), &keep_dims, false)?;
                self.push_op(Op::Reduce { op: ReduceOp::$v, axes, keep_dims }, &[("a", &a)])
            }
        )*}
    };
}
crate::reduce_table!(node_reduce);

macro_rules! js_node_table {
    (surfaced: [$($e:tt),* $(,)?], internal: [$($i:tt),* $(,)?] $(,)?) => {
        $(js_node_table!(@one $e);)*
    };
    (@one ($m:ident, $v:ident, $js:literal, $doc:literal, $k:path, [$($a:ident),*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt $($rest:tt)*)) => {
        #[wasm_bindgen(js_class = Program)]
        impl JsProgram {
        #[doc = concat!("A `", $js, "` node: ", $doc)]
        #[wasm_bindgen(js_name = $js)]
        pub fn $m(
            &self,
            $(#[wasm_bindgen(unchecked_param_type = "ProgramNode")] $a: JsValue,)*
            $(#[wasm_bindgen(js_name = $fk, unchecked_param_type = $fts)] $f: JsValue,)*
            $(#[wasm_bindgen(js_name = $ok, unchecked_optional_param_type = $ots)] $o: JsValue,)*
        ) -> JsResult<JsNode> {
            let op = Op::$v {
                $($f: args::attr(concat!($js, ": ", $fk), &$f)?,)*
                $($o: args::attr_or(concat!($js, ": ", $ok), &$o, || <$ot>::from($od))?,)*
            };
            self.push_op(op, &[$((stringify!($a), &$a)),*])
        }
        }
    };
}
crate::kernel_table!(js_node_table);

macro_rules! js_node_composites {
    ($($e:tt),* $(,)?) => {
        $(js_node_composites!(@one $e);)*
    };
    (@one ($m:ident, $js:literal, $doc:literal, list [$l:ident],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*],
        |$g:ident| $body:expr)) => {
        #[wasm_bindgen(js_class = Program)]
        impl JsProgram {
            #[doc = concat!("A `", $js, "` composite: ", $doc)]
            #[wasm_bindgen(js_name = $js)]
            pub fn $m(
                &self,
                #[wasm_bindgen(unchecked_param_type = "ProgramNode[]")] $l: JsValue,
                $(#[wasm_bindgen(js_name = $fk, unchecked_param_type = $fts)] $f: JsValue,)*
                $(#[wasm_bindgen(js_name = $ok, unchecked_optional_param_type = $ots)] $o: JsValue,)*
            ) -> JsResult<JsNode> {
                let $l = self.nodes($js, &$l)?;
                $(let $f: $ft = args::attr(concat!($js, ": ", $fk), &$f)?;)*
                $(let $o: $ot = args::attr_or(concat!($js, ": ", $ok), &$o, || <$ot>::from($od))?;)*
                self.composite(|p| p.$m(&$l, $($f,)* $($o,)*))
            }
        }
    };
    (@one ($m:ident, $js:literal, $doc:literal, [$a0:ident $(, $a:ident)*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*] -> many,
        |$g:ident| $body:expr)) => {
        #[wasm_bindgen(js_class = Program)]
        impl JsProgram {
            #[doc = concat!("`", $js, "` composite nodes: ", $doc)]
            #[wasm_bindgen(js_name = $js, unchecked_return_type = "ProgramNode[]")]
            pub fn $m(
                &self,
                #[wasm_bindgen(unchecked_param_type = "ProgramNode")] $a0: JsValue,
                $(#[wasm_bindgen(unchecked_param_type = "ProgramNode")] $a: JsValue,)*
                $(#[wasm_bindgen(js_name = $fk, unchecked_param_type = $fts)] $f: JsValue,)*
                $(#[wasm_bindgen(js_name = $ok, unchecked_optional_param_type = $ots)] $o: JsValue,)*
            ) -> JsResult<js_sys::Array> {
                let $a0 = self.arg(concat!($js, ": argument '", stringify!($a0), "'"), &$a0)?;
                $(let $a = self.arg(concat!($js, ": ", stringify!($a)), &$a)?;)*
                $(let $f: $ft = args::attr(concat!($js, ": ", $fk), &$f)?;)*
                $(let $o: $ot = args::attr_or(concat!($js, ": ", $ok), &$o, || <$ot>::from($od))?;)*
                let ids = self.inner_mut().$m($a0, $($a,)* $($f,)* $($o,)*).map_err(to_js)?;
                Ok(ids.into_iter().map(|id| JsValue::from(self.node(id))).collect())
            }
        }
    };
    (@one ($m:ident, $js:literal, $doc:literal, [$a0:ident $(, $a:ident)*]
        $(or_number [$($n:ident),*])? $(optional [$($q:ident),*])?,
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*],
        |$g:ident| $body:expr)) => {
        #[wasm_bindgen(js_class = Program)]
        impl JsProgram {
            #[doc = concat!("A `", $js, "` composite: ", $doc)]
            #[wasm_bindgen(js_name = $js)]
            pub fn $m(
                &self,
                #[wasm_bindgen(unchecked_param_type = "ProgramNode")] $a0: JsValue,
                $(#[wasm_bindgen(unchecked_param_type = "ProgramNode")] $a: JsValue,)*
                $($(#[wasm_bindgen(unchecked_param_type = "ProgramNode | number")] $n: JsValue,)*)?
                $($(#[wasm_bindgen(unchecked_optional_param_type = "ProgramNode")] $q: JsValue,)*)?
                $(#[wasm_bindgen(js_name = $fk, unchecked_param_type = $fts)] $f: JsValue,)*
                $(#[wasm_bindgen(js_name = $ok, unchecked_optional_param_type = $ots)] $o: JsValue,)*
            ) -> JsResult<JsNode> {
                let $a0 = self.arg(concat!($js, ": argument '", stringify!($a0), "'"), &$a0)?;
                $(let $a = self.arg(concat!($js, ": ", stringify!($a)), &$a)?;)*
                $($(let $n = self.arg_or_number(concat!($js, ": ", stringify!($n)), &$n)?;)*)?
                $($(let $q = self.opt_arg(concat!($js, ": ", stringify!($q)), &$q)?;)*)?
                $(let $f: $ft = args::attr(concat!($js, ": ", $fk), &$f)?;)*
                $(let $o: $ot = args::attr_or(concat!($js, ": ", $ok), &$o, || <$ot>::from($od))?;)*
                self.composite(|p| p.$m($a0, $($a,)* $($($n,)*)? $($($q,)*)? $($f,)* $($o,)*))
            }
        }
    };
}
crate::composite_table!(js_node_composites);
