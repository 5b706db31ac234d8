//! Every kernel's pipeline has an explicit bind group layout, read from its WGSL, in which the
//! parameters (`@binding(1)`, `var<storage, read> params`) take a **dynamic offset**: a batch's
//! parameters are written into the session's parameter ring in one queue write just before the
//! batch is submitted (`commands.rs`), each dispatch naming its slot by the offset it binds at.
//! A bind group therefore binds the ring, not the parameters, and is reused by every dispatch with
//! the same pipeline and buffers whatever its parameters (WebGPU's pipelines with `layout: "auto"`
//! cannot have dynamic offsets, hence the explicit layouts).
//!
//! The declarations affon's kernels use, one a line: `@group(0) @binding(N) var<storage, read>`,
//! `var<storage, read_write>`, `var NAME: texture_2d<u32>` and
//! `var NAME: texture_storage_2d<rgba32uint, write>`.

/// The binding every kernel reads its parameters from.
pub(crate) const PARAMS_BINDING: u32 = 1;

/// What a group-0 binding of a kernel is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Binding {
    /// A storage buffer, read-only or read-write.
    Storage { read_only: bool },
    /// A `texture_2d<u32>` read with `textureLoad`.
    Texture,
    /// A `texture_storage_2d<rgba32uint, write>`.
    StorageTexture,
}

/// The group-0 bindings `source` declares, in order of appearance. A declaration affon's kernels
/// do not use is a bug in the kernel (the layout could not match it): a panic, caught by the
/// tests that compile every kernel.
pub(crate) fn declared(source: &str) -> Vec<(u32, Binding)> {
    const DECL: &str = "@group(0) @binding(";
    source
        .lines()
        .map(str::trim_start)
        .filter_map(|line| line.strip_prefix(DECL))
        .map(|rest| {
            let (n, decl) = rest.split_once(')').unwrap_or((rest, ""));
            let n: u32 = n
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("binding number in {rest:?}"));
            let kind = if decl.contains("var<storage, read_write>") {
                Binding::Storage { read_only: false }
            } else if decl.contains("var<storage, read>") {
                Binding::Storage { read_only: true }
            } else if decl.contains("texture_storage_2d<rgba32uint, write>") {
                Binding::StorageTexture
            } else if decl.contains("texture_2d<u32>") {
                Binding::Texture
            } else {
                panic!("a kernel binding no layout describes: {rest:?}")
            };
            (n, kind)
        })
        .collect()
}

/// The layout entry of one binding; the parameters' takes a dynamic offset.
fn entry((binding, kind): (u32, Binding)) -> wgpu::BindGroupLayoutEntry {
    let ty = match kind {
        Binding::Storage { read_only } => wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: binding == PARAMS_BINDING && read_only,
            min_binding_size: None,
        },
        Binding::Texture => wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Uint,
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        Binding::StorageTexture => wgpu::BindingType::StorageTexture {
            access: wgpu::StorageTextureAccess::WriteOnly,
            format: wgpu::TextureFormat::Rgba32Uint,
            view_dimension: wgpu::TextureViewDimension::D2,
        },
    };
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty,
        count: None,
    }
}

/// Compiles `source` (entry point `main`) with the explicit layout its declarations describe.
pub(crate) fn pipeline(
    device: &wgpu::Device,
    label: &str,
    source: String,
    workgroup: u32,
) -> wgpu::ComputePipeline {
    let source = with_prelude(&with_workgroup(&source, workgroup));
    let entries: Vec<_> = declared(&source).into_iter().map(entry).collect();
    let group = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(&group)],
        immediate_size: 0,
    });
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(&layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

const PRELUDE: &str = include_str!("../../shaders/prelude.wgsl");

/// `source` with the prelude's helpers it calls (`shaders/prelude.wgsl`: the grid index, strided
/// offsets) appended — WGSL declarations may come in any order — each helper once, and the helpers
/// they call in turn.
fn with_prelude(source: &str) -> String {
    let helpers: Vec<(&str, &str)> = PRELUDE
        .split("\n\n")
        .filter_map(|block| {
            let name = block.split("fn ").nth(1)?.split('(').next()?;
            Some((name, block))
        })
        .collect();
    let mut out = source.to_string();
    for (name, block) in helpers.iter().rev() {
        let call = format!("{name}(");
        if out.contains(&call) && !out.contains(&format!("fn {call}")) {
            out.push('\n');
            out.push_str(block);
            out.push('\n');
        }
    }
    out
}

/// `source` with `const WORKGROUP: u32` declared, after its `enable` directives (which must come
/// before every declaration): the 1-D kernels' workgroup size and index stride on this device.
fn with_workgroup(source: &str, workgroup: u32) -> String {
    let mut at = 0;
    while source[at..].starts_with("enable ") {
        at += source[at..].find('\n').map_or(source.len() - at, |i| i + 1);
    }
    format!(
        "{}const WORKGROUP: u32 = {workgroup}u;\n{}",
        &source[..at],
        &source[at..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_gets_the_prelude_helpers_it_calls_once_with_theirs() {
        let src = "fn main() { let i = affon_lane(wid, groups, lid); }\n";
        let out = with_prelude(src);
        assert!(out.starts_with(src));
        assert_eq!(out.matches("fn affon_lane(").count(), 1);
        assert_eq!(out.matches("fn affon_group(").count(), 1, "affon_lane calls it");
        assert!(!out.contains("fn affon_strided("), "not called");
        assert_eq!(with_prelude("fn main() {}\n"), "fn main() {}\n");
    }

    #[test]
    fn the_workgroup_size_is_declared_after_the_enable_directives() {
        assert_eq!(
            with_workgroup("enable subgroups;\nalias T = f32;\n", 128),
            "enable subgroups;\nconst WORKGROUP: u32 = 128u;\nalias T = f32;\n"
        );
        assert_eq!(
            with_workgroup("alias T = f32;", 256),
            "const WORKGROUP: u32 = 256u;\nalias T = f32;"
        );
        assert_eq!(
            with_workgroup("enable f16;", 256),
            "enable f16;const WORKGROUP: u32 = 256u;\n"
        );
    }

    #[test]
    fn declarations_are_read_one_a_line() {
        let src = "// @group(0) @binding(9) in a comment is not a binding\n\
            @group(0) @binding(0) var<storage, read_write> out: array<u32>;\n\
            @group(0) @binding(1) var<storage, read> params: array<u32, 3>;\n  \
            @group(0) @binding(2) var a: texture_2d<u32>;\n\
            @group(0) @binding(3) var<storage, read> x: array<vec4<u32>>;\n\
            @group(0) @binding(4) var d: texture_storage_2d<rgba32uint, write>;\n";
        let b = declared(src);
        assert_eq!(
            b,
            [
                (0, Binding::Storage { read_only: false }),
                (1, Binding::Storage { read_only: true }),
                (2, Binding::Texture),
                (3, Binding::Storage { read_only: true }),
                (4, Binding::StorageTexture),
            ]
        );
        let dynamic: Vec<bool> = b
            .into_iter()
            .map(|x| {
                matches!(
                    entry(x).ty,
                    wgpu::BindingType::Buffer {
                        has_dynamic_offset: true,
                        ..
                    }
                )
            })
            .collect();
        assert_eq!(dynamic, [false, true, false, false, false], "only the parameters");
    }

    #[test]
    #[should_panic(expected = "no layout describes")]
    fn an_unknown_declaration_is_a_kernel_bug() {
        declared("@group(0) @binding(0) var s: sampler;");
    }
}
