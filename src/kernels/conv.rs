//! Convolutions and pooling over NHWC tensors: a direct convolution computing four output
//! channels per thread (`shaders/conv2d.wgsl`), a pointwise (1×1, stride 1, unpadded) convolution
//! as one tiled matmul over `[N·H·W, C] × [C, OC]` (the layouts are already those matrices), a
//! depthwise convolution (`shaders/depthwise.wgsl`), and the gradients of the convolutions.
//! Pooling is in `pool.rs`.

use super::depthwise::Form;
use super::epilogue::{producer_parts, Epilogue};
use super::{dispatch, fixed_params, grid, matmul::matmul_with, Ctx, Operand, WORKGROUP};
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
    // the input channels a pass walks (params 15 and 16): a thread's loops take about
    // FH·FW·(1 + 4) iterations a channel
    let taps = fh * fw;
    let per_pass = super::MAX_LOOP.saturating_sub(fh + taps + 8) / (5 * taps);
    let passes = channel_passes(ctx, c, per_pass);
    params.extend([0, 0]);
    let inputs = [(x.buffer, x.len()), (f.buffer, f.len())];
    let kernel = ("conv2d", String::new(), || CONV2D.to_string());
    let split = Some((15, passes.as_slice()));
    record_window(ctx, enc, kernel, params, &inputs, out, threads, epi, split)
}

/// Ranges of `n` channels that one invocation's loops walk in a pass: all of them on GPUs; on CPU
/// adapters at most `per_pass` (lavapipe stops an invocation's loops after `MAX_LOOP` iterations,
/// silently: a 3×3 convolution over 8,000 input channels summed 21,842 of 72,000 there). Each pass
/// after the first adds to what the passes before it wrote; the last one stores the result.
fn channel_passes(ctx: &Ctx, n: usize, per_pass: usize) -> Vec<[u32; 2]> {
    super::passes(n, if ctx.cpu_adapter { per_pass } else { n }).collect()
}

/// Records a windowed kernel that stores through `store`: its parameters and inputs, then those of
/// the fused epilogue `epi` (if any), over `threads` threads. `kernel` is its name, its form's part
/// of the pipeline key, and its source (built only when the pipeline is). With `split`, one
/// dispatch per range, written at that index of the parameters (see [`channel_passes`]).
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
    split: Option<(usize, &[[u32; 2]])>,
) -> Result<()> {
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
    let groups = grid(threads.div_ceil(WORKGROUP as u64));
    let (at, passes) = split.unwrap_or((0, &[]));
    for pass in passes {
        params[at..at + 2].copy_from_slice(pass);
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
    let form = (m == 1 && c.is_multiple_of(4))
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
    let kernel = ("depthwise", String::new(), || DEPTHWISE.to_string());
    record_window(ctx, enc, kernel, params, &inputs, out, threads, epi, None)
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
    // the output channels (or multipliers) a pass walks: FH·FW iterations a channel
    let (fh, fw, k) = (f.shape[0], f.shape[1], f.shape[3]);
    let per_pass = super::MAX_LOOP.saturating_sub(fh + fh * fw + 8) / (fh * fw).max(1);
    params.extend([0, 0]);
    for pass in channel_passes(ctx, k, per_pass) {
        params[15..17].copy_from_slice(&pass);
        let groups = grid(len.div_ceil(WORKGROUP as u64));
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
    // a thread per filter element walks every output position; past `MAX_LOOP` of them a workgroup
    // per element shares the walk
    let [oh, ow, _] = hwc(&g);
    let shared = n * oh * ow > super::MAX_LOOP;
    let (kernel, source, groups) = if shared {
        ("conv_filter_grad_wg", CONV_FILTER_GRAD_WG, len)
    } else {
        (
            "conv_filter_grad",
            CONV_FILTER_GRAD,
            len.div_ceil(WORKGROUP as u64),
        )
    };
    let p = ctx.cache.pipeline(ctx.device, kernel, key, || {
        format!("const DEPTHWISE: bool = {depthwise};\n{CONV_FILTER_GRAD_INDEX}{source}")
    });
    let inputs = [(x.buffer, x.len()), (g.buffer, g.len())]; // the filter gives only its shape
    dispatch(ctx, enc, &p, (out.buffer, len), &params, &inputs, grid(groups));
    Ok(())
}
