//! The nn ops inside compiled programs: a conv2d → bias → relu → maxPool → gather program against
//! the eager ops and the float64 reference, and matmul or convolution epilogues (one dispatch, no
//! intermediate buffer) against the same ops run one by one.

use super::*;

/// A conv2d → bias → relu → maxPool → gather program against the eager ops and the reference;
/// the JSON form round-trips; constant out-of-range indices are rejected when the node is added.
pub(super) async fn nn_in_a_program(s: &Session, rng: &mut Rng) {
    let (x, f) = (random(rng, &[2, 6, 6, 3]), random(rng, &[3, 3, 3, 4]));
    let bias = random(rng, &[4]);
    let mut p = Program::new("convnet");
    let xi = p.input("x", DType::Float32, &[-1, 6, 6, 3]).unwrap();
    let fi = p
        .constant(
            &f.data.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            &[3, 3, 3, 4],
            DType::Float32,
        )
        .unwrap();
    let bi = p
        .constant(
            &bias.data.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            &[4],
            DType::Float32,
        )
        .unwrap();
    let c = p.conv2d(xi, fi, Pair::ONE, Pad::SAME, Pair::ONE).unwrap();
    let b = p.add(c, bi).unwrap();
    let r = p.relu(b).unwrap();
    let m = p.max_pool(r, Pair(2, 2), Pair(2, 2), Pad::VALID).unwrap();
    let idx = p.constant(&[1.0, 0.0], &[2], DType::Int32).unwrap();
    let g = p.gather(m, idx, 0).unwrap();
    p.output("y", g).unwrap();
    let before = p.nodes().len();
    let bad = p.constant(&[0.0, 5.0], &[2], DType::Int32).unwrap();
    // axis 1 has 3 rows: a bad node is INVALID_PROGRAM naming it (as every rejected attribute is
    // when building)
    let e = p.gather(m, bad, 1).unwrap_err();
    assert_eq!(e.code(), "INVALID_PROGRAM", "{e}");
    assert!(
        e.to_string()
            .contains("node 10 (gather): gather: index 5 is out of range"),
        "{e}"
    );
    assert_eq!(p.nodes().len(), before + 1, "the rejected gather adds no node");
    let json = p.to_json_string();
    assert_eq!(
        Program::from_json(&json).unwrap().to_json_string(),
        json,
        "conv nodes round-trip"
    );
    assert!(
        json.contains("\"pad\":\"same\"") && json.contains("\"filterSize\":[2,2]"),
        "{json}"
    );

    let (conv, _) = conv_ref(&x, &f, Pair::ONE, Pad::SAME, Pair::ONE, false);
    let act = Host::from_fn(&conv.shape, |i| (conv.data[i] + bias.data[i % 4]).max(0.0));
    let pooled = pool_ref(&act, Pair(2, 2), Pair(2, 2), Pad::VALID, true);
    let per = pooled.data.len() / 2;
    let want = Host {
        shape: pooled.shape.clone(),
        data: pooled.data[per..]
            .iter()
            .chain(&pooled.data[..per])
            .copied()
            .collect(),
    };
    let exe = s.compile(&p).unwrap();
    let out = exe.run(&[("x", &x.upload(s))], None).unwrap().pop().unwrap().1;
    let got = out.read::<f32>().await.unwrap();
    compare(
        "program conv2d → bias → relu → maxPool → gather",
        &got,
        &want,
        Tol::Close { rel: 1e-4, abs: 1e-5 },
    );

    // along the dynamic batch axis the constant is checked when a run fixes the batch
    let mut q = Program::new("rows");
    let xi = q.input("x", DType::Float32, &[-1, 2]).unwrap();
    let idx = q.constant(&[0.0, 2.0], &[2], DType::Int32).unwrap();
    let g = q.gather(xi, idx, 0).unwrap();
    q.output("y", g).unwrap();
    let exe = s.compile(&q).unwrap();
    let small = Host::from_fn(&[2, 2], |i| i as f32).upload(s);
    fails_unchanged("INVALID_ARGUMENT", "gather index 2 of a batch of 2", || {
        exe.run(&[("x", &small)], None)
    });
    let rows = Host::from_fn(&[3, 2], |i| i as f32);
    let want = Host::from_fn(&[2, 2], |i| rows.data[[0, 2][i / 2] * 2 + i % 2]);
    let got = exe.run(&[("x", &rows.upload(s))], None).unwrap().pop().unwrap().1;
    compare(
        "gather rows 0 and 2",
        &got.read::<f32>().await.unwrap(),
        &want,
        EXACT,
    );
}

/// Runs `p` on `x`, returning its first output and the dispatches and storage allocations the run
/// made.
pub(super) async fn run_counted(s: &Session, p: &Program, x: &Host<f32>) -> (Vec<f32>, u64, u64) {
    let exe = s.compile(p).unwrap();
    let tx = x.upload(s);
    exe.run(&[("x", &tx)], None).unwrap(); // the first run compiles its pipelines
    let before = s.stats();
    let out = exe.run(&[("x", &tx)], None).unwrap().remove(0).1;
    let after = s.stats();
    let got = out.read::<f32>().await.unwrap();
    (
        got,
        after.dispatches - before.dispatches,
        after.allocations - before.allocations,
    )
}

/// A matmul or convolution followed by elementwise ops runs them in its store: one dispatch, no
/// intermediate buffer — and the same numbers as the unfused eager ops.
pub(super) async fn epilogues_fuse_and_match(s: &Session, rng: &mut Rng) {
    let f64s = |h: &Host<f32>| h.data.iter().map(|&v| v as f64).collect::<Vec<_>>();
    let close = Tol::Close { rel: 1e-5, abs: 1e-5 };
    // matmul (both the small and the tiled kernel) + a broadcast bias + relu; on CPU adapters the
    // third and fourth are the 8×16-block form under an epilogue (N a multiple of 4 but not of 8 or
    // 16, rows not in fours; the bias read once per column quad through `channels`), as is the last,
    // the first two the 4×8 form; on GPUs the last is the big kernel (72 128×128 tiles, the bias read
    // per quad)
    for (m, k, n) in [
        (4usize, 8usize, 6usize),
        (96, 40, 130),
        (70, 36, 36),
        (70, 132, 36),
        (1000, 20, 1028),
    ] {
        let (x, w, b) = (random(rng, &[m, k]), random(rng, &[k, n]), random(rng, &[n]));
        let mut p = Program::new("dense");
        let xi = p.input("x", DType::Float32, &[-1, k as i64]).unwrap();
        let wi = p.constant(&f64s(&w), &[k, n], DType::Float32).unwrap();
        let bi = p.constant(&f64s(&b), &[n], DType::Float32).unwrap();
        let mm = p.matmul(xi, wi).unwrap();
        let y = p.add(mm, bi).unwrap();
        let r = p.relu(y).unwrap();
        p.output("y", r).unwrap();
        let (got, dispatches, allocations) = run_counted(s, &p, &x).await;
        // the counted run is the second over the same x and w: on SwiftShader the last product's
        // operand textures already hold them, so it fills neither (`kernels/operand_tex.rs`)
        assert_eq!(
            (dispatches, allocations),
            (1, 1),
            "dense {m}×{k}×{n}: one dispatch, the output only"
        );
        let eager = x
            .upload(s)
            .matmul(&w.upload(s))
            .and_then(|t| t.add(&b.upload(s)))
            .and_then(|t| t.relu());
        let want = Host {
            shape: vec![m, n],
            data: eager.unwrap().read::<f32>().await.unwrap(),
        };
        compare(&format!("dense {m}×{k}×{n} fused vs eager"), &got, &want, close);
        let reference = Host::from_fn(&[m, n], |i| {
            let (r, c) = (i / n, i % n);
            let dot: f64 = (0..k)
                .map(|j| x.data[r * k + j] as f64 * w.data[j * n + c] as f64)
                .sum();
            (dot + b.data[c] as f64).max(0.0) as f32
        });
        compare(
            &format!("dense {m}×{k}×{n} vs float64"),
            &got,
            &reference,
            Tol::Close { rel: 1e-4, abs: 1e-4 },
        );
    }
    // depthwise + batchNorm-style centre, scale and shift + relu6 (clipByValue); pointwise + a
    // residual leaf of the full output shape (the pointwise kernel views the output as a matrix).
    // The depthwise epilogue reads the kernel's two inputs and three per-channel vectors; the
    // clip's bounds are written into the kernel, not bound (eight buffers would not fit).
    let (x, dw, pw) = (
        random(rng, &[1, 6, 6, 4]),
        random(rng, &[3, 3, 4, 1]),
        random(rng, &[1, 1, 4, 4]),
    );
    let (scale, shift, mean) = (random(rng, &[4]), random(rng, &[4]), random(rng, &[4]));
    let mut p = Program::new("mobilenet block");
    let xi = p.input("x", DType::Float32, &[1, 6, 6, 4]).unwrap();
    let dwi = p.constant(&f64s(&dw), &[3, 3, 4, 1], DType::Float32).unwrap();
    let pwi = p.constant(&f64s(&pw), &[1, 1, 4, 4], DType::Float32).unwrap();
    let sc = p.constant(&f64s(&scale), &[4], DType::Float32).unwrap();
    let sh = p.constant(&f64s(&shift), &[4], DType::Float32).unwrap();
    let mu = p.constant(&f64s(&mean), &[4], DType::Float32).unwrap();
    let d = p
        .depthwise_conv2d(xi, dwi, Pair::ONE, Pad::SAME, Pair::ONE)
        .unwrap();
    let d = p.sub(d, mu).unwrap();
    let d = p.mul(d, sc).unwrap();
    let d = p.add(d, sh).unwrap();
    let d = p.clip_by_value(d, 0.0, 6.0).unwrap();
    let q = p.conv2d(d, pwi, Pair::ONE, Pad::VALID, Pair::ONE).unwrap();
    let y = p.add(q, xi).unwrap();
    p.output("y", y).unwrap();
    let (got, dispatches, allocations) = run_counted(s, &p, &x).await;
    assert_eq!(
        (dispatches, allocations),
        (2, 2),
        "two kernels: depthwise+epilogue, pointwise+residual"
    );
    let tx = x.upload(s);
    let e = tx
        .depthwise_conv2d(&dw.upload(s), Pair::ONE, Pad::SAME, Pair::ONE)
        .and_then(|t| t.sub(&mean.upload(s)))
        .and_then(|t| t.mul(&scale.upload(s)))
        .and_then(|t| t.add(&shift.upload(s)))
        .and_then(|t| t.clip_by_value(0.0, 6.0))
        .and_then(|t| t.conv2d(&pw.upload(s), Pair::ONE, Pad::VALID, Pair::ONE))
        .and_then(|t| t.add(&tx))
        .unwrap();
    let want = Host {
        shape: vec![1, 6, 6, 4],
        data: e.read::<f32>().await.unwrap(),
    };
    compare("mobilenet block fused vs eager", &got, &want, close);
    // and against float64 (the eager ops fuse the same way): depthwise, the per-channel affine
    // and clamp, pointwise, the residual
    let x64 = f64s(&x);
    let (_, dref, _) = conv_f64(
        &x64,
        &[1, 6, 6, 4],
        &f64s(&dw),
        &[3, 3, 4, 1],
        Pair::ONE,
        Pad::SAME,
        Pair::ONE,
        true,
    );
    let c = |h: &Host<f32>, i: usize| h.data[i % 4] as f64;
    let act: Vec<f64> = (0..dref.len())
        .map(|i| ((dref[i] - c(&mean, i)) * c(&scale, i) + c(&shift, i)).clamp(0.0, 6.0))
        .collect();
    let (_, q, _) = conv_f64(
        &act,
        &[1, 6, 6, 4],
        &f64s(&pw),
        &[1, 1, 4, 4],
        Pair::ONE,
        Pad::VALID,
        Pair::ONE,
        false,
    );
    assert_eq!(q.len(), x64.len());
    let reference = Host::from_fn(&[1, 6, 6, 4], |i| (q[i] + x64[i]) as f32);
    compare(
        "mobilenet block vs float64",
        &got,
        &reference,
        Tol::Close { rel: 1e-4, abs: 1e-4 },
    );
}
