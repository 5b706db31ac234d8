//! Shape ONNX ops, and the host folding of the shape computations exports make (`Shape → Gather →
//! Concat → Reshape`): an op whose inputs are all host values is computed at import.

use crate::dtype::DType;
use crate::error::Result;
use crate::onnx::host::Values;
use crate::onnx::import::Cx;
use crate::ops::compose::Graph;
use crate::ops::{Op, SplitSizes};
use crate::program::NodeId;

/// Computes `op` at import when it is one of the shape computations and its inputs are known
/// (`Shape` and `Size` need only static dims); `false` otherwise.
pub(super) fn fold(cx: &mut Cx, op: &str) -> Result<bool> {
    let v = match op {
        "Constant" => constant(cx)?,
        "Shape" | "Size" => match cx.meta(0)?.0.iter().copied().collect::<Option<Vec<usize>>>() {
            Some(dims) => shape_of(cx, op, &dims),
            None => return Err(cx.unsupported("the shape of a symbolic dim (fix it with inputShapes)")),
        },
        "ConstantOfShape" | "Range" => match op {
            "Range" => range(cx)?,
            _ => constant_of_shape(cx)?,
        },
        _ => {
            let n = cx.node.input.len();
            let known = n > 0 && (0..n).all(|i| cx.input_name(i).is_none_or(|x| cx.im.host(x).is_some()));
            if !known {
                return Ok(false);
            }
            match host_op(cx, op)? {
                Some(v) => v,
                None => return Ok(false),
            }
        }
    };
    cx.set_host(0, v);
    Ok(true)
}

fn constant(cx: &mut Cx) -> Result<Values> {
    if let Some(t) = cx.tensor("value")? {
        return Ok(t);
    }
    if let Some(v) = cx.ints("value_ints") {
        return Ok(Values::ints(&v));
    }
    if cx.has_attr("value_int") {
        return Ok(Values {
            data: vec![cx.int("value_int", 0) as f64],
            shape: vec![],
            dtype: DType::Int32,
        });
    }
    if cx.has_attr("value_float") {
        let f = cx.float("value_float", 0.0);
        return Ok(Values {
            data: vec![f],
            shape: vec![],
            dtype: DType::Float32,
        });
    }
    Err(cx.unsupported("a Constant without a tensor, int or float value"))
}

fn shape_of(cx: &Cx, op: &str, dims: &[usize]) -> Values {
    if op == "Size" {
        let n: usize = dims.iter().product();
        return Values {
            data: vec![n as f64],
            shape: vec![],
            dtype: DType::Int32,
        };
    }
    let r = dims.len() as i64;
    let clamp = |x: i64| (if x < 0 { x + r } else { x }).clamp(0, r) as usize;
    let (s, e) = (clamp(cx.int("start", 0)), clamp(cx.int("end", r)));
    let d: Vec<i64> = dims[s..e.max(s)].iter().map(|&x| x as i64).collect();
    Values::ints(&d)
}

fn range(cx: &mut Cx) -> Result<Values> {
    let get =
        |cx: &Cx, i| -> Result<Values> { cx.host_input(i)?.ok_or_else(|| cx.unsupported("a missing input")) };
    let (start, limit, delta) = (get(cx, 0)?, get(cx, 1)?, get(cx, 2)?);
    let first = |v: &Values| {
        v.data
            .first()
            .copied()
            .ok_or_else(|| cx.unsupported("an empty Range input"))
    };
    let (a, b, d) = (first(&start)?, first(&limit)?, first(&delta)?);
    let n = ((b - a) / d).ceil().max(0.0);
    if !(n >= 1.0 && n <= crate::shape::MAX_ELEMENTS as f64) {
        return Err(cx.unsupported(format!("a Range of {n} elements")));
    }
    let data = (0..n as usize).map(|i| a + i as f64 * d).collect();
    Ok(Values {
        data,
        shape: vec![n as usize],
        dtype: start.dtype,
    })
}

fn constant_of_shape(cx: &mut Cx) -> Result<Values> {
    let dims = cx.host_input(0)?.map(|v| v.as_ints()).unwrap_or_default();
    let value = cx.tensor("value")?.unwrap_or(Values {
        data: vec![0.0],
        shape: vec![1],
        dtype: DType::Float32,
    });
    let shape: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
    let n: usize = shape.iter().product();
    if n == 0 || n > (1 << 24) {
        return Err(cx.unsupported(format!("ConstantOfShape of {shape:?}")));
    }
    let fill = value.data.first().copied().unwrap_or(0.0);
    Ok(Values {
        data: vec![fill; n],
        shape,
        dtype: value.dtype,
    })
}

/// The shape computations folded on the host; `None` for any other op (or a large value).
fn host_op(cx: &mut Cx, op: &str) -> Result<Option<Values>> {
    let Some(a) = cx.host_input(0)? else {
        return Ok(None);
    };
    if a.data.len() > 4096 {
        return Ok(None);
    }
    Ok(match op {
        "Identity" | "Cast" | "CastLike" | "Neg" | "Abs" | "Not" => host_unary(cx, op, a)?,
        "Unsqueeze" | "Squeeze" | "Reshape" | "Flatten" => {
            let shape = host_shape(cx, op, &a.shape)?;
            Some(Values { shape, ..a })
        }
        "Slice" if a.shape.len() == 1 && cx.im.opset >= 10 => host_slice(cx, a)?,
        "Add" | "Sub" | "Mul" | "Div" | "Equal" | "Max" | "Min" | "Less" | "Greater" => {
            let Some(b) = cx.host_input(1)? else {
                return Ok(None);
            };
            elementwise(op, &a, &b)
        }
        "Gather" if a.shape.len() == 1 => {
            let Some(idx) = cx.host_input(1)? else {
                return Ok(None);
            };
            let n = a.data.len() as i64;
            let pick = |&i: &f64| -> Option<f64> {
                let i = if i < 0.0 { i as i64 + n } else { i as i64 };
                (0..n).contains(&i).then(|| a.data[i as usize])
            };
            let data: Option<Vec<f64>> = idx.data.iter().map(pick).collect();
            data.map(|data| Values {
                data,
                shape: idx.shape,
                dtype: a.dtype,
            })
        }
        "Concat" if a.shape.len() == 1 => {
            let mut data = vec![];
            for i in 0..cx.node.input.len() {
                data.extend(cx.host_input(i)?.map(|v| v.data).unwrap_or_default());
            }
            let n = data.len();
            Some(Values {
                data,
                shape: vec![n],
                dtype: a.dtype,
            })
        }
        _ => None,
    })
}

/// `Identity`, `Cast`, `CastLike`, `Neg`, `Abs`, `Not` of a host value.
fn host_unary(cx: &Cx, op: &str, a: Values) -> Result<Option<Values>> {
    let dtype = match op {
        "Cast" => crate::onnx::host::dtype(cx.int("to", 1) as i32, "Cast's 'to'")?,
        "CastLike" => match cx.host_input(1)? {
            Some(like) => like.dtype,
            None => return Ok(None),
        },
        _ => a.dtype,
    };
    let f = |x: f64| match op {
        "Neg" => -x,
        "Abs" => x.abs(),
        "Not" => (x == 0.0) as u8 as f64,
        _ => cast(x, dtype),
    };
    let data = a.data.iter().map(|&x| f(x)).collect();
    Ok(Some(Values {
        data,
        shape: a.shape,
        dtype,
    }))
}

/// The dims a `Reshape`, `Flatten`, `Squeeze` or `Unsqueeze` gives a host value of dims `dims`.
fn host_shape(cx: &Cx, op: &str, dims: &[usize]) -> Result<Vec<usize>> {
    let n: usize = dims.iter().product();
    let rank = dims.len() as i64;
    let norm = |x: i64, r: i64| (if x < 0 { x + r } else { x }) as usize;
    Ok(match op {
        "Reshape" => {
            let target = cx.host_input(1)?.map(|v| v.as_ints()).unwrap_or_default();
            let mut out: Vec<i64> = target
                .iter()
                .enumerate()
                .map(|(i, &d)| match d {
                    0 => dims.get(i).map_or(0, |&x| x as i64),
                    d => d,
                })
                .collect();
            let known: i64 = out.iter().filter(|&&d| d >= 0).product();
            if let Some(d) = out.iter_mut().find(|d| **d < 0) {
                *d = n as i64 / known.max(1);
            }
            out.iter().map(|&d| d.max(0) as usize).collect()
        }
        "Flatten" => {
            let axis = norm(cx.int("axis", 1), rank).min(dims.len());
            vec![dims[..axis].iter().product(), dims[axis..].iter().product()]
        }
        "Squeeze" => {
            let axes: Vec<usize> = cx
                .ints_from("axes", 1, 13)?
                .unwrap_or_default()
                .iter()
                .map(|&x| norm(x, rank))
                .collect();
            let keep = |&(i, &d): &(usize, &usize)| {
                if axes.is_empty() {
                    d != 1
                } else {
                    !axes.contains(&i)
                }
            };
            dims.iter().enumerate().filter(keep).map(|(_, &d)| d).collect()
        }
        _ => {
            let axes = cx.ints_from("axes", 1, 13)?.unwrap_or_default();
            let out_rank = rank + axes.len() as i64;
            let mut axes: Vec<usize> = axes.iter().map(|&x| norm(x, out_rank)).collect();
            axes.sort_unstable();
            let mut out = dims.to_vec();
            for ax in axes {
                out.insert(ax.min(out.len()), 1);
            }
            out
        }
    })
}

/// `Slice` of a 1-D host value (any step), as NumPy slices.
fn host_slice(cx: &Cx, a: Values) -> Result<Option<Values>> {
    let get = |i| cx.host_input(i).map(|v| v.map(|v| v.as_ints()));
    let (Some(starts), Some(ends)) = (get(1)?, get(2)?) else {
        return Ok(None);
    };
    let step = get(4)?.and_then(|s| s.first().copied()).unwrap_or(1);
    let (n, Some(&s0), Some(&e0)) = (a.data.len() as i64, starts.first(), ends.first()) else {
        return Ok(None);
    };
    if step == 0 || get(3)?.is_some_and(|ax| ax.iter().any(|&x| x != 0 && x != -1)) {
        return Ok(None);
    }
    let norm = |x: i64| if x < 0 { x + n } else { x };
    let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
    let (mut i, end) = (norm(s0).clamp(lo, hi), norm(e0).clamp(lo, hi));
    let mut data = vec![];
    while (step > 0 && i < end) || (step < 0 && i > end) {
        data.push(a.data[i as usize]);
        i += step;
    }
    let len = data.len();
    Ok(Some(Values {
        data,
        shape: vec![len],
        dtype: a.dtype,
    }))
}

fn cast(x: f64, dtype: DType) -> f64 {
    match dtype {
        DType::Float32 => x as f32 as f64,
        DType::Bool => (x != 0.0) as u8 as f64,
        _ => x.trunc(),
    }
}

/// Same-dims or one-element operands only (what shape computations use); anything else is left to
/// the program's broadcasting ops.
fn elementwise(op: &str, a: &Values, b: &Values) -> Option<Values> {
    if a.data.is_empty() || b.data.is_empty() {
        return None;
    }
    // the same dims, or a one-element operand with no more dims than the other (no broadcasting
    // beyond that: equal lengths of other dims, [L, 1] − [1, L], must not pair elementwise)
    let n = a.data.len().max(b.data.len());
    let (sa, sb) = (a.data.len() == 1, b.data.len() == 1);
    let fits =
        a.shape == b.shape || sa && a.shape.len() <= b.shape.len() || sb && b.shape.len() <= a.shape.len();
    if !fits {
        return None;
    }
    let int = a.dtype != DType::Float32;
    let data = (0..n)
        .map(|i| {
            let (x, y) = (a.data[if sa { 0 } else { i }], b.data[if sb { 0 } else { i }]);
            match op {
                "Add" => x + y,
                "Sub" => x - y,
                "Mul" => x * y,
                "Div" if int => (x / y).trunc(),
                "Div" => x / y,
                "Max" => x.max(y),
                "Min" => x.min(y),
                "Less" => (x < y) as u8 as f64,
                "Greater" => (x > y) as u8 as f64,
                _ => (x == y) as u8 as f64,
            }
        })
        .collect();
    let shape = match sa && (!sb || b.shape.len() > a.shape.len()) {
        true => b.shape.clone(),
        false => a.shape.clone(),
    };
    let dtype = if matches!(op, "Equal" | "Less" | "Greater") {
        DType::Bool
    } else {
        a.dtype
    };
    Some(Values { data, shape, dtype })
}

/// Translates a shape op on program nodes; `false` when `op` is not one.
pub(super) fn translate(cx: &mut Cx, op: &str) -> Result<bool> {
    let y = match op {
        "Reshape" | "Flatten" | "Squeeze" | "Unsqueeze" => {
            let a = cx.input(0)?;
            reshape_like(cx, op, a)?
        }
        "Transpose" => {
            let a = cx.input(0)?;
            let perm = cx.ints("perm");
            cx.im.p.op(Op::Transpose { perm }, &[a])?
        }
        "Concat" => {
            let nodes = (0..cx.node.input.len())
                .map(|i| cx.input(i))
                .collect::<Result<Vec<_>>>()?;
            let axis = cx.int("axis", 0);
            cx.im.p.concat(&nodes, axis)?
        }
        "Split" => return split(cx).map(|_| true),
        "Slice" => slice(cx)?,
        "Gather" => gather(cx)?,
        "Tile" => {
            let a = cx.input(0)?;
            let reps = cx.host_input(1)?.map(|v| v.as_ints()).unwrap_or_default();
            cx.im.p.tile(a, reps)?
        }
        "Pad" => pad(cx)?,
        "Expand" => expand(cx)?,
        "Trilu" => trilu(cx)?,
        "GatherElements" => gather_elements(cx)?,
        _ => return Ok(false),
    };
    cx.set(0, y);
    Ok(true)
}

/// `Reshape` (0 copies the input's dim unless `allowzero`), `Flatten`, `Squeeze`, `Unsqueeze`.
fn reshape_like(cx: &mut Cx, op: &str, a: NodeId) -> Result<NodeId> {
    let (dims, _) = cx.im.p.meta(&a)?;
    let rank = dims.len() as i64;
    match op {
        "Reshape" => {
            let mut shape = cx.host_input(1)?.map(|v| v.as_ints()).unwrap_or_default();
            if cx.int("allowzero", 0) == 0 {
                for (i, d) in shape.iter_mut().enumerate() {
                    if *d == 0 {
                        *d = dims.get(i).copied().flatten().map_or(-1, |x| x as i64);
                    }
                }
            }
            cx.im.p.reshape(a, shape)
        }
        "Flatten" => {
            let axis = cx.int("axis", 1);
            let axis = if axis < 0 { axis + rank } else { axis } as usize;
            let lead: Option<usize> = dims[..axis.min(dims.len())].iter().copied().product();
            cx.im.p.reshape(a, vec![lead.map_or(-1, |n| n as i64), -1])
        }
        "Squeeze" => {
            let axes = cx.ints_from("axes", 1, 13)?.unwrap_or_default();
            cx.im.p.squeeze(a, axes)
        }
        _ => {
            let axes = cx.ints_from("axes", 1, 13)?.unwrap_or_default();
            let out_rank = rank + axes.len() as i64;
            let mut axes: Vec<i64> = axes
                .iter()
                .map(|&x| if x < 0 { x + out_rank } else { x })
                .collect();
            axes.sort_unstable();
            let mut y = a;
            for ax in axes {
                y = cx.im.p.expand_dims(y, ax)?;
            }
            Ok(y)
        }
    }
}

/// `Split`: sizes from the attribute (before 13), the input (from 13) or `num_outputs`.
fn split(cx: &mut Cx) -> Result<()> {
    let a = cx.input(0)?;
    let axis = cx.int("axis", 0);
    let sizes = cx.ints_from("split", 1, 13)?;
    let how = match sizes {
        Some(s) => SplitSizes::Sizes(s),
        None => SplitSizes::Parts(cx.int("num_outputs", cx.outputs() as i64)),
    };
    let parts = match &how {
        SplitSizes::Parts(n) if cx.has_attr("num_outputs") => uneven(cx, a, *n, axis)?,
        _ => cx.im.p.split_by(a, how, axis)?,
    };
    for (i, y) in parts.into_iter().enumerate() {
        cx.set(i, y);
    }
    Ok(())
}

/// `num_outputs` parts of ⌈len / n⌉, the last smaller (opset 18).
fn uneven(cx: &mut Cx, a: NodeId, n: i64, axis: i64) -> Result<Vec<NodeId>> {
    let dims = cx.dims(0)?;
    let ax = crate::ops::infer::axis("Split", axis, dims.len())?;
    let len = dims[ax] as i64;
    let each = (len + n - 1) / n.max(1);
    let mut sizes = vec![];
    let mut left = len;
    while left > 0 {
        sizes.push(each.min(left));
        left -= each;
    }
    cx.im.p.split_by(a, SplitSizes::Sizes(sizes), axis)
}

/// `Slice` with unit steps: starts/ends (clamped, negative from the end) per axis.
fn slice(cx: &mut Cx) -> Result<NodeId> {
    let a = cx.input(0)?;
    let dims = cx.dims(0)?;
    let (starts, ends, axes, steps) = if cx.im.opset < 10 {
        (
            cx.ints("starts").unwrap_or_default(),
            cx.ints("ends").unwrap_or_default(),
            cx.ints("axes"),
            None,
        )
    } else {
        let get = |cx: &Cx, i| cx.host_input(i).map(|v| v.map(|v| v.as_ints()));
        (
            get(cx, 1)?.unwrap_or_default(),
            get(cx, 2)?.unwrap_or_default(),
            get(cx, 3)?,
            get(cx, 4)?,
        )
    };
    if steps.iter().flatten().any(|&s| s != 1) {
        return Err(cx.unsupported("steps other than 1"));
    }
    let r = dims.len() as i64;
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    if starts.len() != axes.len() || ends.len() != axes.len() || axes.iter().any(|&x| x < -r || x >= r) {
        return Err(cx.unsupported(format!(
            "starts {starts:?}, ends {ends:?} and axes {axes:?} do not fit rank {r}"
        )));
    }
    let (mut begin, mut size) = (vec![0i64; dims.len()], vec![-1i64; dims.len()]);
    for (k, &ax) in axes.iter().enumerate() {
        let ax = (if ax < 0 { ax + r } else { ax }) as usize;
        let d = dims[ax] as i64;
        let clamp = |x: i64| (if x < 0 { x + d } else { x }).clamp(0, d);
        let (s, e) = (clamp(starts[k]), clamp(ends[k]));
        if e <= s {
            return Err(cx.unsupported("an empty slice (empty tensors are not supported yet)"));
        }
        (begin[ax], size[ax]) = (s, e - s);
    }
    cx.im.p.slice(a, begin, size)
}

/// `Gather`: negative indices count from the end (known ones are rewritten at import).
fn gather(cx: &mut Cx) -> Result<NodeId> {
    let a = cx.input(0)?;
    let axis = cx.int("axis", 0);
    let dims = cx.meta(0)?.0;
    let ax = crate::ops::infer::axis("Gather", axis, dims.len())?;
    let idx = match (cx.input_name(1).and_then(|n| cx.im.host(n)).cloned(), dims[ax]) {
        (Some(mut h), Some(n)) => {
            h.data.iter_mut().for_each(|i| {
                if *i < 0.0 {
                    *i += n as f64
                }
            });
            cx.im.p.constant(&h.data, &h.shape, DType::Int32)?
        }
        (_, Some(n)) => {
            let i = cx.input(1)?;
            let p = &mut cx.im.p;
            let neg = p.binary_scalar(crate::ops::BinaryOp::Less, i, 0.0)?;
            let wrapped = p.binary_scalar(crate::ops::BinaryOp::Add, i, n as f64)?;
            p.select(wrapped, neg, i)?
        }
        _ => cx.input(1)?,
    };
    cx.im.p.gather(a, idx, axis)
}

/// `Pad` in `constant` mode (pads from the attribute before 11, else the input).
fn pad(cx: &mut Cx) -> Result<NodeId> {
    let mode = cx.string("mode", "constant");
    if mode != "constant" {
        return Err(cx.unsupported(format!("mode '{mode}'")));
    }
    let a = cx.input(0)?;
    let rank = cx.meta(0)?.0.len();
    let (pads, value) = if cx.im.opset < 11 {
        (cx.ints("pads").unwrap_or_default(), cx.float("value", 0.0))
    } else {
        let pads = cx.host_input(1)?.map(|v| v.as_ints()).unwrap_or_default();
        let value = cx
            .host_input(2)?
            .map_or(0.0, |v| v.data.first().copied().unwrap_or(0.0));
        (pads, value)
    };
    let axes = match cx.im.opset >= 18 {
        true => cx.host_input(3)?.map(|v| v.as_ints()),
        false => None,
    };
    let axes = axes.unwrap_or_else(|| (0..rank as i64).collect());
    let r = rank as i64;
    if pads.len() != 2 * axes.len() || axes.iter().any(|&x| x < -r || x >= r) {
        return Err(cx.unsupported(format!("pads {pads:?} for axes {axes:?} of rank {rank}")));
    }
    let mut pairs = vec![(0i64, 0i64); rank];
    for (k, &ax) in axes.iter().enumerate() {
        let ax = (if ax < 0 { ax + rank as i64 } else { ax }) as usize;
        pairs[ax] = (pads[k], pads[k + axes.len()]);
    }
    if pairs.iter().any(|&(b, e)| b < 0 || e < 0) {
        return Err(cx.unsupported("negative pads"));
    }
    cx.im.p.pad(a, pairs, value)
}

/// `Expand`: broadcast to `shape` (against a zero of that shape).
fn expand(cx: &mut Cx) -> Result<NodeId> {
    let a = cx.input(0)?;
    let (_, d) = cx.meta(0)?;
    let shape = cx.host_input(1)?.map(|v| v.as_ints()).unwrap_or_default();
    let dims: Vec<usize> = shape.iter().map(|&x| x.max(1) as usize).collect();
    let n: usize = dims.iter().product();
    let zero = cx.im.p.constant(&vec![0.0; n], &dims, d)?;
    let op = match d {
        DType::Bool => crate::ops::BinaryOp::LogicalOr,
        _ => crate::ops::BinaryOp::Add,
    };
    cx.im.p.op(Op::Binary(op), &[a, zero])
}

/// `Trilu`: the upper (or lower) triangle of the last two dims from diagonal `k`, zeros elsewhere.
fn trilu(cx: &mut Cx) -> Result<NodeId> {
    let dims = cx.dims(0)?;
    let k = cx
        .host_input(1)?
        .and_then(|v| v.data.first().copied())
        .unwrap_or(0.0) as i64;
    let upper = cx.int("upper", 1) != 0;
    let [.., n, m] = dims[..] else {
        return Err(cx.unsupported("a rank below 2"));
    };
    let keep = |i: usize| {
        let (r, c) = ((i / m) as i64, (i % m) as i64);
        (if upper { c - r >= k } else { c - r <= k }) as u8 as f64
    };
    let mask: Vec<f64> = (0..n * m).map(keep).collect();
    let a = cx.input(0)?;
    let mask = cx.im.p.constant(&mask, &[n, m], DType::Bool)?;
    cx.im.p.select(a, mask, 0.0)
}

/// `GatherElements`: `out[c] = data[c with its axis coordinate replaced by indices[c]]`, as one
/// `gather` from the flattened data at `indices · stride + base(c)` (`base` known at import, so the
/// device check of `gather` covers a bad index too).
fn gather_elements(cx: &mut Cx) -> Result<NodeId> {
    let (dims, idims) = (cx.dims(0)?, cx.dims(1)?);
    let ax = crate::ops::infer::axis("GatherElements", cx.int("axis", 0), dims.len())?;
    if idims.len() != dims.len()
        || idims
            .iter()
            .zip(&dims)
            .enumerate()
            .any(|(k, (i, d))| k != ax && i > d)
    {
        return Err(cx.unsupported(format!("indices {idims:?} for data {dims:?}")));
    }
    let stride: usize = dims[ax + 1..].iter().product();
    let n: usize = idims.iter().product();
    let base: Vec<f64> = (0..n)
        .map(|flat| {
            let (mut rem, mut off) = (flat, 0usize);
            for k in (0..idims.len()).rev() {
                let c = rem % idims[k];
                rem /= idims[k];
                if k != ax {
                    off += c * dims[k + 1..].iter().product::<usize>();
                }
            }
            off as f64
        })
        .collect();
    let (data, idx) = (cx.input(0)?, cx.input(1)?);
    let p = &mut cx.im.p;
    let len = dims[ax] as f64;
    let neg = p.binary_scalar(crate::ops::BinaryOp::Less, idx, 0.0)?;
    let wrapped = p.binary_scalar(crate::ops::BinaryOp::Add, idx, len)?;
    let idx = p.select(wrapped, neg, idx)?;
    // an index outside the axis could land in a neighbouring row of the flat data: it reads index −1
    // instead, which the device check reports
    let lo = p.binary_scalar(crate::ops::BinaryOp::GreaterEqual, idx, 0.0)?;
    let hi = p.binary_scalar(crate::ops::BinaryOp::Less, idx, len)?;
    let ok = p.op(Op::Binary(crate::ops::BinaryOp::LogicalAnd), &[lo, hi])?;
    let scaled = p.binary_scalar(crate::ops::BinaryOp::Mul, idx, stride as f64)?;
    let base = p.constant(&base, &idims, DType::Int32)?;
    let flat = p.op(Op::Binary(crate::ops::BinaryOp::Add), &[scaled, base])?;
    let flat = p.select(flat, ok, -1.0)?;
    let all = p.reshape(data, vec![-1])?;
    p.gather(all, flat, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(data: &[f64], shape: &[usize]) -> Values {
        Values {
            data: data.to_vec(),
            shape: shape.to_vec(),
            dtype: DType::Int32,
        }
    }

    /// Host folding pairs only same-dims or one-element operands: `[3, 1] − [1, 3]` (relative
    /// positions in an attention export) is a broadcast, left to the program — folded elementwise it
    /// gave `flexattention_relative_positional` a wrong answer.
    #[test]
    fn host_folding_never_pairs_a_broadcast() {
        assert_eq!(
            elementwise("Sub", &v(&[0., 1., 2.], &[3, 1]), &v(&[0., 1., 2.], &[1, 3])),
            None
        );
        let d = elementwise("Sub", &v(&[5., 6.], &[2]), &v(&[1.], &[])).unwrap();
        assert_eq!((d.data, d.shape), (vec![4., 5.], vec![2]));
        let d = elementwise("Add", &v(&[1.], &[]), &v(&[1.], &[1, 1])).unwrap();
        assert_eq!(d.shape, vec![1, 1]);
    }
}
