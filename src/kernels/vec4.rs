//! The entry point of the vec4 elementwise kernels (`unary4.wgsl`, `binary4.wgsl` and fused chains
//! on whole vec4s). Each kernel defines `fn one(i: u32)`, which computes and stores vec4 `i` of its
//! output, and holds the output's length in vec4s in `params[0]`; [`Split::pipeline`] appends its `main`.
//!
//! On a GPU a thread takes one vec4. On a CPU adapter (lavapipe, SwiftShader), which runs a
//! workgroup's invocations as SIMD lanes in a loop on a few cores, a thread takes four, a quarter of
//! the output apart, each under its own bounds test and written out rather than looped: four
//! independent loads and stores a lane keep more memory operations in flight. On lavapipe
//! (`cargo bench --bench elementwise_forms`, one run) the compiled chain of 8 read and wrote
//! 6.12–6.76 GiB/s this way (two runs) against 5.38–5.51 before, and the raw WGSL chain 6.61 GiB/s against 5.07 for
//! one vec4 a lane — but 4.29 with the four in a loop that returns at the end, the form tried and
//! dropped at `75252ad`.

use super::Ctx;

/// The vec4s a thread takes on a CPU adapter.
const QUARTERS: u64 = 4;

/// `main` with a body: the signature both entry points share.
macro_rules! entry {
    ($body:literal) => {
        concat!(
            "\n@compute @workgroup_size(WORKGROUP)\nfn main(\n    @builtin(workgroup_id) wid: vec3<u32>,\n    \
             @builtin(num_workgroups) groups: vec3<u32>,\n    @builtin(local_invocation_index) lid: u32,\n) {\n",
            $body,
            "}\n"
        )
    };
}

const ONE: &str = entry!(
    "    let i = affon_lane(wid, groups, lid);
    if (i < params[0]) {
        one(i);
    }
"
);

const FOUR: &str = entry!(
    "    let j = affon_lane(wid, groups, lid);
    let len = params[0];
    let threads = (len + 3u) / 4u; // a quarter of the vec4s, rounded up
    if (j >= threads) {
        return;
    }
    one(j);
    if (j + threads < len) {
        one(j + threads);
    }
    if (j + 2u * threads < len) {
        one(j + 2u * threads);
    }
    if (j + 3u * threads < len) {
        one(j + 3u * threads);
    }
"
);

/// How a vec4 kernel is split into threads on this adapter.
#[derive(Debug, Clone, Copy)]
pub(super) struct Split {
    four: bool,
}

impl Split {
    pub(super) fn of(ctx: &Ctx) -> Split {
        Split {
            four: ctx.cpu_adapter,
        }
    }

    /// The pipeline of `kernels` (the one-vec4 form's name, the four-vec4 form's), specialised by
    /// `key`: `source()` (which ends with `fn one(i: u32)` and what it calls) and this split's `main`.
    pub(super) fn pipeline(
        self,
        ctx: &Ctx,
        kernels: (&'static str, &'static str),
        key: &str,
        source: impl FnOnce() -> String,
    ) -> wgpu::ComputePipeline {
        let (kernel, entry) = if self.four {
            (kernels.1, FOUR)
        } else {
            (kernels.0, ONE)
        };
        ctx.cache.pipeline(ctx.device, kernel, key, || source() + entry)
    }

    /// The workgroup grid over an output of `vectors` vec4s.
    pub(super) fn groups(self, ctx: &Ctx, vectors: u64) -> (u32, u32, u32) {
        let threads = if self.four {
            vectors.div_ceil(QUARTERS)
        } else {
            vectors
        };
        ctx.groups(threads)
    }
}
