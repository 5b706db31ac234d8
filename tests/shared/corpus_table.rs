//! The corpus's patterns as data: name, the report it comes from, the expected verdict, the origin
//! its evidence must name, the finding it must list, and one iteration's work.
#![allow(dead_code)]

use affon::telemetry::Verdict::{OwnershipLeak as Leak, PoolRetention, ProcessGrowth, ShapeGrowth, Steady};
use affon::{DType, Program};

use crate::corpus::{pat, Pattern, World};
use crate::programs::running_mean;

type R = affon::Result<()>;

fn tidy_square_sum(w: &mut World, _: u64) -> R {
    let x = &w.x;
    let s = w.s.tidy(|| x.square().and_then(|y| y.sum(&[], false)))?;
    drop(s);
    Ok(())
}

/// The patterns (29).
pub fn patterns() -> Vec<Pattern> {
    vec![
        pat("tfjs-604-loop-without-dispose",
            "TensorFlow.js #604: tensors made in a loop are never disposed and GPU memory climbs",
            Leak, Some("square"), |w, _| {
                let y = w.x.square()?;
                w.kept.push(y);
                Ok(())
            }),
        pat("tfjs-604-fixed-with-tidy",
            "TensorFlow.js #604, fixed: the same loop inside tidy()", Steady, None, tidy_square_sum),
        pat("tfjs-2526-predict-outputs-kept",
            "TensorFlow.js #2526: model.predict() in a loop, the predictions kept", Leak,
            Some("program 'predict' output 'y'"), |w, _| {
                let y = w.run_predict(4)?;
                w.kept.push(y);
                Ok(())
            }),
        pat("tfjs-2526-predict-outputs-disposed",
            "TensorFlow.js #2526, fixed: each prediction disposed after use", Steady, None, |w, _| {
                drop(w.run_predict(4)?);
                Ok(())
            }),
        pat("tfjs-4134-tidy-result-kept",
            "TensorFlow.js #4134: tidy() returns its result, which the caller keeps in a history", Leak,
            Some("add"), |w, _| {
                let x = &w.x;
                let y = w.s.tidy(|| x.square().and_then(|q| q.add(x)))?;
                w.kept.push(y);
                Ok(())
            }),
        Pattern {
            finding: Some("pool-warm-up"),
            ..pat("tfjs-tidy-loop-tiny-tensors",
                "affon issue: a tidy loop on 20-byte tensors was called pool-retention (25.6× a 20 B working set)",
                Steady, None, |w, _| {
                    let t = &w.tiny;
                    drop(w.s.tidy(|| t.square().and_then(|y| y.add(t)))?);
                    Ok(())
                })
        },
        pat("transformers-860-encoder-outputs-cached",
            "transformers.js #860: encoder outputs cached per call and never freed", Leak,
            Some("program 'running_mean' output 'y'"), |w, _| {
                let h = w.run_mean()?;
                w.kept.push(h);
                Ok(())
            }),
        Pattern {
            warmup: 2,
            finding: Some("bounded-growth"),
            ..pat("transformers-860-encoder-cache-bounded",
                "transformers.js #860, fixed: an LRU of the last 6 encoder outputs", Steady, None, |w, _| {
                    let h = w.run_mean()?;
                    w.queue.push_back(h);
                    if w.queue.len() > 6 {
                        w.queue.pop_front();
                    }
                    Ok(())
                })
        },
        pat("transformers-1734-new-kv-cache-per-generate",
            "transformers.js #1734: each generate() allocates a new KV cache that is never disposed", Leak,
            Some("state 'k' of program 'decode'"), |w, _| {
                let cache = w.decode.create_state(&[])?;
                drop(w.generate(&cache, 3)?);
                w.states.push(cache);
                Ok(())
            }),
        pat("transformers-1734-kv-cache-reused",
            "transformers.js #1734, fixed: one KV cache reused by every generate()", Steady, None, |w, _| {
                let st = &w.decode_state;
                drop(w.generate(st, 3)?);
                Ok(())
            }),
        pat("transformers-1739-kv-grows-in-generation-released",
            "transformers.js #1739: the KV cache grows token by token during a generation and is released after",
            Steady, None, |w, _| {
                let mut cache = vec![];
                for t in 1..=6 {
                    cache.push(w.s.ones(&[t * 16, 64], DType::Float32)?);
                }
                drop(cache);
                Ok(())
            }),
        pat("transformers-1739-kv-survives-generations",
            "transformers.js #1739: the per-generation KV cache survives into the next generation", Leak,
            Some("ones"), |w, _| {
                for t in 1..=3 {
                    let k = w.s.ones(&[t * 16, 64], DType::Float32)?;
                    w.kept.push(k);
                }
                Ok(())
            }),
        Pattern {
            warmup: 12,
            ..pat("ort-web-bucket-churn",
                "ONNX Runtime Web: inputs padded to 12 sequence-length buckets; the pool caches each size once",
                PoolRetention, None, |w, i| {
                    let len = 16 * 1024 + (i % 12) as usize * 8 * 1024;
                    let t = w.s.ones(&[len], DType::Float32)?;
                    drop(t.square()?);
                    Ok(())
                })
        },
        Pattern {
            warmup: 4,
            finding: Some("bounded-growth"),
            ..pat("bounded-frame-queue-last-10",
                "camera demos: the last 10 frames' outputs kept in a ring buffer", Steady, None, |w, _| {
                    let y = w.x.square()?;
                    w.queue.push_back(y);
                    if w.queue.len() > 10 {
                        w.queue.pop_front();
                    }
                    Ok(())
                })
        },
        Pattern {
            finding: Some("bounded-growth"),
            ..pat("lazily-built-table",
                "an embedding table built on first use, in the middle of the window", Steady, None, |w, i| {
                    if i == 18 {
                        for _ in 0..20 {
                            let t = w.s.ones(&[1024], DType::Float32)?;
                            w.kept.push(t);
                        }
                    }
                    tidy_square_sum(w, i)
                })
        },
        Pattern {
            finding: Some("runtime-growth"),
            ..pat("mixed-leak-and-js-heap-growth",
                "TensorFlow.js issues where tensors leak while the JS heap also grows: the tensor leak decides",
                Leak, Some("square"), |w, i| {
                    let y = w.x.square()?;
                    w.kept.push(y);
                    w.grow_host(2, i);
                    Ok(())
                })
        },
        Pattern {
            session_only: true,
            ..pat("cross-session-correct-loop-filtered",
                "two models in one page: another session leaks, this session's loop is correct (watch {session})",
                Steady, None, |w, i| {
                    let leak = w.other.ones(&[256], DType::Float32)?;
                    w.kept.push(leak);
                    tidy_square_sum(w, i)
                })
        },
        pat("cross-session-unfiltered",
            "two models in one page, judged process-wide: the other session's leak shows", Leak, Some("ones"),
            |w, i| {
                let leak = w.other.ones(&[256], DType::Float32)?;
                w.kept.push(leak);
                tidy_square_sum(w, i)
            }),
        Pattern {
            warmup: 16,
            ..pat("random-batch-sizes",
                "a server-style loop with random batch sizes (1–32 rows), outputs disposed", Steady, None, |w, _| {
                    let rows = 1 + w.rand(32) as usize;
                    drop(w.run_predict(rows)?);
                    Ok(())
                })
        },
        pat("growing-sequence-length",
            "ONNX Runtime Web / TF.js: the input grows every step ([i+1, 1024])", ShapeGrowth, None, |w, i| {
                let t = w.s.ones(&[i as usize + 1, 1024], DType::Float32)?;
                drop(t.square()?);
                Ok(())
            }),
        pat("forgotten-handles",
            "TensorFlow.js: handles dropped without dispose() (collected by the GC, storage kept accounted)",
            Leak, Some("square"), |w, _| {
                w.x.square()?.forget();
                Ok(())
            }),
        pat("execution-states-retained",
            "old ExecutionState objects kept in a list after each run", Leak,
            Some("state 'acc' of program 'running_mean'"), |w, _| {
                let st = w.mean.create_state(&[])?;
                w.states.push(st);
                Ok(())
            }),
        pat("tfjs-seed-model-recreated-each-epoch",
            "TensorFlow.js memory seed: a model (its weights) recreated every epoch and the old one kept",
            Leak, Some("constant of program 'model'"), |w, _| {
                let mut p = Program::new("model");
                let c = p.constant(&[0.25; 64], &[64], DType::Float32)?;
                let y = p.neg(c)?;
                p.output("y", y)?;
                let exe = w.s.compile(&p)?;
                w.exes.push(exe);
                Ok(())
            }),
        pat("tfjs-seed-loss-history-kept",
            "TensorFlow.js memory seed: each step's loss tensor pushed to a history array (4 bytes a step)",
            Leak, Some("sum"), |w, _| {
                let loss = w.x.sum(&[], false)?;
                w.kept.push(loss);
                Ok(())
            }),
        pat("tfjs-keep-inside-tidy",
            "TensorFlow.js: tf.keep() inside a tidy on every iteration, never disposed", Leak, Some("square"),
            |w, _| {
                let (s, x, kept) = (w.s, &w.x, &mut w.kept);
                s.tidy(|| {
                    let y = x.square()?;
                    s.keep(&y);
                    kept.push(y);
                    Ok(())
                })
            }),
        pat("host-cache-grows-only",
            "a host-side cache (JS heap / wasm memory) grows every iteration; tensors are fine",
            ProcessGrowth, None, |w, i| {
                tidy_square_sum(w, i)?;
                w.grow_host(2, i);
                Ok(())
            }),
        Pattern {
            iterations: 30,
            warmup: 10,
            ..pat("slow-leak-every-tenth",
                "a slow leak: one output in ten kept", Leak, Some("square"), |w, i| {
                    let y = w.x.square()?;
                    if i % 10 == 0 {
                        w.kept.push(y);
                    }
                    Ok(())
                })
        },
        pat("stateful-program-steady",
            "a compiled program with state, outputs disposed every run", Steady, None, |w, _| {
                drop(w.run_mean()?);
                Ok(())
            }),
        pat("kv-cache-fixed-capacity-in-state",
            "a decoder's KV cache of fixed capacity in ExecutionState, updated in place every token",
            Steady, None, |w, _| {
                let st = &w.decode_state;
                drop(w.generate(st, 1)?);
                Ok(())
            }),
    ]
}

/// The corpus's own checks: at least 25 patterns, unique names, every verdict represented.
pub fn check_table() {
    let p = patterns();
    assert!(p.len() >= 25, "{} patterns", p.len());
    let mut names: Vec<&str> = p.iter().map(|p| p.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), p.len(), "pattern names are unique");
    for v in [Leak, PoolRetention, ProcessGrowth, ShapeGrowth, Steady] {
        assert!(p.iter().any(|x| x.expect == v), "{v:?} is represented");
    }
    let _ = running_mean; // the corpus shares the programs of programs.rs
}
