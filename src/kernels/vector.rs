//! A float32 chain computed on whole `vec4<f32>` values (`V`) instead of lane by lane, where every
//! step has a vector form. The op table's bodies of most float ops are written with operators and
//! WGSL builtins that take vectors as they take scalars (`exp`, `abs`, `1.0 - e`); those are used as
//! they are. Which ops have a vector form, and its body where it differs (relu, exp, sigmoid, log,
//! maximum and minimum test NaN on the bits, which needs a vector of words), is each entry's `vector`
//! column on the op table (`ops/table.rs`); an op with neither (log1p, expm1, softplus, elu, hardSwish, sin and cos, whose
//! selects take scalar literals; `pow`, `mod`, the comparisons) keeps the chain per lane. On SwiftShader the vector form of the compiled 8-op chain
//! took 0-9 % less per dispatch than the same arithmetic lane by lane, 3.6 % on average over eight runs
//! (`bench-kernel-study chain`, variants `vecFns` and `noBranch`).

use crate::ops::Op;
use crate::program::fusion::{Group, Ref};

/// `fn {name}` of `op` over `V`, or `None` where the op has no vector form (its entry's `vector`
/// column on the op table).
fn vector_fn(op: &Op, name: &str) -> Option<String> {
    match op {
        Op::Unary(u) => Some(format!("fn {name}(x: V) -> V {{ {} }}\n", u.vector_body()?)),
        Op::Binary(b) => Some(format!(
            "fn {name}(x: V, y: V) -> V {{ return {}; }}\n",
            b.vector_body()?
        )),
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
