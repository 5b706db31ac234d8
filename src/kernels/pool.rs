//! Max and average pooling over NHWC tensors (`shaders/pool.wgsl`) and their gradient with respect
//! to the input (`shaders/pool_grad.wgsl`), one thread per output (input) element.

use super::conv::geometry;
use super::{dispatch, passes, Ctx, Operand, MAX_LOOP};
use crate::error::Result;
use crate::ops::{Pad, Pair};

const POOL: &str = include_str!("../../shaders/pool.wgsl");
const POOL_GRAD: &str = include_str!("../../shaders/pool_grad.wgsl");

/// `[len, H, W, C, OH, OW, FH, FW, stride_h, stride_w, pad_top, pad_left]` of a pool whose input is
/// `x` and whose output (or upstream gradient) is `out`, over `len` threads.
fn pool_params(
    name: &str,
    x: &Operand,
    out: &Operand,
    size: &Pair,
    s: &Pair,
    pad: &Pad,
    len: u64,
) -> Result<Vec<u32>> {
    let g = geometry(name, x, out, (size.0, size.1), s, pad, &Pair::ONE)?;
    Ok([len as u32]
        .into_iter()
        .chain(g[..5].iter().copied())
        .chain(g[6..10].iter().copied())
        .chain(g[12..].iter().copied())
        .collect())
}

/// Ranges `[rows, columns]` of the passes of a kernel whose thread walks at most a `rows × cols`
/// block (a pool's window cells inside the input, or a gradient's windows containing an element),
/// `cost` iterations a cell: all of it at once on GPUs; on CPU adapters blocks whose walk (each
/// row's cells plus two) stays under `MAX_LOOP` (lavapipe stops an invocation's loops there,
/// silently: in one walk a 256×256 global average pool gave 1.9999539 where 1.99996948 is exact).
/// `span` is what the ranges cover: the window's `[FH, FW]`, or the output's `[OH, OW]` for a
/// gradient (its threads' blocks are anywhere in it). Each pass combines with what the ones before
/// it wrote; the last one stores the result.
fn block_passes(ctx: &Ctx, [rows, cols]: [usize; 2], cost: usize, span: [usize; 2]) -> Vec<[[u32; 2]; 2]> {
    let budget = MAX_LOOP - 16;
    // a loop of n iterations counts n + 1 there (its exit too): a row of the block counts its
    // cells' iterations and two
    let row = |cols: usize| cols.saturating_mul(cost).saturating_add(2);
    let (step_r, step_c) = if !ctx.cpu_adapter || rows.saturating_mul(row(cols)) < budget {
        (span[0], span[1])
    } else {
        let step_c = if row(cols) < budget / 2 {
            span[1]
        } else {
            (budget / 2 / cost).max(1)
        };
        (budget / row(cols.min(step_c)), step_c)
    };
    passes(span[0], step_r)
        .flat_map(|r| passes(span[1], step_c).map(move |c| [r, c]))
        .collect()
}

/// What a forward pool writes: the mean or the max of each window, or (`Arg`, for the gradient)
/// each window's first maximum as two words, position and value; and the three forms of the
/// gradient's kernel: g shared by the cells, each window walked for its first maximum, or that
/// maximum read from `Arg`'s output.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Avg,
    Max,
    Arg,
}

/// Records `kernel` (`source` with its `mode`'s constants prepended) once per pass over `threads`
/// threads, each pass's `[rows, cols]` ranges written after `params` (parameters 12–15).
#[allow(clippy::too_many_arguments)]
fn record_passes(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    (kernel, mode, source): (&'static str, Mode, &str),
    mut params: Vec<u32>,
    out: (&wgpu::Buffer, u64),
    inputs: &[(&wgpu::Buffer, u64)],
    threads: u64,
    passes: Vec<[[u32; 2]; 2]>,
) {
    let (max, arg) = (mode != Mode::Avg, mode == Mode::Arg);
    let p = ctx
        .cache
        .pipeline(ctx.device, kernel, ["avg", "max", "arg"][mode as usize], || {
            format!("const MAX: bool = {max};\nconst ARG: bool = {arg};\n{source}")
        });
    params.extend([0; 4]);
    for [rows, cols] in passes {
        params[12..].copy_from_slice(&[rows[0], rows[1], cols[0], cols[1]]);
        dispatch(ctx, enc, &p, out, &params, inputs, ctx.groups(threads));
    }
}

#[allow(clippy::too_many_arguments)] // the op table passes each attribute
fn pool(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    mode: Mode,
    x: Operand,
    (windows, target): (Operand, &wgpu::Buffer),
    size: &Pair,
    s: &Pair,
    pad: &Pad,
) -> Result<()> {
    let name = if mode == Mode::Avg { "avgPool" } else { "maxPool" };
    let len = windows.len();
    let params = pool_params(name, &x, &windows, size, s, pad, len)?;
    let words = if mode == Mode::Arg { 2 * len } else { len };
    // a thread walks only its window's cells inside the input
    let inside = [size.0.min(params[1] as usize), size.1.min(params[2] as usize)];
    let passes = block_passes(ctx, inside, 1, [size.0, size.1]);
    let inputs = [(x.buffer, x.len())];
    record_passes(
        ctx,
        enc,
        ("pool", mode, POOL),
        params,
        (target, words),
        &inputs,
        len,
        passes,
    );
    Ok(())
}

pub(crate) fn max_pool(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    size: &Pair,
    s: &Pair,
    pad: &Pad,
) -> Result<()> {
    pool(ctx, enc, Mode::Max, args[0], (out, out.buffer), size, s, pad)
}

pub(crate) fn avg_pool(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    size: &Pair,
    s: &Pair,
    pad: &Pad,
) -> Result<()> {
    pool(ctx, enc, Mode::Avg, args[0], (out, out.buffer), size, s, pad)
}

#[allow(clippy::too_many_arguments)] // the op table passes each attribute
pub(crate) fn pool_grad(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    &max: &bool,
    size: &Pair,
    s: &Pair,
    pad: &Pad,
) -> Result<()> {
    let (x, g) = (args[0], args[1]);
    let name = if max { "maxPool" } else { "avgPool" };
    let len = out.len();
    let params = pool_params(name, &x, &g, size, s, pad, len)?;
    // a large window's first maxima come from a pass of their own (`ops::pool_grad_argmax`), into
    // the scratch the plan holds for them
    let [h, w] = [params[1] as usize, params[2] as usize];
    let scratch = match ctx.scratch {
        _ if !(max && crate::ops::pool_grad_argmax(size, s, [h, w])) => None,
        Some(alloc) => Some(alloc(2 * g.len())?),
        // every caller that records this op plans its scratch (`Op::scratch_words`)
        None => {
            return Err(crate::error::Error::Unsupported(
                "maxPool's gradient over windows this large needs planned scratch".into(),
            ))
        }
    };
    if let Some(sc) = &scratch {
        pool(ctx, enc, Mode::Arg, x, (g, &sc.buffer), size, s, pad)?;
    }
    let arg = scratch.is_some();
    let first = match &scratch {
        Some(sc) => (&sc.buffer, 2 * g.len()),
        None => (x.buffer, x.len()),
    };
    let inputs = [first, (g.buffer, g.len())];
    // a thread visits the windows containing its element: at most ⌈F/stride⌉ each way
    let [oh, ow] = [params[4] as usize, params[5] as usize];
    let over = [size.0.div_ceil(s.0).min(oh), size.1.div_ceil(s.1).min(ow)];
    let walk = match max && !arg {
        true => size
            .0
            .min(h)
            .saturating_mul(size.1.min(w).saturating_add(2))
            .saturating_add(2),
        false => 1,
    };
    let mode = [Mode::Avg, Mode::Max, Mode::Arg][max as usize + arg as usize];
    let passes = block_passes(ctx, over, walk, [oh, ow]);
    let out = (out.buffer, len);
    record_passes(
        ctx,
        enc,
        ("pool_grad", mode, POOL_GRAD),
        params,
        out,
        &inputs,
        len,
        passes,
    );
    Ok(())
}
