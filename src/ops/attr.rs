//! Attribute types of the op table's ops (`ops/table.rs`): what each attribute holds, how it is
//! written in the JSON form (serde), and the conversions the eager and program methods accept.

use serde::{Deserialize, Serialize};

/// A (height, width) pair — strides, dilations, pool sizes. JSON `[h, w]` (a number means both);
/// from Rust `2usize.into()` or `[2, 1].into()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "PairJson", into = "[usize; 2]")]
pub struct Pair(pub usize, pub usize);

impl Pair {
    /// `(1, 1)`.
    pub const ONE: Pair = Pair(1, 1);
}

impl From<usize> for Pair {
    fn from(n: usize) -> Pair {
        Pair(n, n)
    }
}

impl From<[usize; 2]> for Pair {
    fn from([h, w]: [usize; 2]) -> Pair {
        Pair(h, w)
    }
}

impl From<Pair> for [usize; 2] {
    fn from(p: Pair) -> [usize; 2] {
        [p.0, p.1]
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PairJson {
    One(usize),
    Two([usize; 2]),
}

impl TryFrom<PairJson> for Pair {
    type Error = String;
    fn try_from(j: PairJson) -> std::result::Result<Pair, String> {
        let p = match j {
            PairJson::One(n) => Pair(n, n),
            PairJson::Two([h, w]) => Pair(h, w),
        };
        if p.0 == 0 || p.1 == 0 {
            return Err(format!("[{}, {}] must be positive", p.0, p.1));
        }
        Ok(p)
    }
}

/// Convolution and pooling padding (TF.js): `'same'` (output = ⌈input / stride⌉, padding split
/// with the extra cell after), `'valid'` (no padding), or a number of cells on every side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Pad {
    /// `'same'` or `'valid'`.
    Mode(PadMode),
    /// The same number of cells on each side of both spatial dims.
    Explicit(usize),
}

/// The named padding modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PadMode {
    /// Output size `⌈input / stride⌉`.
    Same,
    /// No padding.
    Valid,
}

impl Pad {
    /// `'same'`.
    pub const SAME: Pad = Pad::Mode(PadMode::Same);
    /// `'valid'`.
    pub const VALID: Pad = Pad::Mode(PadMode::Valid);
}

impl From<usize> for Pad {
    fn from(n: usize) -> Pad {
        Pad::Explicit(n)
    }
}

/// A fill value held as the bits of an `f64` (so ops stay `Eq + Hash`); JSON writes the number,
/// with `"NaN"`, `"Infinity"` and `"-Infinity"` as strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "Num", into = "Num")]
pub struct Fill(pub u64);

impl Fill {
    /// The value.
    pub fn value(self) -> f64 {
        f64::from_bits(self.0)
    }
}

impl From<f64> for Fill {
    fn from(v: f64) -> Fill {
        Fill(v.to_bits())
    }
}

/// A number, or one of the non-finite values JSON cannot spell.
#[derive(Serialize, Deserialize, Clone, Copy)]
#[serde(untagged)]
pub(crate) enum Num {
    N(f64),
    S(NonFinite),
}

#[derive(Serialize, Deserialize, Clone, Copy)]
pub(crate) enum NonFinite {
    NaN,
    Infinity,
    #[serde(rename = "-Infinity")]
    NegInfinity,
}

impl From<f64> for Num {
    fn from(v: f64) -> Num {
        if v.is_nan() {
            Num::S(NonFinite::NaN)
        } else if v == f64::INFINITY {
            Num::S(NonFinite::Infinity)
        } else if v == f64::NEG_INFINITY {
            Num::S(NonFinite::NegInfinity)
        } else {
            Num::N(v)
        }
    }
}

impl From<Num> for f64 {
    fn from(n: Num) -> f64 {
        match n {
            Num::N(v) => v,
            Num::S(NonFinite::NaN) => f64::NAN,
            Num::S(NonFinite::Infinity) => f64::INFINITY,
            Num::S(NonFinite::NegInfinity) => f64::NEG_INFINITY,
        }
    }
}

impl From<Num> for Fill {
    fn from(n: Num) -> Fill {
        Fill(f64::from(n).to_bits())
    }
}

impl From<Fill> for Num {
    fn from(f: Fill) -> Num {
        f.value().into()
    }
}

/// A newtype over `Vec<i64>` (`Coords`, `Axes`): read as the slice, made from a `Vec`, a slice, a
/// reference to an array or one number.
macro_rules! list_of_i64 {
    ($t:ident) => {
        impl std::ops::Deref for $t {
            type Target = [i64];
            fn deref(&self) -> &[i64] {
                &self.0
            }
        }

        impl From<Vec<i64>> for $t {
            fn from(v: Vec<i64>) -> $t {
                $t(v)
            }
        }

        impl From<&[i64]> for $t {
            fn from(v: &[i64]) -> $t {
                $t(v.to_vec())
            }
        }

        impl<const N: usize> From<&[i64; N]> for $t {
            fn from(v: &[i64; N]) -> $t {
                $t(v.to_vec())
            }
        }

        impl From<i64> for $t {
            fn from(a: i64) -> $t {
                $t(vec![a])
            }
        }
    };
}

/// Per-dimension coordinates or counts from the first dimension on (`slice`'s `begin` and `size`);
/// a missing entry takes the op's default. JS: one number (a rank-1 tensor's, as TF.js) or an
/// array; from Rust an array, a slice, a `Vec` or one number.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Coords(pub Vec<i64>);

impl Coords {
    /// No entry: every dimension takes the default.
    pub const NONE: Coords = Coords(Vec::new());
}

list_of_i64!(Coords);

impl<const N: usize> From<[i64; N]> for Coords {
    fn from(v: [i64; N]) -> Coords {
        Coords(v.to_vec())
    }
}

/// Reduction axes (negative counts from the end); empty means every axis. JS: one axis or an
/// array of them, all when omitted; from Rust `&[0, 1]`, a `Vec` or one axis.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Axes(pub Vec<i64>);

impl Axes {
    /// Every axis.
    pub const ALL: Axes = Axes(Vec::new());
}

list_of_i64!(Axes);
