//! Tensors the runtime makes for ops, not for users: scalars of number operands, composites'
//! constants, and kernels' scratch.

use super::{SessionShared, Tensor};
use crate::accounting::Exec;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::platform::Shared;
use crate::runtime::write;
use crate::shape;

/// A scalar tensor holding `value` in `dtype`, in `s` (number operands of binary ops).
pub(crate) fn scalar_in(s: &Shared<SessionShared>, value: f64, dtype: DType) -> Result<Tensor> {
    constant_in(s, &[value], &[], dtype, "scalar")
}

/// A tensor of `data` (each value representable in `dtype`) in `s`, for composites' constants.
pub(crate) fn constant_in(
    s: &Shared<SessionShared>,
    data: &[f64],
    shape: &[usize],
    dtype: DType,
    origin: &str,
) -> Result<Tensor> {
    let words = data
        .iter()
        .map(|&v| dtype.word_from_f64(v))
        .collect::<Result<Vec<u32>>>()?;
    if words.len() as u64 != shape::element_count(shape)? {
        return Err(Error::ShapeMismatch(format!(
            "{} values for shape {shape:?}",
            words.len()
        )));
    }
    let _submission = s.submission();
    let t = Tensor::allocate(s, shape.to_vec(), dtype, origin.to_string())?;
    write(s, t.buffer()?, bytemuck::cast_slice(&words));
    s.ledger.count(Exec::Upload(t.byte_length()));
    Ok(t)
}

/// Scratch storage for a kernel of `s` (origin `scratch of <what>`), as `Ctx::scratch` allocates it.
pub(crate) fn scratch(s: &Shared<SessionShared>, words: u64, what: &str) -> Result<crate::kernels::Scratch> {
    let t = Tensor::allocate_untracked(
        s,
        vec![words as usize],
        DType::Float32,
        format!("scratch of {what}"),
    )?;
    Ok(crate::kernels::Scratch {
        buffer: t.buffer()?.clone(),
        _hold: Box::new(t),
    })
}
