//! Host tensors and the element types' reference semantics (wrapping integers, WGSL division).

use std::fmt::Debug;

use affon::ops::{BinaryOp, UnaryOp};
use affon::{Element, Session, Tensor};

/// A CPU tensor: row-major `data` of `shape` (`[]` is a scalar).
#[derive(Clone, Debug, PartialEq)]
pub struct Host<T> {
    /// Dimensions.
    pub shape: Vec<usize>,
    /// Row-major elements.
    pub data: Vec<T>,
}

impl<T: Val> Host<T> {
    /// `shape` filled by `f`.
    pub fn from_fn(shape: &[usize], f: impl FnMut(usize) -> T) -> Host<T> {
        let n: usize = shape.iter().product();
        Host {
            shape: shape.to_vec(),
            data: (0..n).map(f).collect(),
        }
    }

    /// The largest `|x|` (at least 0).
    pub fn max_abs(&self) -> f64 {
        self.data.iter().map(|x| x.to_f64().abs()).fold(0.0, f64::max)
    }

    /// A device copy in `s`.
    pub fn upload(&self, s: &Session) -> Tensor {
        s.tensor(&self.data, &self.shape)
            .unwrap_or_else(|e| panic!("upload {} {:?}: {e}", T::DTYPE, self.shape))
    }
}

/// An element type a tensor can be read back as.
pub trait Val: Element + Copy + PartialEq + Debug {
    /// The value as a number (exact for every 32-bit type).
    fn to_f64(self) -> f64;
}

impl Val for f32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}
impl Val for i32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}
impl Val for u32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}
impl Val for bool {
    fn to_f64(self) -> f64 {
        f64::from(u8::from(self))
    }
}

/// A numeric element type: the reference semantics of every op over it.
pub trait Num: Val + PartialOrd {
    /// Accumulator of sums and dot products (float64 for float32; the wrapping type for integers).
    type Acc: Copy;
    /// The empty sum.
    fn acc_zero() -> Self::Acc;
    /// `acc + x`.
    fn acc_add(acc: Self::Acc, x: Self) -> Self::Acc;
    /// `acc + a·b`.
    fn acc_mul_add(acc: Self::Acc, a: Self, b: Self) -> Self::Acc;
    /// The accumulator as an element.
    fn from_acc(acc: Self::Acc) -> Self;
    /// `acc / n` (float32 only).
    fn mean(acc: Self::Acc, n: usize) -> Self;
    /// A unary op (float-only ops panic for integers).
    fn unary(op: UnaryOp, x: Self) -> Self;
    /// A binary op.
    fn binary(op: BinaryOp, a: Self, b: Self) -> Self;
    /// The larger of two values.
    fn max2(self, o: Self) -> Self {
        if o > self {
            o
        } else {
            self
        }
    }
    /// The smaller of two values.
    fn min2(self, o: Self) -> Self {
        if o < self {
            o
        } else {
            self
        }
    }
}

impl Num for f32 {
    type Acc = f64;
    fn acc_zero() -> f64 {
        0.0
    }
    fn acc_add(acc: f64, x: f32) -> f64 {
        acc + x as f64
    }
    fn acc_mul_add(acc: f64, a: f32, b: f32) -> f64 {
        acc + a as f64 * b as f64
    }
    fn from_acc(acc: f64) -> f32 {
        acc as f32
    }
    fn mean(acc: f64, n: usize) -> f32 {
        (acc / n as f64) as f32
    }
    fn unary(op: UnaryOp, x: f32) -> f32 {
        let d = x as f64;
        match op {
            UnaryOp::Neg => -x,
            UnaryOp::Abs => x.abs(),
            UnaryOp::Square => x * x,
            UnaryOp::Relu => x.max(0.0),
            UnaryOp::Sqrt => d.sqrt() as f32,
            UnaryOp::Exp => d.exp() as f32,
            UnaryOp::Log => d.ln() as f32,
            UnaryOp::Sigmoid => (1.0 / (1.0 + (-d).exp())) as f32,
            UnaryOp::Tanh => d.tanh() as f32,
            _ => unreachable!("{op:?}: see table.rs"),
        }
    }
    fn binary(op: BinaryOp, a: f32, b: f32) -> f32 {
        match op {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            _ => unreachable!("{op:?}: see table.rs"),
        }
    }
}

impl Num for i32 {
    type Acc = i32;
    fn acc_zero() -> i32 {
        0
    }
    fn acc_add(acc: i32, x: i32) -> i32 {
        acc.wrapping_add(x)
    }
    fn acc_mul_add(acc: i32, a: i32, b: i32) -> i32 {
        acc.wrapping_add(a.wrapping_mul(b))
    }
    fn from_acc(acc: i32) -> i32 {
        acc
    }
    fn mean(_: i32, _: usize) -> i32 {
        unreachable!("mean is float32-only")
    }
    fn unary(op: UnaryOp, x: i32) -> i32 {
        match op {
            UnaryOp::Neg => x.wrapping_neg(),
            UnaryOp::Abs => x.wrapping_abs(),
            UnaryOp::Square => x.wrapping_mul(x),
            UnaryOp::Relu => x.max(0),
            _ => unreachable!("{op:?} is float32-only"),
        }
    }
    fn binary(op: BinaryOp, a: i32, b: i32) -> i32 {
        match op {
            BinaryOp::Add => a.wrapping_add(b),
            BinaryOp::Sub => a.wrapping_sub(b),
            BinaryOp::Mul => a.wrapping_mul(b),
            // WGSL: truncating; x / 0 and i32::MIN / -1 give x
            BinaryOp::Div if b == 0 || (a == i32::MIN && b == -1) => a,
            BinaryOp::Div => a / b,
            _ => unreachable!("{op:?}: see table.rs"),
        }
    }
}

impl Num for u32 {
    type Acc = u32;
    fn acc_zero() -> u32 {
        0
    }
    fn acc_add(acc: u32, x: u32) -> u32 {
        acc.wrapping_add(x)
    }
    fn acc_mul_add(acc: u32, a: u32, b: u32) -> u32 {
        acc.wrapping_add(a.wrapping_mul(b))
    }
    fn from_acc(acc: u32) -> u32 {
        acc
    }
    fn mean(_: u32, _: usize) -> u32 {
        unreachable!("mean is float32-only")
    }
    fn unary(op: UnaryOp, x: u32) -> u32 {
        match op {
            UnaryOp::Abs | UnaryOp::Relu => x,
            UnaryOp::Square => x.wrapping_mul(x),
            _ => unreachable!("{op:?} is not defined for uint32"),
        }
    }
    fn binary(op: BinaryOp, a: u32, b: u32) -> u32 {
        match op {
            BinaryOp::Add => a.wrapping_add(b),
            BinaryOp::Sub => a.wrapping_sub(b),
            BinaryOp::Mul => a.wrapping_mul(b),
            // WGSL: x / 0 gives x
            BinaryOp::Div if b == 0 => a,
            BinaryOp::Div => a / b,
            _ => unreachable!("{op:?}: see table.rs"),
        }
    }
}
