//! What bounds an elementwise kernel on this adapter (BENCHMARKS.md "Native"): the compiled chain of
//! `workloads`'s bandwidth row (x·x, relu, sqrt, neg, exp, abs, square, tanh) over 16M floats as
//! affon runs it, the same chain as a plain WGSL vec4 kernel, a bare vec4 copy (no arithmetic),
//! the chain with every load from an address the 8 lanes share (each lane selecting its own), and
//! other shapes of the same work (workgroups of 256, several vec4s a lane, WGSL's `tanh`), the
//! bounds test affon's kernels make with the length from a storage or a uniform buffer, and four
//! vec4s a lane as a kernel must write them (length and stride from the parameters: in a loop,
//! written out, adjacent), beside a 64 MiB host memcpy. Each figure: the median of 9 runs to a queue drain, as GiB/s read +
//! written. Run with `LP_NUM_THREADS=1` to see lavapipe's scaling with threads.
//!
//!     cargo bench --bench elementwise_forms

#[cfg(not(target_arch = "wasm32"))]
#[path = "common/chain.rs"]
mod chain;

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use super::chain::chain_program;
    use std::time::Instant;

    use affon::{Session, SessionOptions};

    const N: u64 = 16 << 20;
    const CHAIN: &str = "let e = exp(-sqrt(max(v * v, vec4(0.0)))); let q = abs(e) * abs(e); \
        let t = exp(-2.0 * abs(q)); let r = sign(q) * (1.0 - t) / (1.0 + t);";

    const PSTORAGE: &str = "@group(0) @binding(2) var<storage, read> p: array<u32, 4>;\n";
    const PUNIFORM: &str = "@group(0) @binding(2) var<uniform> p: vec4<u32>;\n";

    fn median(mut f: impl FnMut()) -> f64 {
        f();
        let mut ts: Vec<f64> = (0..9)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .collect();
        ts.sort_by(|a, b| a.total_cmp(b));
        ts[4]
    }

    fn report(name: &str, seconds: f64) {
        let gib = 2.0 * (N * 4) as f64 / seconds / (1u64 << 30) as f64;
        println!("{name:44} {:8.2} ms  {gib:6.2} GiB/s read + write", seconds * 1e3);
    }

    pub fn run() {
        let s = Session::new(SessionOptions::default()).expect("a GPU adapter is required");
        println!("adapter: {:?}", s.adapter());
        let exe = s.compile(&chain_program(false)).unwrap();
        let xl = s.random_uniform(&[N as usize], 0.0, 1.0, 2).unwrap();
        report(
            "affon: the compiled chain",
            median(|| {
                let y = exe.run(&[("x", &xl)], None).unwrap();
                pollster::block_on(s.sync()).unwrap();
                drop(y);
            }),
        );
        drop((exe, xl));

        let inst = wgpu::Instance::default();
        let ad = pollster::block_on(inst.request_adapter(&Default::default())).unwrap();
        let (dev, q) = pollster::block_on(ad.request_device(&wgpu::DeviceDescriptor {
            required_features: ad.features() & wgpu::Features::SUBGROUP,
            ..Default::default()
        }))
        .unwrap();
        let mk = |usage| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: N * 4,
                usage,
                mapped_at_creation: false,
            })
        };
        let (a, b) = (mk(wgpu::BufferUsages::STORAGE), mk(wgpu::BufferUsages::STORAGE));
        let head = "@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;\n\
            @group(0) @binding(1) var<storage, read_write> b: array<vec4<f32>>;\n";
        let lane = "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>, \
            @builtin(num_workgroups) n: vec3<u32>) { let i = g.x + g.y * n.x * 64u;";
        // the same index for 256 invocations a workgroup, and a lane index `j` for forms taking
        // several vec4s a lane (workgroups of 64)
        let lane256 = "@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, \
            @builtin(num_workgroups) n: vec3<u32>) { let i = g.x + g.y * n.x * 256u;";
        let lane256j = "@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, \
            @builtin(num_workgroups) n: vec3<u32>) { let j = g.x + g.y * n.x * 256u;";
        let lane64 = "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>, \
            @builtin(num_workgroups) n: vec3<u32>) { let j = g.x + g.y * n.x * 64u;";
        let forms = [
            ("WGSL: the same chain, a vec4 a lane", format!("{head}{lane} let v = a[i]; {CHAIN} b[i] = r; }}"), 64),
            ("WGSL: a bare vec4 copy", format!("{head}{lane} b[i] = a[i]; }}"), 64),
            ("WGSL: the chain, workgroups of 256", format!("{head}{lane256} let v = a[i]; {CHAIN} b[i] = r; }}"), 256),
            ("WGSL: a bare copy, workgroups of 256", format!("{head}{lane256} b[i] = a[i]; }}"), 256),
            ("WGSL: the chain with the tanh builtin", format!("{head}{lane} let v = a[i]; let e = exp(-sqrt(max(v * v, vec4(0.0)))); \
                let q = abs(e) * abs(e); b[i] = tanh(q); }}"), 64),
            ("WGSL: the chain, 2 adjacent vec4s a lane", format!("{head}{lane64} for (var k = 0u; k < 2u; k++) {{ \
                let i = j * 2u + k; let v = a[i]; {CHAIN} b[i] = r; }} }}"), 128),
            ("WGSL: the chain, 4 vec4s a lane, 1/4 apart", format!("{head}{lane64} for (var k = 0u; k < 4u; k++) {{ \
                let i = j + k * (arrayLength(&a) / 4u); let v = a[i]; {CHAIN} b[i] = r; }} }}"), 256),
            ("WGSL: a copy, 4 vec4s a lane, 1/4 apart", format!("{head}{lane64} for (var k = 0u; k < 4u; k++) {{ \
                let i = j + k * (arrayLength(&a) / 4u); b[i] = a[i]; }} }}"), 256),
            ("WGSL: the chain, loads shared by 8 lanes", format!("{head}@compute @workgroup_size(8) fn main(\
                @builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>, \
                @builtin(local_invocation_index) l: u32) {{ let o = (w.x + w.y * n.x) * 8u; var v = a[o]; \
                for (var k = 1u; k < 8u; k++) {{ v = select(v, a[o + k], l == k); }} {CHAIN} b[o + l] = r; }}"), 8),
            // the bounds test affon's kernels make, its length read from the parameters: from a
            // storage buffer (affon's form) or a uniform one
            ("WGSL: copy, 256, bound from storage params", format!("{head}{PSTORAGE}{lane256} if (i >= p[0]) {{ return; }} b[i] = a[i]; }}"), 256),
            ("WGSL: copy, 256, bound from uniform params", format!("{head}{PUNIFORM}{lane256} if (i >= p.x) {{ return; }} b[i] = a[i]; }}"), 256),
            ("WGSL: chain, 256, bound from storage params", format!("{head}{PSTORAGE}{lane256} if (i >= p[0]) {{ return; }} let v = a[i]; {CHAIN} b[i] = r; }}"), 256),
            ("WGSL: chain, 256, bound from uniform params", format!("{head}{PUNIFORM}{lane256} if (i >= p.x) {{ return; }} let v = a[i]; {CHAIN} b[i] = r; }}"), 256),
            // four vec4s a lane a quarter apart as a kernel must write it: the length and the stride
            // from the parameters, a bounds test for each
            ("WGSL: chain, 4 a lane, stride + bound from params", format!("{head}{PSTORAGE}{lane64} for (var k = 0u; k < 4u; k++) {{ \
                let i = j + k * p[1]; if (i >= p[0]) {{ return; }} let v = a[i]; {CHAIN} b[i] = r; }} }}"), 256),
            ("WGSL: chain, 4 a lane, unrolled, from params", format!("{head}{PSTORAGE}{lane64} let len = p[0]; let s = p[1]; \
                {{ let i = j; if (i < len) {{ let v = a[i]; {CHAIN} b[i] = r; }} }} \
                {{ let i = j + s; if (i < len) {{ let v = a[i]; {CHAIN} b[i] = r; }} }} \
                {{ let i = j + 2u * s; if (i < len) {{ let v = a[i]; {CHAIN} b[i] = r; }} }} \
                {{ let i = j + 3u * s; if (i < len) {{ let v = a[i]; {CHAIN} b[i] = r; }} }} }}"), 256),
            // the same in workgroups of 256, affon's on these adapters (its `vec4.rs` form)
            ("WGSL: chain, 4 a lane, unrolled, 256", format!("{head}{PSTORAGE}{lane256j} let len = p[0]; let s = p[1]; \
                {{ let i = j; if (i < len) {{ let v = a[i]; {CHAIN} b[i] = r; }} }} \
                {{ let i = j + s; if (i < len) {{ let v = a[i]; {CHAIN} b[i] = r; }} }} \
                {{ let i = j + 2u * s; if (i < len) {{ let v = a[i]; {CHAIN} b[i] = r; }} }} \
                {{ let i = j + 3u * s; if (i < len) {{ let v = a[i]; {CHAIN} b[i] = r; }} }} }}"), 1024),
            ("WGSL: chain, 4 adjacent a lane, from params", format!("{head}{PSTORAGE}{lane64} for (var k = 0u; k < 4u; k++) {{ \
                let i = j * 4u + k; if (i >= p[0]) {{ return; }} let v = a[i]; {CHAIN} b[i] = r; }} }}"), 256),
        ];
        let len = [(N / 4) as u32, (N / 16) as u32, 0, 0];
        let params = |usage| {
            let b = dev.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 16,
                usage: usage | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            q.write_buffer(&b, 0, bytemuck::cast_slice(&len));
            b
        };
        let (ps, pu) = (
            params(wgpu::BufferUsages::STORAGE),
            params(wgpu::BufferUsages::UNIFORM),
        );
        for (name, src, per_group) in forms {
            let read_params = [(PSTORAGE, &ps), (PUNIFORM, &pu)]
                .into_iter()
                .find(|(decl, _)| src.contains(decl))
                .map(|(_, b)| b);
            let m = dev.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(src.into()),
            });
            let pl = dev.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: None,
                module: &m,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
            let mut entries: &[wgpu::BindGroupEntry] = &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: a.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: b.as_entire_binding(),
                },
            ];
            let with_params;
            if let Some(p) = read_params {
                with_params = [
                    entries[0].clone(),
                    entries[1].clone(),
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: p.as_entire_binding(),
                    },
                ];
                entries = &with_params;
            }
            let bg = dev.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pl.get_bind_group_layout(0),
                entries,
            });
            let groups = (N / 4) as u32 / per_group;
            report(
                name,
                median(|| {
                    let mut e = dev.create_command_encoder(&Default::default());
                    {
                        let mut c = e.begin_compute_pass(&Default::default());
                        c.set_pipeline(&pl);
                        c.set_bind_group(0, &bg, &[]);
                        let gx = groups.min(32768);
                        c.dispatch_workgroups(gx, groups / gx, 1);
                    }
                    q.submit([e.finish()]);
                    dev.poll(wgpu::PollType::wait_indefinitely()).unwrap();
                }),
            );
        }
        let src = vec![1.5f32; N as usize];
        let mut dst = vec![0f32; N as usize];
        report(
            "host memcpy of 64 MiB",
            median(|| {
                dst.copy_from_slice(std::hint::black_box(&src));
                std::hint::black_box(&dst);
            }),
        );
    }
}

fn main() {
    #[cfg(not(target_arch = "wasm32"))]
    native::run();
}
