//! Training inside a compiled program: an MLP (2-64-64-2, relu) classifies two interleaved spirals
//! generated here (seeded). One `Executable` is the whole training step — forward, `p.grad`
//! backward and Adam — and its parameters and optimizer slots live in one `ExecutionState`.
//! `telemetry.watch` judges the loop from its second step.
//!
//!     cargo run --release --example train_mlp
//!
//! Exits non-zero unless held-out accuracy reaches 95 %, the loop is `steady` and live bytes are
//! identical after every step (the test command runs it).

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use affon::program::Adam;
    use affon::telemetry::{self, Verdict, WatchOptions};
    use affon::{DType, Program, Session, SessionOptions, Tensor};

    /// A small LCG (seeded) so the data is the same everywhere.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// `n` points per class of two spirals (1.5 turns), with noise; labels one-hot.
    pub fn spirals(n: usize, seed: u64) -> (Vec<f32>, Vec<f32>, Vec<usize>) {
        let mut rng = Lcg(seed);
        let (mut xs, mut ys, mut labels) = (vec![], vec![], vec![]);
        for i in 0..n {
            for k in 0..2 {
                let t = (i as f64 + rng.next()) / n as f64;
                let angle = t * 3.0 * std::f64::consts::PI + k as f64 * std::f64::consts::PI;
                let r = 0.1 + 0.9 * t;
                xs.push((r * angle.cos() + 0.02 * (rng.next() - 0.5)) as f32);
                xs.push((r * angle.sin() + 0.02 * (rng.next() - 0.5)) as f32);
                ys.extend([f32::from(k == 0), f32::from(k == 1)]);
                labels.push(k);
            }
        }
        (xs, ys, labels)
    }

    const SIZES: [usize; 4] = [2, 64, 64, 2];

    fn train_step() -> affon::Result<Program> {
        let mut p = Program::new("spirals_step");
        let x = p.input("x", DType::Float32, &[-1, 2])?;
        let y = p.input("y", DType::Float32, &[-1, 2])?;
        let (mut h, mut params) = (x, vec![]);
        for l in 0..3 {
            let w = p.state(&format!("w{l}"), DType::Float32, &[SIZES[l], SIZES[l + 1]])?;
            let b = p.state(&format!("b{l}"), DType::Float32, &[SIZES[l + 1]])?;
            let m = p.matmul(h, w)?;
            h = p.add(m, b)?;
            if l < 2 {
                h = p.relu(h)?;
            }
            params.extend([w, b]);
        }
        // softmax cross-entropy: −mean(Σ y · logSoftmax(logits))
        let ls = p.log_softmax(h, -1)?;
        let t = p.mul(y, ls)?;
        let s = p.sum(t, &[1], false)?;
        let m = p.mean(s, &[], false)?;
        let loss = p.neg(m)?;
        let grads = p.grad(loss, &params)?;
        p.adam(
            &params,
            &grads,
            Adam {
                learning_rate: 0.01,
                ..Adam::default()
            },
        )?;
        p.output("loss", loss)?;
        Ok(p)
    }

    /// Held-out accuracy with eager ops over the trained parameters.
    async fn accuracy(s: &Session, weights: &[Tensor], xs: &[f32], labels: &[usize]) -> affon::Result<f64> {
        let mut h = s.tensor(xs, &[labels.len(), 2])?;
        for l in 0..3 {
            h = h.matmul(&weights[2 * l])?.add(&weights[2 * l + 1])?;
            if l < 2 {
                h = h.relu()?;
            }
        }
        let predicted = h.arg_max(-1)?.read::<i32>().await?;
        let hits = predicted
            .iter()
            .zip(labels)
            .filter(|(p, l)| **p as usize == **l)
            .count();
        Ok(hits as f64 / labels.len() as f64)
    }

    pub async fn main() -> affon::Result<()> {
        let session = Session::create(SessionOptions {
            label: Some("train-mlp".into()),
            ..Default::default()
        })
        .await?;
        let exe = session.compile(&train_step()?)?;
        let init: Vec<(String, Tensor)> = (0..3)
            .map(|l| {
                let std = (2.0 / SIZES[l] as f64).sqrt();
                let w = session.random_normal(&[SIZES[l], SIZES[l + 1]], 0.0, std, 7 + l as u64)?;
                Ok((format!("w{l}"), w))
            })
            .collect::<affon::Result<_>>()?;
        let refs: Vec<(&str, &Tensor)> = init.iter().map(|(n, t)| (n.as_str(), t)).collect();
        let state = exe.create_state(&refs)?; // biases and Adam's slots start at zero
        drop(init);
        let (xs, ys, _) = spirals(200, 1);
        let n = ys.len() / 2;
        let (x, y) = (session.tensor(&xs, &[n, 2])?, session.tensor(&ys, &[n, 2])?);
        println!(
            "training state: {} bytes (parameters and Adam's slots)",
            state.byte_length()
        );

        let steps = 400;
        let mut losses = vec![];
        let mut live_after = vec![];
        let mut bind_groups = vec![];
        let d = telemetry::watch(&[&session], WatchOptions::new(1, steps - 1), async |i| {
            let out = exe.run(&[("x", &x), ("y", &y)], Some(&state))?;
            if i % 50 == 0 {
                losses.push((i, out[0].1.read::<f32>().await?[0]));
            }
            drop(out);
            live_after.push(session.stats().live_bytes);
            bind_groups.push(session.stats().bind_group_cache_entries);
            Ok(())
        })
        .await?;
        for (i, l) in &losses {
            println!("step {i:>4}: loss {l:.4}");
        }
        let weights: Vec<Tensor> = (0..3)
            .flat_map(|l| [format!("w{l}"), format!("b{l}")])
            .map(|name| state.get(&name))
            .collect::<affon::Result<_>>()?;
        let (tx, _, tl) = spirals(100, 2);
        let acc = accuracy(&session, &weights, &tx, &tl).await?;
        println!("held-out accuracy: {:.1} % ({} points)", acc * 100.0, tl.len());
        println!("watch: {:?} — {}", d.verdict, d.summary);
        let flat = live_after.windows(2).all(|w| w[0] == w[1]);
        // the pool's best fit settles which buffer each slot gets within a few steps; from then
        // on a step binds only bind groups it made before (no per-step object for the bindings)
        let settled = bind_groups[steps as usize / 4];
        let rebound = bind_groups[bind_groups.len() - 1] - settled;
        println!(
            "bind groups cached by step {}: {settled}, new after it: {rebound}",
            steps / 4
        );
        println!(
            "live bytes after every step: {} ({})",
            live_after[0],
            if flat { "identical" } else { "NOT identical" }
        );
        if acc < 0.95 || d.verdict != Verdict::Steady || !flat || rebound != 0 {
            return Err(affon::Error::InvalidArgument(format!(
                "expected ≥ 95 % accuracy, a steady loop, flat live bytes and no new bind group after the first quarter; got {:.1} %, {:?}, flat = {flat}, {rebound} new",
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
