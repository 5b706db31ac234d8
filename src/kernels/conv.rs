//! Convolutions and pooling over NHWC tensors: a direct convolution computing four output
//! channels per thread (`shaders/conv2d.wgsl`), a pointwise (1×1, stride 1, unpadded) convolution
//! as one tiled matmul over `[N·H·W, C] × [C, OC]` (the layouts are already those matrices), a
//! depthwise convolution (`shaders/depthwise.wgsl`), and the gradients of the convolutions.
//! Pooling is in `pool.rs`.

use super::depthwise::Form;
use super::epilogue::{producer_parts, Epilogue};
use super::window::{window_passes, Pass, PASS_AT};
use super::{dispatch, fixed_params, grid, matmul::matmul_with, passes, Ctx, Operand, MAX_LOOP};
use crate::error::Result;
use crate::ops::rules::extent;
use crate::ops::{Pad, Pair};

const CONV2D: &str = include_str!("../../shaders/conv2d.wgsl");
const DEPTHWISE: &str = include_str!("../../shaders/depthwise.wgsl");
const DEPTHWISE4: &str = include_str!("../../shaders/depthwise4.wgsl");

/// `[H, W, C]` of an NHWC operand (rank 3 is one image).
fn hwc(x: &Operand) -> [usize; 3] {
    let r = x.shape.len();
    [x.shape[r - 3], x.shape[r - 2], x.shape[r - 1]]
}

/// The parameters shared by the windowed kernels (the pools' too, `pool.rs`): `[H, W, C, OH, OW,
/// extra, FH, FW, strides, dilations, pads]` (the pool has no dilations and no extra).
pub(super) fn geometry(
    name: &str,
    x: &Operand,
    out: &Operand,
    f: (usize, usize),
    s: &Pair,
    pad: &Pad,
    d: &Pair,
) -> Result<Vec<u32>> {
    let [h, w, c] = hwc(x);
    let [oh, ow, _] = hwc(out);
    let top = extent(name, h, f.0, s.0, d.0, *pad)?.pad_before;
    let left = extent(name, w, f.1, s.1, d.1, *pad)?.pad_before;
    Ok([h, w, c, oh, ow]
        .iter()
        .map(|&v| v as u32)
        .chain([0])
        .chain(
            [f.0, f.1, s.0, s.1, d.0, d.1, top, left]
                .iter()
                .map(|&v| v as u32),
        )
        .collect())
}

pub(crate) fn conv2d(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    s: &Pair,
    pad: &Pad,
    d: &Pair,
) -> Result<()> {
    conv2d_with(ctx, enc, args, out, (s, pad, d), None)
}

/// The convolution, its store running `epi` when an elementwise chain is fused into it.
pub(crate) fn conv2d_with(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    (s, pad, d): (&Pair, &Pad, &Pair),
    epi: Option<&Epilogue>,
) -> Result<()> {
    let (x, f) = (args[0], args[1]);
    let (fh, fw, oc) = (f.shape[0], f.shape[1], f.shape[3]);
    let [_, _, c] = hwc(&x);
    let pointwise = fh == 1 && fw == 1 && *s == Pair::ONE && !matches!(pad, Pad::Explicit(p) if *p > 0);
    if pointwise {
        let rows = x.len() as usize / c;
        let (a_shape, b_shape, o_shape) = ([rows, c], [c, oc], [rows, oc]);
        let a = Operand { shape: &a_shape, ..x };
        let b = Operand { shape: &b_shape, ..f };
        let o = Operand {
            shape: &o_shape,
            ..out
        };
        return matmul_with(ctx, enc, &[a, b], o, (false, false), epi);
    }
    let mut params = geometry("conv2d", &x, &out, (fh, fw), s, pad, d)?;
    params[5] = oc as u32;
    let threads = out.len() / oc as u64 * oc.div_ceil(4) as u64;
    params.insert(0, threads as u32);
    // a thread walks its input channels at each tap, in one of two loops: one iteration a channel
    // for a quad of output channels, more and a loop over the lanes for a partial quad (when OC is
    // not a multiple of 4, lanes of one SIMD vector take both)
    let per_chan = if oc.is_multiple_of(4) { 1 } else { oc % 4 + 4 };
    let passes = window_passes(ctx.cpu_adapter, [fh, fw], c, (5, per_chan));
    let inputs = [(x.buffer, x.len()), (f.buffer, f.len())];
    let kernel = ("conv2d", String::new(), || CONV2D.to_string());
    record_window(
        ctx,
        enc,
        kernel,
        params,
        &inputs,
        out,
        threads,
        epi,
        Some(&passes),
    )
}

/// Records a windowed kernel that stores through `store`: its parameters and inputs, then those of
/// the fused epilogue `epi` (if any), over `threads` threads. `kernel` is its name, its form's part
/// of the pipeline key, and its source (built only when the pipeline is). With `split`, one
/// dispatch per pass, written at [`PASS_AT`] (see [`window_passes`]).
#[allow(clippy::too_many_arguments)]
fn record_window(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    (kernel, form, source): (&'static str, String, impl FnOnce() -> String),
    mut params: Vec<u32>,
    inputs: &[(&wgpu::Buffer, u64)],
    out: Operand,
    threads: u64,
    epi: Option<&Epilogue>,
    split: Option<&[Pass]>,
) -> Result<()> {
    if split.is_some() {
        params.resize(PASS_AT + 6, 0);
    }
    let parts = producer_parts(epi, "f32", params.len());
    params.extend(&parts.params);
    // the parameters as a fixed-size array (`fixed_params`): their count is part of the key
    let n = params.len();
    let p = ctx
        .cache
        .pipeline(ctx.device, kernel, &format!("{}|{n}|{form}", parts.key), || {
            fixed_params(&format!("{}{}", parts.prelude(), source()), n)
        });
    let mut inputs = inputs.to_vec();
    inputs.extend(&parts.inputs);
    let groups = ctx.groups(threads);
    for pass in split.unwrap_or_default() {
        params[PASS_AT..PASS_AT + 6].copy_from_slice(pass);
        dispatch(ctx, enc, &p, (out.buffer, out.len()), &params, &inputs, groups);
    }
    if split.is_none() {
        dispatch(ctx, enc, &p, (out.buffer, out.len()), &params, &inputs, groups);
    }
    Ok(())
}

pub(crate) fn depthwise_conv2d(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    s: &Pair,
    pad: &Pad,
    d: &Pair,
) -> Result<()> {
    depthwise_with(ctx, enc, args, out, (s, pad, d), None)
}

/// The depthwise convolution, its store running `epi` when an elementwise chain is fused into it.
pub(crate) fn depthwise_with(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    (s, pad, d): (&Pair, &Pad, &Pair),
    epi: Option<&Epilogue>,
) -> Result<()> {
    let (x, f) = (args[0], args[1]);
    let mut params = geometry("depthwiseConv2d", &x, &out, (f.shape[0], f.shape[1]), s, pad, d)?;
    let m = f.shape[3];
    params[5] = m as u32;
    let [_, _, c] = hwc(&x);
    // multiplier 1 with channels in fours (MobileNet's blocks): four channels of 4 to 16 adjacent
    // pixels a thread, vec4 reads, each input column of a filter row read once (`depthwise.rs`),
    // unless the window is too wide for that form on this adapter
    let inputs = [(x.buffer, x.len()), (f.buffer, f.len())];
    let [oh, ow, _] = hwc(&out);
    // (its loop over filter rows has no passes: on CPU adapters a filter taller than half the
    // budget takes the looping form, whose passes split its rows)
    let fits = !ctx.cpu_adapter || f.shape[0] < MAX_LOOP / 2;
    let form = (m == 1 && c.is_multiple_of(4) && fits)
        .then(|| Form::pick(ow, f.shape[1], s.1, d.1, ctx.cpu_adapter))
        .flatten();
    if let Some(form) = form {
        let images = out.len() / (oh * ow * c) as u64;
        let threads = images * (oh * ow.div_ceil(form.pixels) * c / 4) as u64;
        params.insert(0, threads as u32);
        let kernel = ("depthwise4", form.key(), || form.source(DEPTHWISE4));
        return record_window(ctx, enc, kernel, params, &inputs, out, threads, epi, None);
    }
    let threads = out.len();
    params.insert(0, threads as u32);
    // a thread walks the window's taps of its one channel
    let passes = window_passes(ctx.cpu_adapter, [f.shape[0], f.shape[1]], 1, (3, 0));
    let kernel = ("depthwise", String::new(), || DEPTHWISE.to_string());
    record_window(
        ctx,
        enc,
        kernel,
        params,
        &inputs,
        out,
        threads,
        epi,
        Some(&passes),
    )
}

const CONV_INPUT_GRAD: &str = include_str!("../../shaders/conv_input_grad.wgsl");
const CONV_FILTER_GRAD: &str = include_str!("../../shaders/conv_filter_grad.wgsl");
const CONV_FILTER_GRAD_WG: &str = include_str!("../../shaders/conv_filter_grad_wg.wgsl");
/// `fn filter_element`, prepended to both filter-gradient shaders.
const CONV_FILTER_GRAD_INDEX: &str = include_str!("../../shaders/conv_filter_grad_index.wgsl");

/// `[H, W, C, OH, OW, K, FH, FW, strides, dilations, pads]` of a convolution's gradient, from its
/// input `x`, filter `f` and upstream gradient `g` (the forward output's shape).
fn grad_geometry(
    name: &str,
    x: &Operand,
    f: &Operand,
    g: &Operand,
    s: &Pair,
    pad: &Pad,
    d: &Pair,
) -> Result<Vec<u32>> {
    let mut p = geometry(name, x, g, (f.shape[0], f.shape[1]), s, pad, d)?;
    p[5] = f.shape[3] as u32;
    Ok(p)
}

#[allow(clippy::too_many_arguments)] // the op table passes each attribute
pub(crate) fn input_grad(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    s: &Pair,
    pad: &Pad,
    d: &Pair,
    &depthwise: &bool,
) -> Result<()> {
    let (x, f, g) = (args[0], args[1], args[2]);
    let mut params = grad_geometry("convInputGrad", &x, &f, &g, s, pad, d)?;
    let len = out.len();
    params.insert(0, len as u32);
    let key = if depthwise { "depthwise" } else { "dense" };
    let p = ctx.cache.pipeline(ctx.device, "conv_input_grad", key, || {
        format!("const DEPTHWISE: bool = {depthwise};\n{CONV_INPUT_GRAD}")
    });
    // x gives only its shape
    let inputs = [(f.buffer, f.len()), (g.buffer, g.len())];
    // a thread walks the output channels (or multipliers) at each tap whose output exists (in one
    // of two loops, DEPTHWISE choosing)
    let (fh, fw, k) = (f.shape[0], f.shape[1], f.shape[3]);
    params.resize(PASS_AT + 6, 0);
    for pass in window_passes(ctx.cpu_adapter, [fh, fw], k, (5, 2)) {
        params[PASS_AT..PASS_AT + 6].copy_from_slice(&pass);
        let groups = ctx.groups(len);
        dispatch(ctx, enc, &p, (out.buffer, len), &params, &inputs, groups);
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)] // the op table passes each attribute
pub(crate) fn filter_grad(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    s: &Pair,
    pad: &Pad,
    d: &Pair,
    &depthwise: &bool,
) -> Result<()> {
    let (x, f, g) = (args[0], args[1], args[2]);
    let mut params = grad_geometry("convFilterGrad", &x, &f, &g, s, pad, d)?;
    let len = out.len();
    params.insert(0, len as u32);
    let n = if x.shape.len() == 4 { x.shape[0] } else { 1 };
    params.push(n as u32);
    let key = if depthwise { "depthwise" } else { "dense" };
    // a thread per filter element walks every output position in three nested loops (images,
    // output rows, output columns), an output row costing its columns and two of lavapipe's budget
    // (measured: 30,000 rows one wide summed 21,845, 12,000 four wide 43,691); past `MAX_LOOP` a
    // workgroup per element shares the walk
    let [oh, ow, _] = hwc(&g);
    let positions = n * oh * ow;
    let walk = n.saturating_mul(oh.saturating_mul(ow + 2).saturating_add(2));
    let shared = walk.saturating_add(1 + super::LOOP_MARGIN) >= MAX_LOOP;
    let (kernel, source, groups) = if shared {
        ("conv_filter_grad_wg", CONV_FILTER_GRAD_WG, grid(len))
    } else {
        ("conv_filter_grad", CONV_FILTER_GRAD, ctx.groups(len))
    };
    let p = ctx.cache.pipeline(ctx.device, kernel, key, || {
        format!("const DEPTHWISE: bool = {depthwise};\n{CONV_FILTER_GRAD_INDEX}{source}")
    });
    // (the filter gives only its shape)
    let inputs = [(x.buffer, x.len()), (g.buffer, g.len())];
    // the positions a pass's workgroups walk (parameters 16, 17), each lane a 64th of them: all on
    // GPUs; on CPU adapters past 64 · MAX_LOOP in passes, each adding to the ones before (in one
    // pass lavapipe summed 131,070 of 4,488,008 positions)
    let step = if ctx.cpu_adapter && shared {
        64 * (MAX_LOOP - super::LOOP_MARGIN)
    } else {
        positions
    };
    params.extend([0, 0]);
    for pass in passes(positions, step) {
        params[16..18].copy_from_slice(&pass);
        dispatch(ctx, enc, &p, (out.buffer, len), &params, &inputs, groups);
    }
    Ok(())
}
