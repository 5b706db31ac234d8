//! Shape and dtype inference for every op.

use super::dims::numeric;
pub use super::dims::{axis, broadcast, permutation, reduce_axes, Dims};
use super::{Op, Rule};
use crate::dtype::DType;
use crate::error::{Error, Result};

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
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt $($rest:tt)*),)*) => {
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
