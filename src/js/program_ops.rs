//! The `Program` builder's node methods that come from the op tables (unary, binary, reductions,
//! kernels with attributes, composites) and the multi-node ones (`where`, `concat`, `stack`,
//! `split`): each converts its JS arguments and records the node through `program.rs`.

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

#[wasm_bindgen(js_class = Program)]
impl JsProgram {
    /// A `where` node: elements of `a` where `cond`, else of `b` (a node or a number); broadcast.
    #[wasm_bindgen(js_name = where)]
    pub fn where_(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode")] a: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode")] cond: JsValue,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode | number")] b: JsValue,
    ) -> JsResult<JsNode> {
        let a = self.arg("where: argument 'a'", &a)?;
        let c = self.arg("where: cond", &cond)?;
        match b.as_f64() {
            Some(v) => self.composite(|p| p.select_scalar(a, c, v)),
            None => {
                let b = self.arg("where: argument 'b'", &b)?;
                self.composite(|p| p.select(a, c, b))
            }
        }
    }

    /// A `concat(nodes, axis = 0)` node.
    pub fn concat(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode[]")] nodes: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] axis: JsValue,
    ) -> JsResult<JsNode> {
        let ids = self.nodes("concat", &nodes)?;
        let axis = args::int_or("concat: axis", &axis, 0)?;
        self.composite(|p| p.join(&ids, axis, false))
    }

    /// A `stack(nodes, axis = 0)` node.
    pub fn stack(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode[]")] nodes: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] axis: JsValue,
    ) -> JsResult<JsNode> {
        let ids = self.nodes("stack", &nodes)?;
        let axis = args::int_or("stack: axis", &axis, 0)?;
        self.composite(|p| p.join(&ids, axis, true))
    }

    /// `split(node, numOrSizes, axis = 0)` nodes.
    #[wasm_bindgen(unchecked_return_type = "ProgramNode[]")]
    pub fn split(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProgramNode")] a: JsValue,
        #[wasm_bindgen(js_name = numOrSizes, unchecked_param_type = "number | number[]")]
        num_or_sizes: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] axis: JsValue,
    ) -> JsResult<js_sys::Array> {
        let a = self.arg("split: argument 'a'", &a)?;
        let how = args::split_sizes("split: numOrSizes", &num_or_sizes)?;
        let axis = args::int_or("split: axis", &axis, 0)?;
        let ids = self.inner_mut().split_by(a, &how, axis).map_err(to_js)?;
        Ok(ids.into_iter().map(|id| JsValue::from(self.node(id))).collect())
    }
}

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
    ($(($m:ident, $js:literal, $doc:literal, [$a0:ident $(, $a:ident)*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*],
        |$g:ident| $body:expr)),* $(,)?) => {$(
        #[wasm_bindgen(js_class = Program)]
        impl JsProgram {
            #[doc = concat!("A `", $js, "` composite: ", $doc)]
            #[wasm_bindgen(js_name = $js)]
            pub fn $m(
                &self,
                #[wasm_bindgen(unchecked_param_type = "ProgramNode")] $a0: JsValue,
                $(#[wasm_bindgen(unchecked_param_type = "ProgramNode")] $a: JsValue,)*
                $(#[wasm_bindgen(js_name = $fk, unchecked_param_type = $fts)] $f: JsValue,)*
                $(#[wasm_bindgen(js_name = $ok, unchecked_optional_param_type = $ots)] $o: JsValue,)*
            ) -> JsResult<JsNode> {
                let $a0 = self.arg(concat!($js, ": argument '", stringify!($a0), "'"), &$a0)?;
                $(let $a = self.arg(concat!($js, ": ", stringify!($a)), &$a)?;)*
                $(let $f: $ft = args::attr(concat!($js, ": ", $fk), &$f)?;)*
                $(let $o: $ot = args::attr_or(concat!($js, ": ", $ok), &$o, || <$ot>::from($od))?;)*
                self.composite(|p| p.$m($a0, $($a,)* $($f,)* $($o,)*))
            }
        }
    )*};
}
crate::composite_table!(js_node_composites);
