//! Batched, tiled matmul: `shaders/matmul_big.wgsl` (128×128 output tiles, 8×8 outputs per thread,
//! vec4 loads) for the largest outputs of plain operands, `shaders/matmul.wgsl` (64×64 output tiles,
//! 8×4 outputs per thread) for large outputs, `shaders/matmul_small.wgsl` (16×16 tiles, one output per thread) when the large
//! tiling would leave too few workgroups to fill the device (fewer than [`MIN_LARGE_GROUPS`]).
//! Either operand may be read transposed (its last two axes swapped) in place. CPU adapters run
//! `shaders/matmul_cpu.wgsl` instead (no workgroup memory; see [`crate::Kernels`]).

use crate::error::Result;

use super::epilogue::{producer_parts, Epilogue};
use super::operand_tex::{self, LOAD_A4_TEX, LOAD_B4_TEX};
use super::{dispatch_with, strides, wgsl_type, Ctx, Operand, MAX_GROUPS_PER_DIM};

const MATMUL: &str = include_str!("../../shaders/matmul.wgsl");
const MATMUL_SMALL: &str = include_str!("../../shaders/matmul_small.wgsl");
const MATMUL_BIG: &str = include_str!("../../shaders/matmul_big.wgsl");
const MATMUL_CPU: &str = include_str!("../../shaders/matmul_cpu.wgsl");
/// `fn batch_offsets`, prepended to each of them.
const MATMUL_BATCH: &str = include_str!("../../shaders/matmul_batch.wgsl");

/// `fn load_a4` of `matmul_cpu.wgsl`: A plain row-major with K a multiple of 4 is read as vec4s.
const LOAD_A4_VEC: &str = "@group(0) @binding(2) var<storage, read> a: array<vec4<u32>>;
fn load_a4(a_off: u32, row: u32, k: u32, m: u32, kk: u32) -> vec4<T> {
    if (!FULL_M && row >= m) { return vec4<T>(); }
    return bitcast<vec4<T>>(a[(a_off + row * kk + k) / 4u]);
}
";
/// ... otherwise element by element (transposed: A stored K×M), zero outside the matrix.
const LOAD_A4_SCALAR: &str = "@group(0) @binding(2) var<storage, read> a: array<u32>;
fn load_a1(a_off: u32, row: u32, k: u32, m: u32, kk: u32) -> T {
    if ((!FULL_M && row >= m) || (!FULL_K && k >= kk)) { return T(0); }
    return bitcast<T>(a[a_off + select(row * kk + k, k * m + row, TRANS_A)]);
}
fn load_a4(a_off: u32, row: u32, k: u32, m: u32, kk: u32) -> vec4<T> {
    return vec4<T>(load_a1(a_off, row, k, m, kk), load_a1(a_off, row, k + 1u, m, kk), load_a1(a_off, row, k + 2u, m, kk), load_a1(a_off, row, k + 3u, m, kk));
}
";
/// `fn load_b4`: B plain row-major with N a multiple of 4 is read as vec4s.
const LOAD_B4_VEC: &str = "@group(0) @binding(3) var<storage, read> b: array<vec4<u32>>;
fn load_b4(b_off: u32, k: u32, col: u32, n: u32, kk: u32) -> vec4<T> {
    if ((!FULL_N && col >= n) || (!FULL_K && k >= kk)) { return vec4<T>(); }
    return bitcast<vec4<T>>(b[(b_off + k * n + col) / 4u]);
}
";
/// ... otherwise element by element (transposed: B stored N×K), zero outside the matrix.
const LOAD_B4_SCALAR: &str = "@group(0) @binding(3) var<storage, read> b: array<u32>;
fn load_b1(b_off: u32, k: u32, c: u32, n: u32, kk: u32) -> T {
    if ((!FULL_N && c >= n) || (!FULL_K && k >= kk)) { return T(0); }
    return bitcast<T>(b[b_off + select(k * n + c, c * kk + k, TRANS_B)]);
}
fn load_b4(b_off: u32, k: u32, col: u32, n: u32, kk: u32) -> vec4<T> {
    return vec4<T>(load_b1(b_off, k, col, n, kk), load_b1(b_off, k, col + 1u, n, kk), load_b1(b_off, k, col + 2u, n, kk), load_b1(b_off, k, col + 3u, n, kk));
}
";

/// The output block of one `matmul_cpu.wgsl` invocation, rows × columns: 8×16 when both operands
/// are read as vec4s, else 4×8 (SwiftShader's compiler crashed the GPU process on a larger body of
/// guarded element-by-element loads). On SwiftShader the 8×16 block made a 1024² product and the
/// MLP's 64×784·784×256 1.3–1.5× faster than 4×8 (fewer loads per multiply-add). Under a fused
/// epilogue the 8×16 block was once kept for K ≥ 128 only: with a workgroup spanning only the
/// blocks N needs and the chain's per-channel leaves read once per column quad, it made the
/// compiled MobileNet block's pointwise convolution (K = 32) faster than 4×8 (the block 0.75×).
fn cpu_block(vec: bool) -> (usize, usize) {
    if vec {
        (8, 16)
    } else {
        (4, 8)
    }
}

/// Subgroup sizes the shared form of `matmul_cpu.wgsl` is written for: a workgroup's 64
/// invocations are 64 / LANES subgroups, each LANES row blocks of the same 16 columns.
const SHARED_LANES: [u32; 2] = [4, 8];

/// Invocations in a `matmul_cpu.wgsl` workgroup.
const CPU_INVOCATIONS: usize = 64;

/// How many R×C blocks side by side a `matmul_cpu.wgsl` workgroup covers (its 64 invocations are
/// that many columns of blocks by 64 / that many rows): 8, or fewer when the product has fewer
/// columns — the smallest power of two whose blocks span `n`. A fixed 8 left half of every
/// workgroup idle when `n` is 64 under the 8×16 block (a MobileNet pointwise convolution into 64
/// channels), and in the shared form an idle block still computes (its lanes must broadcast).
fn cpu_col_blocks(n: usize, block_cols: usize) -> usize {
    n.div_ceil(block_cols).next_power_of_two().min(8)
}

/// `matmul_cpu.wgsl` for an R×C block, `col_blocks` of them across a workgroup (see
/// [`cpu_col_blocks`]): its place, accumulators, A loads, four k-steps (unrolled when both operands
/// are read as vec4s, else a loop) and stores; with `lanes` (4 or 8, the 8×16 vec4 form only) the
/// shared form, whose subgroup lanes share their B loads. `full_n`: the block's columns are inside
/// the matrix (`FULL_N`), the only case whose stores take the epilogue's per-channel leaves.
/// `float`: `T` is a float type, whose multiply-adds are written as `fma` (see [`mad`]).
fn cpu_body(
    (rows, cols): (usize, usize),
    unrolled: bool,
    lanes: u32,
    col_blocks: usize,
    full_n: bool,
    float: bool,
) -> String {
    let nv = cols / 4;
    debug_assert!(lanes == 0 || (unrolled && nv == 4 && SHARED_LANES.contains(&lanes)));
    let lanes = lanes as usize;
    let mut decls = String::new();
    let mut loads = String::new();
    let mut writes = String::new();
    // an epilogue's per-channel leaves, read once per column quad for all the block's rows (a
    // partial block stores element by element and reads none)
    for v in 0..nv {
        writes += &if full_n {
            format!("    let q{v} = channels(col + {}u);\n", 4 * v)
        } else {
            format!("    let q{v} = Channels();\n")
        };
    }
    for r in 0..rows {
        for v in 0..nv {
            decls += &format!("    var c{r}_{v} = vec4<T>();\n");
        }
        loads += &format!("        let a{r} = load_a4(a_off, row + {r}u, k, m, kk);\n");
        for h in 0..nv / 2 {
            let (v0, v1) = (2 * h, 2 * h + 1);
            writes += &format!(
                "    write(base, row + {r}u, col + {}u, m, n, c{r}_{v0}, c{r}_{v1}, q{v0}, q{v1});\n",
                8 * h
            );
        }
    }
    // shared form: lane l reads B row k + l % 4, vec4s (l / 4)·per .. +per of the block's columns
    let per = (4 * nv).checked_div(lanes).unwrap_or(0);
    for u in 0..per {
        loads += &format!(
            "        let own{u} = load_b4(b_off, k + lane % 4u, col + 4u * ((lane / 4u) * {per}u + {u}u), n, kk);\n"
        );
    }
    let step = |k: &str, comp: &str, j: usize| {
        let mut s = String::new();
        for v in 0..nv {
            s += &if lanes > 0 {
                format!(
                    "            let b{v} = subgroupBroadcast(own{}, {}u);\n",
                    v % per,
                    j + 4 * (v / per)
                )
            } else {
                format!(
                    "            let b{v} = load_b4(b_off, {k}, col + {}u, n, kk);\n",
                    4 * v
                )
            };
        }
        for r in 0..rows {
            for v in 0..nv {
                s += &mad(
                    &format!("c{r}_{v}"),
                    &format!("a{r}{comp}"),
                    &format!("b{v}"),
                    float,
                );
            }
        }
        s
    };
    let steps: String = if unrolled {
        ["x", "y", "z", "w"]
            .iter()
            .enumerate()
            .map(|(j, c)| {
                format!(
                    "        {{\n{}        }}\n",
                    step(&format!("k + {j}u"), &format!(".{c}"), j)
                )
            })
            .collect()
    } else {
        format!(
            "        for (var j = 0u; j < 4u; j = j + 1u) {{\n{}        }}\n",
            step("k + j", "[j]", 0)
        )
    };
    let (lane, place) = if lanes > 0 {
        writes = format!("    if (row < m && col < n) {{\n{writes}    }}\n");
        (
            ", @builtin(subgroup_invocation_id) lane: u32",
            format!("    let sg = lid / {lanes}u;\n    let row = wid.y * (ROW_BLOCKS * BLOCK_ROWS) + (sg / COL_BLOCKS) * ({lanes}u * BLOCK_ROWS) + lane * BLOCK_ROWS;\n    let col = wid.x * (COL_BLOCKS * BLOCK_COLS) + (sg % COL_BLOCKS) * BLOCK_COLS;\n"),
        )
    } else {
        (
            "",
            "    let row = wid.y * (ROW_BLOCKS * BLOCK_ROWS) + (lid / COL_BLOCKS) * BLOCK_ROWS;\n    let col = wid.x * (COL_BLOCKS * BLOCK_COLS) + (lid % COL_BLOCKS) * BLOCK_COLS;\n    if (row >= m || col >= n) {\n        return;\n    }\n".to_string(),
        )
    };
    let consts = format!(
        "const BLOCK_ROWS: u32 = {rows}u;\nconst BLOCK_COLS: u32 = {cols}u;\nconst COL_BLOCKS: u32 = {col_blocks}u;\nconst ROW_BLOCKS: u32 = {}u;\n",
        CPU_INVOCATIONS / col_blocks
    );
    consts
        + &MATMUL_CPU
            .replace("/*{{LANE}}*/", lane)
            .replace("//{{PLACE}}\n", &place)
            .replace("//{{DECLS}}\n", &decls)
            .replace("//{{LOADS}}\n", &loads)
            .replace("//{{STEPS}}\n", &steps)
            .replace("//{{WRITES}}\n", &writes)
}

/// One multiply-add of the CPU form, `c += a · b` (`a` a scalar, `b` and `c` vec4s), as a line of
/// its loop body: WGSL's `fma` for floats (the accumulator's rounding is the device's: a fused or a
/// separate multiply and add), `+` and `*` for integers, which have no `fma`. In the raw-WGSL study
/// (`node scripts/bench-kernel-study.mjs matmul`, variant `sharedFma`) the MLP's 64×784·784×256
/// took 0.90–1.03× the time of `c + a * b` on SwiftShader, less in five runs of six.
fn mad(c: &str, a: &str, b: &str, float: bool) -> String {
    if float {
        format!("            {c} = fma(vec4<T>({a}), {b}, {c});\n")
    } else {
        format!("            {c} = {c} + {a} * {b};\n")
    }
}

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
    // the K range of a pass (`k_range` in `matmul_batch.wgsl`): [0, K) but for the tiled forms on
    // CPU adapters (below)
    let k_at = params.len();
    params.extend([0, k as u32]);
    let t = wgsl_type(a.dtype);
    // CPU adapters: no workgroup memory (`matmul_cpu.wgsl`), 8×8 invocations of R×C blocks
    // (`cpu_block`; the block is part of the pipeline key: with an epilogue it depends on K),
    // specialised by layout: vec4 reads of A and B, and edges that cannot occur not tested for
    // (rows and columns in whole blocks, k in fours)
    // the CPU form loops over k in fours: near `MAX_LOOP` iterations the tiled forms take it (the
    // fused epilogue's loops share the budget: at exactly 65,535 steps, K = 262,140, lavapipe gave
    // 262,136 for a dot product of ones)
    let cpu_form = (ctx.cpu_adapter && k.div_ceil(4) + super::LOOP_MARGIN < super::MAX_LOOP).then(|| {
        let vec = (!ta && k.is_multiple_of(4), !tb && n.is_multiple_of(4));
        let wide = vec.0 && vec.1;
        let block = cpu_block(wide);
        let full = (
            m.is_multiple_of(block.0),
            n.is_multiple_of(block.1),
            k.is_multiple_of(4),
        );
        // subgroups share the B loads of the 8×16 form (`SHARED_LANES`)
        let lanes = if wide && SHARED_LANES.contains(&ctx.subgroup_lanes) {
            ctx.subgroup_lanes
        } else {
            0
        };
        // large products read A and B from textures (`operand_tex.rs`)
        let tex = wide && operand_tex::takes(ctx, (m, k, n), batch);
        (vec, full, block, lanes, cpu_col_blocks(n, block.1), tex)
    });
    let large = n.div_ceil(TILE) * m.div_ceil(TILE) * batch.max(1) >= MIN_LARGE_GROUPS;
    // GPUs: plain operands read as vec4s, enough 128×128 tiles to fill a large one, M and N at least
    // a tile (a pointwise convolution into 64 channels, 12544×32·32×64, would leave half of each
    // tile idle; the 64×64 tiling has 196 full tiles there), and 16 KiB of workgroup memory (WebGPU's
    // default; a downlevel adapter may offer less). CPU adapters past the CPU form's loop bound keep
    // the 64×64 tiling, whose loop bound is known there.
    let big = !ctx.cpu_adapter
        && !ta
        && !tb
        && k.is_multiple_of(4)
        && n.is_multiple_of(4)
        && m.min(n) >= BIG_TILE
        && n.div_ceil(BIG_TILE) * m.div_ceil(BIG_TILE) * batch.max(1) >= MIN_BIG_GROUPS
        && ctx.device.limits().max_compute_workgroup_storage_size >= 16384;
    let (kernel, tile, form) = match cpu_form {
        Some((vec, full, (r, c), lanes, cb, tex)) => (
            "matmul_cpu",
            (cb * c, CPU_INVOCATIONS / cb * r),
            format!("{}{}{full:?}{r}x{c}s{lanes}c{cb}t{tex}", vec.0, vec.1),
        ),
        None if big => ("matmul_big", (BIG_TILE, BIG_TILE), String::new()),
        None if large => ("matmul", (TILE, TILE), String::new()),
        None => ("matmul_small", (SMALL_TILE, SMALL_TILE), String::new()),
    };
    // the kernel's source, built only when its pipeline is
    let source = || match cpu_form {
        Some(((vec_a, vec_b), full, block, lanes, cb, tex)) => {
            let (load_a, load_b) = match (tex, vec_a, vec_b) {
                (true, ..) => (LOAD_A4_TEX, LOAD_B4_TEX),
                (false, va, vb) => (
                    if va { LOAD_A4_VEC } else { LOAD_A4_SCALAR },
                    if vb { LOAD_B4_VEC } else { LOAD_B4_SCALAR },
                ),
            };
            format!(
                "const FULL_M: bool = {};\nconst FULL_N: bool = {};\nconst FULL_K: bool = {};\n{load_a}{load_b}{}",
                full.0,
                full.1,
                full.2,
                cpu_body(block, vec_a && vec_b, lanes, cb, full.1, t.starts_with('f'))
            )
        }
        None if big => MATMUL_BIG.to_string(),
        None if large => MATMUL.to_string(),
        None => MATMUL_SMALL.to_string(),
    };
    let parts = producer_parts(epi, t, params.len());
    params.extend(&parts.params);
    let key = format!("{}|{ta}{tb}{form}", parts.key);
    // the browser needs the `enable` directive (before every declaration); wgpu's WGSL front end
    // natively rejects it and takes subgroup builtins from the device's features
    let enable = match cpu_form {
        Some((.., lanes, _, _)) if lanes > 0 && cfg!(target_arch = "wasm32") => "enable subgroups;\n",
        _ => "",
    };
    let p = ctx.cache.pipeline(ctx.device, kernel, &key, || {
        let consts = format!("const TRANS_A: bool = {ta};\nconst TRANS_B: bool = {tb};\n");
        format!("{enable}{}{consts}{MATMUL_BATCH}{}", parts.prelude(), source())
    });
    // the texture form binds A's and B's textures at 2 and 3, filled first
    let views = match cpu_form {
        Some((.., true)) => Some(operand_tex::fill(ctx, enc, (a, b), (m, k, n))),
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
    let groups = [n.div_ceil(tile.0), m.div_ceil(tile.1), batch.max(1)];
    // On CPU adapters the tiled forms loop over K in 16s, a pass at most `K_PASS` of it
    let k_step = if ctx.cpu_adapter && matches!(kernel, "matmul" | "matmul_small") {
        K_PASS
    } else {
        k
    };
    // Each dimension may exceed WebGPU's 65535 workgroups: record one dispatch per chunk.
    let chunks = |d: usize| (0..groups[d]).step_by(MAX_GROUPS_PER_DIM as usize);
    for pass in super::passes(k, k_step) {
        params[k_at..k_at + 2].copy_from_slice(&pass);
        for z in chunks(2) {
            for y in chunks(1) {
                for x in chunks(0) {
                    let size = |d: usize, at: usize| (groups[d] - at).min(MAX_GROUPS_PER_DIM as usize) as u32;
                    params[4..7].copy_from_slice(&[x as u32, y as u32, z as u32]);
                    dispatch_with(
                        ctx,
                        enc,
                        &p,
                        &views,
                        (out.buffer, out.len()),
                        &params,
                        &inputs,
                        (size(0, x), size(1, y), size(2, z)),
                    );
                }
            }
        }
    }
    Ok(())
}
