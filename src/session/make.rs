//! Making tensors in a session: from host data, constants, ranges, random values, and joins.

use super::Session;
use crate::accounting::Exec;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::host::host_vec;
use crate::runtime::write;
use crate::shape;
use crate::tensor::Tensor;

impl Session {
    /// A tensor of normally distributed float32 values (Box–Muller over a seeded SplitMix64;
    /// the same seed gives the same values on every target).
    pub fn random_normal(&self, shape: &[usize], mean: f64, stddev: f64, seed: u64) -> Result<Tensor> {
        if stddev.is_nan() || stddev < 0.0 {
            return Err(Error::InvalidArgument(format!(
                "randomNormal: stddev must be ≥ 0, got {stddev}"
            )));
        }
        let n = self.admit_shape(shape)?;
        let mut rng = crate::random::Rng::new(seed);
        let v = host_vec(n, |_| ((mean + stddev * rng.normal()) as f32).to_bits())?;
        self.tensor_from_words(&v, shape, DType::Float32, "randomNormal")
    }

    /// TF.js's `randomNormal(shape, {mean = 0, stddev = 1, seed})`: an absent option takes its
    /// default, an absent seed a random one (`Math.random` in the browser, the OS's hasher keys natively).
    pub fn random_normal_or(
        &self,
        shape: &[usize],
        mean: Option<f64>,
        stddev: Option<f64>,
        seed: Option<u64>,
    ) -> Result<Tensor> {
        let seed = seed.unwrap_or_else(crate::platform::random_seed);
        self.random_normal(shape, mean.unwrap_or(0.0), stddev.unwrap_or(1.0), seed)
    }

    /// TF.js's `randomUniform(shape, {min = 0, max = 1, seed})`, as [`Session::random_normal_or`].
    pub fn random_uniform_or(
        &self,
        shape: &[usize],
        min: Option<f64>,
        max: Option<f64>,
        seed: Option<u64>,
    ) -> Result<Tensor> {
        let seed = seed.unwrap_or_else(crate::platform::random_seed);
        self.random_uniform(shape, min.unwrap_or(0.0), max.unwrap_or(1.0), seed)
    }

    /// A tensor of uniformly distributed float32 values in `[min, max)`.
    pub fn random_uniform(&self, shape: &[usize], min: f64, max: f64, seed: u64) -> Result<Tensor> {
        if min.partial_cmp(&max) != Some(std::cmp::Ordering::Less) {
            return Err(Error::InvalidArgument(format!(
                "randomUniform needs min < max, got {min} and {max}"
            )));
        }
        let n = self.admit_shape(shape)?;
        let mut rng = crate::random::Rng::new(seed);
        let v = host_vec(n, |_| ((min + (max - min) * rng.uniform()) as f32).to_bits())?;
        self.tensor_from_words(&v, shape, DType::Float32, "randomUniform")
    }

    /// Checks, changing nothing, that a tensor of `shape` could be created now (a valid shape, an
    /// open session, room in the pool and on the device); returns its element count. Creation
    /// paths that build host data call this first, so an impossible request never allocates.
    pub fn admit_shape(&self, shape: &[usize]) -> Result<u64> {
        let bytes = shape::byte_length(shape)?;
        self.shared.check_open()?;
        drop(self.shared.admit(&[bytes])?); // one buffer: a check, nothing to hold
        Ok(bytes / 4)
    }

    /// A tensor holding `data` with `shape`; the dtype follows the element type.
    pub fn tensor<T: Element>(&self, data: &[T], shape: &[usize]) -> Result<Tensor> {
        self.check_len(data.len(), shape)?;
        let words = host_vec(data.len() as u64, |i| data[i].to_word())?;
        self.tensor_from_words(&words, shape, T::DTYPE, "tensor")
    }

    /// A tensor from numbers (the JS path): each value must be representable in `dtype`.
    pub fn tensor_from_f64(&self, data: &[f64], shape: &[usize], dtype: DType) -> Result<Tensor> {
        self.check_len(data.len(), shape)?;
        let mut words = host_vec(data.len() as u64, |_| 0u32)?;
        for (w, &v) in words.iter_mut().zip(data) {
            *w = dtype.word_from_f64(v)?;
        }
        self.tensor_from_words(&words, shape, dtype, "tensor")
    }

    /// A tensor from raw 32-bit words (each already valid for `dtype`: the bits of an f32,
    /// an i32, a u32, or 0/1 for bool).
    pub fn tensor_from_bits(&self, words: &[u32], shape: &[usize], dtype: DType) -> Result<Tensor> {
        if dtype == DType::Bool {
            if let Some(w) = words.iter().find(|&&w| w > 1) {
                return Err(Error::InvalidArgument(format!(
                    "a bool tensor holds 0 or 1, got {w}"
                )));
            }
        }
        self.tensor_from_words(words, shape, dtype, "tensor")
    }

    /// `SHAPE_MISMATCH` unless `len` values fill `shape`; also admits the tensor.
    fn check_len(&self, len: usize, shape: &[usize]) -> Result<()> {
        let n = shape::element_count(shape)?;
        if len as u64 != n {
            return Err(Error::ShapeMismatch(format!(
                "data has {len} elements but shape {shape:?} needs {n}"
            )));
        }
        self.admit_shape(shape).map(|_| ())
    }

    fn tensor_from_words(
        &self,
        words: &[u32],
        shape: &[usize],
        dtype: DType,
        origin: &str,
    ) -> Result<Tensor> {
        let n = shape::element_count(shape)?;
        if words.len() as u64 != n {
            return Err(Error::ShapeMismatch(format!(
                "data has {} elements but shape {shape:?} needs {n}",
                words.len()
            )));
        }
        let _submission = self.shared.submission();
        let t = Tensor::allocate(&self.shared, shape.to_vec(), dtype, origin.to_string())?;
        write(&self.shared, t.buffer()?, bytemuck::cast_slice(words));
        self.shared.ledger.count(Exec::Upload(t.byte_length()));
        Ok(t)
    }

    /// A scalar (shape `[]`) holding `value` in `dtype`.
    pub fn scalar(&self, value: f64, dtype: DType) -> Result<Tensor> {
        self.tensor_from_f64(&[value], &[], dtype)
    }

    /// `[start, start + step, …]` up to but excluding `stop` (TF.js `range`); `INVALID_ARGUMENT` for a
    /// zero or non-finite step, or an empty range (zero-sized tensors are not supported).
    pub fn range(&self, start: f64, stop: f64, step: f64, dtype: DType) -> Result<Tensor> {
        if !(start.is_finite() && stop.is_finite() && step.is_finite()) || step == 0.0 {
            return Err(Error::InvalidArgument(format!(
                "range needs finite start, stop and a non-zero step, got {start}, {stop}, {step}"
            )));
        }
        let n = ((stop - start) / step).ceil();
        if n.is_nan() || n < 1.0 || n > shape::MAX_ELEMENTS as f64 {
            return Err(Error::InvalidArgument(format!(
                "range({start}, {stop}, {step}) has {n} elements: it must have between 1 and {}",
                shape::MAX_ELEMENTS
            )));
        }
        let shape = [n as usize];
        self.admit_shape(&shape)?;
        let values = host_vec(n as u64, |i| start + i as f64 * step)?;
        self.tensor_from_f64(&values, &shape, dtype)
    }

    /// The `n × n` identity matrix.
    pub fn eye(&self, n: usize, dtype: DType) -> Result<Tensor> {
        let shape = [n, n];
        let count = self.admit_shape(&shape)?;
        let values = host_vec(count, |i| if i / n == i % n { 1.0 } else { 0.0 })?;
        self.tensor_from_f64(&values, &shape, dtype)
    }

    /// A tensor of zeros.
    pub fn zeros(&self, shape: &[usize], dtype: DType) -> Result<Tensor> {
        self.fill_with(shape, 0.0, dtype, "zeros")
    }

    /// A tensor of ones.
    pub fn ones(&self, shape: &[usize], dtype: DType) -> Result<Tensor> {
        self.fill_with(shape, 1.0, dtype, "ones")
    }

    /// A tensor with every element `value` (which must be representable in `dtype`).
    pub fn fill(&self, shape: &[usize], value: f64, dtype: DType) -> Result<Tensor> {
        self.fill_with(shape, value, dtype, "fill")
    }

    fn fill_with(&self, shape: &[usize], value: f64, dtype: DType, origin: &str) -> Result<Tensor> {
        let word = dtype.word_from_f64(value)?;
        let n = shape::element_count(shape)?;
        let _submission = self.shared.submission();
        let t = Tensor::allocate(&self.shared, shape.to_vec(), dtype, origin.to_string())?;
        let s = &self.shared;
        let ctx = s.ctx();
        let mut enc = crate::commands::Commands::default();
        if word == 0 {
            enc.clear_buffer(t.buffer()?, 0, Some(n * 4));
        } else {
            crate::kernels::fill(&ctx, &mut enc, t.buffer()?, n, word);
        }
        crate::runtime::commit(s, enc);
        Ok(t)
    }
}
