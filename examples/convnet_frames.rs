//! A MobileNet-style convnet over a stream of frames: a 3×3 stride-2 convolution, two depthwise
//! separable blocks (depthwise 3×3 + batchNorm + relu6, pointwise 1×1 + batchNorm + relu6, the
//! first with stride 2), global average pooling and a dense layer with softmax, weights from a
//! fixed seed, over 64×64 RGB frames generated here (a disc moving across a gradient). The compiled
//! network (one Executable: every batchNorm + relu6 runs in its convolution's store) gives the
//! eager path's probabilities; the frame loop is `steady` when each frame's output is disposed,
//! and `ownership-leak` naming the output when outputs are kept in a history array.
//!
//!     cargo run --example convnet_frames

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use affon::ops::{Pad, Pair};
    use affon::program::NodeId;
    use affon::telemetry::{self, Verdict, WatchOptions};
    use affon::{DType, Program, Session, SessionOptions, Tensor};

    pub const SIZE: usize = 64;
    const CLASSES: usize = 10;

    /// `(name, shape)` of every weight, in generation order.
    fn layout() -> Vec<(String, Vec<usize>)> {
        let mut v = vec![("stem".to_string(), vec![3, 3, 3, 16])];
        let bn = |v: &mut Vec<(String, Vec<usize>)>, name: &str, c: usize| {
            for s in ["mean", "var", "offset", "scale"] {
                v.push((format!("{name}_{s}"), vec![c]));
            }
        };
        bn(&mut v, "bn0", 16);
        for (b, (cin, cout)) in [(16, 32), (32, 64)].into_iter().enumerate() {
            v.push((format!("dw{b}"), vec![3, 3, cin, 1]));
            bn(&mut v, &format!("bn{b}a"), cin);
            v.push((format!("pw{b}"), vec![1, 1, cin, cout]));
            bn(&mut v, &format!("bn{b}b"), cout);
        }
        v.push(("dense".to_string(), vec![64, CLASSES]));
        v
    }

    /// The weights from a fixed seed: filters scaled by fan-in, variances in [0.5, 1.5).
    pub fn weights(seed: u64) -> Vec<(String, Vec<usize>, Vec<f64>)> {
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as f64 / (1u64 << 31) as f64
        };
        layout()
            .into_iter()
            .map(|(name, shape)| {
                let n: usize = shape.iter().product();
                let fan_in: usize = shape[..shape.len().saturating_sub(1)]
                    .iter()
                    .product::<usize>()
                    .max(1);
                let data = (0..n)
                    .map(|_| match name.rsplit('_').next() {
                        Some("var") | Some("scale") => 0.5 + next(),
                        Some("mean") | Some("offset") => (next() - 0.5) * 0.2,
                        _ => (next() - 0.5) * 2.0 * (3.0 / fan_in as f64).sqrt(),
                    })
                    .collect();
                (name, shape, data)
            })
            .collect()
    }

    /// The network as a Program: input `frame` `[1, 64, 64, 3]`, output `probs` `[1, 10]`.
    pub fn program(w: &[(String, Vec<usize>, Vec<f64>)]) -> affon::Result<Program> {
        let mut p = Program::new("mobilenet");
        let x = p.input("frame", DType::Float32, &[1, SIZE as i64, SIZE as i64, 3])?;
        let mut c = std::collections::HashMap::new();
        for (name, shape, data) in w {
            c.insert(name.clone(), p.constant(data, shape, DType::Float32)?);
        }
        let bn_relu6 = |p: &mut Program, v: NodeId, bn: &str| -> affon::Result<NodeId> {
            let g = |s: &str| c[&format!("{bn}_{s}")];
            let v = p.batch_norm(v, g("mean"), g("var"), Some(g("offset")), Some(g("scale")), 1e-3)?;
            p.clip_by_value(v, 0.0, 6.0)
        };
        let two = Pair(2, 2);
        let h = p.conv2d(x, c["stem"], two, Pad::SAME, Pair::ONE)?;
        let mut h = bn_relu6(&mut p, h, "bn0")?;
        for (b, stride) in [(0, two), (1, Pair::ONE)] {
            let d = p.depthwise_conv2d(h, c[&format!("dw{b}")], stride, Pad::SAME, Pair::ONE)?;
            let d = bn_relu6(&mut p, d, &format!("bn{b}a"))?;
            let q = p.conv2d(d, c[&format!("pw{b}")], Pair::ONE, Pad::SAME, Pair::ONE)?;
            h = bn_relu6(&mut p, q, &format!("bn{b}b"))?;
        }
        let pooled = p.mean(h, &[1, 2], false)?; // global average pool: [1, 64]
        let logits = p.matmul(pooled, c["dense"])?;
        let probs = p.softmax(logits, -1)?;
        p.output("probs", probs)?;
        Ok(p)
    }

    /// The same network eagerly.
    pub fn eager(s: &Session, w: &[(String, Vec<usize>, Vec<f64>)], frame: &Tensor) -> affon::Result<Tensor> {
        let mut t = std::collections::HashMap::new();
        for (name, shape, data) in w {
            t.insert(name.as_str(), s.tensor_from_f64(data, shape, DType::Float32)?);
        }
        let bn_relu6 = |v: Tensor, bn: &str| -> affon::Result<Tensor> {
            let g = |x: &str| &t[format!("{bn}_{x}").as_str()];
            v.batch_norm(g("mean"), g("var"), Some(g("offset")), Some(g("scale")), 1e-3)?
                .clip_by_value(0.0, 6.0)
        };
        let two = Pair(2, 2);
        let mut h = bn_relu6(frame.conv2d(&t["stem"], two, Pad::SAME, Pair::ONE)?, "bn0")?;
        for (b, stride) in [(0, two), (1, Pair::ONE)] {
            let d = bn_relu6(
                h.depthwise_conv2d(&t[format!("dw{b}").as_str()], stride, Pad::SAME, Pair::ONE)?,
                &format!("bn{b}a"),
            )?;
            h = bn_relu6(
                d.conv2d(&t[format!("pw{b}").as_str()], Pair::ONE, Pad::SAME, Pair::ONE)?,
                &format!("bn{b}b"),
            )?;
        }
        h.mean(&[1, 2], false)?.matmul(&t["dense"])?.softmax(-1)
    }

    /// Frame `i`: a disc moving across a colour gradient, RGB in [0, 1].
    pub fn frame(i: usize) -> Vec<f32> {
        let (cx, cy) = (8.0 + (i * 3 % 48) as f32, 20.0 + (i % 24) as f32);
        let mut px = Vec::with_capacity(SIZE * SIZE * 3);
        for y in 0..SIZE {
            for x in 0..SIZE {
                let inside = ((x as f32 - cx).powi(2) + (y as f32 - cy).powi(2)) < 100.0;
                let g = x as f32 / SIZE as f32;
                px.extend(if inside {
                    [1.0, 0.2, 0.1]
                } else {
                    [g, 1.0 - g, y as f32 / SIZE as f32]
                });
            }
        }
        px
    }

    pub async fn main() -> affon::Result<()> {
        let s = Session::create(SessionOptions {
            label: Some("convnet-frames".into()),
            ..Default::default()
        })
        .await?;
        let w = weights(7);
        let exe = s.compile(&program(&w)?)?;
        let f0 = s.tensor(&frame(0), &[1, SIZE, SIZE, 3])?;
        let compiled = exe
            .run(&[("frame", &f0)], None)?
            .remove(0)
            .1
            .read::<f32>()
            .await?;
        let eager = eager(&s, &w, &f0)?.read::<f32>().await?;
        let diff = compiled
            .iter()
            .zip(&eager)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        println!("frame 0 probabilities: compiled {compiled:.4?}");
        println!("max |compiled − eager| = {diff:.2e}");
        drop(f0);

        // the frame loop: upload, run, read the top class, dispose
        let mut classes = vec![];
        let good = telemetry::watch(&[&s], WatchOptions::new(2, 20), async |i| {
            let f = s.tensor(&frame(i as usize), &[1, SIZE, SIZE, 3])?;
            let probs = exe.run(&[("frame", &f)], None)?.remove(0).1;
            classes.push(probs.arg_max(-1)?.read::<i32>().await?[0]);
            Ok(())
        })
        .await?;
        println!(
            "outputs disposed every frame → {:?}: {}",
            good.verdict, good.summary
        );
        println!("top class per frame: {classes:?}");
        // the leak: every frame's output kept in a history array
        let mut history = vec![];
        let leaky = telemetry::watch(&[&s], WatchOptions::new(2, 20), async |i| {
            let f = s.tensor(&frame(i as usize), &[1, SIZE, SIZE, 3])?;
            history.push(exe.run(&[("frame", &f)], None)?.remove(0).1);
            Ok(())
        })
        .await?;
        println!(
            "outputs kept in a history array → {:?}: {}",
            leaky.verdict, leaky.summary
        );
        let grown: Vec<&str> = leaky
            .evidence
            .iter()
            .filter_map(|e| e.metric.strip_prefix("origin:"))
            .collect();
        let ok = diff < 1e-5
            && good.verdict == Verdict::Steady
            && leaky.verdict == Verdict::OwnershipLeak
            && grown == ["program 'mobilenet' output 'probs'"];
        drop(history);
        if !ok {
            return Err(affon::Error::InvalidArgument(format!(
                "unexpected results (see above; grown: {grown:?})"
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
