//! Shape and dtype inference for every op.

use super::{Op, Rule};
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

/// The output dtype of an elementwise op with rule `rule` on dtypes `d` and `e` (`e = d` for
/// unary ops), or why the dtypes do not fit.
fn elementwise_dtype(name: &str, rule: Rule, d: DType, e: DType) -> Result<DType> {
    if d != e {
        return Err(Error::DtypeMismatch(format!(
            "{name}: dtypes differ ({d} and {e}); cast one first"
        )));
    }
    match rule {
        Rule::Any | Rule::Numeric => numeric(name, d).map(|_| d),
        Rule::Signed if matches!(d, DType::Float32 | DType::Int32) => Ok(d),
        Rule::Signed => Err(Error::DtypeMismatch(format!(
            "{name} needs float32 or int32, got {d}"
        ))),
        Rule::Float if d == DType::Float32 => Ok(d),
        Rule::Float => Err(Error::DtypeMismatch(format!(
            "{name} needs float32, got {d} (cast it first)"
        ))),
        Rule::Bool | Rule::Logical if d == DType::Bool => Ok(DType::Bool),
        Rule::Bool | Rule::Logical => Err(Error::DtypeMismatch(format!(
            "{name} needs bool, got {d} (compare or cast first)"
        ))),
        Rule::Compare => Ok(DType::Bool),
    }
}

/// The output shape and dtype of `op` applied to `args`.
pub fn infer(op: &Op, args: &[(Dims, DType)]) -> Result<(Dims, DType)> {
    let name = op.name();
    if args.len() != op.arity() {
        return Err(Error::InvalidProgram(format!(
            "{name} takes {} argument(s), got {}",
            op.arity(),
            args.len()
        )));
    }
    let (s, d) = (&args[0].0, args[0].1);
    Ok(match op {
        Op::Unary(u) => (s.clone(), elementwise_dtype(name, u.rule(), d, d)?),
        Op::Binary(b) => {
            let (t, e) = (&args[1].0, args[1].1);
            (broadcast(name, s, t)?, elementwise_dtype(name, b.rule(), d, e)?)
        }
        Op::Reduce {
            op: r,
            axes,
            keep_dims,
        } => {
            numeric(name, d)?;
            if r.rule() == Rule::Float && d != DType::Float32 {
                return Err(Error::DtypeMismatch(format!("{name} needs float32, got {d}")));
            }
            let axes = reduce_axes(name, axes, s.len())?;
            let out = s
                .iter()
                .enumerate()
                .filter_map(|(i, &x)| match (axes.contains(&i), keep_dims) {
                    (true, true) => Some(Some(1)),
                    (true, false) => None,
                    (false, _) => Some(x),
                })
                .collect();
            (out, d)
        }
        _ => return table_rule(op, args),
    })
}

macro_rules! infer_table {
    (surfaced: [$($e:tt),* $(,)?], internal: [$($i:tt),* $(,)?] $(,)?) => {
        infer_table!(@all $($e,)* $($i,)*);
    };
    (@all $(($m:ident, $v:ident, $js:literal, $doc:literal, $k:path, [$($a:ident),*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt),)*) => {
        /// The rule of an op-table op: `rules::<method>(args, attributes…)`.
        fn table_rule(op: &Op, args: &[(Dims, DType)]) -> Result<(Dims, DType)> {
            match op {
                $(Op::$v { $($f,)* $($o,)* } => super::rules::$m(args, $($f,)* $($o,)*),)*
                Op::Unary(_) | Op::Binary(_) | Op::Reduce { .. } => unreachable!("handled by infer"),
            }
        }
    };
}
crate::kernel_table!(infer_table);

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::BinaryOp;
    use crate::ops::ReduceOp;
    use crate::ops::UnaryOp;

    fn k(d: &[usize]) -> Dims {
        d.iter().map(|&x| Some(x)).collect()
    }

    #[test]
    fn broadcasting_follows_numpy_and_dynamic_dims_stay_open() {
        let add = Op::Binary(BinaryOp::Add);
        let f = DType::Float32;
        assert_eq!(
            infer(&add, &[(k(&[2, 1, 3]), f), (k(&[4, 1]), f)]).unwrap().0,
            k(&[2, 4, 3])
        );
        let e = infer(&add, &[(k(&[2, 3]), f), (k(&[4]), f)]).unwrap_err();
        assert_eq!(e.code(), "SHAPE_MISMATCH");
        assert!(
            e.to_string().contains("[2, 3]") && e.to_string().contains("[4]"),
            "{e}"
        );
        assert_eq!(
            infer(&add, &[(vec![None, Some(4)], f), (k(&[4]), f)]).unwrap().0,
            vec![None, Some(4)]
        );
        let e = infer(&add, &[(k(&[2]), f), (k(&[2]), DType::Int32)]).unwrap_err();
        assert_eq!(e.code(), "DTYPE_MISMATCH");
    }

    #[test]
    fn reductions_matmul_reshape_transpose() {
        let f = DType::Float32;
        let sum = |axes: Vec<i64>, keep| Op::Reduce {
            op: ReduceOp::Sum,
            axes,
            keep_dims: keep,
        };
        assert_eq!(infer(&sum(vec![], false), &[(k(&[2, 3]), f)]).unwrap().0, k(&[]));
        assert_eq!(
            infer(&sum(vec![-1], true), &[(k(&[2, 3]), f)]).unwrap().0,
            k(&[2, 1])
        );
        assert_eq!(
            infer(&sum(vec![2], false), &[(k(&[2, 3]), f)])
                .unwrap_err()
                .code(),
            "INVALID_ARGUMENT"
        );
        // a scalar has no axis: 0 and -1 alike are out of range (all axes, `[]`, is the scalar)
        for a in [0, -1] {
            let e = infer(&sum(vec![a], false), &[(k(&[]), f)]).unwrap_err();
            assert_eq!(e.code(), "INVALID_ARGUMENT", "axis {a}: {e}");
        }
        assert_eq!(infer(&sum(vec![], false), &[(k(&[]), f)]).unwrap().0, k(&[]));
        assert_eq!(
            infer(
                &Op::MatMul {
                    transpose_a: false,
                    transpose_b: false
                },
                &[(k(&[5, 2, 3]), f), (k(&[3, 4]), f)]
            )
            .unwrap()
            .0,
            k(&[5, 2, 4])
        );
        assert_eq!(
            infer(
                &Op::MatMul {
                    transpose_a: false,
                    transpose_b: false
                },
                &[(k(&[2, 3]), f), (k(&[2, 4]), f)]
            )
            .unwrap_err()
            .code(),
            "SHAPE_MISMATCH"
        );
        let r = Op::Reshape { shape: vec![-1, 6] };
        assert_eq!(infer(&r, &[(k(&[3, 4]), f)]).unwrap().0, k(&[2, 6]));
        assert_eq!(
            infer(&Op::Reshape { shape: vec![5] }, &[(k(&[3, 4]), f)])
                .unwrap_err()
                .code(),
            "SHAPE_MISMATCH"
        );
        let t = Op::Transpose { perm: None };
        assert_eq!(infer(&t, &[(k(&[2, 3, 4]), f)]).unwrap().0, k(&[4, 3, 2]));
        let t = Op::Transpose {
            perm: Some(vec![0, 0]),
        };
        assert_eq!(
            infer(&t, &[(k(&[2, 3]), f)]).unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
        let sq = Op::Unary(UnaryOp::Sqrt);
        assert_eq!(
            infer(&sq, &[(k(&[2]), DType::Int32)]).unwrap_err().code(),
            "DTYPE_MISMATCH"
        );
    }
}
