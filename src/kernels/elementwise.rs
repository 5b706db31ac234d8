//! Elementwise kernels: unary (`shaders/unary.wgsl`), binary with broadcasting
//! (`shaders/binary.wgsl`) and dtype conversion (`shaders/cast.wgsl`).

use super::{dispatch, grid, strides, wgsl_type, Ctx, Operand, WORKGROUP};
use crate::dtype::DType;
use crate::ops::{BinaryOp, UnaryOp};

const UNARY: &str = include_str!("../../shaders/unary.wgsl");
const BINARY: &str = include_str!("../../shaders/binary.wgsl");
const CAST: &str = include_str!("../../shaders/cast.wgsl");

fn groups(len: u64) -> (u32, u32, u32) {
    grid(len.div_ceil(WORKGROUP as u64))
}

/// The body of `f(x)` for a unary op over `T` (the WGSL type `t`).
pub(super) fn unary_body(op: UnaryOp, t: &str) -> &'static str {
    match op {
        // GPU compilers may assume finite math and turn a compare-and-select into max(x, 0), which
        // drops NaN (seen on NVIDIA); an integer test of the bits keeps NaN propagating.
        UnaryOp::Relu if t == "f32" => {
            "if ((bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u) { return x; } return select(x, T(0), x < T(0));"
        }
        UnaryOp::Neg => "return -x;",
        UnaryOp::Abs => "return abs(x);",
        UnaryOp::Square => "return x * x;",
        UnaryOp::Sqrt => "return sqrt(x);",
        UnaryOp::Exp => "return exp(x);",
        UnaryOp::Log => "return log(x);",
        // select, not max: NaN must propagate (max(NaN, 0) is implementation-defined)
        UnaryOp::Relu => "return select(x, T(0), x < T(0));",
        UnaryOp::Sigmoid => "return 1.0 / (1.0 + exp(-x));",
        // tanh via exp(-2|x|), which never overflows
        UnaryOp::Tanh => "let e = exp(-2.0 * abs(x)); return sign(x) * (1.0 - e) / (1.0 + e);",
    }
}

/// The WGSL operator of a binary op.
pub(super) fn binary_symbol(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
    }
}

pub(super) fn unary(ctx: &Ctx, enc: &mut wgpu::CommandEncoder, op: UnaryOp, a: Operand, out: Operand) {
    let t = wgsl_type(a.dtype);
    let key = format!("{op:?}:{t}");
    let p = ctx.cache.pipeline(ctx.device, "unary", &key, || {
        format!(
            "alias T = {t};\nfn f(x: T) -> T {{ {} }}\n{UNARY}",
            unary_body(op, t)
        )
    });
    let len = out.len();
    dispatch(
        ctx,
        enc,
        &p,
        (out.buffer, len),
        &[len as u32],
        &[(a.buffer, a.len())],
        groups(len),
    );
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
    enc: &mut wgpu::CommandEncoder,
    op: BinaryOp,
    a: Operand,
    b: Operand,
    out: Operand,
) {
    let t = wgsl_type(a.dtype);
    let sym = binary_symbol(op);
    let ia = index_fn("index_a", 0, a.shape, out.shape);
    let ib = index_fn("index_b", 1, b.shape, out.shape);
    let key = format!("{op:?}:{t}:{ia}{ib}");
    let p = ctx.cache.pipeline(ctx.device, "binary", &key, || {
        format!("alias T = {t};\nfn f(x: T, y: T) -> T {{ return x {sym} y; }}\n{ia}{ib}{BINARY}")
    });
    let len = out.len();
    let rank = out.shape.len();
    let mut params = vec![len as u32, rank as u32, a.len() as u32, b.len() as u32];
    params.extend(out.shape.iter().map(|&d| d as u32));
    for side in [a, b] {
        // align right; broadcast dims (size 1 or missing) get stride 0
        let s = strides(side.shape);
        let off = rank - side.shape.len();
        params.extend((0..rank).map(|i| {
            if i < off || side.shape[i - off] == 1 {
                0
            } else {
                s[i - off] as u32
            }
        }));
    }
    dispatch(
        ctx,
        enc,
        &p,
        (out.buffer, len),
        &params,
        &[(a.buffer, a.len()), (b.buffer, b.len())],
        groups(len),
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

pub(super) fn cast(ctx: &Ctx, enc: &mut wgpu::CommandEncoder, a: Operand, out: Operand) {
    let len = out.len();
    if a.dtype == out.dtype {
        enc.copy_buffer_to_buffer(a.buffer, 0, out.buffer, 0, len * 4);
        return;
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
        groups(len),
    );
}
