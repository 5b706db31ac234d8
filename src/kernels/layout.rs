//! Data movement: transpose as a strided gather (`shaders/strided.wgsl`); `where` as a broadcast
//! select (`shaders/select.wgsl`).

use super::{broadcast_strides, dispatch, strides, Ctx, Operand};
use crate::error::Result;
use crate::ops::infer::permutation;
use crate::ops::Fill;

const GATHER: &str = include_str!("../../shaders/gather.wgsl");
const STRIDED: &str = include_str!("../../shaders/strided.wgsl");
const SELECT: &str = include_str!("../../shaders/select.wgsl");
const WINDOW: &str = include_str!("../../shaders/window.wgsl");

/// A window (slice, pad, tile) of `a` into `out` (`shaders/window.wgsl`).
#[allow(clippy::too_many_arguments)] // the op table passes each attribute
pub(crate) fn window(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    start: &[i64],
    _size: &[usize],
    &tile: &bool,
    fill: &Fill,
) -> Result<()> {
    let a = args[0];
    let value = out.dtype.word_from_f64(fill.value())?;
    let len = out.len();
    let rank = out.shape.len();
    let mut params = vec![len as u32, rank as u32, value, tile as u32];
    params.extend(out.shape.iter().map(|&d| d as u32));
    params.extend(a.shape.iter().map(|&d| d as u32));
    params.extend(strides(a.shape).iter().map(|&s| s as u32));
    params.extend(start.iter().map(|&s| s as i32 as u32));
    let p = ctx
        .cache
        .pipeline(ctx.device, "window", "", || WINDOW.to_string());
    dispatch(
        ctx,
        enc,
        &p,
        (out.buffer, len),
        &params,
        &[(a.buffer, a.len())],
        ctx.groups(len),
    );
    Ok(())
}

/// A copy of `a`'s words (`clone`).
pub(crate) fn copy(
    _ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
) -> Result<()> {
    enc.copy_buffer_to_buffer(args[0].buffer, 0, out.buffer, 0, out.len() * 4);
    Ok(())
}

/// `reshape`: the same words.
pub(crate) fn reshape(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    _shape: &[i64],
) -> Result<()> {
    copy(ctx, enc, args, out)
}

/// `where`: `out = cond ? a : b`, all three broadcast to `out` (`shaders/select.wgsl`).
pub(crate) fn select(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
) -> Result<()> {
    let (a, cond, b) = (args[0], args[1], args[2]);
    let len = out.len();
    let rank = out.shape.len();
    let mut params = vec![len as u32, rank as u32];
    params.extend(out.shape.iter().map(|&d| d as u32));
    for side in [a, cond, b] {
        params.extend(broadcast_strides(side.shape, rank));
    }
    let p = ctx
        .cache
        .pipeline(ctx.device, "select", "", || SELECT.to_string());
    let inputs = [
        (a.buffer, a.len()),
        (cond.buffer, cond.len()),
        (b.buffer, b.len()),
    ];
    dispatch(ctx, enc, &p, (out.buffer, len), &params, &inputs, ctx.groups(len));
    Ok(())
}

pub(crate) fn transpose(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    perm: &Option<Vec<i64>>,
) -> Result<()> {
    let a = args[0];
    let perm = permutation(perm.as_deref(), a.shape.len())?;
    let src = strides(a.shape);
    let len = out.len();
    let mut params = vec![len as u32, out.shape.len() as u32];
    params.extend(out.shape.iter().map(|&d| d as u32));
    params.extend(perm.iter().map(|&p| src[p] as u32));
    let p = ctx
        .cache
        .pipeline(ctx.device, "strided", "", || STRIDED.to_string());
    let groups = ctx.groups(len);
    dispatch(
        ctx,
        enc,
        &p,
        (out.buffer, len),
        &params,
        &[(a.buffer, a.len())],
        groups,
    );
    Ok(())
}

/// `gather`: slices of `a` along `axis` at int32 indices (`shaders/gather.wgsl`).
pub(crate) fn gather(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    &ax: &i64,
) -> Result<()> {
    let (a, idx) = (args[0], args[1]);
    let ax = crate::ops::infer::axis("gather", ax, a.shape.len())?;
    let inner: usize = a.shape[ax + 1..].iter().product();
    let len = out.len();
    let (check, tag) = ctx.cache.check(ctx.device, ctx.origin);
    let params = [
        len as u32,
        a.shape[ax] as u32,
        inner as u32,
        idx.len() as u32,
        tag,
    ];
    let p = ctx
        .cache
        .pipeline(ctx.device, "gather", "", || GATHER.to_string());
    let inputs = [(a.buffer, a.len()), (idx.buffer, idx.len()), (&check, 4)];
    dispatch(ctx, enc, &p, (out.buffer, len), &params, &inputs, ctx.groups(len));
    Ok(())
}
