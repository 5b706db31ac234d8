//! Kernels: WGSL sources in `shaders/`, one `include_str!` constant per file, and a pipeline cache
//! keyed by `(kernel, specialisation)` so each pipeline is created once per session.

mod fill;

use std::collections::HashMap;
use std::sync::Mutex;

pub(crate) use fill::fill;

/// Threads per workgroup used by the 1-D kernels.
pub(crate) const WORKGROUP: u32 = 256;
/// Largest workgroup count per dimension (WebGPU's default limit).
const MAX_GROUPS_PER_DIM: u32 = 65_535;

/// Pipelines created so far, by `(kernel, specialisation)`.
#[derive(Default)]
pub(crate) struct KernelCache {
    pipelines: Mutex<HashMap<(&'static str, String), wgpu::ComputePipeline>>,
}

impl KernelCache {
    /// The pipeline for `kernel` specialised by `key`, compiling `source` on first use.
    pub(crate) fn pipeline(
        &self,
        device: &wgpu::Device,
        kernel: &'static str,
        key: &str,
        source: impl FnOnce() -> String,
    ) -> wgpu::ComputePipeline {
        let mut map = self.pipelines.lock().unwrap_or_else(|p| p.into_inner());
        map.entry((kernel, key.to_string()))
            .or_insert_with(|| {
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(kernel),
                    source: wgpu::ShaderSource::Wgsl(source().into()),
                });
                device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(kernel),
                    layout: None,
                    module: &module,
                    entry_point: Some("main"),
                    compilation_options: Default::default(),
                    cache: None,
                })
            })
            .clone()
    }

    /// Number of pipelines created.
    pub(crate) fn len(&self) -> usize {
        self.pipelines.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// A 2-D workgroup grid covering `threads` threads of [`WORKGROUP`] each; kernels linearise it as
/// `(wid.y * groups.x + wid.x) * WORKGROUP + lid`.
pub(crate) fn grid(threads: u64) -> (u32, u32) {
    let groups = threads.div_ceil(WORKGROUP as u64).max(1);
    let x = groups.min(MAX_GROUPS_PER_DIM as u64) as u32;
    let y = groups.div_ceil(x as u64) as u32;
    (x, y)
}
