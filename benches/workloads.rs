//! Native criterion benches for the browser bench's workloads (BENCHMARKS.md, "Native"):
//! - a compiled 8-op chain + `sum` on 1M and 16M floats (one kernel), beside the host's memory bandwidth
//!   (a 64 MiB memcpy, read + write) and the adapter's floor at 16M floats (`sum` alone, one
//!   elementwise op alone) measured in the same run;
//! - 1000 × `square` on `[3]`: plain, in one tidy, disposing each;
//! - a MobileNet-style block on 1×112×112×32 (depthwise 3×3 + batchNorm + relu6, pointwise 1×1 to
//!   64 + batchNorm + relu6), eager and compiled;
//! - 200 growing shapes `[i+1, 1024]` (create, square, sum, read back);
//! - a tensor from a 1 MiB array + one op + readback;
//! - one training step (MLP 784-128-10, batch 64, Adam);
//! - matmul 1024, 2048 and 4096 with `AFFON_BENCH_LARGE=1` (for a real GPU: seconds each on lavapipe),
//!   with a readback each and as eight products queued before one queue drain (device time).
//!
//!     cargo bench --bench workloads

#[cfg(not(target_arch = "wasm32"))]
#[path = "common/chain.rs"]
mod chain;

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use super::chain::chain_program;
    use std::time::Duration;

    use affon::ops::{Pad, Pair};
    use affon::program::Adam;
    use affon::{DType, Program, Session, SessionOptions, Tensor};
    use criterion::{BenchmarkId, Criterion, Throughput};

    fn read(t: &Tensor) -> Vec<u32> {
        pollster::block_on(t.read_words()).unwrap()
    }

    /// The block's weights: depthwise filter, pointwise filter, two sets of batchNorm statistics.
    struct Block {
        dw: Tensor,
        pw: Tensor,
        bn: [[Tensor; 4]; 2],
    }

    fn block_weights(s: &Session) -> Block {
        let stats = |c: usize, seed: u64| -> [Tensor; 4] {
            [
                s.random_normal(&[c], 0.0, 0.1, seed).unwrap(),
                s.random_uniform(&[c], 0.5, 1.5, seed + 1).unwrap(),
                s.random_normal(&[c], 0.0, 0.1, seed + 2).unwrap(),
                s.random_uniform(&[c], 0.5, 1.5, seed + 3).unwrap(),
            ]
        };
        Block {
            dw: s.random_normal(&[3, 3, 32, 1], 0.0, 0.3, 10).unwrap(),
            pw: s.random_normal(&[1, 1, 32, 64], 0.0, 0.2, 11).unwrap(),
            bn: [stats(32, 20), stats(64, 30)],
        }
    }

    fn block_eager(x: &Tensor, w: &Block) -> Tensor {
        let bn = |v: Tensor, b: &[Tensor; 4]| {
            v.batch_norm(&b[0], &b[1], Some(&b[2]), Some(&b[3]), 1e-3)
                .unwrap()
                .clip_by_value(0.0, 6.0)
                .unwrap()
        };
        let h = bn(
            x.depthwise_conv2d(&w.dw, Pair::ONE, Pad::SAME, Pair::ONE)
                .unwrap(),
            &w.bn[0],
        );
        bn(
            h.conv2d(&w.pw, Pair::ONE, Pad::SAME, Pair::ONE).unwrap(),
            &w.bn[1],
        )
    }

    fn block_program() -> Program {
        let mut p = Program::new("mobilenet_block");
        let x = p.input("x", DType::Float32, &[1, 112, 112, 32]).unwrap();
        let dw = p.input("dw", DType::Float32, &[3, 3, 32, 1]).unwrap();
        let pw = p.input("pw", DType::Float32, &[1, 1, 32, 64]).unwrap();
        let mut bn = vec![];
        for (k, c) in [(0, 32), (1, 64)] {
            let names = ["mean", "variance", "offset", "scale"].map(|n| format!("{n}{k}"));
            bn.push(names.map(|n| p.input(&n, DType::Float32, &[c]).unwrap()));
        }
        let norm = |p: &mut Program, v, b: &[affon::program::NodeId; 4]| {
            let v = p.batch_norm(v, b[0], b[1], Some(b[2]), Some(b[3]), 1e-3).unwrap();
            p.clip_by_value(v, 0.0, 6.0).unwrap()
        };
        let h = p
            .depthwise_conv2d(x, dw, Pair::ONE, Pad::SAME, Pair::ONE)
            .unwrap();
        let h = norm(&mut p, h, &bn[0]);
        let h = p.conv2d(h, pw, Pair::ONE, Pad::SAME, Pair::ONE).unwrap();
        let y = norm(&mut p, h, &bn[1]);
        p.output("y", y).unwrap();
        p
    }

    fn train_step() -> Program {
        let sizes = [784usize, 128, 10];
        let mut p = Program::new("train_step");
        let x = p.input("x", DType::Float32, &[64, 784]).unwrap();
        let y = p.input("y", DType::Float32, &[64, 10]).unwrap();
        let (mut h, mut params) = (x, vec![]);
        for l in 0..2 {
            let w = p
                .state(&format!("w{l}"), DType::Float32, &[sizes[l], sizes[l + 1]])
                .unwrap();
            let b = p
                .state(&format!("b{l}"), DType::Float32, &[sizes[l + 1]])
                .unwrap();
            let m = p.matmul(h, w).unwrap();
            h = p.add(m, b).unwrap();
            if l == 0 {
                h = p.relu(h).unwrap();
            }
            params.extend([w, b]);
        }
        let ls = p.log_softmax(h, -1).unwrap();
        let t = p.mul(y, ls).unwrap();
        let s = p.sum(t, &[1], false).unwrap();
        let m = p.mean(s, &[], false).unwrap();
        let loss = p.neg(m).unwrap();
        let grads = p.grad(loss, &params).unwrap();
        p.adam(&params, &grads, Adam::default()).unwrap();
        p.output("loss", loss).unwrap();
        p
    }

    pub fn run() {
        let mut c = Criterion::default()
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3))
            .configure_from_args();
        let s = Session::new(SessionOptions::default()).expect("a GPU adapter is required");
        println!("adapter: {:?}", s.adapter());

        // Fused chain + sum beside the host's memcpy of the same bytes.
        let n = 1usize << 20;
        let x = s.random_uniform(&[n], 0.0, 1.0, 1).unwrap();
        let exe = s.compile(&chain_program(true)).unwrap();
        let compile_one =
            |name: &str, body: fn(&mut Program, affon::program::NodeId) -> affon::program::NodeId| {
                let mut p = Program::new(name);
                let x = p.input("x", DType::Float32, &[-1]).unwrap();
                let y = body(&mut p, x);
                p.output("y", y).unwrap();
                s.compile(&p).unwrap()
            };
        // the host's memory bandwidth: a 64 MiB copy (larger than the caches), read + write
        let big = 16 * n;
        let src = vec![1.5f32; big];
        let mut dst = vec![0f32; big];
        let mut g = c.benchmark_group("chain + sum, 1M floats");
        g.throughput(Throughput::Bytes(4 * n as u64));
        g.bench_function("compiled (one kernel)", |b| {
            b.iter(|| read(&exe.run(&[("x", &x)], None).unwrap().remove(0).1))
        });
        g.finish();
        // the same at the memcpy's size (64 MiB read), where a run's fixed cost (submission,
        // the combining pass, the readback) is a small part
        let xl = s.random_uniform(&[big], 0.0, 1.0, 2).unwrap();
        let mut g = c.benchmark_group("chain + sum, 16M floats (64 MiB)");
        g.throughput(Throughput::Bytes(4 * big as u64));
        g.sample_size(10);
        g.bench_function("compiled (one kernel)", |b| {
            b.iter(|| read(&exe.run(&[("x", &xl)], None).unwrap().remove(0).1))
        });
        g.finish();
        // the fused chain alone at that size: one vec4 kernel reading 64 MiB and writing 64 MiB,
        // timed to a queue drain like x*x below (issue 15's bandwidth target)
        let chain_alone = s.compile(&chain_program(false)).unwrap();
        // a run whose 64 MiB output is not read back: timed to a queue drain
        let drained = |exe: &affon::Executable| {
            let y = exe.run(&[("x", &xl)], None).unwrap().remove(0).1;
            pollster::block_on(s.sync()).unwrap();
            drop(y);
        };
        let mut g = c.benchmark_group("fused chain of 8, 16M floats");
        g.throughput(Throughput::Bytes(8 * big as u64));
        g.sample_size(10);
        g.bench_function("compiled (reads and writes 64 MiB)", |b| {
            b.iter(|| drained(&chain_alone))
        });
        g.finish();
        // the adapter's own floor at this size: `sum` alone (nothing but the loads the chain's
        // reduction does) and one elementwise op (x·x: read 64 MiB, write 64 MiB), beside which the
        // chain's own arithmetic and the reduction's loop can be told apart
        let only_sum = compile_one("sum_only", |p, x| p.sum(x, &[], false).unwrap());
        let one_op = compile_one("square_only", |p, x| p.mul(x, x).unwrap());
        let mut g = c.benchmark_group("floor at 16M floats (64 MiB)");
        g.throughput(Throughput::Bytes(4 * big as u64));
        g.sample_size(10);
        g.bench_function("sum alone (reads 64 MiB)", |b| {
            b.iter(|| read(&only_sum.run(&[("x", &xl)], None).unwrap().remove(0).1))
        });
        g.bench_function("x*x alone (reads and writes 64 MiB)", |b| {
            b.iter(|| drained(&one_op))
        });
        g.finish();
        drop(xl);
        let mut g = c.benchmark_group("host memcpy, 64 MiB (read + write)");
        g.throughput(Throughput::Bytes(4 * big as u64));
        g.bench_function("copy_from_slice", |b| {
            b.iter(|| {
                dst.copy_from_slice(std::hint::black_box(&src));
                std::hint::black_box(&dst);
            })
        });
        g.finish();

        // 1000 tiny eager ops.
        let t = s.tensor(&[1.0f32, -2.0, 3.0], &[3]).unwrap();
        let mut g = c.benchmark_group("1000 x square on [3]");
        g.bench_function("plain", |b| {
            b.iter(|| {
                let kept: Vec<Tensor> = (0..1000).map(|_| t.square().unwrap()).collect();
                pollster::block_on(s.sync()).unwrap();
                kept
            })
        });
        g.bench_function("in one tidy", |b| {
            b.iter(|| {
                s.tidy(|| {
                    // results live until the scope ends (the handles drop there, as tidy frees them)
                    let kept: Vec<Tensor> = (0..1000).map(|_| t.square().unwrap()).collect();
                    drop(kept);
                });
                pollster::block_on(s.sync()).unwrap()
            })
        });
        g.bench_function("dispose each", |b| {
            b.iter(|| {
                for _ in 0..1000 {
                    drop(t.square().unwrap());
                }
                pollster::block_on(s.sync()).unwrap()
            })
        });
        g.finish();

        // MobileNet-style block.
        let img = s.random_uniform(&[1, 112, 112, 32], -1.0, 1.0, 2).unwrap();
        let w = block_weights(&s);
        let blk = s.compile(&block_program()).unwrap();
        let mut g = c.benchmark_group("MobileNet block 1x112x112x32");
        g.bench_function("eager", |b| b.iter(|| read(&block_eager(&img, &w))));
        g.bench_function("compiled", |b| {
            b.iter(|| {
                let mut ins: Vec<(String, &Tensor)> =
                    vec![("x".into(), &img), ("dw".into(), &w.dw), ("pw".into(), &w.pw)];
                for (k, set) in w.bn.iter().enumerate() {
                    for (name, t) in ["mean", "variance", "offset", "scale"].iter().zip(set) {
                        ins.push((format!("{name}{k}"), t));
                    }
                }
                let refs: Vec<(&str, &Tensor)> = ins.iter().map(|(n, t)| (n.as_str(), *t)).collect();
                read(&blk.run(&refs, None).unwrap().remove(0).1)
            })
        });
        g.finish();

        // Growing shapes and a host round trip.
        let host: Vec<f32> = (0..200 * 1024).map(|i| (i % 17) as f32).collect();
        let mut g = c.benchmark_group("host round trips");
        g.bench_function("200 growing [i+1, 1024]: create, square, sum, read back", |b| {
            b.iter(|| {
                for i in 0..200 {
                    let x = s.tensor(&host[..(i + 1) * 1024], &[i + 1, 1024]).unwrap();
                    read(&x.square().unwrap().sum(&[], false).unwrap());
                }
            })
        });
        let mib: Vec<f32> = (0..1 << 18).map(|i| (i % 13) as f32).collect();
        g.bench_function("tensor from 1 MiB + square + readback", |b| {
            b.iter(|| read(&s.tensor(&mib, &[1 << 18]).unwrap().square().unwrap()))
        });
        g.finish();

        // One training step.
        let step = s.compile(&train_step()).unwrap();
        let w0 = s.random_normal(&[784, 128], 0.0, 0.05, 3).unwrap();
        let w1 = s.random_normal(&[128, 10], 0.0, 0.1, 4).unwrap();
        let state = step.create_state(&[("w0", &w0), ("w1", &w1)]).unwrap();
        let bx = s.random_normal(&[64, 784], 0.0, 1.0, 5).unwrap();
        let by = s.fill(&[64, 10], 0.1, DType::Float32).unwrap();
        let mut g = c.benchmark_group("training step MLP 784-128-10 batch 64 Adam");
        g.bench_function("compiled (+ loss readback)", |b| {
            b.iter(|| {
                read(
                    &step
                        .run(&[("x", &bx), ("y", &by)], Some(&state))
                        .unwrap()
                        .remove(0)
                        .1,
                )
            })
        });
        g.finish();

        if std::env::var("AFFON_BENCH_LARGE").is_ok_and(|v| v == "1") {
            let mut g = c.benchmark_group("matmul large");
            for n in [1024usize, 2048, 4096] {
                let a = s.random_uniform(&[n, n], -1.0, 1.0, 6).unwrap();
                let b2 = s.random_uniform(&[n, n], -1.0, 1.0, 7).unwrap();
                g.throughput(Throughput::Elements((2 * n * n * n) as u64)); // flops
                g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                    b.iter(|| read(&a.matmul(&b2).unwrap()))
                });
            }
            g.finish();
            // the products' device time: eight queued back to back, then one queue drain (a
            // 4096² readback alone takes longer than the product on a large GPU)
            let mut g = c.benchmark_group("matmul large, 8 products + sync");
            for n in [1024usize, 2048, 4096] {
                let a = s.random_uniform(&[n, n], -1.0, 1.0, 6).unwrap();
                let b2 = s.random_uniform(&[n, n], -1.0, 1.0, 7).unwrap();
                g.throughput(Throughput::Elements((8 * 2 * n * n * n) as u64)); // flops
                g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
                    b.iter(|| {
                        // held until the drain: a dropped result must not let work be skipped
                        let outs: Vec<Tensor> = (0..8).map(|_| a.matmul(&b2).unwrap()).collect();
                        pollster::block_on(s.sync()).unwrap();
                        outs
                    })
                });
            }
            g.finish();
        }
        c.final_summary();
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::run();
}

#[cfg(target_arch = "wasm32")]
fn main() {}
