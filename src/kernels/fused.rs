//! Fused elementwise chains (`shaders/fused.wgsl`): one dispatch computes a whole group of unary and
//! binary ops decided by `crate::program::fusion`, reading only the group's leaves.

use super::elementwise::{binary_fn, unary_body};
use super::{dispatch, grid, strides, wgsl_type, Ctx, Operand, WORKGROUP};
use crate::ops::Op;
use crate::program::fusion::{Group, Ref};

const FUSED: &str = include_str!("../../shaders/fused.wgsl");

fn source(group: &Group, t: &str, same: &[bool]) -> String {
    let leaves = group.leaves.len();
    let bindings: String = (0..leaves)
        .map(|k| {
            format!(
                "@group(0) @binding({}) var<storage, read> in{k}: array<u32>;\n",
                2 + k
            )
        })
        .collect();
    let mut functions = crate::ops::binary_helpers(t);
    let mut seen = vec![];
    for s in &group.steps {
        let name = s.op.name();
        if seen.contains(&name) {
            continue;
        }
        seen.push(name);
        match &s.op {
            Op::Unary(u) => functions += &format!("fn op_{name}(x: T) -> T {{ {} }}\n", unary_body(*u, t)),
            Op::Binary(b) => functions += &binary_fn(*b, &format!("op_{name}"), false),
            _ => unreachable!("only elementwise ops fuse"),
        }
    }
    let mut index = String::new();
    if same.iter().any(|s| !s) {
        index += "var rem = i;\n";
        for (k, &same_shape) in same.iter().enumerate() {
            index += &format!("    var i{k} = {};\n", if same_shape { "i" } else { "0u" });
        }
        index += "    for (var d = i32(rank) - 1; d >= 0; d = d - 1) {\n        let k = u32(d);\n        let dim = params[2u + k];\n        let c = rem % dim;\n        rem = rem / dim;\n";
        for k in (0..leaves).filter(|&k| !same[k]) {
            index += &format!("        i{k} = i{k} + c * params[2u + {} * rank + k];\n", k + 1);
        }
        index += "    }\n";
    } else {
        for k in 0..leaves {
            index += &format!("let i{k} = i;\n    ");
        }
    }
    for k in 0..leaves {
        index += &format!("    let l{k} = bitcast<T>(in{k}[i{k}]);\n");
    }
    let mut body = String::new();
    for (j, s) in group.steps.iter().enumerate() {
        let args: Vec<String> = s
            .args
            .iter()
            .map(|r| match r {
                Ref::Leaf(k) => format!("l{k}"),
                Ref::Step(k) => format!("s{k}"),
            })
            .collect();
        body += &format!("let s{j} = op_{}({});\n    ", s.op.name(), args.join(", "));
    }
    body += &format!("out[i] = bitcast<u32>(s{});", group.steps.len() - 1);
    let src = FUSED
        .replace("//{{LEAF_BINDINGS}}", &bindings)
        .replace("//{{FUNCTIONS}}", &functions)
        .replace("//{{INDEX}}", &index)
        .replace("//{{BODY}}", &body);
    format!("alias T = {t};\n{src}")
}

/// Records a fused group writing `out` from `leaves` (in the group's leaf order).
pub(crate) fn record_fused(
    ctx: &Ctx,
    enc: &mut wgpu::CommandEncoder,
    group: &Group,
    leaves: &[Operand],
    out: Operand,
) {
    let t = wgsl_type(out.dtype);
    let same: Vec<bool> = leaves.iter().map(|l| l.shape == out.shape).collect();
    let key = format!("{t}:{:?}:{same:?}", group.steps);
    let p = ctx
        .cache
        .pipeline(ctx.device, "fused", &key, || source(group, t, &same));
    let len = out.len();
    let rank = out.shape.len();
    let mut params = vec![len as u32, rank as u32];
    params.extend(out.shape.iter().map(|&d| d as u32));
    for leaf in leaves {
        let s = strides(leaf.shape);
        let off = rank - leaf.shape.len();
        params.extend((0..rank).map(|i| {
            if i < off || leaf.shape[i - off] == 1 {
                0
            } else {
                s[i - off] as u32
            }
        }));
    }
    let inputs: Vec<(&wgpu::Buffer, u64)> = leaves.iter().map(|l| (l.buffer, l.len())).collect();
    let groups = grid(len.div_ceil(WORKGROUP as u64));
    dispatch(ctx, enc, &p, (out.buffer, len), &params, &inputs, groups);
}
