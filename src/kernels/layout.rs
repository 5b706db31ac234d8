//! Data movement: transpose as a strided gather (`shaders/gather.wgsl`).

use super::{dispatch, grid, strides, Ctx, Operand, WORKGROUP};
use crate::error::Result;
use crate::ops::infer::permutation;

const GATHER: &str = include_str!("../../shaders/gather.wgsl");

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
