//! A float32 chain computed on whole `vec4<f32>` values (`V`) instead of lane by lane, where every
//! step has a vector form. The op table's bodies of most float ops are written with operators and
//! WGSL builtins that take vectors as they take scalars (`exp`, `abs`, `1.0 - e`); those are used as
//! they are. relu, maximum and minimum test NaN on the bits, which needs a vector of words, so their
//! vector forms are written here; an op with neither (log1p, expm1, softplus, elu, hardSwish, sin and cos, whose
//! selects take scalar literals; `pow`, `mod`, the comparisons) keeps the chain per lane. On SwiftShader the vector form of the compiled 8-op chain
//! took 0-9 % less per dispatch than the same arithmetic lane by lane, 3.6 % on average over eight runs
//! (`bench-kernel-study chain`, variants `vecFns` and `noBranch`).

use crate::ops::{BinaryOp, Op, UnaryOp};
use crate::program::fusion::{Group, Ref};

/// NaN lanes of `v` (a `V`), tested on the bits (a compiler assuming finite math cannot fold it).
fn nan(v: &str) -> String {
    format!("((bitcast<vec4<u32>>({v}) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u))")
}

/// `fn {name}` of `op` over `V`, or `None` where the op has no vector form.
fn vector_fn(op: &Op, name: &str) -> Option<String> {
    use BinaryOp as B;
    use UnaryOp as U;
    match op {
        Op::Unary(u) => {
            let body = match u {
                U::Relu => format!("return select(select(x, V(0.0), x < V(0.0)), x, {});", nan("x")),
                // NaN through, as the op table's scalar bodies (tested on the bits)
                U::Exp => format!("return select(exp(x), x, {});", nan("x")),
                U::Sigmoid => format!("return select(V(1.0) / (V(1.0) + exp(-x)), x, {});", nan("x")),
                U::Log => format!(
                    "return select(select(select(log(x), -bitcast<V>(vec4<u32>(0x7f800000u) | (bitcast<vec4<u32>>(x) & vec4<u32>(0u))), x == V(0.0)), bitcast<V>(vec4<u32>(0x7fc00000u) | (bitcast<vec4<u32>>(x) & vec4<u32>(0u))), x < V(0.0)), x, {});",
                    nan("x")
                ),
                U::Neg
                | U::Abs
                | U::Square
                | U::Sqrt
                | U::Tanh
                | U::Floor
                | U::Ceil
                | U::Round
                | U::Sign
                | U::Reciprocal
                | U::Rsqrt
                | U::Erf
                | U::Gelu
                | U::Silu => u.body().to_string(),
                _ => return None,
            };
            Some(format!("fn {name}(x: V) -> V {{ {body} }}\n"))
        }
        Op::Binary(b) => {
            let pick = |f: &str| format!("select(select({f}(x, y), y, {}), x, {})", nan("y"), nan("x"));
            let e = match b {
                B::Add | B::Sub | B::Mul | B::Div | B::SquaredDifference => b.body().to_string(),
                B::Maximum => pick("max"),
                B::Minimum => pick("min"),
                _ => return None,
            };
            Some(format!("fn {name}(x: V, y: V) -> V {{ return {e}; }}\n"))
        }
        _ => None,
    }
}

/// The chain of `group` on `V` values for element type `t`: its functions (`alias V` first) and
/// statements over `l{k}` (the leaves as `V`) ending in `let s{j}` for every step; `None` unless `t`
/// is `f32` and every step has a vector form. Constants and params are splat.
pub(super) fn chain(group: &Group, t: &str, pbase: &str) -> Option<(String, String)> {
    if t != "f32" {
        return None;
    }
    let mut functions = "alias V = vec4<T>;\n".to_string();
    let mut seen = vec![];
    for s in &group.steps {
        let name = s.op.name();
        if !seen.contains(&name) {
            seen.push(name);
            functions += &vector_fn(&s.op, &format!("op_{name}"))?;
        }
    }
    let mut body = String::new();
    for (j, s) in group.steps.iter().enumerate() {
        let mut args = vec![];
        for r in &s.args {
            args.push(match r {
                Ref::Acc => return None, // an epilogue's accumulator: not a chain4 group
                Ref::Const(_) | Ref::Param(_) => format!("V({})", operand(r, pbase)),
                Ref::Leaf(_) | Ref::Step(_) => operand(r, pbase),
            });
        }
        body += &format!("    let s{j} = op_{}({});\n", s.op.name(), args.join(", "));
    }
    Some((functions, body))
}

/// A step's argument in a chain's code: a leaf `l{k}`, a step `s{k}`, an epilogue's accumulator `v`,
/// a constant's bits, or the group's param `k` (at `params[pbase + k]`).
pub(super) fn operand(r: &Ref, pbase: &str) -> String {
    match r {
        Ref::Leaf(k) => format!("l{k}"),
        Ref::Step(k) => format!("s{k}"),
        Ref::Acc => "v".to_string(),
        Ref::Const(w) => format!("bitcast<T>({w}u)"),
        Ref::Param(k) => format!("bitcast<T>(params[{pbase} + {k}u])"),
    }
}
