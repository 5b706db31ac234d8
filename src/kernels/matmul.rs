//! Batched, tiled matmul (`shaders/matmul.wgsl`).

use super::{dispatch, strides, wgsl_type, Ctx, Operand};
use crate::error::{Error, Result};

const MATMUL: &str = include_str!("../../shaders/matmul.wgsl");
/// Output rows and columns per workgroup (`shaders/matmul.wgsl`).
const TILE: usize = 64;

pub(super) fn matmul(
    ctx: &Ctx,
    enc: &mut wgpu::CommandEncoder,
    a: Operand,
    b: Operand,
    out: Operand,
) -> Result<()> {
    let (ra, rb, ro) = (a.shape.len(), b.shape.len(), out.shape.len());
    let (m, k, n) = (a.shape[ra - 2], a.shape[ra - 1], b.shape[rb - 1]);
    let batch_dims = &out.shape[..ro - 2];
    let batch: usize = batch_dims.iter().product();
    if batch > 65_535 {
        return Err(Error::Unsupported(format!(
            "matmul over {batch} batches (at most 65535)"
        )));
    }
    let br = batch_dims.len();
    let mut params = vec![m as u32, k as u32, n as u32, br as u32];
    params.extend(batch_dims.iter().map(|&d| d as u32));
    for (side, mat) in [(a, m * k), (b, k * n)] {
        let bd = &side.shape[..side.shape.len() - 2];
        let s = strides(bd);
        let off = br - bd.len();
        params.extend((0..br).map(|i| {
            if i < off || bd[i - off] == 1 {
                0
            } else {
                (s[i - off] * mat) as u32
            }
        }));
    }
    let t = wgsl_type(a.dtype);
    let p = ctx
        .cache
        .pipeline(ctx.device, "matmul", t, || format!("alias T = {t};\n{MATMUL}"));
    let groups = (
        n.div_ceil(TILE) as u32,
        m.div_ceil(TILE) as u32,
        batch.max(1) as u32,
    );
    dispatch(
        ctx,
        enc,
        &p,
        (out.buffer, out.len()),
        &params,
        &[(a.buffer, a.len()), (b.buffer, b.len())],
        groups,
    );
    Ok(())
}
