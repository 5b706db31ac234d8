//! `Session`'s tensor constructors: from JS data, filled, ranges, identity and random values — each
//! converts its arguments and creates the tensor through the core session (`concat` and `stack`
//! come from the op table, `tensor_ops.rs`).

use wasm_bindgen::prelude::*;

use super::args;
use super::session::JsSession;
use super::session_options::RandomArg;
use super::{to_js, JsResult, JsTensor};
use crate::error::Error;

#[wasm_bindgen(js_class = Session)]
impl JsSession {
    /// A tensor from a TypedArray (any kind, BigInt arrays included), a number[], nested arrays or a
    /// plain number; dtype defaults to `'float32'`. Without `shape`, nested arrays give their own
    /// shape (ragged nesting is `INVALID_ARGUMENT`), a TypedArray or flat array is 1-D and a number is
    /// a scalar. For a TypedArray or a flat array the shape, the data's length and the room in the
    /// pool are checked before any of the data is copied; nested arrays are read first (their shape
    /// is what they hold), into memory reserved fallibly (`OUT_OF_MEMORY`, never an abort), each
    /// array's length checked before it is read (at most the shape's element count, or admitted).
    pub fn tensor(
        &self,
        #[wasm_bindgen(unchecked_param_type = "TensorData | NestedData | number")] data: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "Shape")] shape: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DType")] dtype: JsValue,
    ) -> JsResult<JsTensor> {
        let s = self.open()?;
        let dtype = args::dtype_or_f32("tensor: dtype", &dtype)?;
        let given = if shape.is_undefined() || shape.is_null() {
            None
        } else {
            Some(args::shape("tensor: shape", &shape)?)
        };
        if data.as_f64().is_some() || data.as_bool().is_some() || args::is_nested(&data) {
            // no dimension of the data can exceed the element count of the tensor it makes: with a
            // shape, its count (SHAPE_MISMATCH past it, as for flat data); without one, a 1-D
            // tensor that long must be admitted — checked before each array is read
            let count = given.as_deref().map(crate::shape::element_count).transpose();
            let count = count.map_err(to_js)?;
            let admitted = std::cell::Cell::new(0);
            let fits = |len: u64| match count {
                Some(n) if len > n => Err(to_js(Error::ShapeMismatch(format!(
                    "tensor: data has an array of {len} entries but shape {:?} needs {n} elements",
                    given.as_deref().unwrap_or_default()
                )))),
                Some(_) => Ok(()),
                None if len <= admitted.get() => Ok(()),
                None => {
                    s.admit_shape(&[usize::try_from(len).unwrap_or(usize::MAX)])
                        .map_err(to_js)?;
                    admitted.set(len);
                    Ok(())
                }
            };
            let (inferred, values) = args::nested("tensor: data", &data, &fits)?;
            let shape = given.unwrap_or(inferred);
            // tensor_from_f64 checks the length against the shape and admits it
            return s
                .tensor_from_f64(&values, &shape, dtype)
                .map(JsTensor::new)
                .map_err(to_js);
        }
        let data = args::Data::of("tensor: data", &data, dtype)?;
        let shape = given.unwrap_or_else(|| vec![data.len() as usize]);
        let n = s.admit_shape(&shape).map_err(to_js)?;
        if data.len() != n {
            return Err(to_js(Error::ShapeMismatch(format!(
                "tensor: data has {} elements but shape {shape:?} needs {n}",
                data.len()
            ))));
        }
        let result = match data.words("tensor: data")? {
            Some(words) => s.tensor_from_bits(&words, &shape, dtype),
            None => s.tensor_from_f64(&data.values("tensor: data")?, &shape, dtype),
        };
        result.map(JsTensor::new).map_err(to_js)
    }

    /// A scalar (shape `[]`).
    pub fn scalar(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number | boolean")] value: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DType")] dtype: JsValue,
    ) -> JsResult<JsTensor> {
        let s = self.open()?;
        let v = args::value("scalar: value", &value)?;
        let dtype = args::dtype_or_f32("scalar: dtype", &dtype)?;
        s.scalar(v, dtype).map(JsTensor::new).map_err(to_js)
    }

    /// `[start, start + step, …)` below `stop` (TF.js `range`).
    pub fn range(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] start: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number")] stop: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "number")] step: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DType")] dtype: JsValue,
    ) -> JsResult<JsTensor> {
        let s = self.open()?;
        let (a, b) = (
            args::number("range: start", &start)?,
            args::number("range: stop", &stop)?,
        );
        let step = args::number_or("range: step", &step, 1.0)?;
        let dtype = args::dtype_or_f32("range: dtype", &dtype)?;
        s.range(a, b, step, dtype).map(JsTensor::new).map_err(to_js)
    }

    /// The `n × n` identity matrix.
    pub fn eye(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number")] n: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DType")] dtype: JsValue,
    ) -> JsResult<JsTensor> {
        let s = self.open()?;
        let n = args::shape("eye: n", &js_sys::Array::of1(&n))?[0];
        let dtype = args::dtype_or_f32("eye: dtype", &dtype)?;
        s.eye(n, dtype).map(JsTensor::new).map_err(to_js)
    }

    /// A tensor of zeros.
    pub fn zeros(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Shape")] shape: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DType")] dtype: JsValue,
    ) -> JsResult<JsTensor> {
        let s = self.open()?;
        let shape = args::shape("zeros: shape", &shape)?;
        let dtype = args::dtype_or_f32("zeros: dtype", &dtype)?;
        s.zeros(&shape, dtype).map(JsTensor::new).map_err(to_js)
    }

    /// A tensor of ones.
    pub fn ones(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Shape")] shape: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DType")] dtype: JsValue,
    ) -> JsResult<JsTensor> {
        let s = self.open()?;
        let shape = args::shape("ones: shape", &shape)?;
        let dtype = args::dtype_or_f32("ones: dtype", &dtype)?;
        s.ones(&shape, dtype).map(JsTensor::new).map_err(to_js)
    }

    /// A tensor with every element `value`.
    pub fn fill(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Shape")] shape: JsValue,
        #[wasm_bindgen(unchecked_param_type = "number | boolean")] value: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "DType")] dtype: JsValue,
    ) -> JsResult<JsTensor> {
        let s = self.open()?;
        let shape = args::shape("fill: shape", &shape)?;
        let v = args::value("fill: value", &value)?;
        let dtype = args::dtype_or_f32("fill: dtype", &dtype)?;
        s.fill(&shape, v, dtype).map(JsTensor::new).map_err(to_js)
    }

    /// Normally distributed float32 values: `{mean = 0, stddev = 1, seed}` (seed default: random).
    #[wasm_bindgen(js_name = randomNormal)]
    pub fn random_normal(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Shape")] shape: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RandomNormalOptions")] options: JsValue,
    ) -> JsResult<JsTensor> {
        let s = self.open()?;
        let o = RandomArg::parse(&options, &["mean", "stddev", "seed"])?;
        let (mean, stddev) = (o.get("mean")?, o.get("stddev")?);
        s.random_normal_or(
            &args::shape("randomNormal: shape", &shape)?,
            mean,
            stddev,
            o.seed()?,
        )
        .map(JsTensor::new)
        .map_err(to_js)
    }

    /// Uniform float32 values in `[min, max)`: `{min = 0, max = 1, seed}`.
    #[wasm_bindgen(js_name = randomUniform)]
    pub fn random_uniform(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Shape")] shape: JsValue,
        #[wasm_bindgen(unchecked_optional_param_type = "RandomUniformOptions")] options: JsValue,
    ) -> JsResult<JsTensor> {
        let s = self.open()?;
        let o = RandomArg::parse(&options, &["min", "max", "seed"])?;
        s.random_uniform_or(
            &args::shape("randomUniform: shape", &shape)?,
            o.get("min")?,
            o.get("max")?,
            o.seed()?,
        )
        .map(JsTensor::new)
        .map_err(to_js)
    }
}
