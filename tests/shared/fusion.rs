//! Fusion scenarios, written once and run on both GPU targets: elementwise chains compiled into
//! one kernel, reductions reading the chain that feeds them, split reductions and single long lines
//! run in parts — each planned and accounted exactly (`memory_plan` against telemetry).
#![allow(dead_code)]

use std::collections::HashMap;

use affon::{DType, Program, Session};

/// A chain of 8 elementwise ops compiles into one fused dispatch with no intermediate storage, and
/// gives the float64 reference's values; a broadcast leaf (a bias) fuses too.
pub async fn elementwise_chains_fuse(s: &Session) {
    let mut p = Program::new("chain8");
    let x = p.input("x", DType::Float32, &[-1, 4]).unwrap();
    let b = p.input("bias", DType::Float32, &[4]).unwrap();
    let mut v = p.mul(x, x).unwrap(); // 1
    v = p.add(v, b).unwrap(); // 2 (broadcast leaf)
    v = p.relu(v).unwrap(); // 3
    v = p.sqrt(v).unwrap(); // 4
    v = p.neg(v).unwrap(); // 5
    v = p.exp(v).unwrap(); // 6
    v = p.sub(v, x).unwrap(); // 7
    v = p.abs(v).unwrap(); // 8
    p.output("y", v).unwrap();
    let exe = s.compile(&p).unwrap();
    let plan = exe
        .memory_plan(&HashMap::from([("x".to_string(), vec![1000, 4])]))
        .unwrap();
    assert_eq!(
        (plan.intermediate_bytes, plan.output_bytes, plan.peak_bytes),
        (0, 16_000, 16_000)
    );
    let xs: Vec<f32> = (0..4000).map(|i| ((i % 97) as f32 - 48.0) / 10.0).collect();
    let x = s.tensor(&xs, &[1000, 4]).unwrap();
    let bias = s.tensor(&[0.5f32, -1.0, 2.0, -30.0], &[4]).unwrap();
    let d0 = s.stats().dispatches;
    let y = exe.run(&[("x", &x), ("bias", &bias)], None).unwrap().remove(0).1;
    assert_eq!(s.stats().dispatches - d0, 1, "eight ops, one dispatch");
    let got = y.read::<f32>().await.unwrap();
    // float64 reference: |exp(−√max(x² + b, 0)) − x| (eager ops would run the same fused kernel)
    let bs = [0.5f64, -1.0, 2.0, -30.0];
    assert_eq!(got.len(), 4000);
    for (i, g) in got.iter().enumerate() {
        let xv = xs[i] as f64;
        let w = ((-(xv * xv + bs[i % 4]).max(0.0).sqrt()).exp() - xv).abs();
        assert!(
            (*g as f64 - w).abs() <= 1e-6 * w.abs().max(1.0),
            "element {i}: fused {g} vs float64 {w}"
        );
    }
    // a column leaf ([n, 1] into [n, 4]: the strided path) beside a row leaf ([4]: i % 4)
    let mut p = Program::new("chain_col");
    let xn = p.input("x", DType::Float32, &[-1, 4]).unwrap();
    let col = p.input("col", DType::Float32, &[-1, 1]).unwrap();
    let row = p.input("row", DType::Float32, &[4]).unwrap();
    let v = p.mul(xn, col).unwrap();
    let v = p.sub(v, row).unwrap();
    let v = p.relu(v).unwrap();
    p.output("y", v).unwrap();
    let exe = s.compile(&p).unwrap();
    let cols: Vec<f32> = (0..1000).map(|i| (i % 7) as f32 - 3.0).collect();
    let rows = [0.5f32, -1.0, 2.0, -3.0];
    let (c, r) = (
        s.tensor(&cols, &[1000, 1]).unwrap(),
        s.tensor(&rows, &[4]).unwrap(),
    );
    let d0 = s.stats().dispatches;
    let y = exe
        .run(&[("x", &x), ("col", &c), ("row", &r)], None)
        .unwrap()
        .remove(0)
        .1;
    assert_eq!(s.stats().dispatches - d0, 1, "three ops, one dispatch");
    let got = y.read::<f32>().await.unwrap();
    for (i, g) in got.iter().enumerate() {
        let want = (xs[i] as f64 * cols[i / 4] as f64 - rows[i % 4] as f64).max(0.0);
        assert!(
            (*g as f64 - want).abs() <= 1e-6 * want.abs().max(1.0),
            "element {i}: {g} vs {want}"
        );
    }
    // every leaf of the output's shape or a single element: four elements per thread when the
    // length is a multiple of 4 (1000), one per thread otherwise (1001); against float64
    let mut p = Program::new("chain_vec4");
    let x = p.input("x", DType::Float32, &[-1]).unwrap();
    let z = p.input("z", DType::Float32, &[-1]).unwrap();
    let c = p.input("c", DType::Float32, &[]).unwrap();
    let mut v = p.mul(x, z).unwrap();
    v = p.add(v, c).unwrap();
    v = p.tanh(v).unwrap();
    v = p.sub(v, x).unwrap();
    p.output("y", v).unwrap();
    let exe = s.compile(&p).unwrap();
    for n in [1000usize, 1001] {
        let xs: Vec<f32> = (0..n).map(|i| ((i % 89) as f32 - 44.0) / 20.0).collect();
        let zs: Vec<f32> = (0..n).map(|i| ((i % 13) as f32 - 6.0) / 4.0).collect();
        let (x, z, c) = (
            s.tensor(&xs, &[n]).unwrap(),
            s.tensor(&zs, &[n]).unwrap(),
            s.tensor(&[0.25f32], &[]).unwrap(),
        );
        let d0 = s.stats().dispatches;
        let y = exe
            .run(&[("x", &x), ("z", &z), ("c", &c)], None)
            .unwrap()
            .remove(0)
            .1;
        assert_eq!(s.stats().dispatches - d0, 1, "four ops, one dispatch");
        let got = y.read::<f32>().await.unwrap();
        for i in 0..n {
            let (xv, zv) = (xs[i] as f64, zs[i] as f64);
            let want = (xv * zv + 0.25).tanh() - xv;
            assert!(
                (got[i] as f64 - want).abs() <= 1e-6 * want.abs().max(1.0),
                "n = {n}, element {i}: {} vs {want}",
                got[i]
            );
        }
    }
}

/// A reduction computes the elementwise chain that is its only reader as it reads it: `sum`,
/// `mean`, `max` of a chain (with a broadcast leaf, over all axes or some) is one dispatch, the
/// plan has no intermediate, and the values match float64. A chain value with another reader is
/// written once and reduced from its buffer (two dispatches).
pub async fn reductions_read_their_chain(s: &Session) {
    let (rows, cols) = (37usize, 64usize);
    // |x| ≤ 0.5, then 0.6 in the last row: where b < 0.18 a column's maximum is there alone (a max
    // that missed rows would be off by ≥ 0.03); tanh's argument stays within ±2.2 (unsaturated)
    let xs: Vec<f32> = (0..rows * cols)
        .map(|i| {
            if i / cols == rows - 1 {
                0.6
            } else {
                ((i % 101) as f32 - 50.0) / 100.0
            }
        })
        .collect();
    let bs: Vec<f32> = (0..cols).map(|j| (j as f32 - 30.0) / 16.0).collect();
    let f = |x: f64, b: f64| ((x * x - b).tanh() * 3.0).abs();
    let x = s.tensor(&xs, &[rows, cols]).unwrap();
    let bias = s.tensor(&bs, &[cols]).unwrap();
    let reductions: [(&str, &[i64], usize); 4] = [
        ("sum", &[], 1),
        ("mean", &[1], rows),
        ("max", &[0], cols),
        ("sum", &[0, 1], 1),
    ];
    for (which, axes, n) in reductions {
        let mut p = Program::new("chain_reduce");
        let xn = p.input("x", DType::Float32, &[-1, cols as i64]).unwrap();
        let bn = p.input("bias", DType::Float32, &[cols as i64]).unwrap();
        let three = p.constant(&[3.0], &[], DType::Float32).unwrap();
        let mut v = p.mul(xn, xn).unwrap();
        v = p.sub(v, bn).unwrap();
        v = p.tanh(v).unwrap();
        v = p.mul(v, three).unwrap();
        v = p.abs(v).unwrap();
        let r = match which {
            "sum" => p.sum(v, axes, false),
            "mean" => p.mean(v, axes, false),
            _ => p.max(v, axes, false),
        }
        .unwrap();
        p.output("r", r).unwrap();
        let exe = s.compile(&p).unwrap();
        let plan = exe
            .memory_plan(&HashMap::from([
                ("x".to_string(), vec![rows, cols]),
                ("bias".to_string(), vec![cols]),
            ]))
            .unwrap();
        assert_eq!(
            plan.intermediate_bytes, 0,
            "{which} {axes:?}: the chain is never written"
        );
        let d0 = s.stats().dispatches;
        let got = exe.run(&[("x", &x), ("bias", &bias)], None).unwrap().remove(0).1;
        assert_eq!(s.stats().dispatches - d0, 1, "{which} {axes:?}: one dispatch");
        let got = got.read::<f32>().await.unwrap();
        let val = |i: usize, j: usize| f(xs[i * cols + j] as f64, bs[j] as f64);
        let want: Vec<f64> = match (which, axes) {
            ("sum", _) => vec![(0..rows)
                .flat_map(|i| (0..cols).map(move |j| (i, j)))
                .map(|(i, j)| val(i, j))
                .sum()],
            ("mean", _) => (0..rows)
                .map(|i| (0..cols).map(|j| val(i, j)).sum::<f64>() / cols as f64)
                .collect(),
            _ => (0..cols)
                .map(|j| (0..rows).map(|i| val(i, j)).fold(f64::MIN, f64::max))
                .collect(),
        };
        assert_eq!(got.len(), n);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            // the sum: float32 terms summed in some order, 1e-6 per term of the magnitude; a mean
            // of 64 and a max (one element): the chain's own error, 1e-5 relative
            let tol = match which {
                "sum" => 1e-6 * (rows * cols) as f64 * 3.0,
                _ => 1e-5 * w.abs() + 1e-6,
            };
            assert!((*g as f64 - w).abs() <= tol, "{which} {axes:?}[{k}]: {g} vs {w}");
        }
    }
    // the chain's value is also an output: written once, the sum reads the buffer
    let mut p = Program::new("chain_kept");
    let xn = p.input("x", DType::Float32, &[-1, cols as i64]).unwrap();
    let v = p.mul(xn, xn).unwrap();
    let v = p.neg(v).unwrap();
    let r = p.sum(v, &[], false).unwrap();
    p.output("v", v).unwrap();
    p.output("r", r).unwrap();
    let exe = s.compile(&p).unwrap();
    let d0 = s.stats().dispatches;
    let out = exe.run(&[("x", &x)], None).unwrap();
    assert_eq!(s.stats().dispatches - d0, 2, "the kept chain, then its sum");
    let total: f64 = xs.iter().map(|&x| -(x as f64) * x as f64).sum();
    let got = out[1].1.read::<f32>().await.unwrap()[0] as f64;
    assert!(
        (got - total).abs() <= 1e-6 * total.abs().max(1.0) * 10.0,
        "{got} vs {total}"
    );
    // leaves of the chain's shape or single elements: the reduction reads four elements a step
    // (row sums of 64, a max down the 37 rows, the whole sum); one dispatch, float64 reference
    let g = |x: f64| (x * x * 3.0).sqrt() - 0.5;
    for (axes, n) in [(&[1i64][..], rows), (&[0][..], cols), (&[][..], 1)] {
        let mut p = Program::new("chain4_reduce");
        let xn = p.input("x", DType::Float32, &[-1, cols as i64]).unwrap();
        let three = p.constant(&[3.0], &[], DType::Float32).unwrap();
        let half = p.constant(&[0.5], &[], DType::Float32).unwrap();
        let v = p.mul(xn, xn).unwrap();
        let v = p.mul(v, three).unwrap();
        let v = p.sqrt(v).unwrap();
        let v = p.sub(v, half).unwrap();
        let r = if axes == [0] {
            p.max(v, axes, false)
        } else {
            p.sum(v, axes, false)
        }
        .unwrap();
        p.output("r", r).unwrap();
        let exe = s.compile(&p).unwrap();
        let d0 = s.stats().dispatches;
        let got = exe.run(&[("x", &x)], None).unwrap().remove(0).1;
        assert_eq!(s.stats().dispatches - d0, 1, "{axes:?}: one dispatch");
        let got = got.read::<f32>().await.unwrap();
        let val = |i: usize, j: usize| g(xs[i * cols + j] as f64);
        let want: Vec<f64> = match axes {
            [1] => (0..rows).map(|i| (0..cols).map(|j| val(i, j)).sum()).collect(),
            [0] => (0..cols)
                .map(|j| (0..rows).map(|i| val(i, j)).fold(f64::MIN, f64::max))
                .collect(),
            _ => vec![(0..rows * cols).map(|k| val(k / cols, k % cols)).sum()],
        };
        assert_eq!(got.len(), n);
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            // float32 terms (each within 1e-6 relative, at most 3.5) summed in some order
            let tol = 1e-6 * (rows * cols) as f64 * 4.0;
            assert!((*g as f64 - w).abs() <= tol, "chain4 {axes:?}[{k}]: {g} vs {w}");
        }
    }
}

/// A long reduction into few outputs runs in parts (partial results in scratch storage, then a
/// combining pass): the scratch is in the memory plan and in the measured peak, gone when the call
/// returns, eager and compiled; the values match float64.
pub async fn split_reductions_are_planned_and_accounted(s: &Session) {
    let n = 1usize << 17; // 131,072 elements: 8 parts of 16,384
    let xs: Vec<f32> = (0..n).map(|i| ((i % 1000) as f32 - 499.5) / 100.0).collect();
    let want: f64 = xs.iter().map(|&v| (v as f64).exp()).sum();
    let x = s.tensor(&xs, &[n]).unwrap();
    // compiled: exp fused into the sum's first pass
    let mut p = Program::new("long_sum");
    let xn = p.input("x", DType::Float32, &[-1]).unwrap();
    let e = p.exp(xn).unwrap();
    let total = p.sum(e, &[], false).unwrap();
    p.output("total", total).unwrap();
    let exe = s.compile(&p).unwrap();
    let plan = exe
        .memory_plan(&HashMap::from([("x".to_string(), vec![n])]))
        .unwrap();
    assert_eq!(
        (plan.intermediate_bytes, plan.output_bytes, plan.peak_bytes),
        (2048, 4, 2052),
        "8 parts of 64 partial results (2 KiB of scratch) beside the 4-byte output"
    );
    let before = s.stats().live_bytes;
    affon::telemetry::reset_peak();
    let d0 = s.stats().dispatches;
    let out = exe.run(&[("x", &x)], None).unwrap().remove(0).1;
    let st = s.stats();
    assert_eq!(st.dispatches - d0, 2, "the parts, then their combination");
    assert_eq!(
        st.peak_bytes,
        before + plan.peak_bytes,
        "telemetry confirms the plan"
    );
    assert_eq!(st.live_bytes, before + 4, "the scratch is gone when run returns");
    let got = out.read::<f32>().await.unwrap()[0] as f64;
    assert!((got - want).abs() <= 1e-5 * want, "{got} vs {want}");
    // eager: the same accounting
    let before = s.stats().live_bytes;
    affon::telemetry::reset_peak();
    let y = x.sum(&[], false).unwrap();
    let st = s.stats();
    assert_eq!(st.peak_bytes, before + 4 + 2048, "output + scratch at the peak");
    assert_eq!(st.live_bytes, before + 4);
    let plain: f64 = xs.iter().map(|&v| v as f64).sum();
    let got = y.read::<f32>().await.unwrap()[0] as f64;
    assert!(
        (got - plain).abs() <= 1e-5 * xs.iter().map(|v| v.abs() as f64).sum::<f64>(),
        "{got} vs {plain}"
    );
}

/// A single long line runs in parts (`ops::line_parts`): softmax and `cumsum` along one line of
/// 81,920 run as 2 parts, whose summaries (a maximum and a sum of exponentials each: 16 B; a sum
/// each: 8 B) are scratch — in the memory plan and the measured peak beside the 320 KiB output,
/// gone when the run returns; two kernels each; the values match float64.
pub async fn line_parts_are_planned_and_accounted(s: &Session) {
    let n = 81_920usize;
    let xs: Vec<f32> = (0..n).map(|i| ((i * 7) % 5) as f32 - 2.0).collect();
    let x = s.tensor(&xs, &[n]).unwrap();
    for (softmax, scratch) in [(true, 16u64), (false, 8)] {
        let what = if softmax { "softmax" } else { "cumsum" };
        let mut p = Program::new(what);
        let xn = p.input("x", DType::Float32, &[-1]).unwrap();
        let y = if softmax {
            p.softmax(xn, -1)
        } else {
            p.cumsum(xn, 0, false, false)
        }
        .unwrap();
        p.output("y", y).unwrap();
        let exe = s.compile(&p).unwrap();
        let plan = exe
            .memory_plan(&HashMap::from([("x".to_string(), vec![n])]))
            .unwrap();
        let out_bytes = 4 * n as u64;
        assert_eq!(
            (plan.intermediate_bytes, plan.output_bytes, plan.peak_bytes),
            (scratch, out_bytes, out_bytes + scratch),
            "{what}: 2 parts' summaries beside the output"
        );
        let before = s.stats().live_bytes;
        affon::telemetry::reset_peak();
        let d0 = s.stats().dispatches;
        let out = exe.run(&[("x", &x)], None).unwrap().remove(0).1;
        let st = s.stats();
        assert_eq!(
            st.dispatches - d0,
            2,
            "{what}: the parts' summaries, then the parts"
        );
        assert_eq!(
            st.peak_bytes,
            before + plan.peak_bytes,
            "{what}: telemetry confirms the plan"
        );
        assert_eq!(
            st.live_bytes,
            before + out_bytes,
            "{what}: the scratch is gone when run returns"
        );
        let got = out.read::<f32>().await.unwrap();
        let want: Vec<f64> = if softmax {
            let z: f64 = xs.iter().map(|&v| (v as f64 - 2.0).exp()).sum();
            xs.iter().map(|&v| (v as f64 - 2.0).exp() / z).collect()
        } else {
            xs.iter()
                .scan(0f64, |acc, &v| {
                    *acc += v as f64;
                    Some(*acc)
                })
                .collect()
        };
        for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
            // softmax: float32 exponentials over a float32 sum; cumsum: integers, exact
            let tol = if softmax { 1e-5 * w } else { 0.0 };
            assert!((g as f64 - w).abs() <= tol, "{what}[{k}]: {g} vs {w}");
        }
    }
}
