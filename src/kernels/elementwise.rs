//! Elementwise kernels: unary (`shaders/unary.wgsl`), binary with broadcasting
//! (`shaders/binary.wgsl`) and dtype conversion (`shaders/cast.wgsl`); four elements per thread
//! (`unary4.wgsl`, `binary4.wgsl`: vec4 loads and stores) when the length is a multiple of 4 and
//! each side is the output's shape, a single element or a repeated row of a multiple of 4.

use super::vec4::Split;
use super::{broadcast_strides, dispatch, wgsl_type, Ctx, Operand};
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::{BinaryOp, Rule, UnaryOp};

const UNARY: &str = include_str!("../../shaders/unary.wgsl");
const BINARY: &str = include_str!("../../shaders/binary.wgsl");
const CAST: &str = include_str!("../../shaders/cast.wgsl");
const UNARY4: &str = include_str!("../../shaders/unary4.wgsl");
const BINARY4: &str = include_str!("../../shaders/binary4.wgsl");

/// The body of `f(x)` for a unary op over `T` (the WGSL type `t`), from the op table.
pub(super) fn unary_body(op: UnaryOp, t: &str) -> &'static str {
    match op {
        // GPU compilers may assume finite math and turn a compare-and-select into max(x, 0), which
        // drops NaN (seen on NVIDIA); an integer test of the bits keeps NaN propagating, and as a
        // select rather than an early return it costs no control flow (`bench-kernel-study chain`).
        UnaryOp::Relu if t == "f32" => {
            "return select(select(x, T(0), x < T(0)), x, (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u);"
        }
        // |x| of a u32 is x; said outright, since backends differ (wgpu's GL path took it as signed)
        UnaryOp::Abs if t == "u32" => "return x;",
        // WGSL's sign() has no u32 form
        UnaryOp::Sign if t == "u32" => "return select(0u, 1u, x > 0u);",
        _ => op.body(),
    }
}

/// `fn {name}(x: T, y: T) -> R` for a binary op, from the op table: `R = u32` (the output word:
/// `T`'s bits, or 0/1 for comparisons) when `word`, else `R = T` (fused kernels).
pub(super) fn binary_fn(op: BinaryOp, name: &str, word: bool) -> String {
    let e = op.body();
    let yields_bool = matches!(op.rule(), Rule::Compare | Rule::Logical);
    let (ret, value) = match (word, yields_bool) {
        (true, true) => ("u32", format!("select(0u, 1u, {e})")),
        (true, false) => ("u32", format!("bitcast<u32>({e})")),
        (false, true) => ("T", format!("select(T(0), T(1), {e})")),
        (false, false) => ("T", e.to_string()),
    };
    format!("fn {name}(x: T, y: T) -> {ret} {{ return {value}; }}\n")
}

pub(super) fn unary(ctx: &Ctx, enc: &mut crate::commands::Commands, op: UnaryOp, a: Operand, out: Operand) {
    let t = wgsl_type(a.dtype);
    let key = format!("{op:?}:{t}");
    let len = out.len();
    if len.is_multiple_of(4) {
        let split = Split::of(ctx);
        let p = split.pipeline(ctx, ("unary4", "unary4q"), &key, || {
            format!(
                "alias T = {t};\nfn f(x: T) -> T {{ {} }}\n{UNARY4}",
                unary_body(op, t)
            )
        });
        let inputs = [(a.buffer, len)];
        dispatch(
            ctx,
            enc,
            &p,
            (out.buffer, len),
            &[len as u32 / 4],
            &inputs,
            split.groups(ctx, len / 4),
        );
        return;
    }
    let p = ctx.cache.pipeline(ctx.device, "unary", &key, || {
        format!(
            "alias T = {t};\nfn f(x: T) -> T {{ {} }}\n{UNARY}",
            unary_body(op, t)
        )
    });
    dispatch(
        ctx,
        enc,
        &p,
        (out.buffer, len),
        &[len as u32],
        &[(a.buffer, a.len())],
        ctx.groups(len),
    );
}

/// How `binary4.wgsl` reads one side four elements at a time: its binding and `fn load_{name}`, or
/// `None` when this broadcast needs the general kernel.
fn load4(name: &str, binding: u32, operand: &[usize], out: &[usize]) -> Option<String> {
    let n: usize = operand.iter().product();
    let stripped: Vec<usize> = operand.iter().copied().skip_while(|&d| d == 1).collect();
    let (ty, body) = if operand == out {
        ("vec4<u32>", format!("{name}[i]"))
    } else if n == 1 {
        ("u32", format!("vec4<u32>({name}[0])"))
    } else if out.ends_with(&stripped) && n.is_multiple_of(4) {
        ("vec4<u32>", format!("{name}[i % params[{}]]", binding - 1))
    } else {
        return None;
    };
    Some(format!(
        "@group(0) @binding({binding}) var<storage, read> {name}: array<{ty}>;\nfn load_{name}(i: u32) -> vec4<u32> {{ return {body}; }}\n"
    ))
}

/// How a binary kernel finds an operand's element for output index `i`.
fn index_fn(name: &str, side: usize, operand: &[usize], out: &[usize]) -> String {
    let n: usize = operand.iter().product();
    let stripped: Vec<usize> = operand.iter().copied().skip_while(|&d| d == 1).collect();
    let body = if operand == out {
        "i".to_string()
    } else if n == 1 {
        "0u".to_string()
    } else if out.ends_with(&stripped) {
        // the operand is the output's trailing dims: a row repeated
        format!("i % params[{}]", 2 + side)
    } else {
        format!("strided(i, {side}u)")
    };
    format!("fn {name}(i: u32) -> u32 {{ return {body}; }}\n")
}

pub(super) fn binary(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    op: BinaryOp,
    a: Operand,
    b: Operand,
    out: Operand,
) {
    let t = wgsl_type(a.dtype);
    let len = out.len();
    if len.is_multiple_of(4) {
        if let (Some(la), Some(lb)) = (
            load4("a", 2, a.shape, out.shape),
            load4("b", 3, b.shape, out.shape),
        ) {
            let key = format!("{op:?}:{t}:{la}{lb}");
            let split = Split::of(ctx);
            let p = split.pipeline(ctx, ("binary4", "binary4q"), &key, || {
                format!(
                    "alias T = {t};\n{}{}{la}{lb}{BINARY4}",
                    crate::ops::binary_helpers(t),
                    binary_fn(op, "f", true)
                )
            });
            let params = [len as u32 / 4, (a.len() / 4) as u32, (b.len() / 4) as u32];
            let inputs = [(a.buffer, a.len()), (b.buffer, b.len())];
            let groups = split.groups(ctx, len / 4);
            dispatch(ctx, enc, &p, (out.buffer, len), &params, &inputs, groups);
            return;
        }
    }
    let ia = index_fn("index_a", 0, a.shape, out.shape);
    let ib = index_fn("index_b", 1, b.shape, out.shape);
    let key = format!("{op:?}:{t}:{ia}{ib}");
    let p = ctx.cache.pipeline(ctx.device, "binary", &key, || {
        format!(
            "alias T = {t};\n{}{}{ia}{ib}{BINARY}",
            crate::ops::binary_helpers(t),
            binary_fn(op, "f", true)
        )
    });
    let rank = out.shape.len();
    let mut params = vec![len as u32, rank as u32, a.len() as u32, b.len() as u32];
    params.extend(out.shape.iter().map(|&d| d as u32));
    for side in [a, b] {
        params.extend(broadcast_strides(side.shape, rank));
    }
    dispatch(
        ctx,
        enc,
        &p,
        (out.buffer, len),
        &params,
        &[(a.buffer, a.len()), (b.buffer, b.len())],
        ctx.groups(len),
    );
}

/// `fn convert(w: u32) -> u32`: reads `from` bits, returns `to` bits.
fn convert_fn(from: DType, to: DType) -> String {
    let read = match from {
        DType::Float32 => "bitcast<f32>(w)",
        DType::Int32 => "bitcast<i32>(w)",
        DType::Uint32 | DType::Bool => "w",
    };
    let body = match (from, to) {
        (_, DType::Bool) => {
            let zero = if from == DType::Float32 {
                "0.0"
            } else if from == DType::Int32 {
                "0i"
            } else {
                "0u"
            };
            format!("select(0u, 1u, {read} != {zero})")
        }
        (_, DType::Float32) => format!("bitcast<u32>(f32({read}))"),
        (_, DType::Int32) => format!("bitcast<u32>(i32({read}))"),
        (_, DType::Uint32) => format!("u32({read})"),
    };
    format!("fn convert(w: u32) -> u32 {{ return {body}; }}\n")
}

pub(crate) fn cast(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    args: &[Operand],
    out: Operand,
    _dtype: &DType,
) -> Result<()> {
    let a = args[0];
    let len = out.len();
    if a.dtype == out.dtype {
        enc.copy_buffer_to_buffer(a.buffer, 0, out.buffer, 0, len * 4);
        return Ok(());
    }
    let key = format!("{}->{}", a.dtype, out.dtype);
    let p = ctx.cache.pipeline(ctx.device, "cast", &key, || {
        format!("{}{CAST}", convert_fn(a.dtype, out.dtype))
    });
    dispatch(
        ctx,
        enc,
        &p,
        (out.buffer, len),
        &[len as u32],
        &[(a.buffer, a.len())],
        ctx.groups(len),
    );
    Ok(())
}
