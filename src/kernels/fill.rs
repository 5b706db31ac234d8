//! `fill`: every element of a buffer set to one 32-bit word (`shaders/fill.wgsl`).

use wgpu::util::DeviceExt;

use super::{grid, KernelCache};

const SOURCE: &str = include_str!("../../shaders/fill.wgsl");

/// Records a fill of the first `len` words of `out` with `word` into `enc`.
pub(crate) fn fill(
    cache: &KernelCache,
    device: &wgpu::Device,
    enc: &mut wgpu::CommandEncoder,
    out: &wgpu::Buffer,
    len: u64,
    word: u32,
) {
    let pipeline = cache.pipeline(device, "fill", "", || SOURCE.to_string());
    let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("fill params"),
        contents: bytemuck::cast_slice(&[word, len as u32, 0, 0]),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("fill"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: out,
                    offset: 0,
                    size: std::num::NonZeroU64::new(len * 4),
                }),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: params.as_entire_binding(),
            },
        ],
    });
    let (x, y) = grid(len);
    let mut pass = enc.begin_compute_pass(&Default::default());
    pass.set_pipeline(&pipeline);
    pass.set_bind_group(0, &bind, &[]);
    pass.dispatch_workgroups(x, y, 1);
}
