//! Kernels: WGSL sources in `shaders/`, one `include_str!` constant per file, a pipeline cache keyed
//! by `(kernel, specialisation)`, and [`record`], which records one op into a command encoder. Eager
//! tensor methods and program runs both go through [`record`], so they run the same kernels.
//!
//! Binding convention for every kernel: `@binding(0)` the output (read-write), `@binding(1)` a small
//! `array<u32>` of parameters, `@binding(2..)` the inputs. Every dtype is one 32-bit word per element;
//! kernels `bitcast` to the element type `T` the host prepends (`alias T = f32;`).

mod bindings;
mod cache;
mod checks;
pub(crate) use checks::{words as check_words, Origin, CHECK_BYTES};
mod conv;
mod depthwise;
mod elementwise;
mod epilogue;
mod fused;
pub(crate) use fused::record_fused_outputs;
mod layout;
mod lines;
mod matmul;
mod matmul_cpu;
mod operand_tex;
mod pool;
mod reduce;
mod vec4;
mod vector;
mod window;

pub(crate) use cache::KernelCache;
pub use cache::{MAX_PIPELINES, RING_BYTES};
pub(crate) use matmul_cpu::min_workgroups;
#[cfg(all(test, native))]
pub(crate) use operand_tex::holds_after;
pub(crate) use operand_tex::texture_cap;

use crate::commands::Commands;
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::Op;

/// Invocations per workgroup of the 1-D kernels (and of `cumsum_wg.wgsl`'s scan) where the device
/// allows them; a device that allows fewer gets [`workgroup_for`]'s choice (`Ctx::workgroup`).
pub(crate) const WORKGROUP: u32 = 256;

/// The 1-D kernels' workgroup size on a device with `limits` (WGSL `WORKGROUP`, prepended to every
/// kernel by `bindings::pipeline`): 256 where the device allows 256 invocations across x and the
/// 16×16 tiles of the matmul forms, else 128 — WebGPU's compatibility mode, OpenGL ES 3.1 and Vulkan
/// guarantee 128 — where it allows that and `matmul.wgsl`'s 16×8; `None` below that (no kernel set
/// fits). The kernels that need 256 (the 16×16 matmul tiles, a reduction's 256-lane form) are not
/// chosen at 128.
pub(crate) fn workgroup_for(limits: &wgpu::Limits) -> Option<u32> {
    let fits = |n: u32, y: u32| {
        limits.max_compute_invocations_per_workgroup >= n
            && limits.max_compute_workgroup_size_x >= n
            && limits.max_compute_workgroup_size_y >= y
    };
    [(WORKGROUP, 16), (WORKGROUP / 2, 8)]
        .into_iter()
        .find(|&(n, y)| fits(n, y))
        .map(|(n, _)| n)
}
/// Largest workgroup count per dimension (WebGPU's default limit).
pub(crate) const MAX_GROUPS_PER_DIM: u32 = 65_535;

/// Records a fused group: an elementwise chain in its own kernel, in its producer's store, or in
/// the reduction that reads it.
pub(crate) fn record_group(
    ctx: &Ctx,
    enc: &mut Commands,
    group: &crate::program::fusion::Group,
    leaves: &[Operand],
    out: Operand,
) -> Result<()> {
    if let Some((Op::Reduce { op, axes, .. }, shape)) = &group.consumer {
        let src = reduce::Source::Chain { group, leaves, shape };
        return reduce::reduce_from(ctx, enc, *op, axes, src, out);
    }
    let Some(op) = &group.producer else {
        fused::record_fused(ctx, enc, group, leaves, out);
        return Ok(());
    };
    let arity = op.arity();
    let epi = epilogue::Epilogue {
        group,
        arity,
        leaves: &leaves[arity..],
        shape: out.shape,
    };
    with_epilogue(ctx, enc, op, &leaves[..arity], out, &epi)
}

const FILL: &str = include_str!("../../shaders/fill.wgsl");

/// Most loop iterations one invocation may run: lavapipe (Mesa 22's llvmpipe) stops looping after
/// 65,535 iterations, without an error (loops nested in chunks share that budget) — a matmul with
/// K = 300,000 summed 262,136 terms there, a softmax row of 100,000 wrote zeros past 65,535. A
/// kernel whose loop would run longer takes a form whose invocations share the work (matmul's tiled
/// forms, the workgroup forms of a reduction into many outputs and of a convolution's filter
/// gradient, softmax rows and `cumsum` lines in parts: `lines.rs`), or passes over ranges (a
/// convolution's channels and filter taps, its input gradient's, a filter gradient's positions,
/// matmul's K); a pooling gradient's thread visits only the windows that contain its element.
pub(crate) const MAX_LOOP: usize = 65_535;

/// What a kernel's loop-budget checks leave for the loops they do not count: a fused epilogue's
/// index loops, a store loop over a quad's lanes. Every loop with a runtime bound counts, in
/// whatever function it sits: a reduction's index loop per element, a chain's per leaf.
pub(crate) const LOOP_MARGIN: usize = 64;

/// What recording needs from a session.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub device: &'a wgpu::Device,
    pub cache: &'a KernelCache,
    /// The adapter runs on the CPU (lavapipe, SwiftShader): few cores, so occupancy never limits
    /// and the kernels with the most work per thread win.
    pub cpu_adapter: bool,
    /// The most bytes one operand texture of the CPU matmul may hold (`operand_tex.rs`); 0 where
    /// the form is off (every adapter but SwiftShader).
    pub texture_cap: u64,
    /// Workgroups a CPU-form product should have at least, its workgroups made smaller to get them
    /// (`matmul_cpu::min_workgroups`): 16 on SwiftShader, 0 (no minimum) elsewhere.
    pub min_workgroups: usize,
    /// Invocations per subgroup when the device has subgroup operations, else 0
    /// (`AdapterIdentity::subgroup_size`).
    pub subgroup_lanes: u32,
    /// Invocations per workgroup of the 1-D kernels on this device ([`workgroup_for`]).
    pub workgroup: u32,
    /// Allocates planned scratch storage (accounted like an intermediate; see
    /// `Op::scratch_words`). `None`: kernels that would use scratch run without it.
    pub scratch: Option<&'a dyn Fn(u64) -> Result<Scratch>>,
    /// What the kernel computes, as a device-side index check names it (`checks.rs`).
    pub origin: Origin<'a>,
}

impl Ctx<'_> {
    /// The grid of a 1-D kernel over `threads` invocations (`ctx.workgroup` a workgroup).
    pub(crate) fn groups(&self, threads: u64) -> (u32, u32, u32) {
        grid(threads.div_ceil(self.workgroup as u64))
    }
}

/// Scratch storage of one kernel: its buffer, and what releases it when dropped.
pub(crate) struct Scratch {
    pub buffer: wgpu::Buffer,
    pub _hold: Box<dyn std::any::Any>,
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

/// `[start, end)` ranges of at most `step` covering `0..n` (one empty range when `n` is 0): the
/// passes of a kernel whose loop would pass `MAX_LOOP` on a CPU adapter (matmul's K, a convolution's
/// channels), each pass adding to what the passes before it wrote.
pub(crate) fn passes(n: usize, step: usize) -> impl Iterator<Item = [u32; 2]> {
    let step = step.max(1);
    (0..n.max(1))
        .step_by(step)
        .map(move |a| [a as u32, (a + step).min(n) as u32])
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

/// `source` with its parameter binding declared as a fixed-size array of `n` words instead of a
/// runtime-sized one, for a pipeline whose key includes `n` (the buffer holds exactly that many).
/// Reads at constant indices are then known to be in bounds: on CPU adapters a runtime-sized array
/// is read through a bounds clamp and a per-lane gather even at a constant index, a fixed-size one
/// with one load (docs/performance.md: single-element operands and parameters).
pub(crate) fn fixed_params(source: &str, n: usize) -> String {
    const RUNTIME: &str = "var<storage, read> params: array<u32>;";
    debug_assert!(
        source.contains(RUNTIME),
        "a kernel without a runtime-sized params binding"
    );
    source.replacen(
        RUNTIME,
        &format!("var<storage, read> params: array<u32, {n}>;"),
        1,
    )
}

/// Records one dispatch: output, parameters, inputs (each with its element count), workgroups
/// `(x, y, z)`. The bind group comes from the session's cache and binds the parameter ring, where
/// the batch writes `params` before it is submitted (`commands.rs`).
pub(crate) fn dispatch(
    ctx: &Ctx,
    enc: &mut Commands,
    pipeline: &wgpu::ComputePipeline,
    out: (&wgpu::Buffer, u64),
    params: &[u32],
    inputs: &[(&wgpu::Buffer, u64)],
    groups: (u32, u32, u32),
) {
    dispatch_with(ctx, enc, pipeline, &[], out, params, inputs, groups);
}

/// [`dispatch`] with texture `views` at their bindings (the buffers take the others, in order).
#[allow(clippy::too_many_arguments)]
pub(crate) fn dispatch_with(
    ctx: &Ctx,
    enc: &mut Commands,
    pipeline: &wgpu::ComputePipeline,
    views: &[(u32, &wgpu::TextureView)],
    out: (&wgpu::Buffer, u64),
    params: &[u32],
    inputs: &[(&wgpu::Buffer, u64)],
    groups: (u32, u32, u32),
) {
    let ring = ctx.cache.ring(ctx.device);
    let mut buffers: Vec<(&wgpu::Buffer, u64)> = Vec::with_capacity(2 + inputs.len());
    buffers.push((out.0, out.1.max(1) * 4));
    buffers.push((&ring, params_bytes(params)));
    buffers.extend(inputs.iter().map(|&(b, words)| (b, words.max(1) * 4)));
    let bind = ctx.cache.bind_group(ctx.device, pipeline, views, &buffers);
    enc.dispatch(pipeline, bind, (&ring, params), groups);
    // which bindings a kernel writes is its own: every buffer it binds counts as written
    if ctx.texture_cap > 0 {
        enc.touch(out.0);
        inputs.iter().for_each(|(b, _)| enc.touch(b));
    }
}

/// The bytes a kernel's parameter binding spans: its words (a fixed-size `params` array is read
/// whole), at least one.
pub(crate) fn params_bytes(params: &[u32]) -> u64 {
    debug_assert!(
        params.len() as u64 * 4 <= RING_BYTES / 4,
        "parameters fit the ring"
    );
    params.len().max(1) as u64 * 4
}

/// Records a fill of the first `len` words of `out` with `word`.
pub(crate) fn fill(ctx: &Ctx, enc: &mut Commands, out: &wgpu::Buffer, len: u64, word: u32) {
    let p = ctx.cache.pipeline(ctx.device, "fill", "", || FILL.to_string());
    dispatch(
        ctx,
        enc,
        &p,
        (out, len),
        &[len as u32, word],
        &[],
        ctx.groups(len),
    );
}

/// Records `op(args) → out`. Shapes and dtypes must already have been checked with
/// [`crate::ops::infer`]; `out` is the inferred result.
pub(crate) fn record(ctx: &Ctx, enc: &mut Commands, op: &Op, args: &[Operand], out: Operand) -> Result<()> {
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
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt
        $(, scratch = $sc:tt)? $(, epilogue = $ep:tt)?),)*) => {
        /// Records an op-table op through the kernel its entry names.
        fn table_kernel(ctx: &Ctx, enc: &mut Commands, op: &Op, args: &[Operand], out: Operand) -> Result<()> {
            match op {
                $(Op::$v { $($f,)* $($o,)* } => $k(ctx, enc, args, out, $($f,)* $($o,)*),)*
                Op::Unary(_) | Op::Binary(_) | Op::Reduce { .. } => unreachable!("recorded by record"),
            }
        }

        /// Records a producer with an elementwise chain in its store, through its entry's
        /// `epilogue` (`Op::takes_epilogue`).
        fn with_epilogue(
            ctx: &Ctx,
            enc: &mut Commands,
            op: &Op,
            inputs: &[Operand],
            out: Operand,
            epi: &epilogue::Epilogue,
        ) -> Result<()> {
            match op {
                $(Op::$v { $($f,)* $($o,)* } => {
                    $(let _ = $f;)* $(let _ = $o;)*
                    $(return ($ep)(ctx, enc, inputs, out, epi);)?
                })*
                Op::Unary(_) | Op::Binary(_) | Op::Reduce { .. } => {}
            }
            unreachable!("{} has no epilogue", op.name())
        }
    };
}
crate::kernel_table!(kernel_dispatch);
