//! The scratch a kernel needs, as its op-table entry states it (`scratch = (...)`): the kernel
//! forms whose passes hand partial results to a next pass — a split reduction, a softmax row or
//! `cumsum` line in parts, a large `maxPool` gradient's first maxima — and the choices between
//! forms that decide it, shared by the kernels (`crate::kernels`) and whoever plans or admits the
//! scratch (eager ops, composites, a program's plan).

use super::infer;
use super::rules;
use super::{Pad, Pair};

/// Elements per workgroup below which a reduction with few outputs is not split.
const SPLIT_ELEMENTS: u64 = 16_384;
/// Most partial results per output of a split reduction.
const MAX_PARTS: u64 = 256;

/// Invocations per part of a split reduction, each writing one partial result.
pub(crate) const PART_THREADS: u64 = 64;

/// How many parts each output of a reduction of `count` elements into `outputs` values is split
/// into (1: not split). A long reduction into few outputs runs as `parts` workgroups per output,
/// each of [`PART_THREADS`] invocations writing a partial result to a scratch buffer, then one more
/// pass combines them; the scratch is `outputs × parts × PART_THREADS` words (at most a 256th of
/// the input), planned and accounted like any intermediate.
pub(crate) fn reduce_parts(count: u64, outputs: u64) -> u64 {
    if outputs >= 64 {
        return 1; // enough workgroups already
    }
    (count / SPLIT_ELEMENTS).clamp(1, MAX_PARTS)
}

/// Lines (softmax rows, `cumsum` lines) longer than this may run in parts: one workgroup per part
/// of a line, then a second pass per part finishing it from every part's summary (scratch).
pub(crate) const LONG_LINE: usize = 65_535;
/// Lines up to this long run a workgroup per line when there are at least two of them: within
/// lavapipe's loop budget for softmax (3·len/64 a lane) and `cumsum` (2·len/256).
const WHOLE_LINE: usize = 1 << 20;
/// Most parts of one line.
const MAX_LINE_PARTS: usize = 256;

/// How many parts each of `lines` softmax rows or `cumsum` lines of `len` elements runs in (1: one
/// workgroup or invocation for the whole line): a part per 65,536 elements, at most 256, for a
/// single line past `LONG_LINE` (one workgroup would leave all but one core or SM idle) and for
/// lines longer than 2^20 (past lavapipe's loop budget, `kernels::MAX_LOOP`, even with a
/// workgroup's lanes sharing the line). Several shorter lines run whole: on lavapipe (2 cores) the
/// extra pass cost more than the parallelism gave — 4 lines of 2^20 took 89–98 ms in parts against
/// 67 ms whole, while one line of 2^22 took 94–101 ms in parts against 126–128 ms whole
/// (`cargo bench --bench compute -- cumsum`, builds alternated).
pub(crate) fn line_parts(lines: usize, len: usize) -> usize {
    if len <= LONG_LINE || lines == 0 || (lines > 1 && len <= WHOLE_LINE) {
        1
    } else {
        len.div_ceil(LONG_LINE + 1).clamp(2, MAX_LINE_PARTS)
    }
}

/// Whether `maxPool`'s gradient takes each window's first maximum from a pass of its own (two
/// words of scratch a window: `shaders/pool.wgsl` with `ARG`) rather than having every thread walk
/// the cells of each window that contains its element: when that walk (up to ⌈F/stride⌉ windows
/// each way, each about `fh·(fw + 2)` iterations over its cells inside the input, `[h, w]`) would
/// pass lavapipe's loop budget (`LONG_LINE`, less the margin `kernels/pool.rs` keeps), which stops
/// it silently, and where it would cost the square of the window's area anyway.
pub(crate) fn pool_grad_argmax(filter: &Pair, strides: &Pair, [h, w]: [usize; 2]) -> bool {
    let over = |f: usize, s: usize| f.div_ceil(s.max(1)) as u64;
    let (fh, fw) = (filter.0.min(h) as u64, filter.1.min(w) as u64);
    let walk = fh * (fw + 2) + 2;
    over(filter.0, strides.0) * (over(filter.1, strides.1) * walk + 2) + 1 >= (LONG_LINE - 16) as u64
}

/// A reduction of `input` into `output` elements: `outputs × parts × PART_THREADS` words when it is
/// split into parts, else none.
pub(crate) fn reduce(input: &[usize], output: u64) -> u64 {
    let count = input.iter().product::<usize>() as u64;
    let parts = reduce_parts(count / output.max(1), output);
    if parts > 1 {
        output * parts * PART_THREADS
    } else {
        0
    }
}

/// A line op along `axis` of `input` (softmax, `cumsum`): `per_part` words for each part of each
/// line when its lines run in parts, else none.
pub(crate) fn lines(input: &[usize], axis: i64, per_part: u64) -> u64 {
    let count = input.iter().product::<usize>();
    let Ok(ax) = infer::axis("", axis, input.len()) else {
        return 0;
    };
    let len = input.get(ax).copied().unwrap_or(1).max(1);
    let lines = count / len;
    match line_parts(lines, len) as u64 {
        parts if parts > 1 => lines as u64 * parts * per_part,
        _ => 0,
    }
}

/// `maxPool`'s gradient of `input` (NHWC or HWC): each window's first maximum, its position and
/// value, when it takes them from a pass of its own ([`pool_grad_argmax`]).
pub(crate) fn pool_grad(input: &[usize], max: bool, filter_size: &Pair, strides: &Pair, pad: Pad) -> u64 {
    let r = input.len();
    if !max || r < 3 || !pool_grad_argmax(filter_size, strides, [input[r - 3], input[r - 2]]) {
        return 0;
    }
    let count = input.iter().product::<usize>() as u64;
    let out =
        |i: usize, f: usize, s: usize| rules::extent("maxPool", input[i], f, s, 1, pad).map(|e| e.out as u64);
    match (
        out(r - 3, filter_size.0, strides.0),
        out(r - 2, filter_size.1, strides.1),
    ) {
        (Ok(oh), Ok(ow)) => 2 * oh * ow * (count / (input[r - 3] * input[r - 2]).max(1) as u64),
        _ => 0,
    }
}
