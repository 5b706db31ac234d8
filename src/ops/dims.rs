//! Dims and the shape helpers every rule shares: axes, permutations, broadcasting, reshape targets.

use crate::dtype::DType;
use crate::error::{Error, Result};

/// A shape whose dims may be unknown (`None`, a dynamic dim) until a run specialises it.
pub type Dims = Vec<Option<usize>>;

pub(super) fn show(d: &[Option<usize>]) -> String {
    let parts: Vec<String> = d
        .iter()
        .map(|x| x.map_or("-1".to_string(), |n| n.to_string()))
        .collect();
    format!("[{}]", parts.join(", "))
}

/// Normalises an axis (negative counts from the end) for a tensor of `rank`: `-rank ≤ a < rank`, so
/// a scalar (rank 0) has no axis at all, as in TF.js.
pub fn axis(op: &str, a: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    if a < -r || a >= r {
        return Err(Error::InvalidArgument(format!(
            "{op}: axis {a} is out of range for a tensor of rank {rank}"
        )));
    }
    Ok(if a < 0 { (a + r) as usize } else { a as usize })
}

/// Normalised, sorted, de-duplicated reduction axes (empty: all).
pub fn reduce_axes(op: &str, axes: &[i64], rank: usize) -> Result<Vec<usize>> {
    if axes.is_empty() {
        return Ok((0..rank).collect());
    }
    let mut out = axes
        .iter()
        .map(|&a| axis(op, a, rank))
        .collect::<Result<Vec<_>>>()?;
    out.sort_unstable();
    let n = out.len();
    out.dedup();
    if out.len() != n {
        return Err(Error::InvalidArgument(format!(
            "{op}: axes {axes:?} repeat an axis"
        )));
    }
    Ok(out)
}

/// The permutation of a transpose (default reverses), validated.
pub fn permutation(perm: Option<&[i64]>, rank: usize) -> Result<Vec<usize>> {
    let Some(p) = perm else {
        return Ok((0..rank).rev().collect());
    };
    if p.len() != rank {
        return Err(Error::InvalidArgument(format!(
            "transpose: perm {p:?} has {} entries but the tensor has rank {rank}",
            p.len()
        )));
    }
    let out = p
        .iter()
        .map(|&a| axis("transpose", a, rank))
        .collect::<Result<Vec<_>>>()?;
    let mut seen = vec![false; rank];
    for &a in &out {
        if std::mem::replace(&mut seen[a], true) {
            return Err(Error::InvalidArgument(format!(
                "transpose: perm {p:?} is not a permutation"
            )));
        }
    }
    Ok(out)
}

/// Broadcasts two shapes NumPy-style.
pub fn broadcast(op: &str, a: &[Option<usize>], b: &[Option<usize>]) -> Result<Dims> {
    let n = a.len().max(b.len());
    let mut out = vec![None; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            Some(1)
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            Some(1)
        };
        out[i] = match (da, db) {
            (Some(x), Some(y)) if x == y || y == 1 => Some(x),
            (Some(1), Some(y)) => Some(y),
            (Some(_), Some(_)) => {
                return Err(Error::ShapeMismatch(format!(
                    "{op}: shapes {} and {} cannot be broadcast (dimension {i}: {} vs {})",
                    show(a),
                    show(b),
                    da.unwrap(),
                    db.unwrap()
                )))
            }
            (None, Some(1)) | (Some(1), None) | (None, None) => None,
            (None, Some(y)) => Some(y),
            (Some(x), None) => Some(x),
        };
    }
    Ok(out)
}

pub(super) fn numeric(op: &str, d: DType) -> Result<()> {
    if d == DType::Bool {
        return Err(Error::DtypeMismatch(format!(
            "{op} needs a numeric tensor, got bool"
        )));
    }
    Ok(())
}

pub(super) fn reshape(s: &[Option<usize>], target: &[i64]) -> Result<Dims> {
    let inferred = target.iter().filter(|&&x| x == -1).count();
    let max = crate::shape::MAX_ELEMENTS as i64;
    if inferred > 1 || target.iter().any(|&x| x == 0 || x < -1 || x > max) {
        return Err(Error::InvalidArgument(format!(
            "reshape: target {target:?} may hold positive dims (at most {max}) and at most one -1"
        )));
    }
    // Checked 64-bit products: the same result on wasm32 and native, never wrapped.
    let known: Option<u64> = s
        .iter()
        .try_fold(1u64, |acc, d| d.and_then(|d| acc.checked_mul(d as u64)));
    let fixed: u64 = target
        .iter()
        .filter(|&&x| x > 0)
        .try_fold(1u64, |acc, &x| {
            acc.checked_mul(x as u64).filter(|&n| n <= max as u64)
        })
        .ok_or_else(|| {
            Error::InvalidArgument(format!("reshape: target {target:?} has more than {max} elements"))
        })?;
    let mut out: Dims = target.iter().map(|&x| (x > 0).then_some(x as usize)).collect();
    match known {
        Some(total) if inferred == 1 => {
            if total % fixed != 0 {
                return Err(Error::ShapeMismatch(format!(
                    "reshape: {} elements cannot fill {target:?}",
                    total
                )));
            }
            if let Some(pos) = target.iter().position(|&x| x == -1) {
                out[pos] = Some((total / fixed) as usize);
            }
        }
        Some(total) if total != fixed => {
            return Err(Error::ShapeMismatch(format!(
                "reshape: {} has {total} elements but {target:?} needs {fixed}",
                show(s)
            )))
        }
        _ => {}
    }
    Ok(out)
}
