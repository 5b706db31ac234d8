//! Lazy eager fusion (`src/lazy.rs`), on both targets. What a user relies on: an eager chain of
//! elementwise ops is one kernel over its inputs, its intermediates disposed unread are never
//! written, `sum(chain)` reads the inputs once; accounting is exact when each call returns; and a
//! pending value is computed whenever anything needs it — a readback, another kind of op, a
//! program run, a state made from it, `sync()`, or the disposal of one of its inputs — with the
//! values of the ops run one by one (float64 reference, within float rounding).

use affon::ops::BinaryOp;
use affon::program::Program;
use affon::{DType, Session, Tensor};

use super::composite::{dispatches, read};
use super::ledger::{assert_unchanged, ledger};
use super::ops::Rng;

/// `got` equals the float64 `want` within `rel` of its magnitude (at least 1).
fn close(what: &str, got: &[f32], want: &[f64], rel: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = rel * w.abs().max(1.0);
        assert!((*g as f64 - w).abs() <= tol, "{what}[{i}]: {g} vs {w}");
    }
}

/// The bench's 8-op chain `|-(exp(sqrt(square(relu(x·a + b)))))|` in float64.
fn chain64(x: f64, a: f64, b: f64) -> f64 {
    let e = (x * a + b).max(0.0).powi(2).sqrt().exp();
    (-e).abs()
}

fn chain(x: &Tensor, a: &Tensor, b: &Tensor) -> affon::Result<Tensor> {
    x.mul(a)?.add(b)?.relu()?.square()?.sqrt()?.exp()?.neg()?.abs()
}

/// The 8-op chain over 4096 floats in a tidy: one kernel, at the readback; only the result stays
/// live (the seven intermediates were allocated, counted at their peak, and given back unread).
/// `sum(chain)` in a tidy: the dispatches of a plain `sum`, nothing else; no intermediate written.
pub async fn eager_chains_are_one_kernel(s: &Session) {
    let n = 4096;
    let mut rng = Rng::new(7);
    let xs: Vec<f32> = (0..n).map(|_| rng.f32_in(-2.0, 2.0)).collect();
    let (av, bv) = (0.75f32, 0.25f32);
    let x = s.tensor(&xs, &[n]).unwrap();
    let a = s.fill(&[n], av as f64, DType::Float32).unwrap();
    let b = s.fill(&[1], bv as f64, DType::Float32).unwrap(); // broadcast leaf
    s.sync().await.unwrap();
    let want: Vec<f64> = xs
        .iter()
        .map(|&v| chain64(v as f64, av as f64, bv as f64))
        .collect();
    let (d0, live0) = (dispatches(s), s.stats().live_bytes);
    affon::telemetry::reset_peak();
    let y = s.tidy(|| chain(&x, &a, &b).unwrap());
    let st = s.stats();
    assert_eq!(st.live_bytes - live0, n as u64 * 4, "only the result stays");
    assert_eq!(
        st.peak_bytes - live0,
        8 * n as u64 * 4,
        "every value was live when made"
    );
    assert_eq!(dispatches(s), d0, "nothing computed before it is needed");
    close("chain", &read(&y).await, &want, 1e-5);
    assert_eq!(dispatches(s) - d0, 1, "one kernel for the eight ops");
    // a tidy that made its own leaf: at its end the unread intermediates go first, so the leaf
    // going computes only the returned value (one kernel, `h·a` never written)
    let d0 = dispatches(s);
    let r = s.tidy(|| {
        let h = s.tensor(&xs, &[n]).unwrap();
        let ha = h.mul(&a).unwrap();
        ha.relu().unwrap()
    });
    assert_eq!(
        dispatches(s) - d0,
        1,
        "the returned value, computed as its leaf went"
    );
    let want_r: Vec<f64> = xs.iter().map(|&v| (v as f64 * av as f64).max(0.0)).collect();
    close("relu(h·a)", &read(&r).await, &want_r, 1e-6);
    drop(r);
    // sum of the chain: the dispatches of a plain sum of a computed tensor
    let d1 = dispatches(s);
    let plain = x.sum(&[], false).unwrap();
    let sum_cost = dispatches(s) - d1;
    drop(plain);
    let d2 = dispatches(s);
    let total = s.tidy(|| chain(&x, &a, &b).unwrap().sum(&[], false).unwrap());
    assert_eq!(
        dispatches(s) - d2,
        sum_cost,
        "the sum reads the chain as it reduces"
    );
    let want_sum: f64 = want.iter().sum();
    let got = read(&total).await[0] as f64;
    assert!(
        (got - want_sum).abs() <= 1e-5 * want_sum.abs(),
        "{got} vs {want_sum}"
    );
    // a value used twice is computed once inside the chain: exp(x)·exp(x)
    let d3 = dispatches(s);
    let ee = {
        let e = x.exp().unwrap();
        e.mul(&e).unwrap() // e goes unread (in the browser, what is pending when a task yields is computed)
    };
    let want_ee: Vec<f64> = xs.iter().map(|&v| (2.0 * v as f64).exp()).collect();
    close("exp·exp", &read(&ee).await, &want_ee, 1e-5);
    assert_eq!(dispatches(s) - d3, 1);
    // past the step cap (32) the chain is cut: 40 additions are two kernels when the unread
    // intermediates go before the value the cut computed (as at a tidy's end)
    let one = s.fill(&[n], 1.0, DType::Float32).unwrap();
    let d4 = dispatches(s);
    let v = {
        let mut kept = vec![x.add(&one).unwrap()];
        for _ in 1..40 {
            let v = kept[kept.len() - 1].add(&one).unwrap();
            kept.push(v);
        }
        let last = kept.pop().unwrap();
        while kept.pop().is_some() {} // newest first: the computed one (the 32nd) goes last
        last
    };
    let want40: Vec<f64> = xs.iter().map(|&x| x as f64 + 40.0).collect();
    close("x + 40", &read(&v).await, &want40, 1e-6);
    assert_eq!(dispatches(s) - d4, 2);
    drop(v);
    // intermediates kept and never disposed: computed when asked for (the last one alone, fused),
    // the other seven by `sync()` (in the browser when the task yields) as siblings: one kernel
    // writing kept[0..4] (4 outputs + x, a, b + parameters = 8 buffers), one writing kept[4..7]
    // over kept[3] — 3 kernels in all, the ops run once each, every value right
    let d5 = dispatches(s);
    let mut kept = vec![x.mul(&a).unwrap()];
    for k in 1..8 {
        let p = &kept[k - 1];
        let v = match k {
            1 => p.add(&b),
            2 => p.relu(),
            3 => p.square(),
            4 => p.sqrt(),
            5 => p.exp(),
            6 => p.neg(),
            _ => p.abs(),
        };
        kept.push(v.unwrap());
    }
    close("the last of eight kept", &read(&kept[7]).await, &want, 1e-5);
    s.sync().await.unwrap();
    assert_eq!(dispatches(s) - d5, 3);
    for (k, t) in kept.iter().enumerate() {
        let stage: Vec<f64> = xs
            .iter()
            .map(|&v| {
                let mut y = v as f64 * av as f64;
                for step in 1..=k {
                    y = match step {
                        1 => y + bv as f64,
                        2 => y.max(0.0),
                        3 => y * y,
                        4 => y.sqrt(),
                        5 => y.exp(),
                        6 => -y,
                        _ => y.abs(),
                    };
                }
                y
            })
            .collect();
        close(&format!("kept value {k}"), &read(t).await, &stage, 1e-5);
    }
    assert_eq!(dispatches(s) - d5, 3, "each computed once");
    drop(kept);
    // disposed unread: never computed, its storage given back
    let live1 = s.stats().live_bytes;
    let d6 = dispatches(s);
    drop(x.square().unwrap());
    s.sync().await.unwrap();
    assert_eq!((dispatches(s), s.stats().live_bytes), (d6, live1));
    // number operands (`x.mul(2).add(1)`): each number is a parameter word of the pending
    // kernel, not a buffer (nothing but the two results is live), and the chain is one kernel
    let m = x.binary_scalar(BinaryOp::Mul, 2.0).unwrap();
    let y = m.binary_scalar(BinaryOp::Add, 1.0).unwrap();
    let nb = n as u64 * 4;
    assert_eq!(s.stats().live_bytes, live1 + 2 * nb);
    assert_eq!(dispatches(s), d6, "nothing computed yet");
    let want_y: Vec<f64> = xs.iter().map(|&v| v as f64 * 2.0 + 1.0).collect();
    close("x · 2 + 1", &read(&y).await, &want_y, 1e-6);
    assert_eq!(dispatches(s) - d6, 1, "one kernel for both");
    assert_eq!(s.stats().live_bytes, live1 + 2 * nb);
    // natively m stays pending (disposed unread, it is never written); in the browser the
    // readback yields the task, where what is pending is computed, so y's kernel wrote m too
    if cfg!(target_arch = "wasm32") {
        let want_m: Vec<f64> = xs.iter().map(|&v| v as f64 * 2.0).collect();
        close("x · 2", &read(&m).await, &want_m, 1e-6);
    }
    drop(m);
    assert_eq!(s.stats().live_bytes, live1 + nb);
    s.sync().await.unwrap();
    assert_eq!(dispatches(s) - d6, 1);
    // other numbers, the same ops: the values are not in the kernel's code (one pipeline)
    let mut pipelines = vec![];
    for (k, c) in [(3.0, -1.0), (5.0, 0.5)] {
        let z = x
            .binary_scalar(BinaryOp::Mul, k)
            .unwrap()
            .binary_scalar(BinaryOp::Add, c)
            .unwrap();
        let want_z: Vec<f64> = xs.iter().map(|&v| v as f64 * k + c).collect();
        close("x · k + c", &read(&z).await, &want_z, 1e-6);
        pipelines.push(s.pipelines());
    }
    assert_eq!(
        pipelines[1], pipelines[0],
        "x.mul(5).add(0.5) runs x.mul(3).add(-1)'s pipeline"
    );
    // a number no WGSL constant expression may hold (∞, NaN) is a parameter like any other
    let w = x
        .binary_scalar(BinaryOp::Add, 3.0)
        .unwrap()
        .binary_scalar(BinaryOp::Mul, f64::INFINITY)
        .unwrap();
    assert!(
        read(&w).await.iter().all(|&v| v == f32::INFINITY),
        "(x + 3) · ∞ (x + 3 > 0)"
    );
    let q = x.binary_scalar(BinaryOp::Add, f64::NAN).unwrap();
    assert!(read(&q).await.iter().all(|v| v.is_nan()), "x + NaN");
    drop((w, q));
    s.sync().await.unwrap();
    assert_eq!(s.stats().live_bytes, live1 + nb, "y alone");
}

/// A pending value is computed before anything else reads it, and before its inputs go.
pub async fn pending_values_are_computed_when_needed(s: &Session) {
    let xs = [1.0f32, -2.0, 3.0, -4.0, 5.0, -6.0];
    let x = s.tensor(&xs, &[2, 3]).unwrap();
    let sq: Vec<f64> = xs.iter().map(|&v| (v as f64) * (v as f64)).collect();
    // read by a matmul (not elementwise)
    let y = x.square().unwrap();
    let w = s.tensor(&[1.0f32, 0.0, 1.0], &[3, 1]).unwrap();
    let m = y.matmul(&w).unwrap();
    close(
        "matmul of a pending value",
        &read(&m).await,
        &[sq[0] + sq[2], sq[3] + sq[5]],
        1e-6,
    );
    // read as a broadcast leaf by an elementwise op of another shape
    let r = s.tensor(&[10.0f32, 20.0, 30.0], &[3]).unwrap();
    let r2 = r.mul(&r).unwrap(); // pending [3]
    let z = x.add(&r2).unwrap(); // [2, 3]: r2 is computed, read as a leaf
    let want: Vec<f64> = (0..6)
        .map(|i| xs[i] as f64 + [100.0, 400.0, 900.0][i % 3])
        .collect();
    close("broadcast of a pending value", &read(&z).await, &want, 1e-6);
    // an input disposed while its reader is pending: the reader is computed first
    let t = s.tensor(&xs, &[2, 3]).unwrap();
    let p = t.square().unwrap();
    let d0 = dispatches(s);
    drop(t);
    assert_eq!(
        dispatches(s) - d0,
        1,
        "computed before its input's storage went back"
    );
    let reuse = s.tensor(&[9.0f32; 6], &[2, 3]).unwrap(); // may take t's buffer
    close("after its input went", &read(&p).await, &sq, 1e-6);
    assert_eq!(read(&reuse).await, vec![9.0; 6]);
    // a program input, and a state made from a pending value
    let mut prog = Program::new("double");
    let i = prog.input("x", DType::Float32, &[2, 3]).unwrap();
    let st = prog.state("acc", DType::Float32, &[2, 3]).unwrap();
    let o = prog.add(i, st).unwrap();
    prog.output("y", o).unwrap();
    let exe = s.compile(&prog).unwrap();
    let init = x.neg().unwrap();
    let state = exe.create_state(&[("acc", &init)]).unwrap();
    let q = x.square().unwrap();
    let out = exe.run(&[("x", &q)], Some(&state)).unwrap();
    let want: Vec<f64> = xs.iter().map(|&v| (v as f64).powi(2) - v as f64).collect();
    close("program over pending values", &read(&out[0].1).await, &want, 1e-6);
    // sync() computes what is pending
    let k = x.abs().unwrap();
    let d1 = dispatches(s);
    s.sync().await.unwrap();
    assert_eq!(dispatches(s) - d1, 1);
    drop(k);
    // a failed op on a pending value changes nothing and leaves it pending
    let pend = x.exp().unwrap();
    let d2 = dispatches(s);
    let bad = s.tensor(&[1.0f32, 2.0], &[2]).unwrap();
    let (before_bad, d_bad) = (ledger(), dispatches(s));
    let err = pend.add(&bad).unwrap_err();
    assert_eq!(err.code(), "SHAPE_MISMATCH");
    assert_unchanged(&before_bad, &ledger(), "a failed op on a pending value");
    assert_eq!(dispatches(s), d_bad, "the pending value stays pending");
    // so do a failed read, a failed item() and a failed run over it: nothing is computed
    assert_eq!(pend.read::<i32>().await.unwrap_err().code(), "DTYPE_MISMATCH");
    assert_eq!(pend.item_f64().await.unwrap_err().code(), "SHAPE_MISMATCH");
    let err = exe.run(&[("x", &pend)], None).unwrap_err(); // its state is missing
    assert_eq!(err.code(), "INVALID_ARGUMENT");
    assert_unchanged(
        &before_bad,
        &ledger(),
        "failed reads and a failed run of a pending value",
    );
    assert_eq!(dispatches(s), d_bad);
    drop(bad);
    let want: Vec<f64> = xs.iter().map(|&v| (v as f64).exp()).collect();
    close("exp", &read(&pend).await, &want, 1e-5);
    assert_eq!(dispatches(s) - d2, 1);
    // a pending value forgotten (its handle collected unread) after a reader inlined it: the
    // reader computes it itself, never reading the forgotten value's unwritten storage
    let f = x.add(&x).unwrap();
    let g = f.relu().unwrap();
    f.forget(); // stays accounted until the session goes
    let want: Vec<f64> = xs.iter().map(|&v| (2.0 * v as f64).max(0.0)).collect();
    close("relu(x + x), x + x forgotten", &read(&g).await, &want, 1e-6);
}

/// Pending values of one shape computed at one time are siblings in one kernel: 1000 kept
/// `x.square()` on `[3]` are ⌈1000 / 6⌉ = 167 kernels at `sync()` (six outputs, x and the
/// parameters fill WebGPU's 8 storage buffers), on `[8]` (four elements per thread) the same;
/// values of another shape get their own kernel; readers of a disposed leaf are computed together.
/// Accounting does not move; every value is right.
pub async fn siblings_are_one_kernel(s: &Session) {
    for n in [3usize, 8] {
        let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 1.0).collect();
        let x = s.tensor(&xs, &[n]).unwrap();
        s.sync().await.unwrap();
        let (d0, live0) = (dispatches(s), s.stats().live_bytes);
        let kept: Vec<Tensor> = (0..1000).map(|_| x.square().unwrap()).collect();
        let other = s.tensor(&[2.0f32; 5], &[5]).unwrap(); // another shape: a kernel of its own
        let odd = other.exp().unwrap();
        let live1 = s.stats().live_bytes;
        assert_eq!(
            live1 - live0,
            (1000 * n as u64 + 10) * 4,
            "counted when each call returns"
        );
        s.sync().await.unwrap();
        assert_eq!(dispatches(s) - d0, 167 + 1, "[{n}]: six siblings a kernel");
        assert_eq!(s.stats().live_bytes, live1);
        let want: Vec<f64> = xs.iter().map(|&v| (v as f64) * (v as f64)).collect();
        for t in [&kept[0], &kept[5], &kept[6], &kept[998], &kept[999]] {
            close(&format!("square [{n}]"), &read(t).await, &want, 1e-6);
        }
        close("exp", &read(&odd).await, &[2f64.exp(); 5], 1e-6);
        assert_eq!(dispatches(s) - d0, 168, "read back, nothing recomputed");
    }
    // siblings sharing steps: each shared step computed once, each output its own value
    let xs = [0.5f32, -1.5, 2.0, 3.0];
    let x = s.tensor(&xs, &[4]).unwrap();
    let y = s.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    s.sync().await.unwrap();
    let d0 = dispatches(s);
    let e = x.exp().unwrap();
    let ey = e.mul(&y).unwrap();
    let n = x.neg().unwrap();
    // disposing x computes its three readers (e and n read it; ey inlines e) in one kernel
    drop(x);
    assert_eq!(dispatches(s) - d0, 1);
    let e64: Vec<f64> = xs.iter().map(|&v| (v as f64).exp()).collect();
    close("exp", &read(&e).await, &e64, 1e-6);
    let ey64: Vec<f64> = e64.iter().zip(1..).map(|(v, k)| v * k as f64).collect();
    close("exp · y", &read(&ey).await, &ey64, 1e-6);
    close(
        "neg",
        &read(&n).await,
        &xs.iter().map(|&v| -(v as f64)).collect::<Vec<_>>(),
        0.0,
    );
    assert_eq!(dispatches(s) - d0, 1);
}
