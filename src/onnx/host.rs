//! Host values: tensors known at import (initializers, `Constant` nodes, frozen inputs, what folds
//! from them), decoded from `TensorProto`s with ONNX's dtypes mapped to affon's.

use prost::Message;

use super::proto::TensorProto;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// A tensor known at import: row-major elements as numbers, dims, affon dtype.
#[derive(Debug, Clone, PartialEq)]
pub struct Values {
    /// The elements.
    pub data: Vec<f64>,
    /// The dims.
    pub shape: Vec<usize>,
    /// The affon dtype (ONNX's mapped: API.md "Models from ONNX").
    pub dtype: DType,
}

impl Values {
    /// A rank-1 int32 value.
    pub(crate) fn ints(v: &[i64]) -> Values {
        Values {
            data: v.iter().map(|&x| x as f64).collect(),
            shape: vec![v.len()],
            dtype: DType::Int32,
        }
    }

    /// The elements as integers.
    pub(crate) fn as_ints(&self) -> Vec<i64> {
        self.data.iter().map(|&x| x as i64).collect()
    }
}

/// ONNX's element type `t` as affon's dtype: float32 stays; float16, bfloat16 and float64 become
/// float32; int64 and the narrower integers int32; uint32 stays; bool stays.
pub(crate) fn dtype(t: i32, what: &str) -> Result<DType> {
    Ok(match t {
        1 | 10 | 11 | 16 => DType::Float32,
        2..=7 => DType::Int32,
        9 => DType::Bool,
        12 => DType::Uint32,
        _ => {
            return Err(Error::Unsupported(format!(
                "{what}: ONNX element type {t} ({}) is not supported",
                type_name(t)
            )))
        }
    })
}

fn type_name(t: i32) -> &'static str {
    match t {
        8 => "string",
        13 => "uint64",
        14 | 15 => "complex",
        17..=26 => "float8/4 or int4",
        _ => "unknown",
    }
}

/// Decodes a serialized `TensorProto`.
pub(crate) fn decode_tensor(bytes: &[u8]) -> Result<Values> {
    let t = TensorProto::decode(bytes)
        .map_err(|e| Error::InvalidArgument(format!("not an ONNX TensorProto: {e}")))?;
    values(&t, t.name.as_deref().unwrap_or("tensor"))
}

/// The values of `t` (named `what` in errors).
pub(crate) fn values(t: &TensorProto, what: &str) -> Result<Values> {
    if t.data_location == Some(1) || !t.external_data.is_empty() {
        return Err(Error::Unsupported(format!(
            "{what}: tensors with external data are not supported"
        )));
    }
    let elem = t.data_type.unwrap_or(0);
    let dtype = dtype(elem, what)?;
    let mut shape = Vec::with_capacity(t.dims.len());
    let mut count: u64 = 1;
    for &d in &t.dims {
        let d = u64::try_from(d).map_err(|_| Error::InvalidArgument(format!("{what}: negative dim {d}")))?;
        count = count
            .checked_mul(d)
            .filter(|&c| c <= crate::shape::MAX_ELEMENTS)
            .ok_or_else(|| Error::InvalidArgument(format!("{what}: dims {:?} overflow", t.dims)))?;
        shape.push(d as usize);
    }
    let data = match &t.raw_data {
        Some(raw) => from_raw(raw, elem, what)?,
        None => from_fields(t, elem),
    };
    if data.len() as u64 != count {
        return Err(Error::InvalidArgument(format!(
            "{what}: {} elements for dims {:?}",
            data.len(),
            t.dims
        )));
    }
    let data = match dtype {
        DType::Int32 => narrow(data, what)?,
        _ => data,
    };
    Ok(Values { data, shape, dtype })
}

/// int64 (and the narrower integers) as int32: past int32's range is `UNSUPPORTED`, but the int64
/// extremes ONNX writes for "to the end" (|x| ≥ 2^62) clamp.
fn narrow(data: Vec<f64>, what: &str) -> Result<Vec<f64>> {
    let (lo, hi) = (i32::MIN as f64, i32::MAX as f64);
    data.into_iter()
        .map(|x| match x {
            _ if (lo..=hi).contains(&x) => Ok(x),
            _ if x.abs() >= 4.6e18 => Ok(x.clamp(lo, hi)),
            _ => Err(Error::Unsupported(format!(
                "{what}: {x} does not fit int32 (affon's integers are 32-bit)"
            ))),
        })
        .collect()
}

fn from_raw(raw: &[u8], elem: i32, what: &str) -> Result<Vec<f64>> {
    let width = match elem {
        2 | 3 | 9 => 1,
        4 | 5 | 10 | 16 => 2,
        1 | 6 | 12 => 4,
        7 | 11 | 13 => 8,
        _ => 0,
    };
    if width == 0 || !raw.len().is_multiple_of(width) {
        return Err(Error::InvalidArgument(format!(
            "{what}: {} raw bytes for element type {elem}",
            raw.len()
        )));
    }
    Ok(raw.chunks_exact(width).map(|c| raw_value(c, elem)).collect())
}

fn raw_value(c: &[u8], elem: i32) -> f64 {
    let le = |n: usize| {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&c[..n]);
        u64::from_le_bytes(b)
    };
    match elem {
        1 => f32::from_bits(le(4) as u32) as f64,
        2 | 9 => c[0] as f64,
        3 => c[0] as i8 as f64,
        4 => le(2) as u16 as f64,
        5 => le(2) as u16 as i16 as f64,
        6 => le(4) as u32 as i32 as f64,
        7 => le(8) as i64 as f64,
        10 => half(le(2) as u16),
        11 => f64::from_bits(le(8)),
        12 => le(4) as u32 as f64,
        16 => f32::from_bits((le(2) as u32) << 16) as f64,
        _ => le(8) as f64,
    }
}

fn from_fields(t: &TensorProto, elem: i32) -> Vec<f64> {
    match elem {
        1 => t.float_data.iter().map(|&x| x as f64).collect(),
        7 => t.int64_data.iter().map(|&x| x as f64).collect(),
        11 => t.double_data.clone(),
        12 | 13 => t.uint64_data.iter().map(|&x| x as f64).collect(),
        10 => t.int32_data.iter().map(|&x| half(x as u16)).collect(),
        16 => t
            .int32_data
            .iter()
            .map(|&x| f32::from_bits((x as u32) << 16) as f64)
            .collect(),
        _ => t.int32_data.iter().map(|&x| x as f64).collect(),
    }
}

/// An IEEE half's value.
fn half(h: u16) -> f64 {
    let (sign, exp, frac) = ((h >> 15) as i32, ((h >> 10) & 0x1f) as i32, (h & 0x3ff) as f64);
    let s = if sign == 1 { -1.0 } else { 1.0 };
    match exp {
        0 => s * frac * 2f64.powi(-24),
        31 if frac == 0.0 => s * f64::INFINITY,
        31 => f64::NAN,
        _ => s * (1.0 + frac / 1024.0) * 2f64.powi(exp - 15),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_and_int64_extremes_decode() {
        assert_eq!(half(0x3c00), 1.0);
        assert_eq!(half(0xc000), -2.0);
        assert_eq!(half(0x0001), 2f64.powi(-24));
        assert!(half(0x7e00).is_nan());
        let t = TensorProto {
            dims: vec![3],
            data_type: Some(7),
            int64_data: vec![1, i64::MAX, i64::MIN],
            ..Default::default()
        };
        let v = values(&t, "t").unwrap();
        assert_eq!(
            (v.dtype, v.data),
            (DType::Int32, vec![1.0, i32::MAX as f64, i32::MIN as f64])
        );
        let big = TensorProto {
            data_type: Some(7),
            int64_data: vec![1 << 40],
            ..Default::default()
        };
        assert_eq!(values(&big, "big").unwrap_err().code(), "UNSUPPORTED");
        let short = TensorProto {
            dims: vec![2],
            data_type: Some(1),
            raw_data: Some(vec![0, 0, 128, 63]),
            ..Default::default()
        };
        assert_eq!(values(&short, "short").unwrap_err().code(), "INVALID_ARGUMENT");
    }
}
