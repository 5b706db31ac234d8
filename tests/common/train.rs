//! Optimizers inside programs against a float64 reference of TF.js's update formulas over several
//! steps (`L = Σ c·w²`, so `∂L/∂w = 2cw` feeds each step's parameters back), their slot states
//! (zero-filled, counted, readable), the rejections, and a training step's memory: the measured peak
//! equals the plan and a warm step allocates nothing. Both targets (`native_gpu.rs`, `web.rs`).
//!
//! Tolerance: `|got − want| ≤ 1e-5·|want| + 1e-6` (float32 arithmetic of a few ops per step).

use std::collections::HashMap;

use affon::program::{Adam, Sgd};
use affon::{DType, Program, Session};

use super::ledger::fails_unchanged;
use super::ops::Rng;

const STEPS: usize = 4;

enum Opt {
    Sgd(Sgd),
    Adam(Adam),
}

/// `w` after each of `STEPS` steps, and the slots at the end, in float64.
fn reference(w0: &[f64], c: &[f64], opt: &Opt) -> (Vec<f64>, HashMap<&'static str, Vec<f64>>) {
    let n = w0.len();
    let (mut w, mut s1, mut s2) = (w0.to_vec(), vec![0.0; n], vec![0.0; n]);
    for t in 1..=STEPS {
        let g: Vec<f64> = (0..n).map(|i| 2.0 * c[i] * w[i]).collect();
        for i in 0..n {
            match opt {
                Opt::Sgd(o) if o.momentum == 0.0 => w[i] -= o.learning_rate * g[i],
                Opt::Sgd(o) => {
                    s1[i] = o.momentum * s1[i] + g[i];
                    w[i] -= o.learning_rate * s1[i];
                }
                Opt::Adam(o) => {
                    s1[i] = o.beta1 * s1[i] + (1.0 - o.beta1) * g[i];
                    s2[i] = o.beta2 * s2[i] + (1.0 - o.beta2) * g[i] * g[i];
                    let mh = s1[i] / (1.0 - o.beta1.powi(t as i32));
                    let vh = s2[i] / (1.0 - o.beta2.powi(t as i32));
                    w[i] -= o.learning_rate * mh / (vh.sqrt() + o.epsilon);
                }
            }
        }
    }
    let slots = match opt {
        Opt::Sgd(o) if o.momentum == 0.0 => HashMap::new(),
        Opt::Sgd(_) => HashMap::from([("w/velocity", s1)]),
        Opt::Adam(_) => HashMap::from([("w/m", s1), ("w/v", s2), ("adam/t", vec![STEPS as f64])]),
    };
    (w, slots)
}

fn close(what: &str, got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-5 * w.abs() + 1e-6;
        assert!(
            (g as f64 - w).abs() <= tol,
            "{what}[{i}]: got {g}, want {w} (tolerance {tol:e})"
        );
    }
}

async fn read(t: affon::Result<affon::Tensor>) -> Vec<f32> {
    t.unwrap().read::<f32>().await.unwrap()
}

/// SGD, SGD with momentum and Adam (defaults and others) over `STEPS` steps.
pub async fn optimizers_match_reference(s: &Session) {
    let mut rng = Rng::new(0x0097_0001);
    let w0: Vec<f32> = (0..5).map(|_| rng.f32_in(-2.0, 2.0)).collect();
    let c: Vec<f32> = (0..5).map(|_| rng.f32_in(0.2, 1.5)).collect();
    let f64s = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
    let opts = [
        (
            "sgd",
            Opt::Sgd(Sgd {
                learning_rate: 0.1,
                momentum: 0.0,
            }),
        ),
        (
            "sgd momentum",
            Opt::Sgd(Sgd {
                learning_rate: 0.05,
                momentum: 0.9,
            }),
        ),
        ("adam defaults", Opt::Adam(Adam::default())),
        (
            "adam",
            Opt::Adam(Adam {
                learning_rate: 0.05,
                beta1: 0.8,
                beta2: 0.99,
                epsilon: 1e-6,
            }),
        ),
    ];
    for (name, opt) in &opts {
        let mut p = Program::new(name);
        let w = p.state("w", DType::Float32, &[5]).unwrap();
        let ci = p.constant(&f64s(&c), &[5], DType::Float32).unwrap();
        let ww = p.mul(w, w).unwrap();
        let t = p.mul(ww, ci).unwrap();
        let l = p.sum(t, &[], false).unwrap();
        let g = p.grad(l, &[w]).unwrap();
        match opt {
            Opt::Sgd(o) => p.sgd(&[w], &g, *o).unwrap(),
            Opt::Adam(o) => p.adam(&[w], &g, *o).unwrap(),
        }
        p.output("loss", l).unwrap();
        let exe = s.compile(&p).unwrap();
        let init = s.tensor(&w0, &[5]).unwrap();
        let state = exe.create_state(&[("w", &init)]).unwrap();
        let (want_w, want_slots) = reference(&f64s(&w0), &f64s(&c), opt);
        let slot_bytes: u64 = want_slots.values().map(|v| v.len() as u64 * 4).sum();
        assert_eq!(
            state.byte_length(),
            20 + slot_bytes,
            "{name}: the slots are counted in byteLength"
        );
        for slot in want_slots.keys() {
            let zeros = read(state.get(slot)).await;
            assert!(zeros.iter().all(|&v| v == 0.0), "{name}: {slot} starts at zero");
        }
        for _ in 0..STEPS {
            drop(exe.run(&[], Some(&state)).unwrap());
        }
        close(
            &format!("{name}: w after {STEPS} steps"),
            &read(state.get("w")).await,
            &want_w,
        );
        for (slot, want) in &want_slots {
            close(&format!("{name}: {slot}"), &read(state.get(slot)).await, want);
        }
    }
    optimizer_rejections();
}

fn optimizer_rejections() {
    let mut p = Program::new("bad");
    let w = p.state("w", DType::Float32, &[3]).unwrap();
    let x = p.input("x", DType::Float32, &[3]).unwrap();
    let t = p.mul(w, x).unwrap();
    let l = p.sum(t, &[], false).unwrap();
    let g = p.grad(l, &[w, x]).unwrap();
    let n = p.nodes().len();
    let opts = Sgd {
        learning_rate: 0.1,
        momentum: 0.5,
    };
    let code = |r: affon::Result<()>| r.unwrap_err().code();
    assert_eq!(
        code(p.sgd(&[w], &g, opts)),
        "INVALID_PROGRAM",
        "one gradient per state"
    );
    assert_eq!(
        code(p.sgd(&[x], &g[1..], opts)),
        "INVALID_PROGRAM",
        "an input is not a state"
    );
    assert_eq!(
        code(p.sgd(&[w], &[l], opts)),
        "SHAPE_MISMATCH",
        "the gradient has the state's shape"
    );
    assert_eq!(p.nodes().len(), n, "rejected optimizers add nothing");
    p.adam(&[w], &g[..1], Adam::default()).unwrap();
    let e = p.assign("w", t).unwrap_err();
    assert_eq!(e.code(), "INVALID_PROGRAM", "assigning a state adam updates: {e}");
    let n = p.nodes().len();
    assert_eq!(
        code(p.adam(&[w], &g[..1], Adam::default())),
        "INVALID_PROGRAM",
        "adam updates w already"
    );
    assert_eq!(p.nodes().len(), n);
    let v = p.state("v", DType::Float32, &[3]).unwrap();
    let gv = p.grad(l, &[v]).unwrap(); // not on the loss's path: zeros
    let n = p.nodes().len();
    assert_eq!(
        code(p.adam(&[v], &gv, Adam::default())),
        "INVALID_PROGRAM",
        "one adam per program"
    );
    assert_eq!(p.nodes().len(), n, "a rejected adam adds nothing");
}

/// A dense softmax classifier's training step with Adam: the measured peak is the plan's, and a
/// warm step acquires no new buffer (pool hits only); only the loss is left when it returns.
pub async fn training_step_memory_is_planned(s: &Session) {
    let mut rng = Rng::new(0x57E9);
    let mut p = Program::new("train_step");
    let x = p.input("x", DType::Float32, &[-1, 8]).unwrap();
    let y = p.input("y", DType::Float32, &[-1, 3]).unwrap();
    let w1 = p.state("w1", DType::Float32, &[8, 16]).unwrap();
    let b1 = p.state("b1", DType::Float32, &[16]).unwrap();
    let w2 = p.state("w2", DType::Float32, &[16, 3]).unwrap();
    let h = p.matmul(x, w1).unwrap();
    let h = p.add(h, b1).unwrap();
    let h = p.relu(h).unwrap();
    let logits = p.matmul(h, w2).unwrap();
    let ls = p.log_softmax(logits, -1).unwrap();
    let t = p.mul(y, ls).unwrap();
    let ce = p.sum(t, &[1], false).unwrap();
    let m = p.mean(ce, &[], false).unwrap();
    let loss = p.neg(m).unwrap();
    let g = p.grad(loss, &[w1, b1, w2]).unwrap();
    p.adam(
        &[w1, b1, w2],
        &g,
        Adam {
            learning_rate: 0.01,
            ..Adam::default()
        },
    )
    .unwrap();
    p.output("loss", loss).unwrap();
    let exe = s.compile(&p).unwrap();
    let init = |shape: &[usize], rng: &mut Rng| {
        let n: usize = shape.iter().product();
        s.tensor(&(0..n).map(|_| rng.f32_in(-0.3, 0.3)).collect::<Vec<_>>(), shape)
            .unwrap()
    };
    let (i1, i2) = (init(&[8, 16], &mut rng), init(&[16, 3], &mut rng));
    let state = exe.create_state(&[("w1", &i1), ("w2", &i2)]).unwrap();
    let batch = 32;
    let xs = init(&[batch, 8], &mut rng);
    let labels: Vec<f32> = (0..batch * 3).map(|i| f32::from(i % 3 == (i / 3) % 3)).collect();
    let ys = s.tensor(&labels, &[batch, 3]).unwrap();
    let shapes = HashMap::from([
        ("x".to_string(), vec![batch, 8]),
        ("y".to_string(), vec![batch, 3]),
    ]);
    let plan = exe.memory_plan(&shapes).unwrap();
    let feed = [("x", &xs), ("y", &ys)];
    let first = exe
        .run(&feed, Some(&state))
        .unwrap()
        .remove(0)
        .1
        .read::<f32>()
        .await
        .unwrap()[0];
    let before = s.stats();
    affon::telemetry::reset_peak();
    let mut last = first;
    for _ in 0..20 {
        last = exe
            .run(&feed, Some(&state))
            .unwrap()
            .remove(0)
            .1
            .read::<f32>()
            .await
            .unwrap()[0];
    }
    let after = s.stats();
    assert_eq!(
        after.peak_bytes,
        before.live_bytes + plan.peak_bytes,
        "the measured peak is the plan's ({plan:?})"
    );
    assert_eq!(after.live_bytes, before.live_bytes, "nothing kept between steps");
    assert_eq!(
        after.pool_misses, before.pool_misses,
        "warm steps allocate nothing: pool hits only"
    );
    assert!(last < first, "the loss falls: {first} → {last}");
    assert!(
        plan.intermediate_bytes > 0 && plan.state_bytes == state.byte_length(),
        "{plan:?}"
    );
    fails_unchanged("INVALID_ARGUMENT", "a step without its labels", || {
        exe.run(&[("x", &xs)], Some(&state))
    });
}
