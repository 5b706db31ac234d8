//! Reductions over any set of axes (`shaders/reduce.wgsl`) — of a buffer, or of an elementwise
//! chain computed as it is read (fused in programs).

use super::fused::load_parts;
use super::{dispatch, grid, strides, wgsl_type, Ctx, Operand};
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::infer::reduce_axes;
use crate::ops::ReduceOp;
use crate::program::fusion::Group;

const REDUCE: &str = include_str!("../../shaders/reduce.wgsl");
const REDUCE_PARTS: &str = include_str!("../../shaders/reduce_parts.wgsl");
const REDUCE_PARTS_SERIAL: &str = include_str!("../../shaders/reduce_parts_serial.wgsl");
const REDUCE_FLAT: &str = include_str!("../../shaders/reduce_flat.wgsl");
/// `fn out_base` and `fn elem_offset`, prepended to both reductions.
const REDUCE_INDEX: &str = include_str!("../../shaders/reduce_index.wgsl");

/// The identity of `op` over `d`, as bits.
fn identity(op: ReduceOp, d: DType) -> u32 {
    match (op, d) {
        (ReduceOp::Sum | ReduceOp::Mean, _) => 0,
        (ReduceOp::Max, DType::Float32) => f32::NEG_INFINITY.to_bits(),
        (ReduceOp::Min, DType::Float32) => f32::INFINITY.to_bits(),
        (ReduceOp::Max, DType::Int32) => i32::MIN as u32,
        (ReduceOp::Min, DType::Int32) => i32::MAX as u32,
        (ReduceOp::Max, _) => 0,
        (ReduceOp::Min, _) => u32::MAX,
        (ReduceOp::Prod, DType::Float32) => 1f32.to_bits(),
        (ReduceOp::Prod, _) => 1,
    }
}

/// What a reduction reads: a buffer, or an elementwise chain computed from its leaves as it reads.
pub(super) enum Source<'a> {
    Buffer(Operand<'a>),
    Chain {
        group: &'a Group,
        leaves: &'a [Operand<'a>],
        shape: &'a [usize],
    },
}

pub(super) fn reduce(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    op: ReduceOp,
    axes: &[i64],
    a: Operand,
    out: Operand,
) -> Result<()> {
    reduce_from(ctx, enc, op, axes, Source::Buffer(a), out)
}

/// Reduces `src` over `axes` into `out` (whose dtype is the reduced values').
pub(super) fn reduce_from(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    op: ReduceOp,
    axes: &[i64],
    src: Source,
    out: Operand,
) -> Result<()> {
    // the chain's dtype is the reduction's (fusion requires it)
    let (shape, dtype) = match &src {
        Source::Buffer(a) => (a.shape, a.dtype),
        Source::Chain { shape, .. } => (*shape, out.dtype),
    };
    let red = reduce_axes("reduce", axes, shape.len())?;
    let s = strides(shape);
    let (mut kept_dims, mut kept_strides, mut red_dims, mut red_strides) = (vec![], vec![], vec![], vec![]);
    for (i, (&dim, &stride)) in shape.iter().zip(&s).enumerate() {
        if red.contains(&i) {
            red_dims.push(dim as u32);
            red_strides.push(stride as u32);
        } else {
            kept_dims.push(dim as u32);
            kept_strides.push(stride as u32);
        }
    }
    let out_len = out.len();
    let count: u32 = red_dims.iter().product();
    let mut params = vec![
        out_len as u32,
        count,
        kept_dims.len() as u32,
        red_dims.len() as u32,
        identity(op, dtype),
    ];
    params.extend(
        kept_dims
            .iter()
            .chain(&kept_strides)
            .chain(&red_dims)
            .chain(&red_strides),
    );
    let t = wgsl_type(dtype);
    // the reduced axes are the trailing ones (size-1 axes aside): each output's inputs are contiguous
    let first_reduced = (0..shape.len()).find(|i| red.contains(i) && shape[*i] > 1);
    let contig = first_reduced.is_none_or(|f| (f..shape.len()).all(|i| red.contains(&i) || shape[i] == 1));
    // four elements per step: contiguous, whole vec4s per output, a source readable as vec4s
    let v4 = contig
        && count.is_multiple_of(4)
        && match &src {
            Source::Buffer(_) => true,
            Source::Chain { leaves, shape, .. } => super::fused::loads4(leaves, shape),
        };
    // lavapipe's budget counts every iteration of every loop a serial invocation runs: its walk,
    // and per element the reduced axes' index loop (not contiguous) and a chain's index loop over
    // its shape (a broadcast leaf; four at a time there is none): 30,000 rows summed into 64
    // outputs came out wrong when the bound was the walk's alone
    let chained = matches!(src, Source::Chain { .. }) && !v4;
    let per_step =
        1 + if contig { 0 } else { red_dims.len() + 1 } + if chained { shape.len() + 1 } else { 0 };
    let steps = count as usize / if v4 { 4 } else { 1 };
    let serial_fits = steps.saturating_mul(per_step).saturating_add(super::LOOP_MARGIN) < super::MAX_LOOP;
    let (load, load_key, inputs) = match src {
        Source::Buffer(a) if v4 => (VEC4_LOAD.to_string(), "v4".to_string(), vec![(a.buffer, a.len())]),
        Source::Buffer(a) => (PLAIN_LOAD.to_string(), String::new(), vec![(a.buffer, a.len())]),
        Source::Chain { group, leaves, shape } if v4 => {
            let (load, key, extra) = super::fused::load4_parts(group, leaves, shape, t, params.len());
            params.extend(extra);
            (load, key, leaves.iter().map(|l| (l.buffer, l.len())).collect())
        }
        Source::Chain { group, leaves, shape } => {
            let (load, key, extra) = load_parts(group, leaves, shape, t, params.len());
            params.extend(extra);
            (load, key, leaves.iter().map(|l| (l.buffer, l.len())).collect())
        }
    };
    let combine = op.combine();
    let mean = op == ReduceOp::Mean;
    // a long reduction into few outputs: `parts` workgroups per output write partial results (see
    // `reduce_flat.wgsl`), then a combining pass
    let wanted = crate::ops::reduce_parts(count as u64, out_len);
    let scratch = match ctx.scratch {
        Some(alloc) if wanted > 1 => Some(alloc(out_len * wanted * crate::ops::PART_THREADS)?),
        _ => None,
    };
    // what every pass needs, then what the passes reading the source need (built only when a
    // pipeline is)
    let head = || {
        format!("alias T = {t};\nconst MEAN: bool = {mean};\nfn combine(x: T, y: T) -> T {{ return {combine}; }}\n")
    };
    let prelude = || format!("{}const CONTIG: bool = {contig};\n{load}{REDUCE_INDEX}", head());
    let fallback4 = if v4 { "" } else { FALLBACK_LOAD4 };
    let flat = |serial: bool, parts: u64| {
        let key = format!("{op:?}:{t}:{contig}:{v4}:{serial}:{parts}:{load_key}");
        ctx.cache.pipeline(ctx.device, "reduce_flat", &key, || {
            format!("{}{fallback4}const V4: bool = {v4};\nconst SERIAL: bool = {serial};\nconst PARTS: u32 = {parts}u;\n{REDUCE_FLAT}", prelude())
        })
    };
    let Some(scratch) = scratch else {
        // CPU adapters: one invocation per output, no barriers (unless its loops would pass
        // `MAX_LOOP`); GPUs: a workgroup per output
        let p = if ctx.cpu_adapter && wanted == 1 && serial_fits {
            (flat(true, 1), out_len.div_ceil(crate::ops::PART_THREADS))
        } else {
            let wg = if count >= LONG && ctx.workgroup >= 256 {
                256
            } else {
                64
            };
            let key = format!("{op:?}:{t}:{wg}:{contig}:{v4}:{load_key}");
            let p = ctx.cache.pipeline(ctx.device, "reduce", &key, || {
                format!(
                    "{}{fallback4}const WG: u32 = {wg}u;\nconst V4: bool = {v4};\n{REDUCE}",
                    prelude()
                )
            });
            (p, out_len)
        };
        dispatch(ctx, enc, &p.0, (out.buffer, out_len), &params, &inputs, grid(p.1));
        return Ok(());
    };
    let words = out_len * wanted * crate::ops::PART_THREADS;
    let p = flat(false, wanted);
    dispatch(
        ctx,
        enc,
        &p,
        (&scratch.buffer, words),
        &params,
        &inputs,
        grid(out_len * wanted),
    );
    // the combining pass: on CPU adapters an invocation per output folds its partials (no barrier);
    // on GPUs a workgroup per output
    let (kernel, body, groups2) = if ctx.cpu_adapter {
        let groups = out_len.div_ceil(crate::ops::PART_THREADS);
        ("reduce_parts_serial", REDUCE_PARTS_SERIAL, groups)
    } else {
        ("reduce_parts", REDUCE_PARTS, out_len)
    };
    let p2 = ctx
        .cache
        .pipeline(ctx.device, kernel, &format!("{op:?}:{t}"), || {
            format!("{}{body}", head())
        });
    let params2 = [
        out_len as u32,
        (wanted * crate::ops::PART_THREADS) as u32,
        count,
        identity(op, dtype),
    ];
    let parts_in = [(&scratch.buffer, words)];
    dispatch(
        ctx,
        enc,
        &p2,
        (out.buffer, out_len),
        &params2,
        &parts_in,
        grid(groups2),
    );
    Ok(())
}

/// Reductions of at least this many elements per output use 256 threads per output, not 64.
const LONG: u32 = 4096;

/// `fn load` of a reduction that reads a buffer.
const PLAIN_LOAD: &str =
    "@group(0) @binding(2) var<storage, read> a: array<u32>;\nfn load(i: u32) -> T { return bitcast<T>(a[i]); }\n";

/// `fn load4` and `fn load` of a reduction that reads a buffer four elements at a time.
const VEC4_LOAD: &str = "@group(0) @binding(2) var<storage, read> a: array<vec4<u32>>;\nfn load4(i: u32) -> vec4<T> { return bitcast<vec4<T>>(a[i / 4u]); }\nfn load(i: u32) -> T { return bitcast<T>(a[i / 4u][i % 4u]); }\n";

/// `fn load4` through `fn load` (never called: `V4` is false, but the shader names it).
const FALLBACK_LOAD4: &str =
    "fn load4(i: u32) -> vec4<T> { return vec4<T>(load(i), load(i + 1u), load(i + 2u), load(i + 3u)); }\n";
