//! Shapes: validation and element counts. `[]` is a scalar (one element); a zero, negative or
//! fractional dimension is `INVALID_ARGUMENT`, never wrapped to a large unsigned value.

use crate::dtype::BYTES_PER_ELEMENT;
use crate::error::{invalid_arg, Result};

/// Largest element count any tensor may have: its byte length must fit in a `u64` and in the
/// addressable range of a 32-bit index in the kernels.
pub const MAX_ELEMENTS: u64 = u32::MAX as u64;

/// Validates dimensions given as numbers (as they arrive from JS) and converts them.
pub fn dims_from_f64(dims: &[f64]) -> Result<Vec<usize>> {
    dims.iter()
        .enumerate()
        .map(|(i, &d)| {
            if !(d.is_finite() && d.fract() == 0.0 && d >= 1.0 && d <= MAX_ELEMENTS as f64) {
                Err(invalid_arg!(
                    "shape dimension {i} is {d}: every dimension must be a positive integer (shape {dims:?})"
                ))
            } else {
                Ok(d as usize)
            }
        })
        .collect()
}

/// The element count of a shape, checking that no dimension is zero and that the product fits.
pub fn element_count(shape: &[usize]) -> Result<u64> {
    let mut n: u64 = 1;
    for (i, &d) in shape.iter().enumerate() {
        if d == 0 {
            return Err(invalid_arg!(
                "shape dimension {i} is 0 in {shape:?}: zero-sized dimensions are not supported"
            ));
        }
        n = n
            .checked_mul(d as u64)
            .filter(|&n| n <= MAX_ELEMENTS)
            .ok_or_else(|| invalid_arg!("shape {shape:?} has more than {MAX_ELEMENTS} elements"))?;
    }
    Ok(n)
}

/// Bytes of storage a tensor of this shape takes (`elements × 4` for every dtype).
pub fn byte_length(shape: &[usize]) -> Result<u64> {
    Ok(element_count(shape)? * BYTES_PER_ELEMENT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_have_one_element_and_bad_dims_are_rejected() {
        assert_eq!(element_count(&[]).unwrap(), 1);
        assert_eq!(byte_length(&[3, 5]).unwrap(), 60);
        assert_eq!(element_count(&[2, 0]).unwrap_err().code(), "INVALID_ARGUMENT");
        assert!(dims_from_f64(&[-1.0]).is_err());
        assert!(dims_from_f64(&[1.5]).is_err());
        assert!(dims_from_f64(&[0.0]).is_err());
        assert!(dims_from_f64(&[f64::NAN]).is_err());
        assert_eq!(dims_from_f64(&[2.0, 3.0]).unwrap(), vec![2, 3]);
        assert!(element_count(&[1 << 20, 1 << 20]).is_err());
    }
}
