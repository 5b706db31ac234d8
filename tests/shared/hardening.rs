//! Hardening scenarios on both targets: disposed objects in every method, cross-session use,
//! NaN/Infinity, device loss, and a soak. Each failure is checked to change no counter.
#![allow(dead_code)]

use affon::{DType, Program, Session, Tensor};

use crate::ledger::{assert_unchanged, ledger};
use crate::programs::running_mean;

fn code<T>(r: affon::Result<T>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(e) => e.code(),
    }
}

/// Every method of a disposed tensor, executable, state and session fails with its code, and
/// no failure changes a counter.
pub async fn disposed_objects_in_every_method(s: &Session) {
    let live = s.ones(&[2, 4], DType::Float32).unwrap();
    let t = s.ones(&[2, 4], DType::Float32).unwrap();
    let exe = s.compile(&running_mean()).unwrap();
    let state = exe.create_state(&[]).unwrap();
    let state2 = exe.create_state(&[]).unwrap();
    let reshaped_live = live.reshape([8]).unwrap();
    t.dispose();
    let before = ledger();
    let before_exec = s.stats();
    let unary: [fn(&Tensor) -> affon::Result<Tensor>; 14] = [
        Tensor::neg,
        Tensor::abs,
        Tensor::square,
        Tensor::sqrt,
        Tensor::exp,
        Tensor::log,
        Tensor::relu,
        Tensor::sigmoid,
        Tensor::tanh,
        Tensor::copy,
        |t| t.sum(&[], false),
        |t| t.mean(&[0], true),
        |t| t.max(&[], false),
        |t| t.min(&[], false),
    ];
    for (i, f) in unary.iter().enumerate() {
        assert_eq!(code(f(&t)), "DISPOSED", "unary op #{i}");
    }
    let binary: [fn(&Tensor, &Tensor) -> affon::Result<Tensor>; 4] =
        [Tensor::add, Tensor::sub, Tensor::mul, Tensor::div];
    for (i, f) in binary.iter().enumerate() {
        assert_eq!(code(f(&t, &live)), "DISPOSED", "binary #{i} self");
        assert_eq!(code(f(&live, &t)), "DISPOSED", "binary #{i} argument");
    }
    assert_eq!(code(t.matmul(&live)), "DISPOSED");
    assert_eq!(code(t.softmax(-1)), "DISPOSED");
    assert_eq!(code(t.reshape([8])), "DISPOSED");
    assert_eq!(code(t.transpose(None)), "DISPOSED");
    assert_eq!(code(t.cast(DType::Int32)), "DISPOSED");
    assert_eq!(code(t.read_words().await), "DISPOSED");
    assert_eq!(code(t.read::<f32>().await), "DISPOSED");
    assert_eq!(code(t.item_f64().await), "DISPOSED");
    assert_eq!(
        code(exe.run(&[("x", &t)], Some(&state))),
        "DISPOSED",
        "disposed run input"
    );
    assert_eq!(
        code(exe.create_state(&[("acc", &t)])),
        "DISPOSED",
        "disposed state init"
    );
    t.dispose(); // idempotent
    assert_unchanged(&before, &ledger(), "methods of a disposed tensor");
    state.dispose();
    let before = ledger();
    assert_eq!(code(state.get("acc")), "DISPOSED");
    assert_eq!(code(exe.run(&[("x", &live)], Some(&state))), "DISPOSED");
    assert_unchanged(&before, &ledger(), "methods of a disposed state");
    exe.dispose();
    let before = ledger();
    assert_eq!(code(exe.run(&[("x", &live)], Some(&state2))), "DISPOSED");
    assert_eq!(code(exe.create_state(&[])), "DISPOSED");
    assert_eq!(code(exe.memory_plan(&Default::default())), "DISPOSED");
    assert_unchanged(&before, &ledger(), "methods of a disposed executable");
    let after = s.stats();
    assert_eq!(
        (after.executions, after.compiles, after.dispatches),
        (
            before_exec.executions,
            before_exec.compiles,
            before_exec.dispatches
        ),
        "nothing ran"
    );
    drop((state2, reshaped_live));
    s.dispose();
    let before = ledger();
    let code_s = |r: affon::Result<Tensor>| code(r);
    assert_eq!(code_s(s.tensor(&[1.0f32], &[1])), "SESSION_DISPOSED");
    assert_eq!(code_s(s.zeros(&[1], DType::Float32)), "SESSION_DISPOSED");
    assert_eq!(code_s(s.ones(&[1], DType::Float32)), "SESSION_DISPOSED");
    assert_eq!(code_s(s.fill(&[1], 2.0, DType::Float32)), "SESSION_DISPOSED");
    assert_eq!(code_s(s.random_normal(&[1], 0.0, 1.0, 1)), "SESSION_DISPOSED");
    assert_eq!(code_s(s.random_uniform(&[1], 0.0, 1.0, 1)), "SESSION_DISPOSED");
    assert_eq!(code(s.compile(&running_mean())), "SESSION_DISPOSED");
    assert_eq!(code(s.sync().await), "SESSION_DISPOSED");
    assert_eq!(
        code_s(live.square()),
        "SESSION_DISPOSED",
        "no new work from a live child either"
    );
    assert_unchanged(&before, &ledger(), "calls on a disposed session");
    assert_eq!(
        live.read::<f32>().await.unwrap(),
        vec![1.0; 8],
        "but its data is still readable"
    );
}

/// A tensor of one session given to another is `INVALID_ARGUMENT`, wherever it goes.
pub async fn cross_session_use(a: &Session, b: &Session) {
    let ta = a.ones(&[2, 4], DType::Float32).unwrap();
    let tb = b.ones(&[2, 4], DType::Float32).unwrap();
    let exe = b.compile(&running_mean()).unwrap();
    let state = exe.create_state(&[]).unwrap();
    let ta2 = ta.reshape([4, 2]).unwrap();
    let init = a.zeros(&[4], DType::Float32).unwrap();
    let cond_a = a.ones(&[2, 4], DType::Bool).unwrap();
    let sb = b.stats();
    let before = ledger();
    assert_eq!(code(ta.add(&tb)), "INVALID_ARGUMENT");
    assert_eq!(code(tb.matmul(&ta2)), "INVALID_ARGUMENT");
    assert_eq!(code(exe.run(&[("x", &ta)], Some(&state))), "INVALID_ARGUMENT");
    assert_eq!(code(exe.create_state(&[("acc", &init)])), "INVALID_ARGUMENT");
    // concat / stack through a session that does not own the tensors; where with a number operand
    // (its scalar would be made before the op ran) and a cond of another session
    assert_eq!(code(b.concat(&[&ta, &ta], 0)), "INVALID_ARGUMENT");
    assert_eq!(code(b.stack(&[&tb, &ta], 0)), "INVALID_ARGUMENT");
    assert_eq!(code(tb.select_scalar(&cond_a, 0.0)), "INVALID_ARGUMENT");
    assert_unchanged(&before, &ledger(), "cross-session use");
    assert_eq!(b.stats().executions, sb.executions);
}

/// NaN and ±Infinity are data, not errors, and propagate through ops and programs.
pub async fn nan_and_infinity_propagate(s: &Session) {
    let t = s
        .tensor(&[f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.0], &[4])
        .unwrap();
    let one = s.ones(&[4], DType::Float32).unwrap();
    let v = t.add(&one).unwrap().read::<f32>().await.unwrap();
    assert!(
        v[0].is_nan() && v[1] == f32::INFINITY && v[2] == f32::NEG_INFINITY && v[3] == 2.0,
        "{v:?}"
    );
    let sum = t.sum(&[], false).unwrap().item_f64().await.unwrap();
    assert!(sum.is_nan());
    let exe = s.compile(&running_mean()).unwrap();
    let state = exe.create_state(&[]).unwrap();
    let x = t.reshape([1, 4]).unwrap();
    let y = exe
        .run(&[("x", &x)], Some(&state))
        .unwrap()
        .remove(0)
        .1
        .read::<f32>()
        .await
        .unwrap();
    assert!(
        y[0].is_nan() && y[1] == f32::INFINITY && y[2] == 0.0 && y[3] == 1.0,
        "relu: {y:?}"
    );
    // an infinite bound in a fused chain (single-element constants are otherwise written into the
    // kernel, which WGSL refuses for an infinity): min(max(x · 2, −∞), 5)
    let mut p = affon::Program::new("infinite bound");
    let xi = p.input("x", DType::Float32, &[4]).unwrap();
    let two = p.constant(&[2.0], &[], DType::Float32).unwrap();
    let doubled = p.mul(xi, two).unwrap();
    let c = p.clip_by_value(doubled, f64::NEG_INFINITY, 5.0).unwrap();
    p.output("y", c).unwrap();
    let exe = s.compile(&p).unwrap();
    let finite = s.tensor(&[-3.0f32, 1.0, 2.5, f32::NEG_INFINITY], &[4]).unwrap();
    let out = exe.run(&[("x", &finite)], None).unwrap().remove(0).1;
    assert_eq!(
        out.read::<f32>().await.unwrap(),
        vec![-6.0, 2.0, 5.0, f32::NEG_INFINITY]
    );
}

/// Destroying the device: new work fails with `DEVICE_LOST`, telemetry says so, `dispose()` works
/// and the accounting returns to zero.
pub async fn device_loss(s: &Session) {
    let a = s.ones(&[1000], DType::Float32).unwrap();
    let b = a.square().unwrap();
    drop(s.zeros(&[500], DType::Float32).unwrap()); // one cached buffer
    let exe = s.compile(&running_mean()).unwrap();
    let state = exe.create_state(&[]).unwrap();
    let lost =
        || affon::telemetry::find(&affon::telemetry::metrics(), "compute.execution", "devices_lost").unwrap();
    let lost0 = lost();
    s.destroy_device();
    assert!(s.is_device_lost());
    assert_eq!(lost(), lost0 + 1.0, "telemetry counts this session's lost device");
    assert_eq!(s.stats().pool_cached_bytes, 0, "the cache is dropped on loss");
    // after the loss, every failing call leaves the ledger as it was
    let before = ledger();
    assert_eq!(code(s.zeros(&[4], DType::Float32)), "DEVICE_LOST");
    assert_eq!(code(a.square()), "DEVICE_LOST");
    assert_eq!(code(b.read::<f32>().await), "DEVICE_LOST");
    assert_eq!(code(s.sync().await), "DEVICE_LOST");
    let x = s.ones(&[1, 4], DType::Float32);
    assert_eq!(code(x), "DEVICE_LOST");
    assert_unchanged(&before, &ledger(), "calls on a lost device");
    for t in [a, b] {
        t.dispose();
    }
    state.dispose();
    exe.dispose();
    let st = s.stats();
    assert_eq!(
        (st.live_bytes, st.live_tensors, st.pool_bytes, st.device_buffers),
        (0, 0, 0, 0)
    );
    s.dispose();
}

/// `iterations` runs of a program with disposal: live bytes at the end equal those after warm-up,
/// and the pool never exceeds its bound. Returns `(live after warm-up, live at end, max pool bytes)`.
pub async fn soak(s: &Session, iterations: usize) -> (u64, u64, u64) {
    let exe = s.compile(&running_mean()).unwrap();
    let state = exe.create_state(&[]).unwrap();
    let bound = s.pool_config().max_total_bytes;
    let mut max_pool = 0;
    let mut warm_live = 0;
    for i in 0..iterations {
        let rows = 1 + i % 7; // a few shapes, so specialisations and size classes are exercised
        let x = s.ones(&[rows, 4], DType::Float32).unwrap();
        for (_, t) in exe.run(&[("x", &x)], Some(&state)).unwrap() {
            t.dispose();
        }
        drop(x);
        let st = s.stats();
        max_pool = max_pool.max(st.pool_bytes);
        assert!(
            st.pool_bytes <= bound,
            "pool {} above bound {bound} at {i}",
            st.pool_bytes
        );
        if i == 99 {
            s.sync().await.unwrap();
            warm_live = s.stats().live_bytes;
        }
        if i % 1000 == 999 {
            s.sync().await.unwrap(); // keep the queue short on CPU adapters
        }
    }
    let acc = state.get("acc").unwrap().read::<f32>().await.unwrap();
    let expected: f32 = (0..iterations).map(|i| (1 + i % 7) as f32).sum();
    assert_eq!(acc, vec![expected; 4], "the state saw every run");
    let end_live = s.stats().live_bytes;
    assert_eq!(
        end_live, warm_live,
        "live bytes at the end equal those after warm-up"
    );
    (warm_live, end_live, max_pool)
}

/// Sizes past 2^32 are computed in 64 bits on every target: refused the same way on wasm32 as
/// natively, never wrapped to a small size that would run (and give a wrong result).
pub async fn wide_sizes_never_wrap(s: &Session) {
    use affon::ops::{Pad, Pair};
    let t = s.ones(&[4], DType::Float32).unwrap();
    let before = ledger();
    assert_eq!(code(t.pad(vec![(0, 1i64 << 32)], 0.0)), "INVALID_ARGUMENT");
    assert_eq!(code(t.tile(vec![(1i64 << 32) + 1])), "INVALID_ARGUMENT");
    let mut p = Program::new("wide");
    for dims in [&[(1i64 << 32) + 3][..], &[2, 1 << 40]] {
        assert_eq!(
            code(p.input("x", DType::Float32, dims)),
            "INVALID_ARGUMENT",
            "{dims:?}"
        );
    }
    assert_unchanged(&before, &ledger(), "wide sizes");
    // 'same' padding of a window of 2^16 cells dilated 2^16 times: 2^31 cells before the input
    let x = s.zeros(&[1, 100_000, 1, 1], DType::Float32).unwrap();
    let f = s.zeros(&[65_536, 1, 1, 1], DType::Float32).unwrap();
    let before = ledger();
    let e = x
        .conv2d(&f, Pair::ONE, Pad::SAME, Pair(65_536, 1))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    assert_unchanged(&before, &ledger(), "a window past 2^32 cells");
    assert_eq!(t.read::<f32>().await.unwrap(), vec![1.0; 4]);
}
