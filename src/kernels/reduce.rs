//! Reductions over any set of axes (`shaders/reduce.wgsl`) — of a buffer, or of an elementwise
//! chain computed as it is read (fused in programs).

use super::fused::load_parts;
use super::{dispatch, grid, strides, wgsl_type, Ctx, Operand, Scratch};
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::infer::reduce_axes;
use crate::ops::ReduceOp;
use crate::program::fusion::Group;

const REDUCE: &str = include_str!("../../shaders/reduce.wgsl");
const REDUCE_PARTS: &str = include_str!("../../shaders/reduce_parts.wgsl");
const REDUCE_PARTS_SERIAL: &str = include_str!("../../shaders/reduce_parts_serial.wgsl");
const REDUCE_FLAT: &str = include_str!("../../shaders/reduce_flat.wgsl");
/// `fn out_base` and `fn elem_offset`, prepended to both reductions.
const REDUCE_INDEX: &str = include_str!("../../shaders/reduce_index.wgsl");

/// The identity of `op` over `d`, as bits.
fn identity(op: ReduceOp, d: DType) -> u32 {
    match (op, d) {
        (ReduceOp::Sum | ReduceOp::Mean, _) => 0,
        (ReduceOp::Max, DType::Float32) => f32::NEG_INFINITY.to_bits(),
        (ReduceOp::Min, DType::Float32) => f32::INFINITY.to_bits(),
        (ReduceOp::Max, DType::Int32) => i32::MIN as u32,
        (ReduceOp::Min, DType::Int32) => i32::MAX as u32,
        (ReduceOp::Max, _) => 0,
        (ReduceOp::Min, _) => u32::MAX,
        (ReduceOp::Prod, DType::Float32) => 1f32.to_bits(),
        (ReduceOp::Prod, _) => 1,
    }
}

/// What a reduction reads: a buffer, or an elementwise chain computed from its leaves as it reads.
pub(super) enum Source<'a> {
    Buffer(Operand<'a>),
    Chain {
        group: &'a Group,
        leaves: &'a [Operand<'a>],
        shape: &'a [usize],
    },
}

pub(super) fn reduce(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    op: ReduceOp,
    axes: &[i64],
    a: Operand,
    out: Operand,
) -> Result<()> {
    reduce_from(ctx, enc, op, axes, Source::Buffer(a), out)
}

/// Reduces `src` over `axes` into `out` (whose dtype is the reduced values').
pub(super) fn reduce_from(
    ctx: &Ctx,
    enc: &mut crate::commands::Commands,
    op: ReduceOp,
    axes: &[i64],
    src: Source,
    out: Operand,
) -> Result<()> {
    // the chain's dtype is the reduction's (fusion requires it)
    let (shape, dtype) = match &src {
        Source::Buffer(a) => (a.shape, a.dtype),
        Source::Chain { shape, .. } => (*shape, out.dtype),
    };
    let red = reduce_axes("reduce", axes, shape.len())?;
    let out_len = out.len();
    let (mut params, count, red_rank) = axis_params(shape, &red, out_len, identity(op, dtype));
    let t = wgsl_type(dtype);
    let contig = contiguous(shape, &red);
    let v4 = reads4(&src, contig, count);
    let serial_fits = serial_fits(&src, shape.len(), (contig, v4), red_rank, count);
    let (load, load_key, inputs) = source_load(src, v4, t, &mut params);
    let form = form(ctx, count, out_len, serial_fits)?;
    let r = Reduction {
        op,
        dtype,
        t,
        contig,
        v4,
        load,
        load_key,
        params,
        inputs,
        out: (out.buffer, out_len),
        count,
    };
    match form {
        Form::Serial => r.serial(ctx, enc),
        Form::Workgroup { wg } => r.workgroup(ctx, enc, wg),
        Form::Parts { scratch, parts } => r.parts(ctx, enc, &scratch, parts),
    }
    Ok(())
}

/// The parameters every form reads — output length, reduced count, the ranks kept and reduced, the
/// identity, then the kept axes' dims and strides and the reduced axes' — with the reduced count
/// and rank.
fn axis_params(shape: &[usize], red: &[usize], out_len: u64, identity: u32) -> (Vec<u32>, u32, usize) {
    let s = strides(shape);
    let (mut kept_dims, mut kept_strides, mut red_dims, mut red_strides) = (vec![], vec![], vec![], vec![]);
    for (i, (&dim, &stride)) in shape.iter().zip(&s).enumerate() {
        if red.contains(&i) {
            red_dims.push(dim as u32);
            red_strides.push(stride as u32);
        } else {
            kept_dims.push(dim as u32);
            kept_strides.push(stride as u32);
        }
    }
    let count: u32 = red_dims.iter().product();
    let mut params = vec![
        out_len as u32,
        count,
        kept_dims.len() as u32,
        red_dims.len() as u32,
        identity,
    ];
    params.extend(
        kept_dims
            .iter()
            .chain(&kept_strides)
            .chain(&red_dims)
            .chain(&red_strides),
    );
    (params, count, red_dims.len())
}

/// Whether each output's inputs are contiguous: the reduced axes are the trailing ones (size-1
/// axes aside).
fn contiguous(shape: &[usize], red: &[usize]) -> bool {
    let first_reduced = (0..shape.len()).find(|i| red.contains(i) && shape[*i] > 1);
    first_reduced.is_none_or(|f| (f..shape.len()).all(|i| red.contains(&i) || shape[i] == 1))
}

/// Whether the reduction takes four elements per step: contiguous, whole vec4s per output, a
/// source readable as vec4s.
fn reads4(src: &Source, contig: bool, count: u32) -> bool {
    contig
        && count.is_multiple_of(4)
        && match src {
            Source::Buffer(_) => true,
            Source::Chain { leaves, shape, .. } => super::fused::loads4(leaves, shape),
        }
}

/// Whether one invocation per output stays inside lavapipe's loop budget (`rank`: the source's).
fn serial_fits(src: &Source, rank: usize, (contig, v4): (bool, bool), red_rank: usize, count: u32) -> bool {
    // lavapipe's budget counts every iteration of every loop a serial invocation runs: its walk,
    // and per element the reduced axes' index loop (not contiguous) and a chain's index loop over
    // its shape (a broadcast leaf; four at a time there is none): 30,000 rows summed into 64
    // outputs came out wrong when the bound was the walk's alone
    let chained = matches!(src, Source::Chain { .. }) && !v4;
    let per_step = 1 + if contig { 0 } else { red_rank + 1 } + if chained { rank + 1 } else { 0 };
    let steps = count as usize / if v4 { 4 } else { 1 };
    steps.saturating_mul(per_step).saturating_add(super::LOOP_MARGIN) < super::MAX_LOOP
}

/// The source's `fn load` (and `fn load4` when read four at a time), the key naming it, and the
/// buffers it reads; a chain's parameters are added to `params`.
fn source_load<'a>(
    src: Source<'a>,
    v4: bool,
    t: &str,
    params: &mut Vec<u32>,
) -> (String, String, Vec<(&'a wgpu::Buffer, u64)>) {
    match src {
        Source::Buffer(a) if v4 => (VEC4_LOAD.to_string(), "v4".to_string(), vec![(a.buffer, a.len())]),
        Source::Buffer(a) => (PLAIN_LOAD.to_string(), String::new(), vec![(a.buffer, a.len())]),
        Source::Chain { group, leaves, shape } if v4 => {
            let (load, key, extra) = super::fused::load4_parts(group, leaves, shape, t, params.len());
            params.extend(extra);
            (load, key, leaves.iter().map(|l| (l.buffer, l.len())).collect())
        }
        Source::Chain { group, leaves, shape } => {
            let (load, key, extra) = load_parts(group, leaves, shape, t, params.len());
            params.extend(extra);
            (load, key, leaves.iter().map(|l| (l.buffer, l.len())).collect())
        }
    }
}

/// The kernel forms of a reduction.
enum Form {
    /// CPU adapters: one invocation per output, no barriers (`reduce_flat.wgsl`, serial).
    Serial,
    /// GPUs (and loops past `MAX_LOOP`): a workgroup of `wg` threads per output (`reduce.wgsl`).
    Workgroup { wg: u32 },
    /// A long reduction into few outputs: `parts` workgroups per output write partial results
    /// into `scratch` (see `reduce_flat.wgsl`), then a combining pass.
    Parts { scratch: Scratch, parts: u64 },
}

/// Picks the form of a reduction of `count` elements into `out_len` outputs, allocating the
/// partial results' scratch when it runs in parts.
fn form(ctx: &Ctx, count: u32, out_len: u64, serial_fits: bool) -> Result<Form> {
    // a long reduction into few outputs: `parts` workgroups per output write partial results (see
    // `reduce_flat.wgsl`), then a combining pass
    let wanted = crate::ops::reduce_parts(count as u64, out_len);
    let scratch = match ctx.scratch {
        Some(alloc) if wanted > 1 => Some(alloc(out_len * wanted * crate::ops::PART_THREADS)?),
        _ => None,
    };
    if let Some(scratch) = scratch {
        return Ok(Form::Parts {
            scratch,
            parts: wanted,
        });
    }
    // CPU adapters: one invocation per output, no barriers (unless its loops would pass
    // `MAX_LOOP`); GPUs: a workgroup per output
    if ctx.cpu_adapter && wanted == 1 && serial_fits {
        return Ok(Form::Serial);
    }
    let wg = if count >= LONG && ctx.workgroup >= 256 {
        256
    } else {
        64
    };
    Ok(Form::Workgroup { wg })
}

/// What every form of one reduction shares: its shader pieces, parameters, inputs and output.
struct Reduction<'a> {
    op: ReduceOp,
    dtype: DType,
    t: &'static str,
    contig: bool,
    v4: bool,
    /// The source's `fn load` (and `fn load4`).
    load: String,
    /// What names `load` in pipeline keys.
    load_key: String,
    params: Vec<u32>,
    inputs: Vec<(&'a wgpu::Buffer, u64)>,
    /// The output buffer and its length.
    out: (&'a wgpu::Buffer, u64),
    /// Elements reduced into each output.
    count: u32,
}

impl Reduction<'_> {
    /// What every pass needs: the element type, whether it is a mean, how two values combine.
    fn head(&self) -> String {
        let (t, mean, combine) = (self.t, self.op == ReduceOp::Mean, self.op.combine());
        format!("alias T = {t};\nconst MEAN: bool = {mean};\nfn combine(x: T, y: T) -> T {{ return {combine}; }}\n")
    }

    /// What the passes reading the source need: the head, contiguity, `fn load` and the index
    /// functions (built only when a pipeline is).
    fn prelude(&self) -> String {
        let (contig, load) = (self.contig, &self.load);
        format!(
            "{}const CONTIG: bool = {contig};\n{load}{REDUCE_INDEX}",
            self.head()
        )
    }

    /// `fn load4` through `fn load` where the source is not read four at a time.
    fn fallback4(&self) -> &'static str {
        if self.v4 {
            ""
        } else {
            FALLBACK_LOAD4
        }
    }

    /// The `reduce_flat` pipeline: serial, or writing `parts` partial results per output.
    fn flat(&self, ctx: &Ctx, serial: bool, parts: u64) -> wgpu::ComputePipeline {
        let (op, t, contig, v4, load_key) = (self.op, self.t, self.contig, self.v4, &self.load_key);
        let key = format!("{op:?}:{t}:{contig}:{v4}:{serial}:{parts}:{load_key}");
        ctx.cache.pipeline(ctx.device, "reduce_flat", &key, || {
            let fallback4 = self.fallback4();
            format!("{}{fallback4}const V4: bool = {v4};\nconst SERIAL: bool = {serial};\nconst PARTS: u32 = {parts}u;\n{REDUCE_FLAT}", self.prelude())
        })
    }

    /// [`Form::Serial`]: one invocation per output.
    fn serial(&self, ctx: &Ctx, enc: &mut crate::commands::Commands) {
        let p = self.flat(ctx, true, 1);
        let groups = self.out.1.div_ceil(crate::ops::PART_THREADS);
        dispatch(ctx, enc, &p, self.out, &self.params, &self.inputs, grid(groups));
    }

    /// [`Form::Workgroup`]: a workgroup of `wg` threads per output.
    fn workgroup(&self, ctx: &Ctx, enc: &mut crate::commands::Commands, wg: u32) {
        let (op, t, contig, v4, load_key) = (self.op, self.t, self.contig, self.v4, &self.load_key);
        let key = format!("{op:?}:{t}:{wg}:{contig}:{v4}:{load_key}");
        let p = ctx.cache.pipeline(ctx.device, "reduce", &key, || {
            format!(
                "{}{}const WG: u32 = {wg}u;\nconst V4: bool = {v4};\n{REDUCE}",
                self.prelude(),
                self.fallback4()
            )
        });
        dispatch(
            ctx,
            enc,
            &p,
            self.out,
            &self.params,
            &self.inputs,
            grid(self.out.1),
        );
    }

    /// [`Form::Parts`]: `parts` partial results per output into `scratch`, then the combining pass.
    fn parts(&self, ctx: &Ctx, enc: &mut crate::commands::Commands, scratch: &Scratch, parts: u64) {
        let out_len = self.out.1;
        let words = out_len * parts * crate::ops::PART_THREADS;
        let p = self.flat(ctx, false, parts);
        dispatch(
            ctx,
            enc,
            &p,
            (&scratch.buffer, words),
            &self.params,
            &self.inputs,
            grid(out_len * parts),
        );
        // the combining pass: on CPU adapters an invocation per output folds its partials (no barrier);
        // on GPUs a workgroup per output
        let (kernel, body, groups2) = if ctx.cpu_adapter {
            let groups = out_len.div_ceil(crate::ops::PART_THREADS);
            ("reduce_parts_serial", REDUCE_PARTS_SERIAL, groups)
        } else {
            ("reduce_parts", REDUCE_PARTS, out_len)
        };
        let p2 = ctx
            .cache
            .pipeline(ctx.device, kernel, &format!("{:?}:{}", self.op, self.t), || {
                format!("{}{body}", self.head())
            });
        let params2 = [
            out_len as u32,
            (parts * crate::ops::PART_THREADS) as u32,
            self.count,
            identity(self.op, self.dtype),
        ];
        let parts_in = [(&scratch.buffer, words)];
        dispatch(ctx, enc, &p2, self.out, &params2, &parts_in, grid(groups2));
    }
}

/// Reductions of at least this many elements per output use 256 threads per output, not 64.
const LONG: u32 = 4096;

/// `fn load` of a reduction that reads a buffer.
const PLAIN_LOAD: &str =
    "@group(0) @binding(2) var<storage, read> a: array<u32>;\nfn load(i: u32) -> T { return bitcast<T>(a[i]); }\n";

/// `fn load4` and `fn load` of a reduction that reads a buffer four elements at a time.
const VEC4_LOAD: &str = "@group(0) @binding(2) var<storage, read> a: array<vec4<u32>>;\nfn load4(i: u32) -> vec4<T> { return bitcast<vec4<T>>(a[i / 4u]); }\nfn load(i: u32) -> T { return bitcast<T>(a[i / 4u][i % 4u]); }\n";

/// `fn load4` through `fn load` (never called: `V4` is false, but the shader names it).
const FALLBACK_LOAD4: &str =
    "fn load4(i: u32) -> vec4<T> { return vec4<T>(load(i), load(i + 1u), load(i + 2u), load(i + 3u)); }\n";
