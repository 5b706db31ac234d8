//! Fused elementwise chains (`shaders/fused.wgsl`): one dispatch computes a whole group of unary and
//! binary ops decided by `crate::program::fusion`, reading only the group's leaves. The same code
//! generation makes epilogues (`epilogue.rs`: a chain run in a matmul or convolution's store) and
//! prologues (a chain run where a reduction reads it). A chain whose leaves are all of the output's
//! shape (or single elements) runs on whole vec4s (vec4 loads and stores; `vec4.rs` splits them
//! into threads).

use super::elementwise::{binary_fn, unary_body};
use super::vec4::Split;
use super::vector::operand;
use super::{dispatch, strides, wgsl_type, Ctx, Operand};
use crate::ops::Op;
use crate::program::fusion::{Group, Ref};

const FUSED: &str = include_str!("../../shaders/fused.wgsl");

/// How a fused kernel finds a leaf's element for output index `i`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Access {
    /// The leaf has the output's shape: `i`.
    Same,
    /// A single element: `0`.
    One,
    /// The output's trailing dims (size-1 dims aside) of this many elements, repeated: `i % n`
    /// (a bias, a batchNorm statistic per channel).
    Row(u64),
    /// Anything else: through the broadcast strides in the parameters.
    Strided,
}

/// How a leaf of `leaf` shape is read in an output of `out` shape.
pub(super) fn access(leaf: &[usize], out: &[usize]) -> Access {
    let n: usize = leaf.iter().product();
    let stripped: Vec<usize> = leaf.iter().copied().skip_while(|&d| d == 1).collect();
    if leaf == out {
        Access::Same
    } else if n == 1 {
        Access::One
    } else if out.ends_with(&stripped) {
        Access::Row(n as u64)
    } else {
        Access::Strided
    }
}

/// Code for a group's steps: `(functions, index and leaf loads, body ending in the result's name)`.
/// `loaded` are the leaves read from buffers `in{k}` (an epilogue's producer inputs are not); the
/// j-th has its broadcast strides at `base + (j + 1) · rank` after the output dims at `base`. The
/// group's `params` are read from `params[pbase + k]`.
pub(super) fn chain(
    group: &Group,
    t: &str,
    loaded: &[(usize, Access)],
    base: &str,
    pbase: &str,
) -> (String, String, String) {
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
    for &(k, a) in loaded {
        index += &match a {
            Access::Same => format!("let i{k} = i;\n    "),
            Access::One => String::new(),
            Access::Row(n) => format!("let i{k} = i % {n}u;\n    "),
            Access::Strided => format!("var i{k} = 0u;\n    "),
        };
    }
    if loaded.iter().any(|&(_, a)| a == Access::Strided) {
        index += &format!(
            "var rem = i;\n    for (var d = i32(rank) - 1; d >= 0; d = d - 1) {{\n        let k = u32(d);\n        let dim = params[{base} + k];\n        let c = rem % dim;\n        rem = rem / dim;\n"
        );
        for (j, &(k, a)) in loaded.iter().enumerate() {
            if a == Access::Strided {
                index += &format!(
                    "        i{k} = i{k} + c * params[{base} + {} * rank + k];\n",
                    j + 1
                );
            }
        }
        index += "    }\n";
    }
    for &(k, a) in loaded {
        index += &match a {
            Access::One => format!("    let l{k} = bitcast<T>(in{k});\n"),
            _ => format!("    let l{k} = bitcast<T>(in{k}[i{k}]);\n"),
        };
    }
    let mut body = String::new();
    for (j, s) in group.steps.iter().enumerate() {
        let args: Vec<String> = s.args.iter().map(|r| operand(r, pbase)).collect();
        body += &format!("let s{j} = op_{}({});\n    ", s.op.name(), args.join(", "));
    }
    (functions, index, body)
}

/// The bindings of `loaded` leaves read element by element ([`leaf_binding`]).
pub(super) fn bindings(loaded: &[(usize, Access)]) -> String {
    loaded.iter().map(|&(k, a)| leaf_binding(k, a, "u32")).collect()
}

/// The binding of leaf `k` (binding `2 + k`), read as `a`: a single element is bound as one word,
/// `in{k}: u32`, read without an index; any other leaf as `array<{ty}>`. On CPU adapters an
/// indexed read of a runtime-sized array is a bounds clamp and a per-lane gather even at index 0,
/// a plain variable one load: the fused chain with two scalar operands (`x.mul(c).add(d)`, 1M
/// floats) ran ~20 % faster on SwiftShader this way, with [`params_read`]'s fixed-size
/// parameters (`scripts/bench-kernel-study.mjs reads`; docs/performance.md).
pub(super) fn leaf_binding(k: usize, a: Access, ty: &str) -> String {
    let ty = if a == Access::One {
        "u32".to_string()
    } else {
        format!("array<{ty}>")
    };
    format!("@group(0) @binding({}) var<storage, read> in{k}: {ty};\n", 2 + k)
}

/// How many of a group's parameter words its steps read (`Ref::Param(k)`: `k + 1` at most). The
/// vec4 kernel declares its parameters as a fixed-size array of `1 +` this many words (the buffer
/// may hold more: a chain cut short keeps its words): its reads are then at constant, in-bounds
/// indices, which CPU adapters load once instead of clamping and gathering per lane (3–8 % of
/// the chain above on SwiftShader, in the same study).
fn params_read(group: &Group) -> usize {
    let read = group.steps.iter().flat_map(|s| &s.args).filter_map(|r| match r {
        Ref::Param(k) => Some(k + 1),
        _ => None,
    });
    read.max().unwrap_or(0)
}

/// Per-leaf strides into an output of `shape` (0 on broadcast dims), for each of `leaves`.
pub(super) fn leaf_strides(leaves: &[Operand], shape: &[usize]) -> Vec<u32> {
    let rank = shape.len();
    let mut params = vec![];
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
    params
}

/// Records a fused group writing `out` from `leaves` (in the group's leaf order).
pub(crate) fn record_fused(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    group: &Group,
    leaves: &[Operand],
    out: Operand,
) {
    record_fused_outputs(ctx, enc, group, leaves, &[(out, group.steps.len() - 1)]);
}

/// Records a fused group writing each of `outs` (an output and the step whose value it takes;
/// all of one shape and dtype) from `leaves` in one kernel: sibling chains over the same leaves
/// are computed together, each step once.
pub(crate) fn record_fused_outputs(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    group: &Group,
    leaves: &[Operand],
    outs: &[(Operand, usize)],
) {
    let out = outs[0].0;
    let t = wgsl_type(out.dtype);
    let len = out.len();
    let roots: Vec<usize> = outs.iter().map(|&(_, r)| r).collect();
    let four = loads4(leaves, out.shape);
    let how: Vec<Access> = leaves.iter().map(|l| access(l.shape, out.shape)).collect();
    let key = format!("{t}:{:?}:{roots:?}:{how:?}", group.steps);
    let n = leaves.len();
    let split = Split::of(ctx);
    let p = if four {
        split.pipeline(ctx, ("fused4", "fused4q"), &key, || {
            let (leaf_bindings, functions, body) =
                chain4(group, &how, t, "i", "vec4<u32>", &roots, "1u", |v| format!("bitcast<u32>({v})"));
            let mut src = format!(
                "alias T = {t};\n@group(0) @binding(0) var<storage, read_write> out0: array<vec4<u32>>;\n@group(0) @binding(1) var<storage, read> params: array<u32, {}>; // [len / 4, the group's params]\n{leaf_bindings}{}{functions}",
                1 + params_read(group),
                out_bindings(n, roots.len(), "vec4<u32>")
            );
            src += "fn one(i: u32) {\n";
            src += &body;
            for o in 0..roots.len() {
                src += &format!("    out{o}[i] = r{o};\n");
            }
            src + "}\n"
        })
    } else {
        ctx.cache.pipeline(ctx.device, "fused", &key, || {
            let loaded: Vec<(usize, Access)> = how.iter().copied().enumerate().collect();
            let pbase = format!("2u + rank * {}u", n + 1); // after the dims and the strides
            let (functions, index, mut body) = chain(group, t, &loaded, "2u", &pbase);
            for (o, r) in roots.iter().enumerate() {
                body += &format!("out{o}[i] = bitcast<u32>(s{r});\n    ");
            }
            let src = FUSED
                .replace(
                    "//{{LEAF_BINDINGS}}",
                    &(bindings(&loaded) + &out_bindings(n, roots.len(), "u32")),
                )
                .replace("//{{FUNCTIONS}}", &functions)
                .replace("//{{INDEX}}", &index)
                .replace("//{{BODY}}", &body);
            format!("alias T = {t};\n{src}")
        })
    };
    let mut params = if four {
        vec![len as u32 / 4]
    } else {
        let rank = out.shape.len();
        let mut params = vec![len as u32, rank as u32];
        params.extend(out.shape.iter().map(|&d| d as u32));
        params.extend(leaf_strides(leaves, out.shape));
        params
    };
    params.extend(&group.params);
    // bindings: out0, params, the leaves, then the other outputs
    let mut inputs: Vec<(&wgpu::Buffer, u64)> = leaves.iter().map(|l| (l.buffer, l.len())).collect();
    inputs.extend(outs[1..].iter().map(|(o, _)| (o.buffer, len)));
    let groups = if four {
        split.groups(ctx, len / 4)
    } else {
        ctx.groups(len)
    };
    dispatch(ctx, enc, &p, (out.buffer, len), &params, &inputs, groups);
}

/// Bindings `out1 ..` of a kernel with `outputs` outputs (`out0` is binding 0), after `leaves`
/// leaf bindings.
fn out_bindings(leaves: usize, outputs: usize, ty: &str) -> String {
    (1..outputs)
        .map(|o| {
            format!(
                "@group(0) @binding({}) var<storage, read_write> out{o}: array<{ty}>;\n",
                2 + leaves + o - 1
            )
        })
        .collect()
}

/// A chain computed where a reduction reads it (the group's `consumer`): the leaf bindings, the
/// chain's functions and `fn load(i) -> T` (element `i` of the chain's output, of `shape`), its
/// pipeline key, and the parameters it appends after the reduction's `offset` words (rank, dims,
/// leaf strides, the group's params).
pub(crate) fn load_parts(
    group: &Group,
    leaves: &[Operand],
    shape: &[usize],
    t: &str,
    offset: usize,
) -> (String, String, Vec<u32>) {
    let loaded: Vec<(usize, Access)> = leaves
        .iter()
        .enumerate()
        .map(|(k, l)| (k, access(l.shape, shape)))
        .collect();
    let how: Vec<Access> = loaded.iter().map(|&(_, a)| a).collect();
    let pbase = format!("CP + 1u + rank * {}u", leaves.len() + 1);
    let (functions, index, body) = chain(group, t, &loaded, "CP + 1u", &pbase);
    let source = format!(
        "const CP: u32 = {offset}u;\n{}{functions}\nfn load(i: u32) -> T {{\n    let rank = params[CP];\n    {index}    {body}return s{};\n}}\n",
        bindings(&loaded),
        group.steps.len() - 1
    );
    let mut params = vec![shape.len() as u32];
    params.extend(shape.iter().map(|&d| d as u32));
    params.extend(leaf_strides(leaves, shape));
    params.extend(&group.params);
    (source, format!("{offset}:{:?}:{how:?}", group.steps), params)
}

/// Whether a chain of `shape` can be computed four elements at a time ([`load4_parts`],
/// `record_fused4`): its length is a multiple of 4 and every leaf has its shape, is a single
/// element, or is a row of a multiple of 4 elements repeated (a per-channel statistic: four
/// adjacent elements read four adjacent words of it).
pub(crate) fn loads4(leaves: &[Operand], shape: &[usize]) -> bool {
    let len: usize = shape.iter().product();
    len.is_multiple_of(4)
        && leaves.iter().all(|l| match access(l.shape, shape) {
            Access::Same | Access::One => true,
            Access::Row(n) => n.is_multiple_of(4),
            Access::Strided => false,
        })
}

/// [`load_parts`] four elements at a time (when [`loads4`]): the leaf bindings (vec4 for leaves
/// of the chain's shape), `fn load4(i) -> vec4<T>` (elements `i .. i+4`, `i` a multiple of 4) and
/// `fn load(i)` through it, the pipeline key, and the parameters it appends after the reduction's
/// `offset` words: only the group's params (nothing is indexed but `i`).
pub(crate) fn load4_parts(
    group: &Group,
    leaves: &[Operand],
    shape: &[usize],
    t: &str,
    offset: usize,
) -> (String, String, Vec<u32>) {
    let how: Vec<Access> = leaves.iter().map(|l| access(l.shape, shape)).collect();
    let root = [group.steps.len() - 1];
    let pbase = format!("{offset}u");
    let (leaf_bindings, functions, body) = chain4(group, &how, t, "i / 4u", "vec4<T>", &root, &pbase, |v| {
        v.to_string()
    });
    let src = format!(
        "{leaf_bindings}{functions}fn load4(i: u32) -> vec4<T> {{\n{body}    return r0;\n}}\nfn load(i: u32) -> T {{\n    return load4(i - i % 4u)[i % 4u];\n}}\n"
    );
    (
        src,
        format!("v4:{offset}:{:?}:{how:?}", group.steps),
        group.params.clone(),
    )
}

/// A chain four elements at a time: the leaf bindings (`vec4<u32>` arrays, `u32` for single
/// elements), the chain's functions, and statements that load vec4 `index` of each leaf (of a row
/// of `n`: `index % (n / 4)`) and compute `r{o}: {r_type}`, the value of step `roots[o]`: on whole
/// vectors where every step has a vector form (`vector.rs`), else component by component (`wrap`
/// turns a result into `r`'s component type). Every access is
/// `Same`, `One` or a `Row` of a multiple of 4. The group's params are at `params[pbase ..]`.
#[allow(clippy::too_many_arguments)]
fn chain4(
    group: &Group,
    how: &[Access],
    t: &str,
    index: &str,
    r_type: &str,
    roots: &[usize],
    pbase: &str,
    wrap: impl Fn(&str) -> String,
) -> (String, String, String) {
    let mut leaf_bindings = String::new();
    let mut src = String::new();
    for (k, &a) in how.iter().enumerate() {
        leaf_bindings += &leaf_binding(k, a, "vec4<u32>");
        let load = match a {
            Access::One => format!("vec4<u32>(in{k})"),
            Access::Row(n) => format!("in{k}[({index}) % {}u]", n / 4),
            Access::Same => format!("in{k}[{index}]"),
            Access::Strided => unreachable!("loads4 admits no strided leaf"),
        };
        src += &format!("    let w{k} = {load};\n");
    }
    if let Some((functions, body)) = super::vector::chain(group, t, pbase) {
        for k in 0..how.len() {
            src += &format!("    let l{k} = bitcast<V>(w{k});\n");
        }
        src += &body;
        for (o, r) in roots.iter().enumerate() {
            src += &format!("    let r{o} = bitcast<{r_type}>(s{r});\n");
        }
        return (leaf_bindings, functions, src);
    }
    let loaded: Vec<(usize, Access)> = (0..how.len()).map(|k| (k, Access::Same)).collect();
    let (functions, _, body) = chain(group, t, &loaded, "0u", pbase);
    for o in 0..roots.len() {
        src += &format!("    var r{o}: {r_type};\n");
    }
    for c in ["x", "y", "z", "w"] {
        src += "    {\n";
        for k in 0..how.len() {
            src += &format!("    let l{k} = bitcast<T>(w{k}.{c});\n");
        }
        src += &format!("    {body}");
        for (o, r) in roots.iter().enumerate() {
            src += &format!("r{o}.{c} = {};\n    ", wrap(&format!("s{r}")));
        }
        src += "}\n";
    }
    (leaf_bindings, functions, src)
}
