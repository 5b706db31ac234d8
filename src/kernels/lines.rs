//! Ops along one axis whose lines are walked whole: softmax (`shaders/softmax*.wgsl`) and `cumsum`
//! (`shaders/cumsum*.wgsl`). A line runs in one invocation (CPU adapters, short lines), in one
//! workgroup, or — few lines past `ops::LONG_LINE`, or any past 2^20, with scratch at hand — in
//! parts (`ops::line_parts`): a workgroup per part writes the part's summary (softmax: its maximum
//! and sum of exponentials; `cumsum`: its sum), then a second pass per part finishes it from every
//! part's summary.

use super::{dispatch, grid, wgsl_type, Ctx, Operand, Scratch};
use crate::error::Result;
use crate::ops::infer::axis;

const SOFTMAX: &str = include_str!("../../shaders/softmax.wgsl");
const SOFTMAX_SERIAL: &str = include_str!("../../shaders/softmax_serial.wgsl");
const SOFTMAX_PARTS: &str = include_str!("../../shaders/softmax_parts.wgsl");
const CUMSUM: &str = include_str!("../../shaders/cumsum.wgsl");
const CUMSUM_WG: &str = include_str!("../../shaders/cumsum_wg.wgsl");
/// On GPUs, lines of at least this many elements are scanned by a workgroup each
/// (`shaders/cumsum_wg.wgsl`), not walked by one thread.
const LONG_SCAN: usize = 4096;

/// `(lines, len, inner)` of `a` along `ax`: element `j` of line `r` is at
/// `(r / inner)·len·inner + r % inner + j·inner`.
fn along(op: &str, a: &Operand, ax: i64) -> Result<(usize, usize, usize)> {
    let ax = axis(op, ax, a.shape.len())?;
    let len = a.shape.get(ax).copied().unwrap_or(1);
    let inner: usize = a.shape[(ax + 1).min(a.shape.len())..].iter().product();
    Ok((a.len() as usize / len.max(1), len, inner))
}

/// The scratch of a line op in parts (`Op::scratch_words`), when its lines are long enough to
/// run in parts and the caller provides scratch.
fn parts_scratch(ctx: &Ctx, lines: usize, len: usize, per_part: u64) -> Result<Option<(Scratch, usize)>> {
    let parts = crate::ops::line_parts(lines, len);
    match ctx.scratch {
        Some(alloc) if parts > 1 => Ok(Some((alloc(lines as u64 * parts as u64 * per_part)?, parts))),
        _ => Ok(None),
    }
}

pub(crate) fn softmax(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    &ax: &i64,
) -> Result<()> {
    let a = args[0];
    debug_assert_eq!(a.dtype, crate::dtype::DType::Float32);
    let (rows, len, inner) = along("softmax", &a, ax)?;
    let input = [(a.buffer, a.len())];
    if let Some((scratch, parts)) = parts_scratch(ctx, rows, len, 2)? {
        let params = [
            rows as u32,
            len as u32,
            inner as u32,
            parts as u32,
            len.div_ceil(parts) as u32,
        ];
        let groups = grid(rows as u64 * parts as u64);
        let words = rows as u64 * parts as u64 * 2;
        let pass = |n: u32| {
            ctx.cache
                .pipeline(ctx.device, "softmax_parts", &n.to_string(), || {
                    let stats = if n == 1 {
                        "fn row_stats(r: u32, parts: u32) -> vec2<f32> { return vec2<f32>(0.0, 1.0); }\n"
                    } else {
                        ROW_STATS
                    };
                    format!("const PASS: u32 = {n}u;\n{stats}{SOFTMAX_PARTS}")
                })
        };
        dispatch(
            ctx,
            enc,
            &pass(1),
            (&scratch.buffer, words),
            &params,
            &input,
            groups,
        );
        let both = [input[0], (&scratch.buffer, words)];
        dispatch(
            ctx,
            enc,
            &pass(2),
            (out.buffer, out.len()),
            &params,
            &both,
            groups,
        );
        return Ok(());
    }
    // CPU adapters: an invocation per row, no barriers; GPUs, and rows too long for one
    // invocation's three loops over it (`MAX_LOOP` in all: rows of 22,000 came out wrong on lavapipe
    // when the bound was a single walk's) without scratch: a workgroup per row, 64 lanes sharing it
    let (p, groups) = if ctx.cpu_adapter && 3 * len + super::LOOP_MARGIN < super::MAX_LOOP {
        let p = ctx
            .cache
            .pipeline(ctx.device, "softmax_serial", "", || SOFTMAX_SERIAL.to_string());
        (p, grid((rows as u64).div_ceil(64)))
    } else {
        let p = ctx
            .cache
            .pipeline(ctx.device, "softmax", "", || SOFTMAX.to_string());
        (p, grid(rows as u64))
    };
    let params = [rows as u32, len as u32, inner as u32];
    dispatch(ctx, enc, &p, (out.buffer, out.len()), &params, &input, groups);
    Ok(())
}

/// Softmax's second pass: a row's maximum M and sum S of exp(x − M) from its parts' summaries.
const ROW_STATS: &str = "@group(0) @binding(3) var<storage, read> stats: array<u32>;
fn row_stats(r: u32, parts: u32) -> vec2<f32> {
    var mx = bitcast<f32>(stats[2u * r * parts]);
    for (var q = 1u; q < parts; q = q + 1u) {
        mx = max(mx, bitcast<f32>(stats[2u * (r * parts + q)]));
    }
    var s = 0.0;
    for (var q = 0u; q < parts; q = q + 1u) {
        let i = 2u * (r * parts + q);
        s = s + bitcast<f32>(stats[i + 1u]) * rel_exp(bitcast<f32>(stats[i]), mx);
    }
    return vec2<f32>(mx, s);
}
";

/// Running sums along `ax`: one thread per line (`shaders/cumsum.wgsl`), a workgroup per line
/// (`shaders/cumsum_wg.wgsl`) for lines past `MAX_LOOP` on CPU adapters and from `LONG_SCAN` on
/// GPUs, and past `ops::LONG_LINE` a workgroup per part of a line, after a pass of the same kernel writing
/// the parts' sums.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cumsum(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    &ax: &i64,
    &exclusive: &bool,
    &reverse: &bool,
) -> Result<()> {
    let a = args[0];
    let (lines, len, inner) = along("cumsum", &a, ax)?;
    let t = wgsl_type(a.dtype);
    let input = [(a.buffer, a.len())];
    let scan = [
        lines as u32,
        len as u32,
        inner as u32,
        exclusive as u32,
        reverse as u32,
    ];
    if let Some((scratch, parts)) = parts_scratch(ctx, lines, len, 1)? {
        let params = [&scan[..], &[parts as u32, len.div_ceil(parts) as u32]].concat();
        let groups = grid(lines as u64 * parts as u64);
        let words = lines as u64 * parts as u64;
        let sums = scan_wg(ctx, t, Scan::Sums);
        dispatch(ctx, enc, &sums, (&scratch.buffer, words), &params, &input, groups);
        let p = scan_wg(ctx, t, Scan::FromParts);
        let both = [input[0], (&scratch.buffer, words)];
        dispatch(ctx, enc, &p, (out.buffer, out.len()), &params, &both, groups);
        return Ok(());
    }
    let wg = if ctx.cpu_adapter {
        len > super::MAX_LOOP
    } else {
        len >= LONG_SCAN
    };
    if wg {
        let p = scan_wg(ctx, t, Scan::Whole);
        let params = [&scan[..], &[1, len as u32]].concat();
        dispatch(
            ctx,
            enc,
            &p,
            (out.buffer, out.len()),
            &params,
            &input,
            grid(lines as u64),
        );
    } else {
        let p = ctx
            .cache
            .pipeline(ctx.device, "cumsum", t, || format!("alias T = {t};\n{CUMSUM}"));
        let groups = ctx.groups(lines as u64);
        dispatch(ctx, enc, &p, (out.buffer, out.len()), &scan, &input, groups);
    }
    Ok(())
}

/// What a `cumsum_wg.wgsl` workgroup scans: a whole line, a part's sum (a line's first pass in
/// parts), or a part from the sums of the parts before it (the second pass).
#[derive(Clone, Copy, Debug)]
enum Scan {
    Whole,
    Sums,
    FromParts,
}

/// The `cumsum_wg.wgsl` pipeline for element type `t` and `scan`.
fn scan_wg(ctx: &Ctx, t: &str, scan: Scan) -> wgpu::ComputePipeline {
    ctx.cache
        .pipeline(ctx.device, "cumsum_wg", &format!("{t}:{scan:?}"), || {
            let sums = matches!(scan, Scan::Sums);
            let offset = match scan {
                Scan::FromParts => PART_OFFSET,
                _ => "fn part_offset(line: u32, p: u32, parts: u32) -> T { return T(0); }\n",
            };
            format!("alias T = {t};\nconst SUMS: bool = {sums};\n{offset}{CUMSUM_WG}")
        })
}

/// `cumsum_wg.wgsl`'s start for part `p` of a line in parts: the sum of the parts before it.
const PART_OFFSET: &str = "@group(0) @binding(3) var<storage, read> sums: array<u32>;
fn part_offset(line: u32, p: u32, parts: u32) -> T {
    var s = T(0);
    for (var q = 0u; q < p; q = q + 1u) {
        s = s + bitcast<T>(sums[line * parts + q]);
    }
    return s;
}
";
