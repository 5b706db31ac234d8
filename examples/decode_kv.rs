//! Transformer decoding with a KV cache held in ExecutionState: a small decoder-only model
//! (embedding via `gather`, `layerNorm`, two-head causal attention masked with `where`, a `gelu`
//! MLP, greedy `argMax`) with weights generated from a fixed seed. One compiled step takes a token
//! and its position, writes that position's keys and values into the per-layer caches (fixed
//! capacity, rewritten in place: `where(row == pos, new, cache)`), attends over the cache, and
//! returns the next token. The same tokens come out of an eager path that recomputes attention
//! over the whole prefix each step (no cache). Then the transformers.js #1734 leak: a new cache
//! (ExecutionState) per `generate` call, never disposed — `ownership-leak` naming the cache — and
//! the fix: one cache reused, memory back to the same figure after every generation.
//!
//!     cargo run --example decode_kv

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use affon::program::NodeId;
    use affon::telemetry::{self, Verdict, WatchOptions};
    use affon::{DType, Program, Session, SessionOptions, Tensor};

    const VOCAB: usize = 48;
    const D: usize = 32;
    const HEADS: usize = 2;
    const DH: usize = D / HEADS;
    const LAYERS: usize = 2;
    const HIDDEN: usize = 64;
    /// Cache capacity: positions a generation may reach.
    pub const CAPACITY: usize = 64;

    /// Weights from a fixed seed (a linear congruential generator: the same numbers everywhere).
    pub struct Weights {
        emb: Vec<f64>,
        /// The output projection `[D, VOCAB]`.
        unemb: Vec<f64>,
        layers: Vec<[Vec<f64>; 6]>, // wq, wk, wv, wo, w1, w2
    }

    pub fn weights(seed: u64) -> Weights {
        let mut state = seed;
        let mut draw = |n: usize, scale: f64| -> Vec<f64> {
            (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ((state >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 2.0 * scale
                })
                .collect()
        };
        let emb = draw(VOCAB * D, 1.0);
        let unemb = draw(D * VOCAB, 3.0);
        let s = 2.0 / (D as f64).sqrt();
        let layers = (0..LAYERS)
            .map(|_| {
                [
                    draw(D * D, s),
                    draw(D * D, s),
                    draw(D * D, s),
                    draw(D * D, s),
                    draw(D * HIDDEN, s),
                    draw(HIDDEN * D, 1.0 / (HIDDEN as f64).sqrt()),
                ]
            })
            .collect();
        Weights { emb, unemb, layers }
    }

    /// One decoding step: inputs `token` (int32 `[1]`) and `pos` (int32 `[]`); states `k{l}`,
    /// `v{l}` (`[CAPACITY, D]`); outputs `next` (int32 `[1]`).
    pub fn step_program(w: &Weights) -> affon::Result<Program> {
        let mut p = Program::new("decode");
        let token = p.input("token", DType::Int32, &[1])?;
        let pos = p.input("pos", DType::Int32, &[])?;
        let emb = p.constant(&w.emb, &[VOCAB, D], DType::Float32)?;
        let ones = p.constant(&[1.0; D], &[D], DType::Float32)?;
        let zeros = p.constant(&[0.0; D], &[D], DType::Float32)?;
        let rows: Vec<f64> = (0..CAPACITY).map(|i| i as f64).collect();
        let iota = p.constant(&rows, &[CAPACITY], DType::Float32)?;
        let posf = p.cast(pos, DType::Float32)?;
        let here = p.equal(iota, posf)?; // [C]: the row this step writes
        let here = p.reshape(here, vec![CAPACITY as i64, 1])?;
        let seen = p.less_equal(iota, posf)?; // [C]: rows attention may read
        let neg = p.constant(&[-1e9], &[], DType::Float32)?;
        let zero = p.constant(&[0.0], &[], DType::Float32)?;
        let mask = p.select(zero, seen, neg)?; // 0 where seen, −1e9 after pos
        let scale = p.constant(&[1.0 / (DH as f64).sqrt()], &[], DType::Float32)?;
        let mut x = p.gather(emb, token, 0)?; // [1, D]
        for (l, lw) in w.layers.iter().enumerate() {
            let c = |p: &mut Program, i: usize, shape: &[usize]| p.constant(&lw[i], shape, DType::Float32);
            let (wq, wk, wv, wo) = (
                c(&mut p, 0, &[D, D])?,
                c(&mut p, 1, &[D, D])?,
                c(&mut p, 2, &[D, D])?,
                c(&mut p, 3, &[D, D])?,
            );
            let (w1, w2) = (c(&mut p, 4, &[D, HIDDEN])?, c(&mut p, 5, &[HIDDEN, D])?);
            let h = p.layer_norm(x, ones, zeros, 1e-5)?;
            let (q, k, v) = (p.matmul(h, wq)?, p.matmul(h, wk)?, p.matmul(h, wv)?);
            // write this position's row of each cache; the run's other rows are unchanged
            let mut caches: Vec<NodeId> = vec![];
            for (name, new) in [(format!("k{l}"), k), (format!("v{l}"), v)] {
                let cache = p.state(&name, DType::Float32, &[CAPACITY, D])?;
                let updated = p.select(new, here, cache)?;
                p.assign(&name, updated)?;
                caches.push(updated);
            }
            let heads = |p: &mut Program, t: NodeId, n: usize| -> affon::Result<NodeId> {
                let t = p.reshape(t, vec![n as i64, HEADS as i64, DH as i64])?;
                p.transpose(t, Some(vec![1, 0, 2])) // [H, n, DH]
            };
            let (qh, kh, vh) = (
                heads(&mut p, q, 1)?,
                heads(&mut p, caches[0], CAPACITY)?,
                heads(&mut p, caches[1], CAPACITY)?,
            );
            let scores = p.matmul_t(qh, kh, false, true)?; // [H, 1, C]
            let scores = p.mul(scores, scale)?;
            let scores = p.add(scores, mask)?;
            let attn = p.softmax(scores, -1)?;
            let o = p.matmul(attn, vh)?; // [H, 1, DH]
            let o = p.transpose(o, Some(vec![1, 0, 2]))?;
            let o = p.reshape(o, vec![1, D as i64])?;
            let o = p.matmul(o, wo)?;
            x = p.add(x, o)?;
            let h = p.layer_norm(x, ones, zeros, 1e-5)?;
            let m = p.matmul(h, w1)?;
            let m = p.gelu(m)?;
            let m = p.matmul(m, w2)?;
            x = p.add(x, m)?;
        }
        let h = p.layer_norm(x, ones, zeros, 1e-5)?;
        let unemb = p.constant(&w.unemb, &[D, VOCAB], DType::Float32)?;
        let logits = p.matmul(h, unemb)?; // [1, VOCAB]
        let next = p.arg_max(logits, -1)?;
        p.output("next", next)?;
        Ok(p)
    }

    /// Greedy decoding of `steps` tokens after `prompt` with the compiled step and a cache `state`:
    /// the tokens, and the step's prediction at every position (over the prompt too).
    pub async fn generate(
        s: &Session,
        exe: &affon::Executable,
        state: &affon::ExecutionState,
        prompt: &[i32],
        steps: usize,
    ) -> affon::Result<(Vec<i32>, Vec<i32>)> {
        let mut tokens = prompt.to_vec();
        let mut predicted = vec![];
        for pos in 0..prompt.len() + steps - 1 {
            if pos >= prompt.len() {
                tokens.push(predicted[pos - 1]);
            }
            let (t, at) = (s.tensor(&[tokens[pos]], &[1])?, s.tensor(&[pos as i32], &[])?);
            let out = exe.run(&[("token", &t), ("pos", &at)], Some(state))?;
            predicted.push(out[0].1.read::<i32>().await?[0]);
        }
        tokens.push(predicted[predicted.len() - 1]);
        Ok((tokens, predicted))
    }

    /// The same model eagerly, without a cache: each step recomputes attention over the prefix. The
    /// tokens, and the prediction at every prompt position (from the first step's rows).
    pub async fn generate_eager(
        s: &Session,
        w: &Weights,
        prompt: &[i32],
        steps: usize,
    ) -> affon::Result<(Vec<i32>, Vec<i32>)> {
        let mut over_prompt = vec![];
        let f = |data: &[f64], shape: &[usize]| s.tensor_from_f64(data, shape, DType::Float32);
        let emb = f(&w.emb, &[VOCAB, D])?;
        let (ones, zeros) = (s.ones(&[D], DType::Float32)?, s.zeros(&[D], DType::Float32)?);
        let mut tokens = prompt.to_vec();
        while tokens.len() < prompt.len() + steps {
            let n = tokens.len();
            let ids = s.tensor(&tokens, &[n])?;
            let mut x = emb.gather(&ids, 0)?; // [n, D]
            let causal: Vec<f64> = (0..n * n)
                .map(|i| if i % n <= i / n { 0.0 } else { -1e9 })
                .collect();
            let causal = f(&causal, &[n, n])?;
            for lw in &w.layers {
                let c = |i: usize, shape: &[usize]| f(&lw[i], shape);
                let h = x.layer_norm(&ones, &zeros, 1e-5)?;
                let heads = |t: Tensor| {
                    t.reshape(vec![n as i64, HEADS as i64, DH as i64])?
                        .transpose(Some(vec![1, 0, 2]))
                };
                let q = heads(h.matmul(&c(0, &[D, D])?)?)?;
                let k = heads(h.matmul(&c(1, &[D, D])?)?)?;
                let v = heads(h.matmul(&c(2, &[D, D])?)?)?;
                let scores = q
                    .matmul_t(&k, false, true)?
                    .binary_scalar(affon::ops::BinaryOp::Mul, 1.0 / (DH as f64).sqrt())?
                    .add(&causal)?;
                let o = scores.softmax(-1)?.matmul(&v)?.transpose(Some(vec![1, 0, 2]))?;
                x = x.add(&o.reshape(vec![n as i64, D as i64])?.matmul(&c(3, &[D, D])?)?)?;
                let h = x.layer_norm(&ones, &zeros, 1e-5)?;
                x = x.add(
                    &h.matmul(&c(4, &[D, HIDDEN])?)?
                        .gelu()?
                        .matmul(&c(5, &[HIDDEN, D])?)?,
                )?;
            }
            let logits = x
                .layer_norm(&ones, &zeros, 1e-5)?
                .matmul(&f(&w.unemb, &[D, VOCAB])?)?;
            let next = logits.arg_max(-1)?.read::<i32>().await?;
            if n == prompt.len() {
                over_prompt = next.clone();
            }
            tokens.push(next[n - 1]);
        }
        Ok((tokens, over_prompt))
    }

    pub async fn main() -> affon::Result<()> {
        let s = Session::create(SessionOptions {
            label: Some("decode-kv".into()),
            ..Default::default()
        })
        .await?;
        let w = weights(42);
        let exe = s.compile(&step_program(&w)?)?;
        let prompt = [
            3, 14, 15, 9, 26, 5, 35, 8, 47, 40, 2, 11, 7, 19, 33, 28, 21, 44, 1, 30,
        ];
        let steps = 12;
        let cache = exe.create_state(&[])?;
        println!(
            "KV cache: {} bytes ({LAYERS} layers × K and V × {CAPACITY} × {D} floats)",
            cache.byte_length()
        );
        let (compiled, predicted) = generate(&s, &exe, &cache, &prompt, steps).await?;
        let (eager, over_prompt) = generate_eager(&s, &w, &prompt, steps).await?;
        println!("compiled, KV cache: {compiled:?}");
        println!("eager, no cache:    {eager:?}");
        println!(
            "next-token predictions over the prompt: compiled {:?}",
            &predicted[..prompt.len()]
        );
        println!("                                        eager    {over_prompt:?}");
        if compiled != eager || predicted[..prompt.len()] != over_prompt[..] {
            return Err(affon::Error::InvalidArgument("the two paths disagree".into()));
        }

        // The leak: a new cache per generation, never disposed (here: dropped only after the watch).
        let mut abandoned = vec![];
        let leaky = telemetry::watch(&[&s], WatchOptions::new(1, 5), async |_| {
            let cache = exe.create_state(&[])?;
            generate(&s, &exe, &cache, &prompt, 4).await?;
            abandoned.push(cache);
            Ok(())
        })
        .await?;
        drop(abandoned);
        let grown: Vec<&str> = leaky
            .evidence
            .iter()
            .filter_map(|e| e.metric.strip_prefix("origin:"))
            .collect();
        println!(
            "a new cache per generate call → {:?}: {} (grown: {grown:?})",
            leaky.verdict, leaky.summary
        );
        // The fix: one cache, reused; memory is the same figure after every generation.
        let mut after = vec![];
        let fixed = telemetry::watch(&[&s], WatchOptions::new(1, 5), async |_| {
            generate(&s, &exe, &cache, &prompt, 4).await?;
            after.push(s.memory().num_bytes);
            Ok(())
        })
        .await?;
        println!(
            "one cache reused → {:?}: {}; bytes after each generation: {after:?}",
            fixed.verdict, fixed.summary
        );
        let leak_named = grown
            .iter()
            .any(|o| o.starts_with("state 'k0' of program 'decode'"));
        if leaky.verdict != Verdict::OwnershipLeak
            || !leak_named
            || fixed.verdict != Verdict::Steady
            || after.windows(2).any(|w| w[0] != w[1])
        {
            return Err(affon::Error::InvalidArgument(
                "unexpected verdicts (see above)".into(),
            ));
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
