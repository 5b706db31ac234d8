//! Data movement: transpose as a strided gather (`shaders/gather.wgsl`); `where` as a broadcast
//! select (`shaders/select.wgsl`).

use super::{broadcast_strides, dispatch, grid, strides, Ctx, Operand, WORKGROUP};
use crate::error::Result;
use crate::ops::infer::permutation;

const GATHER: &str = include_str!("../../shaders/gather.wgsl");
const SELECT: &str = include_str!("../../shaders/select.wgsl");
const WINDOW: &str = include_str!("../../shaders/window.wgsl");

/// A window (slice, pad, tile) of `a` into `out` (`shaders/window.wgsl`).
pub(super) fn window(
    ctx: &Ctx,
    enc: &mut wgpu::CommandEncoder,
    start: &[i64],
    tile: bool,
    value: u32,
    a: Operand,
    out: Operand,
) {
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
        grid(len.div_ceil(WORKGROUP as u64)),
    );
}

/// `where`: `out = cond ? a : b`, all three broadcast to `out` (`shaders/select.wgsl`).
pub(super) fn select(
    ctx: &Ctx,
    enc: &mut wgpu::CommandEncoder,
    a: Operand,
    cond: Operand,
    b: Operand,
    out: Operand,
) {
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
    dispatch(
        ctx,
        enc,
        &p,
        (out.buffer, len),
        &params,
        &inputs,
        grid(len.div_ceil(WORKGROUP as u64)),
    );
}

pub(super) fn transpose(
    ctx: &Ctx,
    enc: &mut wgpu::CommandEncoder,
    perm: Option<&[i64]>,
    a: Operand,
    out: Operand,
) -> Result<()> {
    let perm = permutation(perm, a.shape.len())?;
    let src = strides(a.shape);
    let len = out.len();
    let mut params = vec![len as u32, out.shape.len() as u32];
    params.extend(out.shape.iter().map(|&d| d as u32));
    params.extend(perm.iter().map(|&p| src[p] as u32));
    let p = ctx
        .cache
        .pipeline(ctx.device, "gather", "", || GATHER.to_string());
    let groups = grid(len.div_ceil(WORKGROUP as u64));
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
