//! Element types. Every dtype is stored as one 32-bit word per element on the device
//! (WebGPU storage is 32-bit), so a tensor's `byteLength` is always `elements × 4`.

use crate::error::{invalid_arg, Result};

/// The element type of a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    /// IEEE 754 single precision (the default).
    Float32,
    /// Two's complement 32-bit integer.
    Int32,
    /// Unsigned 32-bit integer.
    Uint32,
    /// Boolean, stored as a 32-bit word holding 0 or 1.
    Bool,
}

/// Bytes of device storage per element, for every dtype.
pub const BYTES_PER_ELEMENT: u64 = 4;

impl DType {
    /// The API name (`'float32'`, `'int32'`, `'uint32'`, `'bool'`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Float32 => "float32",
            DType::Int32 => "int32",
            DType::Uint32 => "uint32",
            DType::Bool => "bool",
        }
    }

    /// Parses an API name; anything else is `INVALID_ARGUMENT`.
    pub fn parse(name: &str) -> Result<DType> {
        Ok(match name {
            "float32" => DType::Float32,
            "int32" => DType::Int32,
            "uint32" => DType::Uint32,
            "bool" => DType::Bool,
            other => {
                return Err(invalid_arg!(
                    "unknown dtype '{other}': expected 'float32', 'int32', 'uint32' or 'bool'"
                ))
            }
        })
    }

    /// The device word that represents the number `v` in this dtype. Values that this dtype cannot
    /// represent exactly (a fraction for int32, a negative for uint32, anything but 0/1 for bool)
    /// are `INVALID_ARGUMENT`; NaN and ±Infinity are valid float32 values.
    pub fn word_from_f64(self, v: f64) -> Result<u32> {
        let integral = v.is_finite() && v.fract() == 0.0;
        match self {
            DType::Float32 => Ok((v as f32).to_bits()),
            DType::Int32 if integral && v >= i32::MIN as f64 && v <= i32::MAX as f64 => Ok(v as i32 as u32),
            DType::Uint32 if integral && v >= 0.0 && v <= u32::MAX as f64 => Ok(v as u32),
            DType::Bool if v == 0.0 || v == 1.0 => Ok(v as u32),
            _ => Err(invalid_arg!("value {v} cannot be stored as {}", self.name())),
        }
    }

    /// The number a device word holds in this dtype.
    pub fn word_to_f64(self, w: u32) -> f64 {
        match self {
            DType::Float32 => f32::from_bits(w) as f64,
            DType::Int32 => w as i32 as f64,
            DType::Uint32 => w as f64,
            DType::Bool => (w != 0) as u32 as f64,
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A Rust element type that maps one-to-one onto a [`DType`].
pub trait Element: Copy + 'static {
    /// The dtype tensors of this element type have.
    const DTYPE: DType;
    /// The device word for this value.
    fn to_word(self) -> u32;
    /// The value a device word holds.
    fn from_word(w: u32) -> Self;
}

impl Element for f32 {
    const DTYPE: DType = DType::Float32;
    fn to_word(self) -> u32 {
        self.to_bits()
    }
    fn from_word(w: u32) -> Self {
        f32::from_bits(w)
    }
}
impl Element for i32 {
    const DTYPE: DType = DType::Int32;
    fn to_word(self) -> u32 {
        self as u32
    }
    fn from_word(w: u32) -> Self {
        w as i32
    }
}
impl Element for u32 {
    const DTYPE: DType = DType::Uint32;
    fn to_word(self) -> u32 {
        self
    }
    fn from_word(w: u32) -> Self {
        w
    }
}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn to_word(self) -> u32 {
        self as u32
    }
    fn from_word(w: u32) -> Self {
        w != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_and_reject_unrepresentable_values() {
        assert_eq!(DType::Int32.word_from_f64(-3.0).unwrap() as i32, -3);
        assert_eq!(DType::Uint32.word_from_f64(4e9).unwrap(), 4_000_000_000);
        assert!(DType::Int32.word_from_f64(1.5).is_err());
        assert!(DType::Uint32.word_from_f64(-1.0).is_err());
        assert!(DType::Bool.word_from_f64(2.0).is_err());
        assert!(DType::Float32.word_from_f64(f64::NAN).is_ok());
        assert_eq!(DType::parse("float64").unwrap_err().code(), "INVALID_ARGUMENT");
        for d in [DType::Float32, DType::Int32, DType::Uint32, DType::Bool] {
            assert_eq!(DType::parse(d.name()).unwrap(), d);
            assert_eq!(d.word_to_f64(d.word_from_f64(1.0).unwrap()), 1.0);
        }
    }
}
