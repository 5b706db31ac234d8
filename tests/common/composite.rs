//! Eager composites fuse their elementwise chains (`src/composite.rs`), on both targets: what a
//! user relies on is the values (batchNorm and its clip against float64 here; layerNorm against
//! the primitives run one by one here and against float64 in `table_composites.rs`), the kernels
//! dispatched, and the memory made — only the values a chain cannot be read through, never its
//! intermediates.

use affon::ops::BinaryOp;
use affon::{DType, Session, Tensor};

use super::ops::Rng;

pub(super) fn dispatches(s: &Session) -> u64 {
    s.stats().dispatches
}

pub(super) async fn read(t: &Tensor) -> Vec<f32> {
    t.read::<f32>().await.unwrap()
}

/// `a` equals `b` within `rel` of the larger magnitude (a shader compiler may contract a
/// multiply and an add of one fused kernel into one rounding).
fn close(what: &str, a: &[f32], b: &[f32], rel: f32) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let tol = rel * x.abs().max(y.abs()).max(1.0);
        assert!((x - y).abs() <= tol, "{what}[{i}]: {x} vs {y}");
    }
}

/// `got` equals the float64 `want` within `rel` of its magnitude (at least 1).
fn close64(what: &str, got: &[f32], want: &[f64], rel: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let tol = rel * w.abs().max(1.0);
        assert!((*g as f64 - w).abs() <= tol, "{what}[{i}]: {g} vs float64 {w}");
    }
}

/// float64 `batchNorm` of channels-last `xs` over `c` channels, `ε = 1e-3`:
/// `(x − μ)/√(σ² + ε)·scale + offset`, clamped to `clip` when given.
fn batch_norm64(xs: &[f32], [m, v, o, sc]: [&[f32]; 4], c: usize, clip: Option<(f64, f64)>) -> Vec<f64> {
    let f = |d: &[f32], i: usize| d[i % c] as f64;
    (0..xs.len())
        .map(|i| {
            let y = (xs[i] as f64 - f(m, i)) / (f(v, i) + 1e-3).sqrt() * f(sc, i) + f(o, i);
            clip.map_or(y, |(lo, hi)| y.clamp(lo, hi))
        })
        .collect()
}

/// `batchNorm` on NHWC `[2, 5, 5, 8]` with offset and scale: two kernels (the factor
/// `rsqrt(σ² + ε)·scale` over the 8 channels at the call, then `(x − μ)·factor + offset` over x
/// when the pending result is read), where the primitives take six; the memory made is the result
/// and the 8-channel factor (held by the result until it is computed), nothing else.
/// `clipByValue` is one kernel, exact; `leakyRelu` one; a clip after a batchNorm joins its pass.
pub async fn batch_norm_and_clip_fuse(s: &Session) {
    let mut rng = Rng::new(41);
    let xs: Vec<f32> = (0..2 * 5 * 5 * 8).map(|_| rng.f32_in(-3.0, 3.0)).collect();
    let ch = |rng: &mut Rng, lo, hi| (0..8).map(|_| rng.f32_in(lo, hi)).collect::<Vec<f32>>();
    let (m, v, o, sc) = (
        ch(&mut rng, -1.0, 1.0),
        ch(&mut rng, 0.1, 2.0),
        ch(&mut rng, -1.0, 1.0),
        ch(&mut rng, 0.5, 1.5),
    );
    let x = s.tensor(&xs, &[2, 5, 5, 8]).unwrap();
    let [tm, tv, to, ts] = [&m, &v, &o, &sc].map(|d| s.tensor(d, &[8]).unwrap());
    let (d0, live0) = (dispatches(s), s.stats().live_bytes);
    affon::telemetry::reset_peak();
    let y = x.batch_norm(&tm, &tv, Some(&to), Some(&ts), 1e-3).unwrap();
    assert_eq!(dispatches(s) - d0, 1, "the factor over the channels");
    let st = s.stats();
    assert_eq!(
        st.live_bytes - live0,
        1600 + 32,
        "the result, pending, holds the factor"
    );
    assert_eq!(
        st.peak_bytes - live0,
        1600 + 32,
        "the result and the 8-channel factor, no more"
    );
    let got = read(&y).await;
    assert_eq!(dispatches(s) - d0, 2, "then one pass over x");
    assert_eq!(s.stats().live_bytes - live0, 1600, "only the result stays");
    // float64: (x − μ)·rsqrt(σ² + ε)·scale + offset in float32 is within a few roundings of the
    // terms (|x − μ|·factor ≤ 19 here): 1e-5 of the magnitude
    let stats: [&[f32]; 4] = [&m, &v, &o, &sc];
    close64("batchNorm", &got, &batch_norm64(&xs, stats, 8, None), 1e-5);
    // clipByValue after batchNorm (relu6): the clip joins the batchNorm's pass, and the
    // batchNorm's value, disposed unread by the tidy, is never written
    let d7 = dispatches(s);
    let z = s.tidy(|| {
        x.batch_norm(&tm, &tv, Some(&to), Some(&ts), 1e-3)
            .unwrap()
            .clip_by_value(0.0, 6.0)
            .unwrap()
    });
    let want_z = batch_norm64(&xs, stats, 8, Some((0.0, 6.0)));
    close64("clip(batchNorm)", &read(&z).await, &want_z, 1e-5);
    assert_eq!(dispatches(s) - d7, 2, "the factor, then one pass");
    // statistics broadcast from [1, 1, 1, 8] read the same way
    let m4 = tm.reshape(vec![1i64, 1, 1, 8]).unwrap();
    let y4 = x.batch_norm(&m4, &tv, Some(&to), Some(&ts), 1e-3).unwrap();
    let want = batch_norm64(&xs, stats, 8, None);
    close64("batchNorm [1,1,1,8]", &read(&y4).await, &want, 1e-5);
    // 6 channels: not whole vec4s, the chain reads element by element; against float64
    let x6 = s.tensor(&xs[..180], &[5, 6, 6]).unwrap();
    let [m6, v6, o6, s6] = [&m, &v, &o, &sc].map(|d| s.tensor(&d[..6], &[6]).unwrap());
    let d6 = dispatches(s);
    let y6 = x6.batch_norm(&m6, &v6, Some(&o6), Some(&s6), 1e-3).unwrap();
    let got6 = read(&y6).await;
    assert_eq!(dispatches(s) - d6, 2);
    let stats6: [&[f32]; 4] = [&m[..6], &v[..6], &o[..6], &sc[..6]];
    close64(
        "batchNorm, 6 channels",
        &got6,
        &batch_norm64(&xs[..180], stats6, 6, None),
        1e-5,
    );
    // clipByValue: max then min in one kernel, exactly the primitives' values
    let d1 = dispatches(s);
    let c = x.clip_by_value(-1.5, 2.0).unwrap();
    let want_c: Vec<f32> = xs.iter().map(|v| v.clamp(-1.5, 2.0)).collect();
    assert_eq!(read(&c).await, want_c);
    assert_eq!(dispatches(s) - d1, 1);
    // a clip to ±∞ cannot write its bound into WGSL: the bound is a scalar tensor, still one kernel
    let d2 = dispatches(s);
    let c2 = x.clip_by_value(f64::NEG_INFINITY, 0.0).unwrap();
    let want_c2: Vec<f32> = xs.iter().map(|v| v.min(0.0)).collect();
    assert_eq!(read(&c2).await, want_c2);
    assert_eq!(dispatches(s) - d2, 1);
    let d3 = dispatches(s);
    let l = x.leaky_relu(0.2).unwrap();
    let want_l: Vec<f32> = xs.iter().map(|&v| v.max(v * 0.2)).collect();
    assert_eq!(read(&l).await, want_l);
    assert_eq!(dispatches(s) - d3, 1);
}

/// `layerNorm` on `[4, 33]`: the mean, the variance read through `square(x − mean)` as it reduces
/// (never written), the factor over the 4 rows, and one pass writing the result when it is read —
/// four kernels where the primitives take nine; at most the result and two `[4, 1]` columns
/// exist at once (the mean and the factor, held by the pending result until it is computed).
pub async fn layer_norm_reads_its_chain_through_the_reduction(s: &Session) {
    let mut rng = Rng::new(7);
    let xs: Vec<f32> = (0..4 * 33).map(|_| rng.f32_in(-2.0, 2.0)).collect();
    let gs: Vec<f32> = (0..33).map(|_| rng.f32_in(0.5, 1.5)).collect();
    let bs: Vec<f32> = (0..33).map(|_| rng.f32_in(-1.0, 1.0)).collect();
    let (x, g, b) = (
        s.tensor(&xs, &[4, 33]).unwrap(),
        s.tensor(&gs, &[33]).unwrap(),
        s.tensor(&bs, &[33]).unwrap(),
    );
    let (d0, live0) = (dispatches(s), s.stats().live_bytes);
    affon::telemetry::reset_peak();
    let y = x.layer_norm(&g, &b, 1e-5).unwrap();
    assert_eq!(dispatches(s) - d0, 3);
    let st = s.stats();
    assert_eq!(st.live_bytes - live0, 4 * 33 * 4 + 2 * 16);
    // the variance is freed once the factor is made: the last pass reads x, the mean, the factor
    assert_eq!(
        st.peak_bytes - live0,
        4 * 33 * 4 + 2 * 16,
        "result + mean + factor"
    );
    let got = read(&y).await;
    assert_eq!(dispatches(s) - d0, 4);
    assert_eq!(
        s.stats().live_bytes - live0,
        4 * 33 * 4,
        "then only the result stays"
    );
    let mean = x.mean(&[-1], true).unwrap();
    let centred = x.sub(&mean).unwrap();
    let var = centred.square().unwrap().mean(&[-1], true).unwrap();
    let inv = var.binary_scalar(BinaryOp::Add, 1e-5).unwrap().rsqrt().unwrap();
    let want = centred.mul(&inv).unwrap().mul(&g).unwrap().add(&b).unwrap();
    close("layerNorm", &got, &read(&want).await, 1e-5);
    assert_eq!(x.dtype(), DType::Float32);
}

/// Index runs past the host limit (2^20 elements) are computed on the device, with the same values:
/// `oneHot` of a depth of 2^20 + 3, `argMax`/`argMin` along such an axis, `concat` into it. Built on
/// the host, `oneHot(2^28)` needed 2 GiB and aborted the wasm32 instance. A depth past int32 is
/// refused, nothing moved.
pub async fn long_index_runs_match(s: &Session) {
    let d = (1usize << 20) + 3;
    let idx = [0i32, (d - 1) as i32, 5, -1];
    let hot = s.tensor(&idx, &[4]).unwrap().one_hot(d as i64).unwrap();
    assert_eq!(hot.shape(), &[4, d]);
    let got = read(&hot).await;
    for (r, &i) in idx.iter().enumerate() {
        let row = &got[r * d..(r + 1) * d];
        let ones: Vec<usize> = (0..d).filter(|&j| row[j] != 0.0).collect();
        let want: Vec<usize> = if i >= 0 { vec![i as usize] } else { vec![] };
        assert_eq!(ones, want, "oneHot({d}) row {r} (index {i}): where it is not 0");
        assert!(ones.iter().all(|&j| row[j] == 1.0), "oneHot row {r}: ones");
    }
    let mut xs: Vec<f32> = (0..d).map(|i| ((i as u64 * 7919) % 1000) as f32).collect();
    xs[d - 2] = 5000.0;
    xs[d - 1] = 5000.0; // a tie: the first index wins
    xs[d / 2] = -3.0;
    let x = s.tensor(&xs, &[d]).unwrap();
    let first = |t: Tensor| async move { t.read::<i32>().await.unwrap() };
    assert_eq!(
        first(x.arg_max(0).unwrap()).await,
        vec![(d - 2) as i32],
        "argMax over {d}"
    );
    assert_eq!(
        first(x.arg_min(0).unwrap()).await,
        vec![(d / 2) as i32],
        "argMin over {d}"
    );
    let tail = s.tensor(&[-1.0f32, -2.0, -3.0, -4.0, -5.0], &[5]).unwrap();
    let head = s.tensor(&xs[..d - 5], &[d - 5]).unwrap();
    let joined = read(&s.concat(&[&head, &tail], 0).unwrap()).await;
    let mut want = xs[..d - 5].to_vec();
    want.extend([-1.0, -2.0, -3.0, -4.0, -5.0]);
    assert!(joined == want, "concat into an axis of {d}");
    let i = s.tensor(&[1i32], &[1]).unwrap();
    super::ledger::fails_unchanged("INVALID_ARGUMENT", "oneHot past int32", || i.one_hot(1 << 31));
}
