//! A small convnet trained inside one compiled step: conv2d → relu → maxPool → conv2d → relu →
//! maxPool → dense, on 28×28 images of three shapes (hollow squares, discs, crosses) drawn here with
//! a fixed seed. Forward, `p.grad` backward (the convolution and pooling gradients have kernels of
//! their own) and Adam are one `run`; `telemetry.watch` judges the loop from its second step.
//!
//!     cargo run --release --example train_convnet
//!
//! Exits non-zero unless held-out accuracy reaches 90 %, the loop is `steady` and live bytes are
//! identical after every step (the test command runs it).

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use affon::ops::{Pad, Pair};
    use affon::program::Adam;
    use affon::telemetry::{self, Verdict, WatchOptions};
    use affon::{DType, Program, Session, SessionOptions, Tensor};

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
        fn int(&mut self, lo: i32, hi: i32) -> i32 {
            lo + (self.next() * (hi - lo + 1) as f64) as i32
        }
    }

    const S: usize = 28;

    /// `n` images (`[n, 28, 28, 1]`, values in [0, 1]) cycling through the three classes.
    pub fn shapes(n: usize, seed: u64) -> (Vec<f32>, Vec<usize>) {
        let mut rng = Lcg(seed);
        let (mut px, mut labels) = (vec![0f32; n * S * S], vec![]);
        for k in 0..n {
            let class = k % 3;
            let (cx, cy, r) = (rng.int(9, 18), rng.int(9, 18), rng.int(4, 8));
            let img = &mut px[k * S * S..(k + 1) * S * S];
            for y in 0..S as i32 {
                for x in 0..S as i32 {
                    let (dx, dy) = (x - cx, y - cy);
                    let on = match class {
                        0 => dx.abs().max(dy.abs()) == r || dx.abs().max(dy.abs()) == r - 1, // hollow square
                        1 => dx * dx + dy * dy <= r * r,                                     // disc
                        _ => (dx.abs() <= 1 && dy.abs() <= r) || (dy.abs() <= 1 && dx.abs() <= r), // cross
                    };
                    img[(y as usize) * S + x as usize] = if on { 0.8 } else { 0.0 } + 0.2 * rng.next() as f32;
                }
            }
            labels.push(class);
        }
        (px, labels)
    }

    fn one_hot(labels: &[usize]) -> Vec<f32> {
        labels
            .iter()
            .flat_map(|&l| (0..3).map(move |k| f32::from(k == l)))
            .collect()
    }

    /// The training step: forward (its logits are an output too), loss, gradients, Adam.
    fn train_step() -> affon::Result<Program> {
        let mut p = Program::new("convnet_step");
        let x = p.input("x", DType::Float32, &[-1, 28, 28, 1])?;
        let y = p.input("y", DType::Float32, &[-1, 3])?;
        let k1 = p.state("k1", DType::Float32, &[3, 3, 1, 8])?;
        let c1 = p.state("c1", DType::Float32, &[8])?;
        let k2 = p.state("k2", DType::Float32, &[3, 3, 8, 16])?;
        let c2 = p.state("c2", DType::Float32, &[16])?;
        let w = p.state("w", DType::Float32, &[7 * 7 * 16, 3])?;
        let b = p.state("b", DType::Float32, &[3])?;
        let h = p.conv2d(x, k1, Pair::ONE, Pad::SAME, Pair::ONE)?;
        let h = p.add(h, c1)?;
        let h = p.relu(h)?;
        let h = p.max_pool(h, Pair(2, 2), Pair(2, 2), Pad::VALID)?;
        let h = p.conv2d(h, k2, Pair::ONE, Pad::SAME, Pair::ONE)?;
        let h = p.add(h, c2)?;
        let h = p.relu(h)?;
        let h = p.max_pool(h, Pair(2, 2), Pair(2, 2), Pad::VALID)?;
        let h = p.reshape(h, vec![-1, 7 * 7 * 16])?;
        let m = p.matmul(h, w)?;
        let logits = p.add(m, b)?;
        p.output("logits", logits)?;
        let ls = p.log_softmax(logits, -1)?;
        let t = p.mul(y, ls)?;
        let s = p.sum(t, &[1], false)?;
        let mean = p.mean(s, &[], false)?;
        let loss = p.neg(mean)?;
        let params = [k1, c1, k2, c2, w, b];
        let grads = p.grad(loss, &params)?;
        p.adam(
            &params,
            &grads,
            Adam {
                learning_rate: 0.005,
                ..Adam::default()
            },
        )?;
        p.output("loss", loss)?;
        Ok(p)
    }

    pub async fn main() -> affon::Result<()> {
        let session = Session::create(SessionOptions {
            label: Some("train-convnet".into()),
            ..Default::default()
        })
        .await?;
        let exe = session.compile(&train_step()?)?;
        let he = |shape: &[usize], fan_in: usize, seed: u64| {
            session.random_normal(shape, 0.0, (2.0 / fan_in as f64).sqrt(), seed)
        };
        let (k1, k2, w) = (
            he(&[3, 3, 1, 8], 9, 1)?,
            he(&[3, 3, 8, 16], 72, 2)?,
            he(&[784, 3], 784, 3)?,
        );
        let state = exe.create_state(&[("k1", &k1), ("k2", &k2), ("w", &w)])?;
        drop((k1, k2, w));
        println!(
            "training state: {} bytes (parameters and Adam's slots)",
            state.byte_length()
        );

        let batch = 32;
        let (px, labels) = shapes(batch * 20, 11);
        let batches: Vec<(Tensor, Tensor)> = (0..20)
            .map(|i| {
                let x = session.tensor(&px[i * batch * S * S..(i + 1) * batch * S * S], &[batch, S, S, 1])?;
                let y = session.tensor(&one_hot(&labels[i * batch..(i + 1) * batch]), &[batch, 3])?;
                Ok((x, y))
            })
            .collect::<affon::Result<_>>()?;
        let steps = 200;
        let mut live_after = vec![];
        let mut losses = vec![];
        let d = telemetry::watch(&[&session], WatchOptions::new(1, steps - 1), async |i| {
            let (x, y) = &batches[i as usize % batches.len()];
            let out = exe.run(&[("x", x), ("y", y)], Some(&state))?;
            if i % 25 == 0 {
                losses.push((i, out[1].1.read::<f32>().await?[0]));
            }
            drop(out);
            live_after.push(session.stats().live_bytes);
            Ok(())
        })
        .await?;
        for (i, l) in &losses {
            println!("step {i:>4}: loss {l:.4}");
        }
        // held-out accuracy: the same executable's logits (labels are not read by them)
        let (tx, tl) = shapes(300, 99);
        let x = session.tensor(&tx, &[300, S, S, 1])?;
        let y = session.tensor(&one_hot(&tl), &[300, 3])?;
        // a second state holding the trained values, so evaluating does not train the first
        let names = ["k1", "c1", "k2", "c2", "w", "b"];
        let trained: Vec<Tensor> = names.iter().map(|n| state.get(n)).collect::<affon::Result<_>>()?;
        let refs: Vec<(&str, &Tensor)> = names.iter().copied().zip(&trained).collect();
        let eval_state = exe.create_state(&refs)?;
        let out = exe.run(&[("x", &x), ("y", &y)], Some(&eval_state))?;
        let predicted = out[0].1.arg_max(-1)?.read::<i32>().await?;
        let acc = predicted
            .iter()
            .zip(&tl)
            .filter(|(p, l)| **p as usize == **l)
            .count() as f64
            / tl.len() as f64;
        println!("held-out accuracy: {:.1} % ({} images)", acc * 100.0, tl.len());
        println!("watch: {:?} — {}", d.verdict, d.summary);
        let flat = live_after.windows(2).all(|w| w[0] == w[1]);
        println!(
            "live bytes after every step: {} ({})",
            live_after[0],
            if flat { "identical" } else { "NOT identical" }
        );
        if acc < 0.9 || d.verdict != Verdict::Steady || !flat {
            return Err(affon::Error::InvalidArgument(format!(
                "expected ≥ 90 % accuracy, a steady loop and flat live bytes; got {:.1} %, {:?}, flat = {flat}",
                acc * 100.0,
                d.verdict
            )));
        }
        Ok(())
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> affon::Result<()> {
    pollster::block_on(native::main())
}

#[cfg(target_arch = "wasm32")]
fn main() {}
