//! Native compute benchmarks (criterion):
//! - pool acquire/release of a 1 MiB buffer versus creating and destroying a device buffer;
//! - an eager chain of 8 elementwise ops on 1,048,576 floats, the same followed by a full `sum`
//!   (in a tidy: read by the sum as it reduces), and the chain compiled;
//! - matmul 256, 512, 1024 (read back, so device work is included);
//! - cumsum over 4M floats in lines of 64, 4,096, 65,536, 1M and 4M (device time: four queued, one drain);
//! - max pooling 2×2 / 2 with its gradient on [8, 112, 112, 16] and [1, 224, 224, 32];
//! - an MLP forward pass (batch 64, 784→256→10, relu, softmax), eager and as an Executable.
//!
//!     cargo bench --bench compute

#[cfg(not(target_arch = "wasm32"))]
#[path = "common/chain.rs"]
mod chain;

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use super::chain::chain_program;
    use std::sync::Arc;
    use std::time::Duration;

    use affon::accounting::Ledger;
    use affon::device::{DeviceStorage, Gpu};
    use affon::ops::{Pad, Pair};
    use affon::pool::{Pool, PoolConfig};
    use affon::{DType, Program, Session, SessionOptions, Tensor};
    use criterion::{BenchmarkId, Criterion, Throughput};

    fn chain(x: &Tensor) -> affon::Result<Tensor> {
        x.mul(x)?.relu()?.sqrt()?.neg()?.exp()?.abs()?.square()?.tanh()
    }

    fn mlp_program() -> Program {
        let mut p = Program::new("mlp");
        let x = p.input("x", DType::Float32, &[-1, 784]).unwrap();
        let w1 = p.input("w1", DType::Float32, &[784, 256]).unwrap();
        let b1 = p.input("b1", DType::Float32, &[256]).unwrap();
        let w2 = p.input("w2", DType::Float32, &[256, 10]).unwrap();
        let b2 = p.input("b2", DType::Float32, &[10]).unwrap();
        let h = p.matmul(x, w1).unwrap();
        let h = p.add(h, b1).unwrap();
        let h = p.relu(h).unwrap();
        let o = p.matmul(h, w2).unwrap();
        let o = p.add(o, b2).unwrap();
        let o = p.softmax(o, -1).unwrap();
        p.output("probs", o).unwrap();
        p
    }

    pub fn run() {
        let mut c = Criterion::default()
            .sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3))
            .configure_from_args();
        let s = Session::new(SessionOptions::default()).expect("a GPU adapter is required");
        println!("adapter: {:?}", s.adapter());

        // Pool versus the device allocator.
        let gpu = pollster::block_on(Gpu::acquire("bench")).unwrap();
        let mut pool = Pool::new(
            DeviceStorage::new(&gpu),
            PoolConfig::default(),
            Arc::new(Ledger::standalone()),
        );
        let mut g = c.benchmark_group("allocation 1 MiB");
        g.bench_function("pool acquire+release", |b| {
            b.iter(|| {
                let l = pool.acquire(1 << 20).unwrap();
                pool.release(l);
            })
        });
        g.bench_function("wgpu create_buffer+destroy", |b| {
            b.iter(|| {
                let buf = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: 1 << 20,
                    usage: wgpu::BufferUsages::STORAGE
                        | wgpu::BufferUsages::COPY_SRC
                        | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                buf.destroy();
            })
        });
        g.finish();

        // Elementwise chain, eager and compiled (read back: device work included).
        let n = 1 << 20;
        let x = s.random_uniform(&[n], 0.0, 1.0, 1).unwrap();
        let exe = s.compile(&chain_program(false)).unwrap();
        let mut g = c.benchmark_group("chain of 8 elementwise ops, 1M floats");
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function("eager", |b| b.iter(|| chain(&x).unwrap().read_words_blocking()));
        // the eager chain in a tidy, then its full sum (browser row a9e): the sum reads the
        // deferred chain as it reduces, x read once and nothing else written
        g.bench_function("eager + sum", |b| {
            b.iter(|| {
                s.tidy(|| chain(&x).unwrap().sum(&[], false).unwrap())
                    .read_words_blocking()
            })
        });
        g.bench_function("compiled (fused)", |b| {
            b.iter(|| {
                exe.run(&[("x", &x)], None)
                    .unwrap()
                    .remove(0)
                    .1
                    .read_words_blocking()
            })
        });
        g.finish();

        // Matmul.
        let mut g = c.benchmark_group("matmul");
        for n in [256usize, 512, 1024] {
            let a = s.random_uniform(&[n, n], -1.0, 1.0, 2).unwrap();
            let b2 = s.random_uniform(&[n, n], -1.0, 1.0, 3).unwrap();
            g.throughput(Throughput::Elements((2 * n * n * n) as u64)); // flops
            g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                b.iter(|| a.matmul(&b2).unwrap().read_words_blocking())
            });
        }
        g.finish();

        // Running sums over 4M floats in lines of 64 (a thread each), 4,096 (a workgroup each on
        // GPUs), 65,536 and 1M (a workgroup each), and one line of 4M (a single long line: in parts
        // of 65,536 on every adapter, `ops::line_parts`), queued four at a time, one queue drain.
        let mut g = c.benchmark_group("cumsum 4M floats, 4 + sync");
        g.throughput(Throughput::Bytes(4 * (32 << 20))); // 16 MiB read and 16 MiB written, four times
        for len in [64usize, 4096, 65536, 1 << 20, 4 << 20] {
            let x = s.random_uniform(&[(4 << 20) / len, len], -1.0, 1.0, 7).unwrap();
            g.bench_with_input(BenchmarkId::new("line", len), &len, |b, _| {
                b.iter(|| {
                    let outs: Vec<Tensor> = (0..4).map(|_| x.cumsum(1, false, false).unwrap()).collect();
                    pollster::block_on(s.sync()).unwrap();
                    outs
                })
            });
        }
        g.finish();

        // Max pooling 2×2 / 2 and its gradient (a Program: forward, sum, grad), read back.
        let mut g = c.benchmark_group("maxPool 2x2/2 + gradient");
        for shape in [[8usize, 112, 112, 16], [1, 224, 224, 32]] {
            let mut p = Program::new("pool_grad");
            let xi = p.input("x", DType::Float32, &shape.map(|d| d as i64)).unwrap();
            let two = Pair(2, 2);
            let y = p.max_pool(xi, two, two, Pad::VALID).unwrap();
            let l = p.sum(y, &[], false).unwrap();
            let gx = p.grad(l, &[xi]).unwrap();
            p.output("gx", gx[0]).unwrap();
            let exe = s.compile(&p).unwrap();
            let x = s.random_uniform(&shape, 0.0, 1.0, 8).unwrap();
            let name = format!("{}x{}x{}x{}", shape[0], shape[1], shape[2], shape[3]);
            g.bench_function(name, |b| {
                b.iter(|| {
                    exe.run(&[("x", &x)], None)
                        .unwrap()
                        .remove(0)
                        .1
                        .read_words_blocking()
                })
            });
        }
        g.finish();

        // MLP forward pass.
        let x = s.random_normal(&[64, 784], 0.0, 1.0, 4).unwrap();
        let w1 = s.random_normal(&[784, 256], 0.0, 0.05, 5).unwrap();
        let b1 = s.zeros(&[256], DType::Float32).unwrap();
        let w2 = s.random_normal(&[256, 10], 0.0, 0.05, 6).unwrap();
        let b2 = s.zeros(&[10], DType::Float32).unwrap();
        let mlp = s.compile(&mlp_program()).unwrap();
        let mut g = c.benchmark_group("MLP 64x784-256-10");
        g.bench_function("eager", |b| {
            b.iter(|| {
                let h = x.matmul(&w1).unwrap().add(&b1).unwrap().relu().unwrap();
                h.matmul(&w2)
                    .unwrap()
                    .add(&b2)
                    .unwrap()
                    .softmax(-1)
                    .unwrap()
                    .read_words_blocking()
            })
        });
        g.bench_function("executable", |b| {
            b.iter(|| {
                let ins = [("x", &x), ("w1", &w1), ("b1", &b1), ("w2", &w2), ("b2", &b2)];
                mlp.run(&ins, None).unwrap().remove(0).1.read_words_blocking()
            })
        });
        g.finish();
        c.final_summary();
    }

    trait Blocking {
        fn read_words_blocking(&self) -> Vec<u32>;
    }
    impl Blocking for Tensor {
        fn read_words_blocking(&self) -> Vec<u32> {
            pollster::block_on(self.read_words()).unwrap()
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::run();
}

#[cfg(target_arch = "wasm32")]
fn main() {}
