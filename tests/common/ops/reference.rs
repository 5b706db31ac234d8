//! The CPU reference of each op and the comparison of a GPU result with it (tolerances: the
//! parent module's docs).

use affon::ops::{BinaryOp, ReduceOp, UnaryOp};
use affon::{DType, Result, Tensor};

use super::{Host, Num, Val};

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

pub fn within<T: Val>(g: T, w: T, tol: Tol) -> bool {
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
