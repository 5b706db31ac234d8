//! The composites' float64 references, continued from `table_composites.rs`: `prod` and `cumsum` along an axis
//! (short lines, long lines, many lines; float32 and int32), their rejections (the ledger unmoved), and
//! the composites as nodes of a compiled program (fused where they can), dynamic rows included.

use affon::{DType, Program, Session, Tensor};

use super::ledger::fails_unchanged;
use super::ops::{expect, Host, Rng, Tol, REL};
use super::table::{host, EXACT};

/// What `composites_match_f64_reference` (`table_composites.rs`) made that this half reads.
pub(super) struct Shared<'a> {
    pub tx: &'a Tensor,
    /// the first half's input with ±100 and 90 in its first row (log-softmax finite there)
    pub big: &'a Host<f32>,
    pub xi: &'a Host<i32>,
    /// `log Σ exp` of each row of `big`
    pub lse: &'a [f64],
    pub tol: Tol,
}

pub(super) async fn scans_and_programs_match(s: &Session, rng: &mut Rng, shared: Shared<'_>) {
    let Shared {
        tx,
        big,
        xi,
        lse,
        tol,
    } = shared;
    // prod over an axis (float32 within 1e-5·n relative; int32 exact, wrapping)
    let px = host(&[4, 33], |_| rng.f32_in(0.5, 1.5));
    let want = Host::from_fn(&[4], |r| {
        px.data[r * 33..(r + 1) * 33]
            .iter()
            .map(|&v| v as f64)
            .product::<f64>() as f32
    });
    let prod_tol = Tol::Close {
        rel: 33e-5,
        abs: 1e-6,
    };
    expect("prod(1) float32", px.upload(s).prod(&[1], false), &want, prod_tol).await;
    let pi = Host::from_fn(&[3, 5], |i| (i % 7) as i32 - 3);
    let want = Host::from_fn(&[1, 5], |c| {
        (0..3).fold(1i32, |acc, r| acc.wrapping_mul(pi.data[r * 5 + c]))
    });
    expect(
        "prod(0, keepDims) int32",
        pi.upload(s).prod(&[0], true),
        &want,
        EXACT,
    )
    .await;
    // cumsum along an axis: plain, exclusive, reverse (float32 within 1e-5·n, int32 exact)
    let cx = host(&[3, 9, 2], |_| rng.f32_in(-2.0, 2.0));
    let scan = |exclusive: bool, reverse: bool| {
        Host::from_fn(&[3, 9, 2], |i| {
            let (o, k, n) = (i / 18, (i / 2) % 9, i % 2);
            let ks: Vec<usize> = if reverse {
                (k..9).collect()
            } else {
                (0..=k).collect()
            };
            ks.into_iter()
                .filter(|&j| !(exclusive && j == k))
                .map(|j| cx.data[o * 18 + j * 2 + n] as f64)
                .sum::<f64>() as f32
        })
    };
    let scan_tol = Tol::Close { rel: 1e-5, abs: 1e-5 };
    let tc = cx.upload(s);
    expect(
        "cumsum(1)",
        tc.cumsum(1, false, false),
        &scan(false, false),
        scan_tol,
    )
    .await;
    expect(
        "cumsum(1, exclusive)",
        tc.cumsum(-2, true, false),
        &scan(true, false),
        scan_tol,
    )
    .await;
    expect(
        "cumsum(1, reverse)",
        tc.cumsum(1, false, true),
        &scan(false, true),
        scan_tol,
    )
    .await;
    let ci = Host::from_fn(&[5], |i| i as i32 + 1);
    let want = Host {
        shape: vec![5],
        data: vec![1, 3, 6, 10, 15],
    };
    expect("cumsum int32", ci.upload(s).cumsum(0, false, false), &want, EXACT).await;
    // lines of 5,000 (3 apart), halves: every partial sum exact in float32; on GPUs a workgroup scans
    // each line (5,000 is not a multiple of its 256 threads' runs)
    let (len, lines) = (5000usize, 3usize);
    let cl = Host::from_fn(&[2, len, lines], |i| ((i * 7) % 9) as f32 * 0.5 - 2.0);
    let tl = cl.upload(s);
    for (exclusive, reverse) in [(false, false), (true, true)] {
        let want = Host::from_fn(&[2, len, lines], |i| {
            let (o, k, n) = (i / (len * lines), (i / lines) % len, i % lines);
            let ks = if reverse { k..len } else { 0..k + 1 };
            ks.filter(|&j| !(exclusive && j == k))
                .map(|j| cl.data[(o * len + j) * lines + n] as f64)
                .sum::<f64>() as f32
        });
        let what = format!("cumsum along {len} (exclusive {exclusive}, reverse {reverse})");
        expect(&what, tl.cumsum(1, exclusive, reverse), &want, EXACT).await;
    }
    fails_unchanged("INVALID_ARGUMENT", "cumsum over a missing axis", || {
        tc.cumsum(3, false, false)
    });
    fails_unchanged("DTYPE_MISMATCH", "where with a float condition", || {
        tx.select(tx, tx)
    });
    fails_unchanged("DTYPE_MISMATCH", "oneHot of float32", || tx.one_hot(3));
    // rejected before the first kernel: the ledger does not move
    let ti = xi.upload(s);
    fails_unchanged("DTYPE_MISMATCH", "logSoftmax of int32", || ti.log_softmax(-1));
    fails_unchanged("INVALID_ARGUMENT", "clipByValue min > max", || {
        tx.clip_by_value(2.0, 1.0)
    });
    fails_unchanged("SHAPE_MISMATCH", "squeeze of a dim of 4", || tx.squeeze(&[0]));
    fails_unchanged("DTYPE_MISMATCH", "all of float32", || tx.all(&[], false));
    // the same composites as program nodes (fused where they can), dynamic rows
    let mut p = Program::new("composites");
    let n = p.input("x", DType::Float32, &[-1, 33]).unwrap();
    let ls = p.log_softmax(n, -1).unwrap();
    let lr = p.leaky_relu(n, 0.2).unwrap();
    let cl = p.clip_by_value(lr, -0.5, 0.5).unwrap();
    let ex = p.expand_dims(cl, 0).unwrap();
    let before = p.nodes().len();
    assert_eq!(
        p.log_softmax(n, 5).unwrap_err().code(),
        "INVALID_ARGUMENT",
        "axis 5 of rank 2"
    );
    assert_eq!(p.nodes().len(), before, "a rejected composite adds no node");
    p.output("ls", ls).unwrap();
    p.output("ex", ex).unwrap();
    let exe = s.compile(&p).unwrap();
    let mut out = exe.run(&[("x", &big.upload(s))], None).unwrap();
    let want_ex = Host::from_fn(&[1, 4, 33], |i| {
        let v = big.data[i];
        (if v > 0.0 { v } else { 0.2 * v }).clamp(-0.5, 0.5)
    });
    expect(
        "program leakyRelu → clip → expandDims",
        Ok(out.pop().unwrap().1),
        &want_ex,
        REL,
    )
    .await;
    let want_ls = Host::from_fn(&[4, 33], |i| (big.data[i] as f64 - lse[i / 33]) as f32);
    expect("program logSoftmax", Ok(out.pop().unwrap().1), &want_ls, tol).await;
}
