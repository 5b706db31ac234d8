//! The composites (`src/ops/compose.rs`) against float64 references written here, eager and as program
//! nodes: leakyRelu, clipByValue, logSumExp and logSoftmax, layerNorm, batchNorm, matmul's transposes,
//! where, argMax/argMin, oneHot and the windows (slice, pad, tile, concat, stack, split); `table_scans.rs`
//! continues with prod, cumsum and the composites in a compiled program.

use affon::{DType, Program, Session};

use super::ledger::fails_unchanged;
use super::ops::{expect, Host, Rng, Tol, REL};
use super::table::{host, map, EXACT};

/// `log Σ exp` over the last axis of a `[rows, n]` host tensor, in float64.
fn lse_rows(x: &Host<f32>) -> Vec<f64> {
    let n = x.shape[1];
    x.data
        .chunks(n)
        .map(|r| {
            let m = r.iter().fold(f64::NEG_INFINITY, |a, &v| a.max(v as f64));
            m + r.iter().map(|&v| (v as f64 - m).exp()).sum::<f64>().ln()
        })
        .collect()
}

/// The composites (`src/ops/compose.rs`), eager and as program nodes, against float64.
pub async fn composites_match_f64_reference(s: &Session) {
    let mut rng = Rng::new(0xC0_FFEE);
    let x = host(&[4, 33], |_| rng.f32_in(-5.0, 5.0));
    let mut big = x.clone();
    big.data[..3].copy_from_slice(&[100.0, -100.0, 90.0]); // finite at ±100
    let tx = x.upload(s);
    let leaky = map(&x, |v| if v > 0.0 { v } else { 0.2 * v });
    expect("leakyRelu(0.2)", tx.leaky_relu(0.2), &leaky, REL).await;
    let hard = map(&x, |v| (0.2 * v + 0.5).clamp(0.0, 1.0));
    expect("hardSigmoid(0.2, 0.5)", tx.hard_sigmoid(0.2, 0.5), &hard, REL).await;
    let hard = map(&x, |v| (v / 6.0 + 0.5).clamp(0.0, 1.0));
    expect(
        "hardSigmoid(1/6, 0.5)",
        tx.hard_sigmoid(1.0 / 6.0, 0.5),
        &hard,
        REL,
    )
    .await;
    let clip = map(&x, |v| v.clamp(-1.5, 2.0));
    expect("clipByValue(-1.5, 2)", tx.clip_by_value(-1.5, 2.0), &clip, EXACT).await;
    let xi = Host::from_fn(&[7], |i| i as i32 - 3);
    let want = Host::from_fn(&[7], |i| (i as i32 - 3).clamp(-1, 2));
    expect(
        "clipByValue int32",
        xi.upload(s).clip_by_value(-1.0, 2.0),
        &want,
        EXACT,
    )
    .await;
    let lse = lse_rows(&big);
    let want = Host::from_fn(&[4], |i| lse[i] as f32);
    let tol = Tol::Close { rel: 1e-5, abs: 1e-5 };
    expect(
        "logSumExp(-1)",
        big.upload(s).log_sum_exp(&[-1], false),
        &want,
        tol,
    )
    .await;
    let want_keep = Host {
        shape: vec![4, 1],
        data: want.data.clone(),
    };
    expect(
        "logSumExp(-1, keepDims)",
        big.upload(s).log_sum_exp(&[1], true),
        &want_keep,
        tol,
    )
    .await;
    let want = Host::from_fn(&[4, 33], |i| (big.data[i] as f64 - lse[i / 33]) as f32);
    expect("logSoftmax(-1)", big.upload(s).log_softmax(-1), &want, tol).await;
    let want = Host {
        shape: vec![4, 1, 33],
        data: x.data.clone(),
    };
    expect("expandDims(1)", tx.expand_dims(1), &want, EXACT).await;
    let one = Host::from_fn(&[1, 4, 1, 33], |i| x.data[i]);
    expect(
        "squeeze()",
        one.upload(s).squeeze(affon::ops::Axes::ALL),
        &x,
        EXACT,
    )
    .await;
    let want = Host {
        shape: vec![4, 1, 33],
        data: x.data.clone(),
    };
    expect("squeeze([0])", one.upload(s).squeeze(&[0]), &want, EXACT).await;
    let b = Host::from_fn(&[3, 4], |i| i % 4 != 0 || i == 4);
    let rows = |f: fn(&[bool]) -> bool| Host::from_fn(&[3], |r| f(&b.data[r * 4..r * 4 + 4]));
    expect(
        "all(1)",
        b.upload(s).all(&[1], false),
        &rows(|r| r.iter().all(|&v| v)),
        EXACT,
    )
    .await;
    expect(
        "any(1)",
        b.upload(s).any(&[1], false),
        &rows(|r| r.iter().any(|&v| v)),
        EXACT,
    )
    .await;
    // layerNorm over the last axis (biased variance), batchNorm per channel, matmul transposes
    let (rows, n) = (4usize, 33usize);
    let gamma = host(&[n], |_| rng.f32_in(0.5, 1.5));
    let beta = host(&[n], |_| rng.f32_in(-1.0, 1.0));
    let want = Host::from_fn(&[rows, n], |i| {
        let r = &x.data[(i / n) * n..(i / n + 1) * n];
        let mean = r.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
        let var = r.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        ((x.data[i] as f64 - mean) / (var + 1e-5).sqrt() * gamma.data[i % n] as f64 + beta.data[i % n] as f64)
            as f32
    });
    let (tg, tb) = (gamma.upload(s), beta.upload(s));
    let norm_tol = Tol::Close { rel: 1e-4, abs: 1e-5 };
    expect("layerNorm", tx.layer_norm(&tg, &tb, 1e-5), &want, norm_tol).await;
    let nhwc = host(&[2, 3, 3, 4], |_| rng.f32_in(-3.0, 3.0));
    let (m, v, o, sc) = (
        host(&[4], |_| rng.f32_in(-1.0, 1.0)),
        host(&[4], |_| rng.f32_in(0.1, 2.0)),
        host(&[4], |_| rng.f32_in(-1.0, 1.0)),
        host(&[4], |_| rng.f32_in(0.5, 1.5)),
    );
    let want = Host::from_fn(&nhwc.shape, |i| {
        let c = i % 4;
        let y = (nhwc.data[i] as f64 - m.data[c] as f64) / (v.data[c] as f64 + 1e-3).sqrt();
        (y * sc.data[c] as f64 + o.data[c] as f64) as f32
    });
    let (tm, tv, to, ts) = (m.upload(s), v.upload(s), o.upload(s), sc.upload(s));
    expect(
        "batchNorm",
        nhwc.upload(s).batch_norm(&tm, &tv, Some(&to), Some(&ts), 1e-3),
        &want,
        norm_tol,
    )
    .await;
    let a = host(&[2, 5, 3], |_| rng.f32_in(-2.0, 2.0)); // used as [2, 3, 5]ᵀ
    let b = host(&[4, 5], |_| rng.f32_in(-2.0, 2.0)); // used as [5, 4]ᵀ
    let want = Host::from_fn(&[2, 3, 4], |i| {
        let (bt, r, c) = (i / 12, (i / 4) % 3, i % 4);
        (0..5)
            .map(|k| a.data[bt * 15 + k * 3 + r] as f64 * b.data[c * 5 + k] as f64)
            .sum::<f64>() as f32
    });
    let mm_tol = Tol::Close { rel: 1e-5, abs: 1e-5 };
    expect(
        "matmul(transposeA, transposeB)",
        a.upload(s).matmul_t(&b.upload(s), true, true),
        &want,
        mm_tol,
    )
    .await;
    fails_unchanged("SHAPE_MISMATCH", "layerNorm gamma of the wrong length", || {
        tx.layer_norm(&tm, &tb, 1e-5)
    });
    // where (broadcast over all three), argMax/argMin (first index of the extreme), oneHot
    let cond = Host::from_fn(&[4, 1], |i| i % 2 == 0);
    let other = host(&[33], |i| -(i as f32));
    let want = Host::from_fn(&[4, 33], |i| {
        if cond.data[i / 33] {
            x.data[i]
        } else {
            other.data[i % 33]
        }
    });
    expect(
        "where [4,33] / [4,1] / [33]",
        tx.select(&cond.upload(s), &other.upload(s)),
        &want,
        EXACT,
    )
    .await;
    let want = Host::from_fn(&[4, 33], |i| if cond.data[i / 33] { x.data[i] } else { 7.0 });
    expect(
        "where with a number",
        tx.select_scalar(&cond.upload(s), 7.0),
        &want,
        EXACT,
    )
    .await;
    let mut ties = x.clone();
    ties.data[5] = 9.0;
    ties.data[9] = 9.0; // a tie in row 0: the first index wins
    let arg = |f: fn(f32, f32) -> bool| {
        Host::from_fn(&[4], |r| {
            let row = &ties.data[r * 33..(r + 1) * 33];
            (0..33).fold(0, |best, j| if f(row[j], row[best]) { j } else { best }) as i32
        })
    };
    let tt = ties.upload(s);
    expect("argMax(-1)", tt.arg_max(-1), &arg(|a, b| a > b), EXACT).await;
    expect("argMin(1)", tt.arg_min(1), &arg(|a, b| a < b), EXACT).await;
    let idx = Host {
        shape: vec![2, 3],
        data: vec![0i32, 2, 1, 3, -1, 2],
    };
    let want = Host::from_fn(&[2, 3, 3], |i| {
        if idx.data[i / 3] == (i % 3) as i32 {
            1.0f32
        } else {
            0.0
        }
    });
    expect(
        "oneHot(3) (3 and -1 are all zeros)",
        idx.upload(s).one_hot(3),
        &want,
        EXACT,
    )
    .await;
    // windows: slice, pad, tile; concat, stack, split
    let at = |i: usize, j: usize| x.data[i * 33 + j];
    let want = Host::from_fn(&[2, 5], |k| at(1 + k / 5, 3 + k % 5));
    expect("slice([1, 3], [2, 5])", tx.slice([1, 3], [2, 5]), &want, EXACT).await;
    let want = Host::from_fn(&[3, 30], |k| at(1 + k / 30, 3 + k % 30));
    expect("slice([1, 3]) to the end", tx.slice([1, 3], []), &want, EXACT).await;
    // a rank-1 tensor's begin and size as numbers (TF.js)
    let row = Host::from_fn(&[33], |j| at(0, j));
    let want = Host::from_fn(&[4], |j| at(0, 5 + j));
    expect(
        "slice(5, 4) of a rank-1 tensor",
        row.upload(s).slice(5, 4),
        &want,
        EXACT,
    )
    .await;
    let want = Host::from_fn(&[6, 36], |k| {
        let (i, j) = (k / 36, k % 36);
        if (1..5).contains(&i) && (2..35).contains(&j) {
            at(i - 1, j - 2)
        } else {
            -9.0
        }
    });
    expect(
        "pad([[1,1],[2,1]], -9)",
        tx.pad([(1, 1), (2, 1)], -9.0),
        &want,
        EXACT,
    )
    .await;
    let small = Host::from_fn(&[2, 3], |i| i as f32);
    let want = Host::from_fn(&[4, 9], |k| small.data[(k / 9 % 2) * 3 + k % 9 % 3]);
    expect("tile([2, 3])", small.upload(s).tile([2, 3]), &want, EXACT).await;
    let other3 = host(&[4, 5], |i| 100.0 + i as f32);
    let want = Host::from_fn(&[4, 38], |k| {
        let (i, j) = (k / 38, k % 38);
        if j < 33 {
            at(i, j)
        } else {
            other3.data[i * 5 + j - 33]
        }
    });
    let to3 = other3.upload(s);
    expect("concat axis 1", s.concat(&[&tx, &to3], 1), &want, EXACT).await;
    let want = Host::from_fn(&[2, 4, 33], |k| x.data[k % 132]);
    expect("stack axis 0", s.stack(&[&tx, &tx], 0), &want, EXACT).await;
    let parts = tx.split(&[10, 23], 1).unwrap();
    let want = Host::from_fn(&[4, 23], |k| at(k / 23, 10 + k % 23));
    expect(
        "split [10, 23] along 1, second",
        Ok(parts.into_iter().nth(1).unwrap()),
        &want,
        EXACT,
    )
    .await;
    fails_unchanged("INVALID_ARGUMENT", "slice past the end", || {
        tx.slice([3, 0], [2, -1])
    });
    let ts = small.upload(s);
    fails_unchanged("SHAPE_MISMATCH", "concat of mismatched rows", || {
        s.concat(&[&tx, &ts], 1)
    });
    fails_unchanged("INVALID_ARGUMENT", "split sizes not summing to the axis", || {
        tx.split(&[10, 10], 1)
    });
    // the same in a program, and its JSON round trip
    let mut p = Program::new("windows");
    let n = p.input("x", DType::Float32, &[4, 33]).unwrap();
    let sl = p.slice(n, [0, 30], [-1, -1]).unwrap();
    let pd = p.pad(sl, [(0, 0), (1, 0)], 5.0).unwrap();
    let cat = p.join(&[pd, sl], 1, false).unwrap();
    p.output("cat", cat).unwrap();
    let json = p.to_json_string();
    assert_eq!(
        Program::from_json(&json).unwrap().to_json_string(),
        json,
        "windows round-trip in JSON"
    );
    let exe = s.compile(&p).unwrap();
    let got = exe.run(&[("x", &tx)], None).unwrap().pop().unwrap().1;
    let want = Host::from_fn(&[4, 7], |k| {
        let (i, j) = (k / 7, k % 7);
        match j {
            0 => 5.0,
            1..=3 => at(i, 29 + j),
            _ => at(i, 26 + j),
        }
    });
    expect("program slice → pad → concat", Ok(got), &want, EXACT).await;
    let shared = super::table_scans::Shared {
        tx: &tx,
        big: &big,
        xi: &xi,
        lse: &lse,
        tol,
    };
    super::table_scans::scans_and_programs_match(s, &mut rng, shared).await;
}
