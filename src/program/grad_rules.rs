//! The helpers the op table's gradient rules call (`ops/table.rs`, last column): small builders of
//! program nodes, and the rules too long for a table cell (reductions, gather, convolutions,
//! pooling, matmul, windows). Each returns the node of one argument's gradient before it is summed
//! back to that argument's shape (`sum_to`, applied by `Program::grad`).

use super::grad::Vjp;
use super::NodeId;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::infer::{permutation, reduce_axes};
use crate::ops::{BinaryOp, Op, Pad, Pair, ReduceOp};

fn unsupported(what: String) -> Error {
    Error::InvalidProgram(format!("grad: {what}"))
}

impl Vjp<'_> {
    /// A float32 scalar constant.
    pub(crate) fn c(&mut self, v: f64) -> Result<NodeId> {
        self.p.constant(&[v], &[], DType::Float32)
    }
    pub(crate) fn add(&mut self, a: NodeId, b: NodeId) -> Result<NodeId> {
        self.p.add(a, b)
    }
    pub(crate) fn sub(&mut self, a: NodeId, b: NodeId) -> Result<NodeId> {
        self.p.sub(a, b)
    }
    pub(crate) fn mul(&mut self, a: NodeId, b: NodeId) -> Result<NodeId> {
        self.p.mul(a, b)
    }
    pub(crate) fn div(&mut self, a: NodeId, b: NodeId) -> Result<NodeId> {
        self.p.div(a, b)
    }
    pub(crate) fn neg(&mut self, a: NodeId) -> Result<NodeId> {
        self.p.neg(a)
    }
    /// `a · k`.
    pub(crate) fn scale(&mut self, a: NodeId, k: f64) -> Result<NodeId> {
        self.p.binary_scalar(BinaryOp::Mul, a, k)
    }
    /// `a + k`.
    pub(crate) fn add_scalar(&mut self, a: NodeId, k: f64) -> Result<NodeId> {
        self.p.binary_scalar(BinaryOp::Add, a, k)
    }
    /// `1 − a`.
    pub(crate) fn one_minus(&mut self, a: NodeId) -> Result<NodeId> {
        let n = self.p.neg(a)?;
        self.add_scalar(n, 1.0)
    }
    /// `x > 0` (bool).
    pub(crate) fn positive(&mut self, x: NodeId) -> Result<NodeId> {
        self.p.binary_scalar(BinaryOp::Greater, x, 0.0)
    }
    /// `a` where `cond`, else `b` (broadcast).
    pub(crate) fn select(&mut self, a: NodeId, cond: NodeId, b: NodeId) -> Result<NodeId> {
        self.p.op(Op::Where {}, &[a, cond, b])
    }
    /// `g` where `cond`, else 0.
    pub(crate) fn mask(&mut self, g: NodeId, cond: NodeId) -> Result<NodeId> {
        let zero = self.c(0.0)?;
        self.select(g, cond, zero)
    }
    /// 0 where `cond`, else `g`.
    pub(crate) fn mask_not(&mut self, g: NodeId, cond: NodeId) -> Result<NodeId> {
        let zero = self.c(0.0)?;
        self.select(zero, cond, g)
    }
    /// `v` broadcast to `like`'s shape (`where(v, true, like)`; dynamic dims included).
    pub(crate) fn broadcast_like(&mut self, v: NodeId, like: NodeId) -> Result<NodeId> {
        let yes = self.p.constant(&[1.0], &[], DType::Bool)?;
        self.select(v, yes, like)
    }
    /// Zeros of `x`'s shape.
    pub(crate) fn zeros_like(&mut self, x: NodeId) -> Result<NodeId> {
        let zero = self.c(0.0)?;
        self.broadcast_like(zero, x)
    }

    /// `g` summed back to the shape of `target` (the leading dims it lacks and the dims where it
    /// has 1), as broadcasting forward requires.
    pub(crate) fn sum_to(&mut self, g: NodeId, target: NodeId) -> Result<NodeId> {
        let (gd, td) = (self.p.dims_of(g), self.p.dims_of(target));
        if gd == td {
            return Ok(g);
        }
        let lead = gd.len().saturating_sub(td.len());
        let mut g = g;
        if lead > 0 {
            let axes: Vec<i64> = (0..lead as i64).collect();
            g = self.p.sum(g, &axes, false)?;
        }
        let gd = self.p.dims_of(g);
        let ones: Vec<i64> = (0..td.len())
            .filter(|&i| td[i] == Some(1) && gd[i] != Some(1))
            .map(|i| i as i64)
            .collect();
        if !ones.is_empty() {
            g = self.p.sum(g, &ones, true)?;
        }
        Ok(g)
    }

    /// The dims of `x` with `axes` kept as 1, as reshape targets (one dynamic dim as -1).
    fn kept(&self, x: NodeId, axes: &[usize]) -> Result<Vec<i64>> {
        let dims = self.p.dims_of(x);
        let out: Vec<i64> = dims
            .iter()
            .enumerate()
            .map(|(i, d)| {
                if axes.contains(&i) {
                    1
                } else {
                    d.map_or(-1, |n| n as i64)
                }
            })
            .collect();
        if out.iter().filter(|&&d| d == -1).count() > 1 {
            return Err(unsupported(format!(
                "a reduction over a value with several dynamic dims ({dims:?}) cannot be differentiated"
            )));
        }
        Ok(out)
    }

    /// `g` (a reduction's output gradient) with the reduced axes restored as 1.
    fn unreduce(&mut self, x: NodeId, g: NodeId, axes: &[i64], keep: bool) -> Result<(NodeId, Vec<usize>)> {
        let rank = self.p.dims_of(x).len();
        let axes = reduce_axes("grad", axes, rank)?;
        if keep {
            return Ok((g, axes));
        }
        let shape = self.kept(x, &axes)?;
        Ok((self.p.reshape(g, shape)?, axes))
    }

    /// `sum` (or, `mean`, `sum / count`): the gradient broadcast back over the reduced axes.
    pub(crate) fn sum_grad(
        &mut self,
        x: NodeId,
        g: NodeId,
        axes: &[i64],
        keep: bool,
        mean: bool,
    ) -> Result<NodeId> {
        let (gk, axes) = self.unreduce(x, g, axes, keep)?;
        let mut b = self.broadcast_like(gk, x)?;
        if mean {
            let dims = self.p.dims_of(x);
            match axes.iter().map(|&a| dims[a]).collect::<Option<Vec<usize>>>() {
                Some(ns) => b = self.scale(b, 1.0 / ns.iter().product::<usize>().max(1) as f64)?,
                None => {
                    let ones = self.c(1.0)?;
                    let ones = self.broadcast_like(ones, x)?;
                    let count =
                        self.p
                            .sum(ones, &axes.iter().map(|&a| a as i64).collect::<Vec<_>>(), true)?;
                    b = self.div(b, count)?;
                }
            }
        }
        Ok(b)
    }

    /// `max`/`min`: shared equally by the elements equal to the extreme (as TF.js).
    pub(crate) fn extreme_grad(
        &mut self,
        x: NodeId,
        y: NodeId,
        g: NodeId,
        axes: &[i64],
        keep: bool,
    ) -> Result<NodeId> {
        let (gk, axes) = self.unreduce(x, g, axes, keep)?;
        let (yk, _) = self.unreduce(x, y, &axes.iter().map(|&a| a as i64).collect::<Vec<_>>(), keep)?;
        let hit = self.p.equal(x, yk)?;
        let ind = self.p.cast(hit, DType::Float32)?;
        let count = self
            .p
            .sum(ind, &axes.iter().map(|&a| a as i64).collect::<Vec<_>>(), true)?;
        let share = self.div(gk, count)?;
        self.mul(ind, share)
    }

    /// `prod`: `g · y / x` (undefined where an element is 0).
    pub(crate) fn prod_grad(
        &mut self,
        x: NodeId,
        y: NodeId,
        g: NodeId,
        axes: &[i64],
        keep: bool,
    ) -> Result<NodeId> {
        let (gk, axes) = self.unreduce(x, g, axes, keep)?;
        let (yk, _) = self.unreduce(x, y, &axes.iter().map(|&a| a as i64).collect::<Vec<_>>(), keep)?;
        let t = self.mul(gk, yk)?;
        self.div(t, x)
    }

    /// `cast` between float values passes the gradient through (integer paths are rejected first).
    pub(crate) fn cast_grad(&mut self, _a: NodeId, g: NodeId) -> Result<NodeId> {
        Ok(g)
    }

    /// `softmax`: `y · (g − Σ g·y)` along the axis.
    pub(crate) fn softmax_grad(&mut self, y: NodeId, g: NodeId, axis: i64) -> Result<NodeId> {
        let gy = self.mul(g, y)?;
        let s = self.p.sum(gy, &[axis], true)?;
        let d = self.sub(g, s)?;
        self.mul(d, y)
    }

    /// `g` reshaped to `a`'s shape.
    pub(crate) fn reshape_like(&mut self, g: NodeId, a: NodeId) -> Result<NodeId> {
        let shape = self.kept(a, &[])?;
        self.p.reshape(g, shape)
    }

    /// `transpose`: `g` transposed by the inverse permutation.
    pub(crate) fn transpose_grad(&mut self, a: NodeId, g: NodeId, perm: &Option<Vec<i64>>) -> Result<NodeId> {
        let p = permutation(perm.as_deref(), self.p.dims_of(a).len())?;
        let mut inv = vec![0i64; p.len()];
        for (i, &j) in p.iter().enumerate() {
            inv[j] = i as i64;
        }
        self.p.transpose(g, Some(inv))
    }

    /// `gather`: the rows of `g` added into a zero tensor of `a`'s shape at the indices (a one-hot
    /// product: `oneHot(indices)ᵀ · g`, the axis moved first and back).
    pub(crate) fn gather_grad(&mut self, a: NodeId, indices: NodeId, g: NodeId, axis: i64) -> Result<NodeId> {
        let dims = self.p.dims_of(a);
        let ax = crate::ops::infer::axis("gather", axis, dims.len())?;
        let known: Option<Vec<usize>> = dims.iter().copied().collect();
        let Some(d) = known else {
            return Err(unsupported(format!(
                "gather from a value with dynamic dims {dims:?} cannot be differentiated"
            )));
        };
        let (pre, size, post) = (
            d[..ax].iter().product::<usize>(),
            d[ax],
            d[ax + 1..].iter().product::<usize>(),
        );
        let flat = self.p.reshape(indices, vec![-1])?;
        let g3 = self.p.reshape(g, vec![pre as i64, -1, post as i64])?; // [pre, n, post]
        let gt = self.p.transpose(g3, Some(vec![1, 0, 2]))?; // [n, pre, post]
        let g2 = self.p.reshape(gt, vec![-1, (pre * post) as i64])?;
        let hot = self.p.one_hot(flat, size as i64)?; // [n, size]
        let summed = self.p.matmul_t(hot, g2, true, false)?; // [size, pre·post]
        let s3 = self
            .p
            .reshape(summed, vec![size as i64, pre as i64, post as i64])?;
        let back = self.p.transpose(s3, Some(vec![1, 0, 2]))?;
        self.p
            .reshape(back, d.iter().map(|&n| n as i64).collect::<Vec<_>>())
    }

    /// `conv2d` / `depthwiseConv2d`: the input and filter gradients (their own kernels).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn conv_grads(
        &mut self,
        depthwise: bool,
        x: NodeId,
        filter: NodeId,
        g: NodeId,
        strides: &Pair,
        pad: &Pad,
        dilations: &Pair,
    ) -> Result<Vec<Option<NodeId>>> {
        let (strides, pad, dilations) = (*strides, *pad, *dilations);
        let dx = self.p.op(
            Op::ConvInputGrad {
                strides,
                pad,
                dilations,
                depthwise,
            },
            &[x, filter, g],
        )?;
        let dw = self.p.op(
            Op::ConvFilterGrad {
                strides,
                pad,
                dilations,
                depthwise,
            },
            &[x, filter, g],
        )?;
        Ok(vec![Some(dx), Some(dw)])
    }

    /// `maxPool` / `avgPool` (their own kernel).
    pub(crate) fn pool_grad(
        &mut self,
        max: bool,
        x: NodeId,
        g: NodeId,
        size: &Pair,
        strides: &Pair,
        pad: &Pad,
    ) -> Result<NodeId> {
        let op = Op::PoolGrad {
            max,
            filter_size: *size,
            strides: *strides,
            pad: *pad,
        };
        self.p.op(op, &[x, g])
    }

    /// `matmul` of `op(a) · op(b)` (`op` transposes where the flag says): for `a · b`, `g · bᵀ` and
    /// `aᵀ · g`; the transposed forms follow from `(x·y)ᵀ = yᵀ·xᵀ`. Every product reads its
    /// transposes in the kernel (no copy); batch dims are summed back by `sum_to`.
    pub(crate) fn matmul_grads(
        &mut self,
        a: NodeId,
        b: NodeId,
        g: NodeId,
        ta: bool,
        tb: bool,
    ) -> Result<Vec<Option<NodeId>>> {
        let mm = |v: &mut Self, x, y, tx, ty| v.p.matmul_t(x, y, tx, ty);
        let (ga, gb) = match (ta, tb) {
            (false, false) => (mm(self, g, b, false, true)?, mm(self, a, g, true, false)?),
            (false, true) => (mm(self, g, b, false, false)?, mm(self, g, a, true, false)?),
            (true, false) => (mm(self, b, g, false, true)?, mm(self, a, g, false, false)?),
            (true, true) => (mm(self, b, g, true, true)?, mm(self, g, a, true, true)?),
        };
        Ok(vec![Some(ga), Some(gb)])
    }

    /// `window` (slice, pad, tile): the inverse window of `g` (zeros outside), or for tiling the
    /// sum over the repeats.
    pub(crate) fn window_grad(
        &mut self,
        a: NodeId,
        g: NodeId,
        start: &[i64],
        _size: &[usize],
        tile: bool,
    ) -> Result<NodeId> {
        let dims = self.p.dims_of(a);
        let Some(d) = dims.iter().copied().collect::<Option<Vec<usize>>>() else {
            return Err(unsupported(
                "a window of a value with dynamic dims cannot be differentiated".into(),
            ));
        };
        if !tile {
            let op = Op::Window {
                start: start.iter().map(|&s| -s).collect(),
                size: d,
                tile: false,
                value: 0.0.into(),
            };
            return self.p.op(op, &[g]);
        }
        let gd = self.p.dims_of(g);
        if start.iter().any(|&s| s != 0) || gd.iter().zip(&d).any(|(o, &n)| o.is_none_or(|o| o % n != 0)) {
            return Err(unsupported(
                "only whole tilings (tile's form) can be differentiated".into(),
            ));
        }
        // [r0·d0, r1·d1, …] → [r0, d0, r1, d1, …], summed over the repeats
        let split: Vec<i64> = gd
            .iter()
            .zip(&d)
            .flat_map(|(o, &n)| [(o.unwrap_or(0) / n) as i64, n as i64])
            .collect();
        let r = self.p.reshape(g, split)?;
        let reps: Vec<i64> = (0..d.len() as i64).map(|k| 2 * k).collect();
        let op = Op::Reduce {
            op: ReduceOp::Sum,
            axes: reps,
            keep_dims: false,
        };
        self.p.op(op, &[r])
    }
}
