//! Batched, tiled matmul: `shaders/matmul.wgsl` (64×64 output tiles, 4×4 outputs per thread) for
//! large outputs, `shaders/matmul_small.wgsl` (16×16 tiles, one output per thread) when the large
//! tiling would leave too few workgroups to fill the device (fewer than [`MIN_LARGE_GROUPS`]).
//! Either operand may be read transposed (its last two axes swapped) in place.

use crate::error::Result;

use super::fused::{producer_parts, Epilogue};
use super::{dispatch, strides, wgsl_type, Ctx, Operand, MAX_GROUPS_PER_DIM};

const MATMUL: &str = include_str!("../../shaders/matmul.wgsl");
const MATMUL_SMALL: &str = include_str!("../../shaders/matmul_small.wgsl");
/// Output rows and columns per workgroup of `matmul.wgsl`.
const TILE: usize = 64;
/// ... and of `matmul_small.wgsl`.
const SMALL_TILE: usize = 16;
/// Below this many 64×64 workgroups the small kernel's 16× more workgroups keep more of the device
/// busy. On an H200 the large kernel made 512² and 1024² products 1.1–1.6× faster, but the MLP
/// (whose products have 64×256 and 64×10 outputs) 1.7× slower when it was used for everything.
const MIN_LARGE_GROUPS: usize = 16;

pub(crate) fn matmul(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    transpose_a: &bool,
    transpose_b: &bool,
) -> Result<()> {
    matmul_with(ctx, enc, args, out, (*transpose_a, *transpose_b), None)
}

/// The product, its store running `epi` when an elementwise chain is fused into it.
pub(crate) fn matmul_with(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    (ta, tb): (bool, bool),
    epi: Option<&Epilogue>,
) -> Result<()> {
    let (a, b) = (args[0], args[1]);
    let (ra, ro) = (a.shape.len(), out.shape.len());
    let k = a.shape[ra - if ta { 2 } else { 1 }];
    let (m, n) = (out.shape[ro - 2], out.shape[ro - 1]);
    let batch_dims = &out.shape[..ro - 2];
    let batch: usize = batch_dims.iter().product();
    let br = batch_dims.len();
    // [4..7] are the group offsets of each dispatch of a split grid
    let mut params = vec![m as u32, k as u32, n as u32, br as u32, 0, 0, 0];
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
    // CPU adapters have a few cores, so only the tiniest products stay on the small kernel there
    let min_groups = if ctx.cpu_adapter { 2 } else { MIN_LARGE_GROUPS };
    let large = n.div_ceil(TILE) * m.div_ceil(TILE) * batch.max(1) >= min_groups;
    let (kernel, source, tile) = if large {
        ("matmul", MATMUL, TILE)
    } else {
        ("matmul_small", MATMUL_SMALL, SMALL_TILE)
    };
    let (prelude, key, extra, extra_inputs) = producer_parts(epi, t, params.len());
    params.extend(extra);
    let key = format!("{key}|{ta}{tb}");
    let consts = format!("const TRANS_A: bool = {ta};\nconst TRANS_B: bool = {tb};\n");
    let p = ctx
        .cache
        .pipeline(ctx.device, kernel, &key, || format!("{prelude}{consts}{source}"));
    let mut inputs = vec![(a.buffer, a.len()), (b.buffer, b.len())];
    inputs.extend(extra_inputs);
    let groups = [n.div_ceil(tile), m.div_ceil(tile), batch.max(1)];
    // Each dimension may exceed WebGPU's 65535 workgroups: record one dispatch per chunk.
    let chunks = |d: usize| (0..groups[d]).step_by(MAX_GROUPS_PER_DIM as usize);
    for z in chunks(2) {
        for y in chunks(1) {
            for x in chunks(0) {
                let size = |d: usize, at: usize| (groups[d] - at).min(MAX_GROUPS_PER_DIM as usize) as u32;
                params[4..7].copy_from_slice(&[x as u32, y as u32, z as u32]);
                dispatch(
                    ctx,
                    enc,
                    &p,
                    (out.buffer, out.len()),
                    &params,
                    &inputs,
                    (size(0, x), size(1, y), size(2, z)),
                );
            }
        }
    }
    Ok(())
}
