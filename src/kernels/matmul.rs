//! Batched, tiled matmul: `shaders/matmul_big.wgsl` (128×128 output tiles, 8×8 outputs per thread,
//! vec4 loads) for the largest outputs of plain operands, `shaders/matmul.wgsl` (64×64 output tiles,
//! 8×4 outputs per thread) for large outputs, `shaders/matmul_small.wgsl` (16×16 tiles, one output per thread) when the large
//! tiling would leave too few workgroups to fill the device (fewer than [`MIN_LARGE_GROUPS`]).
//! Either operand may be read transposed (its last two axes swapped) in place. CPU adapters run
//! `shaders/matmul_cpu.wgsl` instead (no workgroup memory; see [`crate::Kernels`]).

use crate::error::Result;

use super::epilogue::{producer_parts, Epilogue};
use super::matmul_cpu::CpuForm;
use super::operand_tex;
use super::{dispatch_with, strides, wgsl_type, Ctx, Operand, MAX_GROUPS_PER_DIM};

const MATMUL: &str = include_str!("../../shaders/matmul.wgsl");
const MATMUL_SMALL: &str = include_str!("../../shaders/matmul_small.wgsl");
const MATMUL_BIG: &str = include_str!("../../shaders/matmul_big.wgsl");
/// `fn batch_offsets`, prepended to each of them.
const MATMUL_BATCH: &str = include_str!("../../shaders/matmul_batch.wgsl");

/// Output rows and columns per workgroup of `matmul.wgsl`.
const TILE: usize = 64;
/// ... and of `matmul_small.wgsl`.
const SMALL_TILE: usize = 16;
/// Below this many 64×64 workgroups the small kernel's 16× more workgroups keep more of the device
/// busy. On an H200 the large kernel made 512² and 1024² products 1.1–1.6× faster, but the MLP
/// (whose products have 64×256 and 64×10 outputs) 1.7× slower when it was used for everything.
const MIN_LARGE_GROUPS: usize = 16;
/// The most of K one pass of the tiled forms sums on a CPU adapter: their loop takes K/16
/// iterations, and lavapipe stops an invocation's loops after `MAX_LOOP` (in one pass, a [2, 1.2M] ·
/// [1.2M, 3] product gave 0.5 where −5.5 is exact there); half of that, in whole 16s. Each pass adds
/// to the passes before it; the last stores through the fused epilogue.
const K_PASS: usize = 16 * (super::MAX_LOOP / 2);
/// The same for `matmul.wgsl`, whose every 16 of K also runs an 8-iteration loop of tile loads,
/// which lavapipe counts ([1, 300,000] · [300,000, 1] in one pass of K_PASS gave 0.5 where −5.5 is
/// exact): nine iterations a step. On a CPU adapter it takes the products past the CPU form's
/// loop bound, and small ones too on a device allowing fewer than 256 invocations (`Ctx::workgroup`).
const K_PASS_64: usize = 16 * (super::MAX_LOOP / 2 / 9);
/// Output rows and columns per workgroup of `matmul_big.wgsl`.
const BIG_TILE: usize = 128;
/// From this many 128×128 workgroups on, `matmul_big.wgsl` (16 multiply-adds per vec4
/// workgroup-memory read against `matmul.wgsl`'s 10.7, and vec4 loads from memory) takes plain
/// products. On an H200 (132 multiprocessors), device time of eight products queued, both kernels in
/// one run (BENCHMARKS.md "Native on an H200"): 1024² (64 tiles) 22.8 TFLOP/s against the 64×64
/// kernel's 14.8, 2048² 27.9 against 16.0, 4096² 30.4 against 17.2. With fewer tiles the 64×64
/// kernel's four times as many workgroups kept more of the chip busy (a build taking the big kernel
/// for every plain product, in the same runs: 512², 16 tiles, 4 % and 256² 14 % slower with a readback
/// each, the MLP's 64×784·784×256, 2 tiles, 1.8× slower).
const MIN_BIG_GROUPS: usize = 64;

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
    let mut params = batch_params((a, b), batch_dims, (m, k, n));
    // the K range of a pass (`k_range` in `matmul_batch.wgsl`): [0, K) but for the tiled forms on
    // CPU adapters (`Form::k_step`)
    let k_at = params.len();
    params.extend([0, k as u32]);
    let t = wgsl_type(a.dtype);
    let form = Form::pick(ctx, (m, k, n), batch, (ta, tb));
    let parts = producer_parts(epi, t, params.len());
    params.extend(&parts.params);
    let key = format!("{}|{ta}{tb}{}", parts.key, form.key());
    let enable = form.enable();
    let p = ctx.cache.pipeline(ctx.device, form.kernel(), &key, || {
        let consts = format!("const TRANS_A: bool = {ta};\nconst TRANS_B: bool = {tb};\n");
        format!(
            "{enable}{}{consts}{MATMUL_BATCH}{}",
            parts.prelude(),
            form.source(t)
        )
    });
    // the texture form binds A's and B's textures at 2 and 3, filled first
    let views = match form {
        Form::Cpu(f) if f.tex => Some(operand_tex::fill(ctx, enc, (a, b), (m, k, n))),
        _ => None,
    };
    let views: Vec<(u32, &wgpu::TextureView)> =
        views.iter().flat_map(|[va, vb]| [(2, va), (3, vb)]).collect();
    let mut inputs = if views.is_empty() {
        vec![(a.buffer, a.len()), (b.buffer, b.len())]
    } else {
        vec![]
    };
    inputs.extend(&parts.inputs);
    let tile = form.tile();
    let groups = [n.div_ceil(tile.0), m.div_ceil(tile.1), batch.max(1)];
    let bound = Bound {
        pipeline: &p,
        views: &views,
        out: (out.buffer, out.len()),
        inputs: &inputs,
    };
    for pass in super::passes(k, form.k_step(ctx, k)) {
        params[k_at..k_at + 2].copy_from_slice(&pass);
        dispatch_chunks(ctx, enc, &bound, &mut params, groups);
    }
    Ok(())
}

/// The parameters of an M×K·K×N product over `batch_dims`: M, K, N, the batch rank, the group
/// offsets of a split grid's dispatch, the batch dims, then each operand's batch strides (0 where
/// it broadcasts).
fn batch_params(
    (a, b): (Operand, Operand),
    batch_dims: &[usize],
    (m, k, n): (usize, usize, usize),
) -> Vec<u32> {
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
    params
}

/// The kernel forms of a product.
#[derive(Clone, Copy)]
enum Form {
    /// CPU adapters: `matmul_cpu.wgsl` in one of its forms.
    Cpu(CpuForm),
    /// `matmul_big.wgsl`: 128×128 output tiles.
    Big,
    /// `matmul.wgsl`: 64×64 output tiles.
    Large,
    /// `matmul_small.wgsl`: 16×16 output tiles.
    Small,
}

impl Form {
    /// The form of an M×K·K×N product (`batch` matrices; `ta`, `tb`: operands read transposed).
    fn pick(ctx: &Ctx, (m, k, n): (usize, usize, usize), batch: usize, (ta, tb): (bool, bool)) -> Form {
        match CpuForm::pick(ctx, (m, k, n), batch, (ta, tb)) {
            Some(f) => Form::Cpu(f),
            None if takes_big(ctx, (m, k, n), batch, (ta, tb)) => Form::Big,
            None if takes_large(ctx, (m, n), batch) => Form::Large,
            None => Form::Small,
        }
    }

    /// The kernel's name in the pipeline cache.
    fn kernel(self) -> &'static str {
        match self {
            Form::Cpu(_) => "matmul_cpu",
            Form::Big => "matmul_big",
            Form::Large => "matmul",
            Form::Small => "matmul_small",
        }
    }

    /// Output columns and rows a workgroup covers.
    fn tile(self) -> (usize, usize) {
        match self {
            Form::Cpu(f) => f.tile(),
            Form::Big => (BIG_TILE, BIG_TILE),
            Form::Large => (TILE, TILE),
            Form::Small => (SMALL_TILE, SMALL_TILE),
        }
    }

    /// The form's part of the pipeline key.
    fn key(self) -> String {
        match self {
            Form::Cpu(f) => f.key(),
            _ => String::new(),
        }
    }

    /// The kernel's source after the epilogue's prelude and `MATMUL_BATCH` (built only when its
    /// pipeline is).
    fn source(self, t: &str) -> String {
        match self {
            Form::Cpu(f) => f.source(t.starts_with('f')),
            Form::Big => MATMUL_BIG.to_string(),
            Form::Large => MATMUL.to_string(),
            Form::Small => MATMUL_SMALL.to_string(),
        }
    }

    /// The directives the source starts with.
    fn enable(self) -> &'static str {
        // the browser needs the `enable` directive (before every declaration); wgpu's WGSL front end
        // natively rejects it and takes subgroup builtins from the device's features
        match self {
            Form::Cpu(f) if f.lanes > 0 && cfg!(web) => "enable subgroups;\n",
            _ => "",
        }
    }

    /// The most of K one pass sums.
    fn k_step(self, ctx: &Ctx, k: usize) -> usize {
        // On CPU adapters the tiled forms loop over K in 16s, a pass at most `K_PASS` of it
        match self {
            Form::Small if ctx.cpu_adapter => K_PASS,
            Form::Large if ctx.cpu_adapter => K_PASS_64,
            _ => k,
        }
    }
}

/// Whether a product takes `matmul_big.wgsl` (not a CPU form).
fn takes_big(ctx: &Ctx, (m, k, n): (usize, usize, usize), batch: usize, (ta, tb): (bool, bool)) -> bool {
    // GPUs: plain operands read as vec4s, enough 128×128 tiles to fill a large one, M and N at least
    // a tile (a pointwise convolution into 64 channels, 12544×32·32×64, would leave half of each
    // tile idle; the 64×64 tiling has 196 full tiles there), and 16 KiB of workgroup memory (WebGPU's
    // default; a downlevel adapter may offer less). CPU adapters past the CPU form's loop bound keep
    // the 64×64 tiling, whose loop bound is known there.
    !ctx.cpu_adapter
        && !ta
        && !tb
        && k.is_multiple_of(4)
        && n.is_multiple_of(4)
        && m.min(n) >= BIG_TILE
        && n.div_ceil(BIG_TILE) * m.div_ceil(BIG_TILE) * batch.max(1) >= MIN_BIG_GROUPS
        && ctx.device.limits().max_compute_workgroup_storage_size >= 16384
        && ctx.workgroup >= 256
}

/// Whether a product not taking the big kernel takes `matmul.wgsl` rather than the small one.
fn takes_large(ctx: &Ctx, (m, n): (usize, usize), batch: usize) -> bool {
    // the 16×16 forms need 256 invocations a workgroup; `matmul.wgsl`'s 16×8 covers any shape
    n.div_ceil(TILE) * m.div_ceil(TILE) * batch.max(1) >= MIN_LARGE_GROUPS || ctx.workgroup < 256
}

/// What every dispatch of one product binds.
struct Bound<'a> {
    pipeline: &'a wgpu::ComputePipeline,
    views: &'a [(u32, &'a wgpu::TextureView)],
    out: (&'a wgpu::Buffer, u64),
    inputs: &'a [(&'a wgpu::Buffer, u64)],
}

/// Records one pass over `groups` workgroups: one dispatch per chunk, each with its group
/// offsets in `params[4..7]`.
fn dispatch_chunks(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    bound: &Bound,
    params: &mut [u32],
    groups: [usize; 3],
) {
    // Each dimension may exceed WebGPU's 65535 workgroups: record one dispatch per chunk.
    let chunks = |d: usize| (0..groups[d]).step_by(MAX_GROUPS_PER_DIM as usize);
    for z in chunks(2) {
        for y in chunks(1) {
            for x in chunks(0) {
                let size = |d: usize, at: usize| (groups[d] - at).min(MAX_GROUPS_PER_DIM as usize) as u32;
                params[4..7].copy_from_slice(&[x as u32, y as u32, z as u32]);
                dispatch_with(
                    ctx,
                    enc,
                    bound.pipeline,
                    bound.views,
                    bound.out,
                    params,
                    bound.inputs,
                    (size(0, x), size(1, y), size(2, z)),
                );
            }
        }
    }
}
