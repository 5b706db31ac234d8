//! Kernels: WGSL sources in `shaders/`, one `include_str!` constant per file, a pipeline cache keyed
//! by `(kernel, specialisation)`, and [`record`], which records one op into a command encoder. Eager
//! tensor methods and program runs both go through [`record`], so they run the same kernels.
//!
//! Binding convention for every kernel: `@binding(0)` the output (read-write), `@binding(1)` a small
//! `array<u32>` of parameters, `@binding(2..)` the inputs. Every dtype is one 32-bit word per element;
//! kernels `bitcast` to the element type `T` the host prepends (`alias T = f32;`).

mod conv;
mod elementwise;
mod fused;
mod layout;
mod matmul;
mod reduce;

use std::sync::{Arc, Mutex};

use wgpu::util::DeviceExt;

use crate::accounting::{Exec, Ledger};
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::Op;

/// Threads per workgroup used by the 1-D kernels.
pub(crate) const WORKGROUP: u32 = 256;
/// Largest workgroup count per dimension (WebGPU's default limit).
pub(crate) const MAX_GROUPS_PER_DIM: u32 = 65_535;

/// Records a fused group: an elementwise chain in its own kernel, or in its producer's store.
pub(crate) fn record_group(
    ctx: &Ctx,
    enc: &mut wgpu::CommandEncoder,
    group: &crate::program::fusion::Group,
    leaves: &[Operand],
    out: Operand,
) -> Result<()> {
    let Some(op) = &group.producer else {
        fused::record_fused(ctx, enc, group, leaves, out);
        return Ok(());
    };
    let arity = op.arity();
    let epi = fused::Epilogue {
        group,
        arity,
        leaves: &leaves[arity..],
        shape: out.shape,
    };
    let inputs = &leaves[..arity];
    match op {
        Op::MatMul {} => matmul::matmul_with(ctx, enc, inputs, out, Some(&epi)),
        Op::Conv2d {
            strides,
            pad,
            dilations,
        } => conv::conv2d_with(ctx, enc, inputs, out, (strides, pad, dilations), Some(&epi)),
        Op::DepthwiseConv2d {
            strides,
            pad,
            dilations,
        } => conv::depthwise_with(ctx, enc, inputs, out, (strides, pad, dilations), Some(&epi)),
        other => unreachable!("{} has no epilogue", other.name()),
    }
}

const FILL: &str = include_str!("../../shaders/fill.wgsl");

/// Pipelines a session keeps (least recently used evicted first, counted in
/// `compute.execution/pipeline_cache_evictions`).
pub const MAX_PIPELINES: usize = 256;

/// Pipelines created so far, by `(kernel, specialisation)`, bounded by [`MAX_PIPELINES`].
pub(crate) struct KernelCache {
    pipelines: Mutex<lru::LruCache<(&'static str, String), wgpu::ComputePipeline>>,
    ledger: Arc<Ledger>,
}

impl KernelCache {
    /// An empty cache reporting to `ledger`.
    pub(crate) fn new(ledger: Arc<Ledger>) -> KernelCache {
        let capacity = std::num::NonZeroUsize::new(MAX_PIPELINES).unwrap_or(std::num::NonZeroUsize::MIN);
        KernelCache {
            pipelines: Mutex::new(lru::LruCache::new(capacity)),
            ledger,
        }
    }

    /// The pipeline for `kernel` specialised by `key`, compiling `source()` on first use.
    pub(crate) fn pipeline(
        &self,
        device: &wgpu::Device,
        kernel: &'static str,
        key: &str,
        source: impl FnOnce() -> String,
    ) -> wgpu::ComputePipeline {
        let mut map = self.pipelines.lock().unwrap_or_else(|p| p.into_inner());
        let k = (kernel, key.to_string());
        if let Some(p) = map.get(&k) {
            return p.clone();
        }
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(kernel),
            source: wgpu::ShaderSource::Wgsl(source().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(kernel),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        match map.push(k, pipeline.clone()) {
            Some(_) => self.ledger.count(Exec::PipelineEviction),
            None => self.ledger.count(Exec::Pipelines(1)),
        }
        pipeline
    }

    /// Number of pipelines cached.
    pub(crate) fn len(&self) -> usize {
        self.pipelines.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

impl Drop for KernelCache {
    fn drop(&mut self) {
        self.ledger.count(Exec::Pipelines(-(self.len() as i64)));
    }
}

/// What recording needs from a session.
pub(crate) struct Ctx<'a> {
    pub device: &'a wgpu::Device,
    pub cache: &'a KernelCache,
    pub ledger: &'a Ledger,
    /// The adapter runs on the CPU (lavapipe, SwiftShader): few cores, so occupancy never limits
    /// and the kernels with the most work per thread win.
    pub cpu_adapter: bool,
    /// Dispatches recorded and not yet submitted: counted in `compute.execution/dispatches` only
    /// by [`Ctx::submit`], so a call that fails before it submits counts nothing.
    pub recorded: std::cell::Cell<u64>,
}

impl Ctx<'_> {
    /// Submits `enc` and counts the dispatches recorded into it.
    pub(crate) fn submit(&self, queue: &wgpu::Queue, enc: wgpu::CommandEncoder) {
        queue.submit([enc.finish()]);
        for _ in 0..self.recorded.take() {
            self.ledger.dispatched();
        }
    }
}

/// One tensor operand: its buffer, shape and dtype.
#[derive(Clone, Copy)]
pub(crate) struct Operand<'a> {
    pub buffer: &'a wgpu::Buffer,
    pub shape: &'a [usize],
    pub dtype: DType,
}

impl Operand<'_> {
    pub(crate) fn len(&self) -> u64 {
        self.shape.iter().product::<usize>() as u64
    }
}

/// A workgroup grid covering `groups` workgroups, at most 65,535 per dimension; kernels linearise
/// it as `(wid.z * groups.y + wid.y) * groups.x + wid.x` and skip the excess. Any `u32` count of
/// workgroups fits (65,535³ > 2³²).
pub(crate) fn grid(groups: u64) -> (u32, u32, u32) {
    let max = MAX_GROUPS_PER_DIM as u64;
    let groups = groups.max(1);
    let x = groups.min(max);
    let rows = groups.div_ceil(x);
    let y = rows.min(max);
    let z = rows.div_ceil(y);
    (x as u32, y as u32, z as u32)
}

/// The WGSL type of a dtype's elements (bool is a `u32` 0/1).
pub(crate) fn wgsl_type(d: DType) -> &'static str {
    match d {
        DType::Float32 => "f32",
        DType::Int32 => "i32",
        DType::Uint32 | DType::Bool => "u32",
    }
}

/// Row-major strides (in elements).
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// The strides of an operand of `shape` broadcast to an output of `rank` dims (NumPy: aligned
/// right; a broadcast dim, of size 1 or missing, gets stride 0).
pub(crate) fn broadcast_strides(shape: &[usize], rank: usize) -> impl Iterator<Item = u32> + '_ {
    let s = strides(shape);
    let off = rank - shape.len();
    (0..rank).map(move |i| {
        if i < off || shape[i - off] == 1 {
            0
        } else {
            s[i - off] as u32
        }
    })
}

fn binding(buffer: &wgpu::Buffer, words: u64) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer,
        offset: 0,
        size: std::num::NonZeroU64::new(words.max(1) * 4),
    })
}

/// Records one dispatch: output, parameters, inputs, workgroups `(x, y, z)`.
pub(crate) fn dispatch(
    ctx: &Ctx,
    enc: &mut wgpu::CommandEncoder,
    pipeline: &wgpu::ComputePipeline,
    out: (&wgpu::Buffer, u64),
    params: &[u32],
    inputs: &[(&wgpu::Buffer, u64)],
    groups: (u32, u32, u32),
) {
    let params = ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("affon params"),
        contents: bytemuck::cast_slice(params),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let mut entries = vec![
        wgpu::BindGroupEntry {
            binding: 0,
            resource: binding(out.0, out.1),
        },
        wgpu::BindGroupEntry {
            binding: 1,
            resource: params.as_entire_binding(),
        },
    ];
    for (i, (b, words)) in inputs.iter().enumerate() {
        entries.push(wgpu::BindGroupEntry {
            binding: 2 + i as u32,
            resource: binding(b, *words),
        });
    }
    let bind = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut pass = enc.begin_compute_pass(&Default::default());
    pass.set_pipeline(pipeline);
    pass.set_bind_group(0, &bind, &[]);
    pass.dispatch_workgroups(groups.0, groups.1, groups.2);
    ctx.recorded.set(ctx.recorded.get() + 1);
}

/// Records a fill of the first `len` words of `out` with `word`.
pub(crate) fn fill(ctx: &Ctx, enc: &mut wgpu::CommandEncoder, out: &wgpu::Buffer, len: u64, word: u32) {
    let p = ctx.cache.pipeline(ctx.device, "fill", "", || FILL.to_string());
    let groups = grid(len.div_ceil(WORKGROUP as u64));
    dispatch(ctx, enc, &p, (out, len), &[len as u32, word], &[], groups);
}

/// Records `op(args) → out`. Shapes and dtypes must already have been checked with
/// [`crate::ops::infer`]; `out` is the inferred result.
pub(crate) fn record(
    ctx: &Ctx,
    enc: &mut wgpu::CommandEncoder,
    op: &Op,
    args: &[Operand],
    out: Operand,
) -> Result<()> {
    match op {
        Op::Unary(u) => elementwise::unary(ctx, enc, *u, args[0], out),
        Op::Binary(b) => elementwise::binary(ctx, enc, *b, args[0], args[1], out),
        Op::Reduce { op, axes, .. } => reduce::reduce(ctx, enc, *op, axes, args[0], out)?,
        _ => table_kernel(ctx, enc, op, args, out)?,
    }
    Ok(())
}

macro_rules! kernel_dispatch {
    (surfaced: [$($e:tt),* $(,)?], internal: [$($i:tt),* $(,)?] $(,)?) => {
        kernel_dispatch!(@all $($e,)* $($i,)*);
    };
    (@all $(($m:ident, $v:ident, $js:literal, $doc:literal, $k:path, [$($a:ident),*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt),)*) => {
        /// Records an op-table op through the kernel its entry names.
        fn table_kernel(ctx: &Ctx, enc: &mut wgpu::CommandEncoder, op: &Op, args: &[Operand], out: Operand) -> Result<()> {
            match op {
                $(Op::$v { $($f,)* $($o,)* } => $k(ctx, enc, args, out, $($f,)* $($o,)*),)*
                Op::Unary(_) | Op::Binary(_) | Op::Reduce { .. } => unreachable!("recorded by record"),
            }
        }
    };
}
crate::kernel_table!(kernel_dispatch);
