//! `Tensor`'s op methods: those that come from the op tables (unary, binary, reductions, kernels
//! with attributes, composites) and `matmul`, `batchNorm`, `where`, `split`: each converts its JS
//! arguments and applies the op through `tensor.rs`.

use wasm_bindgen::prelude::*;

use super::args;
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

#[wasm_bindgen(js_class = Tensor)]
impl JsTensor {
    /// Matrix product over the last two dims (either transposed first); leading dims broadcast.
    pub fn matmul(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Tensor")] other: JsValue,
        #[wasm_bindgen(js_name = transposeA, unchecked_optional_param_type = "boolean")] transpose_a: JsValue,
        #[wasm_bindgen(js_name = transposeB, unchecked_optional_param_type = "boolean")] transpose_b: JsValue,
    ) -> JsResult<JsTensor> {
        let t = self.live()?; // a disposed tensor is DISPOSED whatever the arguments
        let ta = args::bool_or("matmul: transposeA", &transpose_a, false)?;
        let tb = args::bool_or("matmul: transposeB", &transpose_b, false)?;
        if !ta && !tb {
            return self.op(
                Op::MatMul {
                    transpose_a: false,
                    transpose_b: false,
                },
                &[("other", &other)],
            );
        }
        let b = args::tensor("matmul: argument 'other'", &other)?;
        t.matmul_t(&b, ta, tb).map(JsTensor::new).map_err(to_js)
    }

    /// Batch normalisation with given statistics (parameters broadcast; NHWC: per channel).
    #[wasm_bindgen(js_name = batchNorm)]
    pub fn batch_norm(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Tensor")] mean: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Tensor")] variance: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Tensor")] offset: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Tensor")] scale: JsValue,
        #[wasm_bindgen(js_name = varianceEpsilon, unchecked_optional_param_type = "number")] epsilon: JsValue,
    ) -> JsResult<JsTensor> {
        let t = self.live()?; // a disposed tensor is DISPOSED whatever the arguments
        let m = args::tensor("batchNorm: mean", &mean)?;
        let v = args::tensor("batchNorm: variance", &variance)?;
        let o = args::opt_tensor("batchNorm: offset", &offset)?;
        let sc = args::opt_tensor("batchNorm: scale", &scale)?;
        let eps = args::number_or("batchNorm: varianceEpsilon", &epsilon, 1e-3)?;
        t.batch_norm(&m, &v, o.as_deref(), sc.as_deref(), eps)
            .map(JsTensor::new)
            .map_err(to_js)
    }
}

/// Selection: `where`, `argMax`/`argMin`, `oneHot`.
#[wasm_bindgen(js_class = Tensor)]
impl JsTensor {
    /// Elements of this tensor where the bool `cond` holds, else of `other` (a Tensor or a number);
    /// all three broadcast — TF.js's `where(cond, this, other)`.
    #[wasm_bindgen(js_name = where)]
    pub fn where_(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Tensor")] cond: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Tensor | number")] other: JsValue,
    ) -> JsResult<JsTensor> {
        let t = self.live()?; // a disposed tensor is DISPOSED whatever the arguments
        let c = args::tensor("where: cond", &cond)?;
        let result = match other.as_f64() {
            Some(v) => t.select_scalar(&c, v),
            None => t.select(&c, &*args::tensor("where: other", &other)?),
        };
        result.map(JsTensor::new).map_err(to_js)
    }
}

/// Shape ops: `slice`, `pad`, `tile`, `split` (windows onto the tensor).
#[wasm_bindgen(js_class = Tensor)]
impl JsTensor {
    /// Equal parts (a number) or slices of the given sizes along `axis` (default 0).
    #[wasm_bindgen(unchecked_return_type = "Tensor[]")]
    pub fn split(
        &self,
        #[wasm_bindgen(js_name = numOrSizes, unchecked_param_type = "number | number[]")]
        num_or_sizes: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] axis: JsValue,
    ) -> JsResult<js_sys::Array> {
        let t = self.live()?; // a disposed tensor is DISPOSED whatever the arguments
        let how = args::split_sizes("split: numOrSizes", &num_or_sizes)?;
        let axis = args::int_or("split: axis", &axis, 0)?;
        let out = t.split_by(&how, axis).map_err(to_js)?;
        Ok(out.into_iter().map(|x| JsValue::from(JsTensor::new(x))).collect())
    }
}

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
    ($(($m:ident, $js:literal, $doc:literal, [$a0:ident $(, $a:ident)*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*],
        |$g:ident| $body:expr)),* $(,)?) => {$(
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
                let t = self.live()?; // a disposed tensor is DISPOSED whatever the arguments
                $(let $a = args::tensor(concat!($js, ": ", stringify!($a)), &$a)?;)*
                $(let $f: $ft = args::attr(concat!($js, ": ", $fk), &$f)?;)*
                $(let $o: $ot = args::attr_or(concat!($js, ": ", $ok), &$o, || <$ot>::from($od))?;)*
                t.$m($(&$a,)* $($f,)* $($o,)*).map(JsTensor::new).map_err(to_js)
            }
        }
    )*};
}
crate::composite_table!(js_tensor_composites);
