//! Epilogues: an elementwise chain applied to a matmul or convolution result as the producer stores
//! it. Every producer shader stores through `fn store(i, v)` (one element) and may use
//! `fn store4(i, v)` (elements `i .. i+4`, `i` a multiple of 4); both come from here, so
//! `relu(conv2d(x, w) + b)` is one dispatch and the product never exists in memory. When every leaf
//! of the chain is the output's shape, a single element, or a repeated row of a multiple of 4
//! elements (a bias, a batchNorm statistic per channel), the leaves are bound as vec4 arrays and
//! `store4` runs the chain on four elements with one load per leaf.
//!
//! A producer whose thread stores several quads of the same channels (the CPU matmul's rows of one
//! column block, the depthwise kernel's adjacent pixels) reads the chain's per-channel leaves — a
//! repeated row as long as the output's last dimension: a bias, a batchNorm statistic — once:
//! `let c = channels(i);` then `store4c(j, v, c)` for every `j ≡ i` modulo that dimension. Without
//! such leaves `channels` reads nothing and `store4c` is `store4`. On CPU adapters every read is a
//! per-lane gather, and a pointwise convolution with K = 32 read three statistics per stored quad
//! as often as it read its operands.

use super::fused::{access, bindings, chain, leaf_binding, leaf_strides, Access};
use super::Operand;
use crate::program::fusion::Group;

/// The stores producers use when nothing is fused into them.
pub(crate) const PLAIN_STORE: &str = "fn store(i: u32, v: T) { out[i] = bitcast<u32>(v); }
fn store4(i: u32, v: vec4<T>) {
    out[i] = bitcast<u32>(v.x);
    out[i + 1u] = bitcast<u32>(v.y);
    out[i + 2u] = bitcast<u32>(v.z);
    out[i + 3u] = bitcast<u32>(v.w);
}
";

/// `struct Channels`, `fn channels` and `fn store4c` when the chain reads no per-channel leaf (or
/// does not line up in fours): `store4c` is `store4`.
const NO_CHANNELS: &str = "struct Channels { unused: u32 }
fn channels(i: u32) -> Channels { return Channels(0u); }
fn store4c(i: u32, v: vec4<T>, c: Channels) { store4(i, v); }
";

/// `store4` through four `store` calls (an epilogue whose leaves do not line up in fours).
const STORE4_BY_ELEMENT: &str = "fn store4(i: u32, v: vec4<T>) {
    store(i, v.x);
    store(i + 1u, v.y);
    store(i + 2u, v.z);
    store(i + 3u, v.w);
}
";

/// An elementwise chain fused into its producer's store: `group.leaves` are the producer's inputs
/// (`arity` of them) then the chain's other leaves (`leaves`), which broadcast into `shape` (the
/// group's output: a producer may view it differently, as the pointwise convolution does).
pub(crate) struct Epilogue<'a> {
    pub group: &'a Group,
    pub arity: usize,
    pub leaves: &'a [Operand<'a>],
    pub shape: &'a [usize],
}

impl Epilogue<'_> {
    /// How each leaf is read, numbered as the chain numbers them (after the producer's inputs).
    fn loaded(&self) -> Vec<(usize, Access)> {
        self.leaves
            .iter()
            .enumerate()
            .map(|(j, l)| (self.arity + j, access(l.shape, self.shape)))
            .collect()
    }

    /// Whether every leaf (as [`Epilogue::loaded`] reads them) lines up in fours with the output
    /// (see the module docs): a leaf of the output's shape is bound as vec4s only when its length is
    /// a multiple of 4.
    fn in_fours(&self, loaded: &[(usize, Access)]) -> bool {
        let whole = self.shape.iter().product::<usize>().is_multiple_of(4);
        loaded.iter().all(|(_, a)| match a {
            Access::Same => whole,
            Access::One => true,
            Access::Row(n) => n % 4 == 0,
            Access::Strided => false,
        })
    }

    /// The leaves (numbered as the chain numbers them) that are one row of the output's last
    /// dimension, repeated: what `fn channels` reads once for many quads (see the module docs).
    fn channel_leaves(&self, loaded: &[(usize, Access)]) -> Vec<usize> {
        let last = self.shape.last().copied().unwrap_or(0) as u64;
        loaded
            .iter()
            .filter(|(_, a)| *a == Access::Row(last))
            .map(|&(k, _)| k)
            .collect()
    }

    /// The extra leaf bindings, the chain's functions, `fn store` and `fn store4`, for a producer
    /// whose own parameters take `offset` words (the epilogue's follow: rank, output dims, leaf
    /// strides).
    pub(crate) fn source(&self, t: &str, offset: usize) -> String {
        let loaded = self.loaded();
        debug_assert!(
            self.group.params.is_empty(),
            "a program's constants are written into its code"
        );
        let (functions, index, body) = chain(self.group, t, &loaded, "EP + 1u", "EP");
        let last = format!("s{}", self.group.steps.len() - 1);
        let head = format!("const EP: u32 = {offset}u;\n");
        if !self.in_fours(&loaded) {
            return format!(
                "{head}{}{functions}\nfn store(i: u32, v: T) {{\n    let rank = params[EP];\n    {index}    {body}out[i] = bitcast<u32>({last});\n}}\n{STORE4_BY_ELEMENT}{NO_CHANNELS}",
                bindings(&loaded),
            );
        }
        // the quads run through the chain: `four` reads every leaf, `four_c` takes the per-channel
        // ones from `c`
        let channel = self.channel_leaves(&loaded);
        let (mut leaf_bindings, mut one) = (String::new(), String::new());
        let (mut four, mut four_c) = (String::new(), String::new());
        for &(k, a) in &loaded {
            leaf_bindings += &leaf_binding(k, a, "vec4<u32>");
            let (word, quad) = match a {
                Access::Same => ("i".to_string(), format!("in{k}[i / 4u]")),
                Access::Row(n) => (format!("i % {n}u"), format!("in{k}[(i % {n}u) / 4u]")),
                _ => (String::new(), format!("vec4<u32>(in{k})")),
            };
            one += &if a == Access::One {
                format!("    let l{k} = bitcast<T>(in{k});\n")
            } else {
                format!("    let j{k} = {word};\n    let l{k} = bitcast<T>(in{k}[j{k} / 4u][j{k} % 4u]);\n")
            };
            let read = format!("    let w{k} = {quad};\n");
            if !channel.contains(&k) {
                four_c += &read;
            }
            four += &read;
        }
        // the four elements through the chain, the per-channel leaves from `c` when `from_c`
        let quads = |from_c: bool| {
            let mut q = String::new();
            for (n, comp) in ["x", "y", "z", "w"].iter().enumerate() {
                q += &format!("    {{\n        let v = v4.{comp};\n");
                for &(k, _) in &loaded {
                    let from = if from_c && channel.contains(&k) { "c." } else { "" };
                    q += &format!("        let l{k} = bitcast<T>({from}w{k}.{comp});\n");
                }
                q += &format!("        {body}out[i + {n}u] = bitcast<u32>({last});\n    }}\n");
            }
            q
        };
        four += &quads(false);
        four_c += &quads(true);
        let channels = if channel.is_empty() {
            NO_CHANNELS.to_string()
        } else {
            let n = self.shape.last().copied().unwrap_or(1);
            let fields: Vec<String> = channel.iter().map(|k| format!("w{k}: vec4<u32>")).collect();
            let reads: Vec<String> = channel
                .iter()
                .map(|k| format!("in{k}[(i % {n}u) / 4u]"))
                .collect();
            format!(
                "struct Channels {{ {} }}\nfn channels(i: u32) -> Channels {{ return Channels({}); }}\nfn store4c(i: u32, v4: vec4<T>, c: Channels) {{\n{four_c}}}\n",
                fields.join(", "),
                reads.join(", ")
            )
        };
        format!(
            "{head}{leaf_bindings}{functions}\nfn store(i: u32, v: T) {{\n{one}    {body}out[i] = bitcast<u32>({last});\n}}\nfn store4(i: u32, v4: vec4<T>) {{\n{four}}}\n{channels}"
        )
    }

    /// What distinguishes this epilogue's pipeline.
    pub(crate) fn key(&self, offset: usize) -> String {
        let loaded = self.loaded();
        let how: Vec<Access> = loaded.iter().map(|&(_, a)| a).collect();
        // the binding types follow `in_fours`, and `fn channels` the output's last dimension,
        // which the accesses alone do not decide
        format!(
            "{offset}:{:?}:{how:?}:{}:{:?}",
            self.group.steps,
            self.in_fours(&loaded),
            self.channel_leaves(&loaded)
        )
    }

    /// The parameters appended to the producer's.
    pub(crate) fn params(&self) -> Vec<u32> {
        let mut p = vec![self.shape.len() as u32];
        p.extend(self.shape.iter().map(|&d| d as u32));
        p.extend(leaf_strides(self.leaves, self.shape));
        p
    }

    /// The extra input buffers.
    pub(crate) fn inputs(&self) -> impl Iterator<Item = (&wgpu::Buffer, u64)> + '_ {
        self.leaves.iter().map(|l| (l.buffer, l.len()))
    }
}

/// What a producer's pipeline takes from its epilogue (or the plain stores).
pub(crate) struct ProducerParts<'a> {
    epi: Option<&'a Epilogue<'a>>,
    t: &'a str,
    offset: usize,
    /// What distinguishes the pipeline.
    pub key: String,
    /// The parameters appended to the producer's.
    pub params: Vec<u32>,
    /// The extra input buffers.
    pub inputs: Vec<(&'a wgpu::Buffer, u64)>,
}

impl ProducerParts<'_> {
    /// The WGSL prepended to the producer's source: `alias T`, the leaf bindings and the stores.
    /// Built only when the pipeline is (on a cache miss), not on every dispatch.
    pub(crate) fn prelude(&self) -> String {
        let t = self.t;
        match self.epi {
            None => format!("alias T = {t};\n{PLAIN_STORE}{NO_CHANNELS}"),
            Some(e) => format!("alias T = {t};\n{}", e.source(t, self.offset)),
        }
    }
}

/// The key, parameters and inputs of a producer's pipeline whose own parameters take `offset` words;
/// its prelude on demand.
pub(crate) fn producer_parts<'a>(
    epi: Option<&'a Epilogue<'a>>,
    t: &'a str,
    offset: usize,
) -> ProducerParts<'a> {
    let (key, params, inputs) = match epi {
        None => (t.to_string(), vec![], vec![]),
        Some(e) => (format!("{t}:{}", e.key(offset)), e.params(), e.inputs().collect()),
    };
    ProducerParts {
        epi,
        t,
        offset,
        key,
        params,
        inputs,
    }
}
