//! Every eager op against a CPU reference, written once and run on both GPU targets (lavapipe
//! natively, WebGPU in Chromium): [`ops_match_cpu_reference`].
//!
//! Tolerances (asserted by [`compare`]; `w` is the reference value, `g` the GPU's):
//! - **exact** (`g == w`; ±0 compare equal): every integer/bool result; float32 `neg`, `abs`,
//!   `relu`, `square`, `add`, `sub`, `mul` (IEEE-754 correctly rounded on every backend), `cast`,
//!   `reshape`, `transpose`, `max`, `min`.
//! - **relative 1e-5, absolute 1e-6** (`|g − w| ≤ 1e-5·|w| + 1e-6`): float32 `div`, `sqrt`, `exp`,
//!   `log`, `sigmoid`, `tanh` (WGSL allows a few ULP, ~1e-6 relative over the input ranges used,
//!   and `log` an absolute 2⁻²¹ near 1).
//! - **scaled by the reduction length `n`**: `sum` `|g − w| ≤ 1e-5·n·max|x| + 1e-6`; `mean` that
//!   bound divided by `n` (`1e-5·max|x| + 1e-6`); `matmul` `1e-5·k·max|a|·max|b| + 1e-6`;
//!   `softmax` `1e-5·n·|w| + 1e-6` (`n` the axis length).
//!
//! The reference computes float32 results exactly where the GPU must (single IEEE operations) and in
//! float64 rounded once to float32 elsewhere. Integer arithmetic wraps (two's complement) and integer
//! division follows WGSL: truncating, `x / 0 = x`, `i32::MIN / -1 = i32::MIN`.

use std::fmt::Debug;

use affon::ops::{BinaryOp, Op, ReduceOp, UnaryOp};
use affon::{DType, Element, Result, Session, Tensor};

// ---------------------------------------------------------------------------------------------
// A tiny deterministic PRNG (SplitMix64)

/// SplitMix64: deterministic, seedable, no dependencies; plenty for test inputs.
pub struct Rng(u64);

impl Rng {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `[lo, hi)`.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let u = (self.next_u64() >> 40) as f64 / (1u64 << 24) as f64;
        (lo as f64 + (hi as f64 - lo as f64) * u) as f32
    }

    /// Uniform in `[lo, hi]`.
    pub fn i32_in(&mut self, lo: i32, hi: i32) -> i32 {
        let span = (hi as i64 - lo as i64 + 1) as u64;
        (lo as i64 + (self.next_u64() % span) as i64) as i32
    }

    /// Uniform in `[lo, hi]`.
    pub fn u32_in(&mut self, lo: u32, hi: u32) -> u32 {
        let span = hi as u64 - lo as u64 + 1;
        (lo as u64 + self.next_u64() % span) as u32
    }

    /// `true` with probability `1 / n`.
    pub fn one_in(&mut self, n: u32) -> bool {
        self.next_u32().is_multiple_of(n)
    }
}

// ---------------------------------------------------------------------------------------------
// Host tensors and element types

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

// ---------------------------------------------------------------------------------------------
// CPU reference

/// Row-major strides.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// The coordinates of flat index `i` in `shape`.
pub fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        c[d] = i % shape[d];
        i /= shape[d];
    }
    c
}

/// The flat index of coordinates `c` in `shape`.
pub fn ravel(c: &[usize], shape: &[usize]) -> usize {
    c.iter().zip(shape).fold(0, |acc, (&x, &d)| acc * d + x)
}

/// A (possibly negative) axis as an index into a tensor of `rank`.
pub fn norm_axis(a: i64, rank: usize) -> usize {
    if a < 0 {
        (a + rank as i64) as usize
    } else {
        a as usize
    }
}

/// NumPy broadcasting of two shapes (panics when they do not broadcast).
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> Vec<usize> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let da = if i + a.len() >= n { a[i + a.len() - n] } else { 1 };
            let db = if i + b.len() >= n { b[i + b.len() - n] } else { 1 };
            match (da, db) {
                (x, y) if x == y => x,
                (1, y) => y,
                (x, 1) => x,
                _ => panic!("reference: {a:?} and {b:?} do not broadcast"),
            }
        })
        .collect()
}

/// The flat index in `shape` of the broadcast coordinates `c` (right-aligned; size-1 dims read 0).
pub fn broadcast_index(c: &[usize], shape: &[usize]) -> usize {
    let off = c.len() - shape.len();
    shape
        .iter()
        .enumerate()
        .fold(0, |acc, (j, &d)| acc * d + if d == 1 { 0 } else { c[off + j] })
}

/// `op(x)` elementwise.
pub fn unary_ref<T: Num>(op: UnaryOp, x: &Host<T>) -> Host<T> {
    Host {
        shape: x.shape.clone(),
        data: x.data.iter().map(|&v| T::unary(op, v)).collect(),
    }
}

/// `op(a, b)` with NumPy broadcasting.
pub fn binary_ref<T: Num>(op: BinaryOp, a: &Host<T>, b: &Host<T>) -> Host<T> {
    let shape = broadcast_shape(&a.shape, &b.shape);
    Host::from_fn(&shape, |i| {
        let c = unravel(i, &shape);
        T::binary(
            op,
            a.data[broadcast_index(&c, &a.shape)],
            b.data[broadcast_index(&c, &b.shape)],
        )
    })
}

/// One element converted from `from` to `to`, as 32-bit words: float→int truncates toward zero
/// (saturating: a negative float gives uint32 0), int↔uint reinterprets the bits (two's
/// complement, as WGSL's `u32(i32)` and NumPy's `astype` do), to bool is `x != 0`.
pub fn cast_word(w: u32, from: DType, to: DType) -> u32 {
    if from == to {
        return w;
    }
    match from {
        DType::Float32 => {
            let v = f32::from_bits(w);
            match to {
                DType::Int32 => (v as i32) as u32, // `as` truncates toward zero and saturates
                DType::Uint32 => v as u32,         // negative → 0
                DType::Bool => u32::from(v != 0.0),
                DType::Float32 => w,
            }
        }
        DType::Int32 => {
            let v = w as i32;
            match to {
                DType::Float32 => (v as f32).to_bits(),
                DType::Bool => u32::from(v != 0),
                _ => w,
            }
        }
        DType::Uint32 | DType::Bool => match to {
            DType::Float32 => (w as f32).to_bits(),
            DType::Bool => u32::from(w != 0),
            _ => w,
        },
    }
}

/// `[..., M, K] × [..., K, N]`, leading dims broadcast.
pub fn matmul_ref<T: Num>(a: &Host<T>, b: &Host<T>) -> Host<T> {
    let (ra, rb) = (a.shape.len(), b.shape.len());
    let (m, k, n) = (a.shape[ra - 2], a.shape[ra - 1], b.shape[rb - 1]);
    assert_eq!(b.shape[rb - 2], k, "reference: matmul inner dims");
    let (ab, bb) = (&a.shape[..ra - 2], &b.shape[..rb - 2]);
    let batch = broadcast_shape(ab, bb);
    let nb: usize = batch.iter().product();
    let mut data = Vec::with_capacity(nb * m * n);
    for bi in 0..nb {
        let c = unravel(bi, &batch);
        let ao = broadcast_index(&c, ab) * m * k;
        let bo = broadcast_index(&c, bb) * k * n;
        for i in 0..m {
            for j in 0..n {
                let mut acc = T::acc_zero();
                for p in 0..k {
                    acc = T::acc_mul_add(acc, a.data[ao + i * k + p], b.data[bo + p * n + j]);
                }
                data.push(T::from_acc(acc));
            }
        }
    }
    let mut shape = batch;
    shape.extend([m, n]);
    Host { shape, data }
}

/// `op` over `axes` (empty: all), keeping reduced axes as 1 when `keep`.
pub fn reduce_ref<T: Num>(op: ReduceOp, x: &Host<T>, axes: &[i64], keep: bool) -> Host<T> {
    let rank = x.shape.len();
    let red: Vec<usize> = if axes.is_empty() {
        (0..rank).collect()
    } else {
        axes.iter().map(|&a| norm_axis(a, rank)).collect()
    };
    let kept: Vec<usize> = (0..rank).filter(|i| !red.contains(i)).collect();
    let kept_shape: Vec<usize> = kept.iter().map(|&i| x.shape[i]).collect();
    let count: usize = red.iter().map(|&i| x.shape[i]).product();
    let n_out: usize = kept_shape.iter().product();
    let mut sums = vec![T::acc_zero(); n_out];
    let mut ext: Vec<Option<T>> = vec![None; n_out];
    for (i, &v) in x.data.iter().enumerate() {
        let c = unravel(i, &x.shape);
        let kc: Vec<usize> = kept.iter().map(|&d| c[d]).collect();
        let o = ravel(&kc, &kept_shape);
        sums[o] = T::acc_add(sums[o], v);
        ext[o] = Some(match (op, ext[o]) {
            (_, None) => v,
            (ReduceOp::Min, Some(e)) => e.min2(v),
            (_, Some(e)) => e.max2(v),
        });
    }
    let data = (0..n_out)
        .map(|o| match op {
            ReduceOp::Sum => T::from_acc(sums[o]),
            ReduceOp::Mean => T::mean(sums[o], count),
            ReduceOp::Max | ReduceOp::Min => ext[o].expect("every output has an input"),
            ReduceOp::Prod => unreachable!("prod: see table.rs"),
        })
        .collect();
    let shape = if keep {
        (0..rank)
            .map(|i| if red.contains(&i) { 1 } else { x.shape[i] })
            .collect()
    } else {
        kept_shape
    };
    Host { shape, data }
}

/// Softmax along `axis` (in float64, rounded once).
pub fn softmax_ref(x: &Host<f32>, axis: i64) -> Host<f32> {
    let ax = norm_axis(axis, x.shape.len());
    let (len, stride) = (x.shape[ax], strides(&x.shape)[ax]);
    Host::from_fn(&x.shape, |i| {
        let c = unravel(i, &x.shape);
        let first = i - c[ax] * stride;
        let row: Vec<f64> = (0..len).map(|j| x.data[first + j * stride] as f64).collect();
        let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let total: f64 = row.iter().map(|v| (v - m).exp()).sum();
        ((x.data[i] as f64 - m).exp() / total) as f32
    })
}

/// The same elements in `shape` (one entry may be -1).
pub fn reshape_ref<T: Val>(x: &Host<T>, shape: &[i64]) -> Host<T> {
    let fixed: i64 = shape.iter().filter(|&&d| d > 0).product();
    let shape = shape
        .iter()
        .map(|&d| {
            if d < 0 {
                x.data.len() / fixed as usize
            } else {
                d as usize
            }
        })
        .collect();
    Host {
        shape,
        data: x.data.clone(),
    }
}

/// Axes permuted by `perm` (`None` reverses them).
pub fn transpose_ref<T: Val>(x: &Host<T>, perm: Option<&[i64]>) -> Host<T> {
    let rank = x.shape.len();
    let p: Vec<usize> = match perm {
        Some(p) => p.iter().map(|&a| norm_axis(a, rank)).collect(),
        None => (0..rank).rev().collect(),
    };
    let shape: Vec<usize> = p.iter().map(|&a| x.shape[a]).collect();
    Host::from_fn(&shape, |o| {
        let oc = unravel(o, &shape);
        let mut ic = vec![0; rank];
        for (k, &a) in p.iter().enumerate() {
            ic[a] = oc[k];
        }
        x.data[ravel(&ic, &x.shape)]
    })
}

// ---------------------------------------------------------------------------------------------
// Comparison

/// How close a GPU result must be to the reference (see the module docs).
#[derive(Clone, Copy, Debug)]
pub enum Tol {
    /// `g == w` (±0 equal; NaN matches NaN).
    Exact,
    /// `|g − w| ≤ rel·|w| + abs`; infinities must match exactly.
    Close {
        /// Relative part.
        rel: f64,
        /// Absolute part.
        abs: f64,
    },
}

/// Relative 1e-5, absolute 1e-6: `div`, `sqrt`, `exp`, `log`, `sigmoid`, `tanh`.
pub const REL: Tol = Tol::Close { rel: 1e-5, abs: 1e-6 };

fn within<T: Val>(g: T, w: T, tol: Tol) -> bool {
    let (gf, wf) = (g.to_f64(), w.to_f64());
    if g == w || (gf.is_nan() && wf.is_nan()) {
        return true;
    }
    match tol {
        Tol::Exact => false,
        Tol::Close { rel, abs } => {
            gf.is_finite() && wf.is_finite() && (gf - wf).abs() <= rel * wf.abs() + abs
        }
    }
}

/// Asserts `got` matches `want` within `tol`; the message names `what` (op, dtype, shapes) and the
/// first differing index.
pub fn compare<T: Val>(what: &str, got: &[T], want: &Host<T>, tol: Tol) {
    assert_eq!(got.len(), want.data.len(), "{what}: element count");
    if let Some(i) = (0..got.len()).find(|&i| !within(got[i], want.data[i], tol)) {
        let bad = (0..got.len())
            .filter(|&i| !within(got[i], want.data[i], tol))
            .count();
        panic!(
            "{what}: first difference at index {i} (coordinates {:?} of {:?}): got {:?}, want {:?} \
             (tolerance {tol:?}; {bad} of {} elements differ)",
            unravel(i, &want.shape),
            want.shape,
            got[i],
            want.data[i],
            got.len()
        );
    }
}

/// Reads `got` (the result of an op named in `what`) as `T` and compares it with `want`; the
/// tensor is dropped before returning.
pub async fn expect<T: Val>(what: &str, got: Result<Tensor>, want: &Host<T>, tol: Tol) {
    let t = got.unwrap_or_else(|e| panic!("{what}: the op failed: {e}"));
    assert_eq!(t.dtype(), T::DTYPE, "{what}: result dtype");
    assert_eq!(t.shape(), &want.shape[..], "{what}: result shape");
    let values = t
        .read::<T>()
        .await
        .unwrap_or_else(|e| panic!("{what}: read failed: {e}"));
    compare(what, &values, want, tol);
}

/// The elements of `t` as 32-bit words, read with the typed reader of its dtype.
pub async fn read_words_typed(t: &Tensor) -> Result<Vec<u32>> {
    Ok(match t.dtype() {
        DType::Float32 => t.read::<f32>().await?.into_iter().map(f32::to_bits).collect(),
        DType::Int32 => t.read::<i32>().await?.into_iter().map(|v| v as u32).collect(),
        DType::Uint32 => t.read::<u32>().await?,
        DType::Bool => t.read::<bool>().await?.into_iter().map(u32::from).collect(),
    })
}

// ---------------------------------------------------------------------------------------------
// Running ops

fn run_unary(t: &Tensor, op: UnaryOp) -> Result<Tensor> {
    t.apply(&Op::Unary(op), &[])
}

fn run_binary(a: &Tensor, op: BinaryOp, b: &Tensor) -> Result<Tensor> {
    a.apply(&Op::Binary(op), &[b])
}

fn run_reduce(t: &Tensor, op: ReduceOp, axes: &[i64], keep: bool) -> Result<Tensor> {
    let op = Op::Reduce {
        op,
        axes: axes.to_vec(),
        keep_dims: keep,
    };
    t.apply(&op, &[])
}

async fn check_unary<T: Num>(s: &Session, op: UnaryOp, x: &Host<T>) {
    let what = format!("{} {} {:?}", Op::Unary(op).name(), T::DTYPE, x.shape);
    let tol = match op {
        UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu | UnaryOp::Square => Tol::Exact,
        _ => REL,
    };
    let tol = if T::DTYPE == DType::Float32 {
        tol
    } else {
        Tol::Exact
    };
    let t = x.upload(s);
    expect(&what, run_unary(&t, op), &unary_ref(op, x), tol).await;
}

async fn check_binary<T: Num>(s: &Session, op: BinaryOp, a: &Host<T>, b: &Host<T>) {
    let what = format!(
        "{} {} {:?} with {:?}",
        Op::Binary(op).name(),
        T::DTYPE,
        a.shape,
        b.shape
    );
    let tol = if T::DTYPE == DType::Float32 && op == BinaryOp::Div {
        REL
    } else {
        Tol::Exact
    };
    let (ta, tb) = (a.upload(s), b.upload(s));
    expect(&what, run_binary(&ta, op, &tb), &binary_ref(op, a, b), tol).await;
}

async fn check_matmul<T: Num>(s: &Session, a: &Host<T>, b: &Host<T>) {
    let what = format!("matmul {} {:?} · {:?}", T::DTYPE, a.shape, b.shape);
    let k = a.shape[a.shape.len() - 1] as f64;
    let tol = if T::DTYPE == DType::Float32 {
        // k products summed in some order: 1e-5·k·max|a|·max|b| + 1e-6
        Tol::Close {
            rel: 0.0,
            abs: 1e-5 * k * a.max_abs() * b.max_abs() + 1e-6,
        }
    } else {
        Tol::Exact
    };
    let (ta, tb) = (a.upload(s), b.upload(s));
    expect(&what, ta.matmul(&tb), &matmul_ref(a, b), tol).await;
}

/// `h` with its last two axes swapped (what a transposed operand's storage holds).
fn swap_last2<T: Num>(h: &Host<T>) -> Host<T> {
    let r = h.shape.len();
    let (rows, cols) = (h.shape[r - 2], h.shape[r - 1]);
    let mut data = Vec::with_capacity(h.data.len());
    for m in h.data.chunks(rows * cols) {
        for c in 0..cols {
            for row in 0..rows {
                data.push(m[row * cols + c]);
            }
        }
    }
    let mut shape = h.shape.clone();
    shape.swap(r - 2, r - 1);
    Host { shape, data }
}

/// `op(a)·op(b)` with the operands stored transposed and read in place (`transposeA/B`), against
/// the reference of the untransposed product.
async fn check_matmul_t<T: Num>(s: &Session, a: &Host<T>, b: &Host<T>, ta: bool, tb: bool) {
    let what = format!(
        "matmul {} {:?} · {:?} (transposeA {ta}, transposeB {tb})",
        T::DTYPE,
        a.shape,
        b.shape
    );
    let k = a.shape[a.shape.len() - 1] as f64;
    let tol = Tol::Close {
        rel: 0.0,
        abs: 1e-5 * k * a.max_abs() * b.max_abs() + 1e-6,
    };
    let sa = if ta { swap_last2(a) } else { a.clone() };
    let sb = if tb { swap_last2(b) } else { b.clone() };
    let (xa, xb) = (sa.upload(s), sb.upload(s));
    expect(&what, xa.matmul_t(&xb, ta, tb), &matmul_ref(a, b), tol).await;
}

async fn check_reduce<T: Num>(s: &Session, op: ReduceOp, x: &Host<T>, axes: &[i64], keep: bool) {
    let name = Op::Reduce {
        op,
        axes: vec![],
        keep_dims: keep,
    }
    .name();
    let what = format!("{name} {} {:?} axes {axes:?} keepDims {keep}", T::DTYPE, x.shape);
    let rank = x.shape.len();
    let n: usize = if axes.is_empty() {
        x.shape.iter().product()
    } else {
        axes.iter().map(|&a| x.shape[norm_axis(a, rank)]).product()
    };
    let tol = match (T::DTYPE, op) {
        // n terms summed in some order: 1e-5·n·max|x| + 1e-6; the mean is that divided by n
        (DType::Float32, ReduceOp::Sum) => Tol::Close {
            rel: 0.0,
            abs: 1e-5 * n as f64 * x.max_abs() + 1e-6,
        },
        (DType::Float32, ReduceOp::Mean) => Tol::Close {
            rel: 0.0,
            abs: 1e-5 * x.max_abs() + 1e-6,
        },
        _ => Tol::Exact,
    };
    let t = x.upload(s);
    expect(
        &what,
        run_reduce(&t, op, axes, keep),
        &reduce_ref(op, x, axes, keep),
        tol,
    )
    .await;
}

async fn check_softmax(s: &Session, x: &Host<f32>, axis: i64) {
    let what = format!("softmax float32 {:?} axis {axis}", x.shape);
    let n = x.shape[norm_axis(axis, x.shape.len())] as f64;
    // n exponentials summed, then one division: 1e-5·n·|w| + 1e-6
    let tol = Tol::Close {
        rel: 1e-5 * n,
        abs: 1e-6,
    };
    let t = x.upload(s);
    expect(&what, t.softmax(axis), &softmax_ref(x, axis), tol).await;
}

async fn check_layout<T: Val>(s: &Session, x: &Host<T>) {
    let n = x.data.len();
    let t = x.upload(s);
    let reshapes: Vec<Vec<i64>> = match x.shape.len() {
        0 => vec![vec![1], vec![-1], vec![1, 1, -1]],
        _ => vec![
            vec![-1],
            vec![n as i64],
            vec![1, -1, 1],
            vec![-1, *x.shape.last().unwrap() as i64],
            vec![x.shape[0] as i64, -1],
        ],
    };
    for r in &reshapes {
        let what = format!("reshape {} {:?} to {r:?}", T::DTYPE, x.shape);
        expect(&what, t.reshape(r.as_slice()), &reshape_ref(x, r), Tol::Exact).await;
    }
    let rank = x.shape.len() as i64;
    let mut perms: Vec<Option<Vec<i64>>> = vec![None, Some((0..rank).collect())];
    if rank == 3 {
        perms.extend([[1, 0, 2], [0, 2, 1], [2, 0, 1], [1, 2, 0], [-1, 0, 1]].map(|p| Some(p.to_vec())));
    }
    if rank == 4 {
        perms.push(Some(vec![3, 1, 0, 2]));
    }
    for p in &perms {
        let what = format!("transpose {} {:?} perm {p:?}", T::DTYPE, x.shape);
        let want = transpose_ref(x, p.as_deref());
        expect(&what, t.transpose(p.clone()), &want, Tol::Exact).await;
    }
}

async fn check_cast(s: &Session, from: DType, words: &[u32], shape: &[usize]) {
    let shape_v = shape.to_vec();
    let t = match from {
        DType::Float32 => s.tensor(
            &words.iter().map(|&w| f32::from_bits(w)).collect::<Vec<_>>(),
            shape,
        ),
        DType::Int32 => s.tensor(&words.iter().map(|&w| w as i32).collect::<Vec<_>>(), shape),
        DType::Uint32 => s.tensor(words, shape),
        DType::Bool => s.tensor(&words.iter().map(|&w| w != 0).collect::<Vec<_>>(), shape),
    }
    .unwrap_or_else(|e| panic!("upload {from} {shape_v:?}: {e}"));
    for to in [DType::Float32, DType::Int32, DType::Uint32, DType::Bool] {
        let what = format!("cast {from} {shape_v:?} to {to}");
        let out = t
            .cast(to)
            .unwrap_or_else(|e| panic!("{what}: the op failed: {e}"));
        assert_eq!(out.dtype(), to, "{what}: result dtype");
        assert_eq!(out.shape(), shape, "{what}: result shape");
        let got = read_words_typed(&out)
            .await
            .unwrap_or_else(|e| panic!("{what}: read failed: {e}"));
        drop(out);
        let want: Vec<u32> = words.iter().map(|&w| cast_word(w, from, to)).collect();
        // compared as words (exact) but reported as values
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "{what}: first difference at index {i} (coordinates {:?}): input {}, got {}, want {}",
                unravel(i, shape),
                from.word_to_f64(words[i]),
                to.word_to_f64(got[i]),
                to.word_to_f64(want[i])
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs

/// The odd sizes every elementwise op is checked at.
// 256: a multiple of 4 (the vec4 kernels); the others take the one-element-per-thread kernels
const SIZES: [usize; 5] = [1, 3, 17, 255, 256];

/// float32 inputs in `[lo, hi)`, the first entries replaced by `specials` when there is room.
fn floats(rng: &mut Rng, shape: &[usize], lo: f32, hi: f32, specials: &[f32]) -> Host<f32> {
    let n: usize = shape.iter().product();
    let mut h = Host::from_fn(shape, |_| rng.f32_in(lo, hi));
    if n >= 2 * specials.len() {
        h.data[..specials.len()].copy_from_slice(specials);
    }
    h
}

/// Positive float32 inputs, log-uniform over `[e⁻⁷, e⁷)`.
fn positives(rng: &mut Rng, shape: &[usize]) -> Host<f32> {
    let specials = [1.0, 4.0, 1e-6, 1e6, std::f32::consts::E];
    let mut h = Host::from_fn(shape, |_| (rng.f32_in(-7.0, 7.0) as f64).exp() as f32);
    if h.data.len() >= 2 * specials.len() {
        h.data[..specials.len()].copy_from_slice(&specials);
    }
    h
}

fn ints(rng: &mut Rng, shape: &[usize], lo: i32, hi: i32) -> Host<i32> {
    Host::from_fn(shape, |_| rng.i32_in(lo, hi))
}

fn uints(rng: &mut Rng, shape: &[usize], lo: u32, hi: u32) -> Host<u32> {
    Host::from_fn(shape, |_| rng.u32_in(lo, hi))
}

// ---------------------------------------------------------------------------------------------
// The suite

async fn unary_cases(s: &Session, rng: &mut Rng) {
    use UnaryOp::*;
    let mut shapes: Vec<Vec<usize>> = SIZES.iter().map(|&n| vec![n]).collect();
    shapes.push(vec![3, 17, 5]);
    for shape in &shapes {
        for op in [Neg, Abs, Square, Relu] {
            let specials = [0.0, -0.0, 1.0, -1.5, 1e30, -1e30, f32::INFINITY];
            check_unary(s, op, &floats(rng, shape, -100.0, 100.0, &specials)).await;
        }
        for op in [Sqrt, Log] {
            check_unary(s, op, &positives(rng, shape)).await;
        }
        let x = floats(rng, shape, -10.0, 10.0, &[0.0, 1.0, -1.0, -100.0]);
        check_unary(s, Exp, &x).await;
        for op in [Sigmoid, Tanh] {
            let specials = [0.0, 1e-3, -1e-3, 50.0, -50.0, 0.5];
            check_unary(s, op, &floats(rng, shape, -20.0, 20.0, &specials)).await;
        }
        // |x| < 2³⁰ so neg/abs stay defined; square wraps
        for op in [Neg, Abs, Square, Relu] {
            check_unary(s, op, &ints(rng, shape, -(1 << 30), 1 << 30)).await;
        }
        for op in [Abs, Square, Relu] {
            check_unary(s, op, &uints(rng, shape, 0, u32::MAX)).await;
        }
    }
}

async fn binary_cases(s: &Session, rng: &mut Rng) {
    use BinaryOp::*;
    let mut pairs: Vec<(Vec<usize>, Vec<usize>)> = SIZES.iter().map(|&n| (vec![n], vec![n])).collect();
    pairs.extend([
        (vec![3, 1], vec![1, 4]),
        (vec![2, 3, 4], vec![4]),
        (vec![4], vec![2, 3, 4]),
        (vec![], vec![5]),
        (vec![5], vec![]),
        (vec![2, 1, 17], vec![3, 1]),
        (vec![3, 17, 5], vec![3, 17, 5]),
        // vec4 kernels: a scalar side, a repeated row of a multiple of 4 (also behind size-1
        // dims); a row of 6 falls back to the general kernel
        (vec![], vec![8]),
        (vec![2, 8], vec![]),
        (vec![5, 8], vec![1, 8]),
        (vec![3, 6], vec![6]),
    ]);
    for (sa, sb) in &pairs {
        for op in [Add, Sub, Mul, Div] {
            let a = floats(rng, sa, -100.0, 100.0, &[]);
            let b = if op == Div {
                // divisors away from zero: ±[0.5, 100)
                Host::from_fn(sb, |_| {
                    let m = rng.f32_in(0.5, 100.0);
                    if rng.one_in(2) {
                        -m
                    } else {
                        m
                    }
                })
            } else {
                floats(rng, sb, -100.0, 100.0, &[])
            };
            check_binary(s, op, &a, &b).await;

            // int32: full range (add/sub/mul wrap); division also by 0 and -1, and of i32::MIN
            let a = Host::from_fn(sa, |_| {
                if op == Div && rng.one_in(8) {
                    i32::MIN
                } else {
                    rng.next_u32() as i32
                }
            });
            let b = Host::from_fn(sb, |_| match (op, rng.next_u32() % 8) {
                (Div, 0) => 0,
                (Div, 1) => -1,
                (Div, _) => rng.i32_in(-1000, 1000),
                _ => rng.next_u32() as i32,
            });
            check_binary(s, op, &a, &b).await;

            // uint32: full range (sub wraps below 0); division also by 0
            let a = uints(rng, sa, 0, u32::MAX);
            let b = Host::from_fn(sb, |_| match (op, rng.next_u32() % 8) {
                (Div, 0) => 0,
                (Div, _) => rng.u32_in(1, 1000),
                _ => rng.next_u32(),
            });
            check_binary(s, op, &a, &b).await;
        }
    }
}

async fn cast_cases(s: &Session, rng: &mut Rng) {
    for shape in [vec![1], vec![17], vec![3, 5]] {
        let n: usize = shape.iter().product();
        // float32: fractions of both signs (truncation), ±0, negatives (uint32 saturates to 0)
        let specials = [
            -3.7f32,
            -0.5,
            -0.0,
            0.0,
            0.5,
            2.9,
            -2.9,
            1e9,
            -1e9,
            16_777_216.0,
            1.0,
            -1.0,
            100.5,
        ];
        let f: Vec<u32> = (0..n)
            .map(|i| match specials.get(i) {
                Some(&v) if n > 1 => v.to_bits(),
                _ => rng.f32_in(-1000.0, 1000.0).to_bits(),
            })
            .collect();
        check_cast(s, DType::Float32, &f, &shape).await;
        // int32 / uint32: multiples of 256 over the full range (each exactly a float32), small
        // values and zeros
        let i: Vec<u32> = (0..n)
            .map(|_| match rng.next_u32() % 4 {
                0 => 0,
                1 => rng.i32_in(-100, 100) as u32,
                _ => rng.next_u32() & !0xFF,
            })
            .collect();
        check_cast(s, DType::Int32, &i, &shape).await;
        check_cast(s, DType::Uint32, &i, &shape).await;
        let b: Vec<u32> = (0..n).map(|_| rng.next_u32() & 1).collect();
        check_cast(s, DType::Bool, &b, &shape).await;
    }
}

async fn matmul_cases(s: &Session, rng: &mut Rng) {
    // GPU forms: the first eight use the small kernel; the next three have at least 16 64×64 output
    // tiles and use the large one, with edges that are not multiples of 64 or 4; the last two the
    // big one (128×128 tiles). CPU form (every
    // case): 4×8 blocks, N a multiple of 4 or not (vec4 or scalar loads of B), batches broadcast;
    // 8×16 blocks where K and N are multiples of 4 (16×16, 256×64·64×256 and the last four, whose
    // rows are not in eights and columns in eights but not sixteens: a block half outside). A
    // workgroup spans 1, 2, 4 or 8 blocks across (the fewest that cover N): 8×16 blocks two across
    // (N = 32, rows in neither eights nor a workgroup's 256) and four across with the last outside
    // (N = 40); 4×8 blocks two across (N = 13, K not in fours) and four (N = 18).
    let cases: [(&[usize], &[usize]); 17] = [
        (&[17, 33], &[33, 5]),
        (&[1, 1], &[1, 1]),
        (&[2, 3, 17, 9], &[9, 4]),
        (&[2, 1, 5, 6], &[3, 6, 7]),
        (&[4, 5], &[2, 5, 3]),
        (&[16, 16], &[16, 16]),
        (&[33, 40], &[40, 18]),
        (&[1, 255], &[255, 3]),
        (&[256, 64], &[64, 256]),
        (&[301, 37], &[37, 259]),
        (&[3, 130, 70], &[70, 150]),
        (&[21, 12], &[12, 40]),
        (&[2, 70, 20], &[20, 136]),
        (&[301, 24], &[24, 32]),
        (&[9, 7], &[7, 13]),
        // GPU forms: 128 128×128 output tiles (64 make the big kernel), plain operands with K and N in fours:
        // rows and columns not in 128s, K over three 16-deep tiles with the last partial, B broadcast
        // over the batch; then A broadcast, K = 4 (one partial tile)
        (&[32, 130, 36], &[36, 132]),
        (&[130, 4], &[32, 4, 136]),
    ];
    for (sa, sb) in cases {
        check_matmul(
            s,
            &floats(rng, sa, -1.0, 1.0, &[]),
            &floats(rng, sb, -1.0, 1.0, &[]),
        )
        .await;
        check_matmul(s, &ints(rng, sa, -100, 100), &ints(rng, sb, -100, 100)).await;
        check_matmul(s, &uints(rng, sa, 0, 100), &uints(rng, sb, 0, 100)).await;
    }
    // transposed operands, both GPU kernels (cases 8 to 10 and 15 use the large one: the big kernel
    // takes plain operands only), batched;
    // the CPU form with edges (rows not in fours, columns not in eights, k not in fours) and without
    for (sa, sb) in [
        cases[0], cases[3], cases[6], cases[8], cases[9], cases[10], cases[13], cases[14], cases[15],
    ] {
        for (ta, tb) in [(true, false), (false, true), (true, true)] {
            let (a, b) = (floats(rng, sa, -1.0, 1.0, &[]), floats(rng, sb, -1.0, 1.0, &[]));
            check_matmul_t(s, &a, &b, ta, tb).await;
        }
    }
    // wrapping integer products and sums: exact whatever the order
    let (a, b) = (
        ints(rng, &[5, 17], i32::MIN, i32::MAX),
        ints(rng, &[17, 3], i32::MIN, i32::MAX),
    );
    check_matmul(s, &a, &b).await;
}

async fn reduce_cases(s: &Session, rng: &mut Rng) {
    use ReduceOp::*;
    let shape = [3usize, 17, 5];
    let axes_sets: [&[i64]; 11] = [
        &[0],
        &[1],
        &[2],
        &[-1],
        &[-2],
        &[0, 2],
        &[-3, -1],
        &[1, 2],
        &[2, 0],
        &[0, 1, 2],
        &[],
    ];
    let x = floats(rng, &shape, -10.0, 10.0, &[]);
    let xi = ints(rng, &shape, i32::MIN, i32::MAX); // sums wrap
    let xu = uints(rng, &shape, 0, u32::MAX);
    for axes in axes_sets {
        for keep in [false, true] {
            for op in [Sum, Mean, Max, Min] {
                check_reduce(s, op, &x, axes, keep).await;
            }
            for op in [Sum, Max, Min] {
                check_reduce(s, op, &xi, axes, keep).await;
                check_reduce(s, op, &xu, axes, keep).await;
            }
        }
    }
    // longer than the 64-thread workgroup; 4096+ per output (256 threads), trailing axes
    // (contiguous) or not, size-1 axes between; 1-element and scalar inputs
    let others: [(&[usize], &[i64]); 16] = [
        (&[2, 1000], &[1]),
        (&[2, 1000], &[0]),
        (&[2, 5003], &[1]),
        (&[5003, 2], &[0]),
        (&[70, 1, 70], &[0, 2]),
        (&[3, 1, 1500], &[1, 2]),
        (&[1, 4, 1], &[0]),
        // long reductions into few outputs: split into parts, then combined
        (&[70_000], &[]),
        (&[3, 40_000], &[1]),
        (&[40_000, 3], &[0]),
        // split, the length not a multiple of 4 (no vec4 loads)
        (&[70_001], &[]),
        (&[3, 40_002], &[1]),
        (&[255], &[]),
        (&[255], &[0]),
        (&[1], &[0]),
        (&[], &[]),
    ];
    for (shape, axes) in others {
        let x = floats(rng, shape, -10.0, 10.0, &[]);
        let xi = ints(rng, shape, -1000, 1000);
        let xu = uints(rng, shape, 0, 1000);
        for keep in [false, true] {
            for op in [Sum, Mean, Max, Min] {
                check_reduce(s, op, &x, axes, keep).await;
            }
            for op in [Sum, Max, Min] {
                check_reduce(s, op, &xi, axes, keep).await;
                check_reduce(s, op, &xu, axes, keep).await;
            }
        }
    }
}

async fn softmax_cases(s: &Session, rng: &mut Rng) {
    let x = floats(rng, &[3, 17, 5], -5.0, 5.0, &[]);
    for axis in [0, 1, 2, -1, -2, -3] {
        check_softmax(s, &x, axis).await;
    }
    // wide range: the row maximum must be subtracted before exp
    let wide = floats(rng, &[3, 17, 5], -100.0, 100.0, &[]);
    for axis in [0, 1, -1] {
        check_softmax(s, &wide, axis).await;
    }
    let long = floats(rng, &[2, 255], -5.0, 5.0, &[]);
    for axis in [0, -1] {
        check_softmax(s, &long, axis).await;
    }
    check_softmax(s, &floats(rng, &[1], -5.0, 5.0, &[]), 0).await;
}

async fn layout_cases(s: &Session, rng: &mut Rng) {
    for shape in [vec![3, 17, 5], vec![17, 33], vec![255], vec![2, 3, 4, 5], vec![]] {
        check_layout(s, &floats(rng, &shape, -100.0, 100.0, &[])).await;
        check_layout(s, &ints(rng, &shape, i32::MIN, i32::MAX)).await;
        check_layout(s, &uints(rng, &shape, 0, u32::MAX)).await;
        check_layout(s, &Host::from_fn(&shape, |_| rng.one_in(2))).await;
    }
}

async fn error_cases(s: &Session) {
    let a23 = s.tensor(&[1.0f32; 6], &[2, 3]).unwrap();
    let a4 = s.tensor(&[1.0f32; 4], &[4]).unwrap();
    let a24 = s.tensor(&[1.0f32; 8], &[2, 4]).unwrap();
    let i23 = s.tensor(&[1i32; 6], &[2, 3]).unwrap();
    let before = s.stats();
    let cases: [(&str, Result<Tensor>, &str); 5] = [
        ("add [2, 3] + [4]", a23.add(&a4), "SHAPE_MISMATCH"),
        ("add float32 + int32", a23.add(&i23), "DTYPE_MISMATCH"),
        ("sqrt int32 [2, 3]", i23.sqrt(), "DTYPE_MISMATCH"),
        ("matmul [2, 3] · [2, 4]", a23.matmul(&a24), "SHAPE_MISMATCH"),
        ("sum [2, 3] axis 5", a23.sum(&[5], false), "INVALID_ARGUMENT"),
    ];
    for (what, r, code) in cases {
        match r {
            Ok(t) => panic!("{what}: expected {code}, got a tensor {t:?}"),
            Err(e) => assert_eq!(e.code(), code, "{what}: {e}"),
        }
    }
    assert_eq!(s.stats(), before, "failed op calls change no counter");
}

/// Every eager op on random inputs (odd sizes, broadcasting, batched matmul, reductions over any
/// axes, softmax over each axis, every cast, reshape and transpose) compared with the CPU reference
/// above; op errors carry their codes and change nothing; every intermediate is released.
pub async fn ops_match_cpu_reference(s: &Session) {
    let mut rng = Rng::new(0xAFF0_5EED);
    unary_cases(s, &mut rng).await;
    binary_cases(s, &mut rng).await;
    cast_cases(s, &mut rng).await;
    matmul_cases(s, &mut rng).await;
    reduce_cases(s, &mut rng).await;
    softmax_cases(s, &mut rng).await;
    layout_cases(s, &mut rng).await;
    error_cases(s).await;
    crate::common::table::table_ops_match_f64_reference(s).await;
    let x = s.stats();
    assert_eq!(
        (x.live_bytes, x.live_tensors),
        (0, 0),
        "every input and result was dropped"
    );
}
