//! The CPU matmul's texture form (`kernels/operand_tex.rs`: on SwiftShader a product of plain
//! operands with at least 2^20 multiply-adds reads A and B from textures the call fills first).
//! Products that take it match a float64 reference — integers exactly, their words crossing the
//! textures bit for bit — including products recorded into one batch that reuse and evict the
//! cached textures, and a compiled product with a fused bias and relu; the textures are counted
//! exactly in `compute.memory/texture_bytes` and `textures`, and an operand past 16 MiB reads its
//! buffer; `clear_cache()` and `dispose()`
//! release them. `form`: whether the adapter takes the form (the browser suite's SwiftShader does,
//! lavapipe does not: there the same products must match and the counts stay zero).

use affon::{DType, Program, Session, Tensor};

use super::composite::read;
use super::ops::{check_matmul, floats, ints, matmul_ref, uints, Host, Rng};

/// `(texture_bytes, textures)` of a session, from its `compute.memory` records.
fn held(s: &Session) -> (u64, u64) {
    let r = affon::telemetry::ledger_records(&s.stats(), None);
    let get = |n: &str| affon::telemetry::find(&r, "compute.memory", n).unwrap() as u64;
    (get("texture_bytes"), get("textures"))
}

/// The textures of M×K·K×N products when the form is taken: A's K/4 × M texels and B's N/4 × K,
/// 16 bytes each.
fn of(form: bool, products: &[(u64, u64, u64)]) -> (u64, u64) {
    let bytes: u64 = products
        .iter()
        .map(|&(m, k, n)| (k / 4 * m + n / 4 * k) * 16)
        .sum();
    if form {
        (bytes, 2 * products.len() as u64)
    } else {
        (0, 0)
    }
}

/// `a · b` read back against the float64 reference, within `1e-5·k·max|a|·max|b| + 1e-6`.
async fn close(what: &str, got: &Tensor, a: &Host<f32>, b: &Host<f32>) {
    let want = matmul_ref(a, b).data;
    let tol = (1e-5 * a.shape[1] as f64 * a.max_abs() * b.max_abs() + 1e-6) as f32;
    let got = read(got).await;
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= tol,
            "{what}: element {i}: {g} against {w} (±{tol})"
        );
    }
}

pub async fn texture_form_matches_and_is_counted(s: Session, form: bool) {
    let mut rng = Rng::new(0x7e57);
    assert_eq!(held(&s), (0, 0), "nothing recorded yet");
    // 67×132·132×260, 2.3M multiply-adds: rows not in the 8-row blocks, columns in fours but not
    // sixteens (the last block half outside); float32, then int32 and uint32 exactly
    let (sa, sb) = (&[67, 132], &[132, 260]);
    check_matmul(
        &s,
        &floats(&mut rng, sa, -1.0, 1.0, &[]),
        &floats(&mut rng, sb, -1.0, 1.0, &[]),
    )
    .await;
    assert_eq!(held(&s), of(form, &[(67, 132, 260)]), "A's and B's textures");
    check_matmul(&s, &ints(&mut rng, sa, -100, 100), &ints(&mut rng, sb, -100, 100)).await;
    check_matmul(&s, &uints(&mut rng, sa, 0, 100), &uints(&mut rng, sb, 0, 100)).await;
    assert_eq!(
        held(&s),
        of(form, &[(67, 132, 260)]),
        "the same shapes reuse them, any dtype"
    );
    // the threshold: 64×252·252×64 (1,016,064 multiply-adds) reads buffers, 64×256·256×64 (2^20)
    // textures (both full blocks)
    check_matmul(
        &s,
        &floats(&mut rng, &[64, 252], -1.0, 1.0, &[]),
        &floats(&mut rng, &[252, 64], -1.0, 1.0, &[]),
    )
    .await;
    assert_eq!(
        held(&s),
        of(form, &[(67, 132, 260)]),
        "below 2^20 multiply-adds: no texture"
    );
    check_matmul(
        &s,
        &floats(&mut rng, &[64, 256], -1.0, 1.0, &[]),
        &floats(&mut rng, &[256, 64], -1.0, 1.0, &[]),
    )
    .await;
    assert_eq!(
        held(&s),
        of(form, &[(67, 132, 260), (64, 256, 64)]),
        "at 2^20: two more"
    );
    // past the cap (16 MiB a texture with the default bound): B, 1024×4100, would take 16.8 MB
    check_matmul(
        &s,
        &floats(&mut rng, &[4, 1024], -1.0, 1.0, &[]),
        &floats(&mut rng, &[1024, 4100], -1.0, 1.0, &[]),
    )
    .await;
    assert_eq!(
        held(&s),
        of(form, &[(67, 132, 260), (64, 256, 64)]),
        "an operand past 16 MiB: no texture"
    );
    let st = s.stats();
    assert_eq!(
        s.clear_cache(),
        st.pool_cached_bytes + st.staging_bytes + of(form, &[(67, 132, 260), (64, 256, 64)]).0,
        "clear_cache returns the pool's cached bytes, the staging bytes and the textures'"
    );
    assert_eq!(held(&s), (0, 0), "clear_cache releases them");

    // one batch (no readback between): two products of the same shapes (the second's fills
    // overwrite textures the first reads: they must wait for it), a product of the first's output,
    // and a third shape pair that evicts the first two textures while the batch is pending
    let h = |rng: &mut Rng, shape: &[usize]| floats(rng, shape, -1.0, 1.0, &[]);
    let (a1, b1, a2, b2) = (
        h(&mut rng, &[96, 128]),
        h(&mut rng, &[128, 96]),
        h(&mut rng, &[96, 128]),
        h(&mut rng, &[128, 96]),
    );
    let (b3, x, y) = (
        h(&mut rng, &[96, 128]),
        h(&mut rng, &[200, 64]),
        h(&mut rng, &[64, 100]),
    );
    let up = |h: &Host<f32>| s.tensor(&h.data, &h.shape).unwrap();
    let c1 = up(&a1).matmul(&up(&b1)).unwrap();
    let c2 = up(&a2).matmul(&up(&b2)).unwrap();
    let c3 = c1.matmul(&up(&b3)).unwrap();
    let c4 = up(&x).matmul(&up(&y)).unwrap();
    let c1h = Host {
        shape: vec![96, 96],
        data: read(&c1).await,
    };
    close("first of two same-shape products", &c1, &a1, &b1).await;
    close("second of two same-shape products", &c2, &a2, &b2).await;
    close("a product of the first", &c3, &c1h, &b3).await;
    close("a product whose textures evicted the first two", &c4, &x, &y).await;
    // kept: the last four (c3's A 24×96 and B 32×96, c4's A 16×200 and B 25×64)
    assert_eq!(held(&s), of(form, &[(96, 96, 128), (200, 64, 100)]), "four kept");

    // compiled: relu(x · w + bias), the MLP's first layer, the chain fused into the product's stores
    let (x, w, bias) = (
        h(&mut rng, &[64, 784]),
        h(&mut rng, &[784, 256]),
        h(&mut rng, &[256]),
    );
    let mut p = Program::new("dense");
    let xi = p.input("x", DType::Float32, &[64, 784]).unwrap();
    let wi = p.input("w", DType::Float32, &[784, 256]).unwrap();
    let bi = p.input("b", DType::Float32, &[256]).unwrap();
    let mm = p.matmul(xi, wi).unwrap();
    let sum = p.add(mm, bi).unwrap();
    let r = p.relu(sum).unwrap();
    p.output("y", r).unwrap();
    let exe = s.compile(&p).unwrap();
    let (tx, tw, tb) = (up(&x), up(&w), up(&bias));
    let outs = exe.run(&[("x", &tx), ("w", &tw), ("b", &tb)], None).unwrap();
    let got = read(&outs[0].1).await;
    let tol = 1e-5 * 784.0 * x.max_abs() * w.max_abs() + 1e-6;
    for i in 0..64 {
        for j in 0..256 {
            let dot: f64 = (0..784)
                .map(|k| x.data[i * 784 + k] as f64 * w.data[k * 256 + j] as f64)
                .sum();
            let want = (dot + bias.data[j] as f64).max(0.0);
            let g = got[i * 256 + j] as f64;
            assert!(
                (g - want).abs() <= tol,
                "relu(x·w + b)[{i}][{j}]: {g} against {want} (±{tol})"
            );
        }
    }
    assert_eq!(
        held(&s),
        of(form, &[(200, 64, 100), (64, 784, 256)]),
        "the MLP layer's two evict c3's"
    );
    drop((exe, outs, tx, tw, tb, c1, c2, c3, c4));
    s.dispose();
    assert_eq!(held(&s), (0, 0), "dispose releases them");
}

/// Dispatches of `f`'s products once read back: `(outputs, dispatches)`.
async fn counted(s: &Session, f: impl FnOnce() -> Vec<Tensor>) -> (Vec<Tensor>, u64) {
    let d = s.stats().dispatches;
    let outs = f();
    for t in &outs {
        read(t).await;
    }
    (outs, s.stats().dispatches - d)
}

/// A product whose operand is unchanged since its texture was filled from it skips that fill; any
/// write of the operand's buffer since — an upload, a kernel's output in a buffer the pool handed
/// on, a state assigned by a program run, any dispatch that binds the buffer — makes the next
/// product refill it, and every product matches float64. `form` as above: without the form no
/// fill is ever counted.
pub async fn unchanged_operands_skip_their_fills(s: Session, form: bool) {
    let mut rng = Rng::new(0xf111);
    let fills = |n: u64| if form { n } else { 0 };
    let h = |rng: &mut Rng, shape: &[usize]| floats(rng, shape, -1.0, 1.0, &[]);
    let up = |h: &Host<f32>| s.tensor(&h.data, &h.shape).unwrap();
    // 64×256·256×64: 2^20 multiply-adds, the texture form
    let (ha, hb) = (h(&mut rng, &[64, 256]), h(&mut rng, &[256, 64]));
    let (a, b) = (up(&ha), up(&hb));
    let (c, first) = counted(&s, || vec![a.matmul(&b).unwrap()]).await;
    close("the first product", &c[0], &ha, &hb).await;
    let (c, again) = counted(&s, || vec![a.matmul(&b).unwrap()]).await;
    close("the same operands again", &c[0], &ha, &hb).await;
    assert_eq!(first - again, fills(2), "both fills skipped");
    let product = again; // the product's own dispatches
    drop((b, c));

    // a new B uploaded, likely into the buffer b left to the pool
    let hb2 = h(&mut rng, &[256, 64]);
    let b2 = up(&hb2);
    let (c, d) = counted(&s, || vec![a.matmul(&b2).unwrap()]).await;
    close("after an upload", &c[0], &ha, &hb2).await;
    assert_eq!(d, product + fills(1), "B refilled, A skipped");
    drop((b2, c));
    // a new B written by a kernel, likely into that buffer again
    let hsrc = h(&mut rng, &[256, 64]);
    let src = up(&hsrc);
    let b3 = src.neg().unwrap();
    read(&b3).await;
    let hb3 = Host {
        shape: vec![256, 64],
        data: hsrc.data.iter().map(|v| -v).collect(),
    };
    let (c, d) = counted(&s, || vec![a.matmul(&b3).unwrap()]).await;
    close("after a kernel's output", &c[0], &ha, &hb3).await;
    assert_eq!(d, product + fills(1), "B refilled, A skipped");
    // any dispatch binding A's buffer counts as writing it (which bindings a kernel writes is the
    // kernel's own): A refilled after an op that reads it
    read(&a.abs().unwrap()).await;
    let (c, d) = counted(&s, || vec![a.matmul(&b3).unwrap()]).await;
    close("after an op read A", &c[0], &ha, &hb3).await;
    assert_eq!(d, product + fills(1), "A refilled, B skipped");
    // two products in one batch, the second of the first's output: c1's texture is filled from a
    // buffer the batch writes first
    let (cs, d) = counted(&s, || {
        let c1 = a.matmul(&b3).unwrap(); // 64×64
        let c2 = c1.matmul(&a).unwrap(); // 64×64·64×256: A's texture from c1, B's from a
        vec![c1, c2]
    })
    .await;
    let c1h = Host {
        shape: vec![64, 64],
        data: read(&cs[0]).await,
    };
    close("a product in a batch", &cs[0], &ha, &hb3).await;
    close("a product of it", &cs[1], &c1h, &ha).await;
    assert!(d > product, "c1's product and c2's");
    drop((cs, c));

    // compiled: y = x · w with w a state each run assigns w·0.5 + 0.25, x = a each run: every run
    // refills B (its words changed since the run before), none A (nothing wrote a)
    let mut p = Program::new("state product");
    let xi = p.input("x", DType::Float32, &[64, 256]).unwrap();
    let wi = p.state("w", DType::Float32, &[256, 64]).unwrap();
    let y = p.matmul(xi, wi).unwrap();
    p.output("y", y).unwrap();
    let half = p.constant(&[0.5], &[], DType::Float32).unwrap();
    let quarter = p.constant(&[0.25], &[], DType::Float32).unwrap();
    let scaled = p.mul(wi, half).unwrap();
    let next = p.add(scaled, quarter).unwrap();
    p.assign("w", next).unwrap();
    let exe = s.compile(&p).unwrap();
    let hw = h(&mut rng, &[256, 64]);
    let state = exe.create_state(&[("w", &up(&hw))]).unwrap();
    let mut w = hw.clone();
    let mut runs = Vec::new();
    for _ in 0..3 {
        // no readback between runs: one batch, each run's fill after the assignment before it
        let d = s.stats().dispatches;
        let outs = exe.run(&[("x", &a)], Some(&state)).unwrap();
        runs.push((outs, s.stats().dispatches - d, w.clone()));
        w.data.iter_mut().for_each(|v| *v = *v * 0.5 + 0.25);
    }
    for (i, (outs, _, w)) in runs.iter().enumerate() {
        close(&format!("run {i} of the assigning program"), &outs[0].1, &ha, w).await;
    }
    assert_eq!(
        (runs[0].1, runs[1].1),
        (runs[2].1, runs[2].1),
        "every run refills B alike"
    );
    // the same product with a state no run assigns: the first run fills B from the new state's
    // buffer, the second skips it too
    let mut p = Program::new("product");
    let xi = p.input("x", DType::Float32, &[64, 256]).unwrap();
    let wi = p.state("w", DType::Float32, &[256, 64]).unwrap();
    let y = p.matmul(xi, wi).unwrap();
    p.output("y", y).unwrap();
    let exe = s.compile(&p).unwrap();
    let state = exe.create_state(&[("w", &up(&w))]).unwrap();
    for (run, want) in [(0, product + fills(1)), (1, product)] {
        let (outs, d) = counted(&s, || {
            let o = exe.run(&[("x", &a)], Some(&state)).unwrap();
            o.into_iter().map(|(_, t)| t).collect()
        })
        .await;
        close(&format!("run {run} of the product"), &outs[0], &ha, &w).await;
        assert_eq!(d, want, "run {run}: B filled once, A never");
    }

    // one run that fills x·v's textures, evicts them with two other shapes' products, then takes
    // x·v again: its textures are made anew, empty, and must be filled again within the run
    let (hv, hp, hq, hr, hs) = (
        h(&mut rng, &[256, 64]),
        h(&mut rng, &[64, 128]),
        h(&mut rng, &[128, 128]),
        h(&mut rng, &[128, 64]),
        h(&mut rng, &[64, 128]),
    );
    let mut p = Program::new("evicting products");
    let inputs: Vec<_> = [
        ("x", &ha),
        ("v", &hv),
        ("p", &hp),
        ("q", &hq),
        ("r", &hr),
        ("s", &hs),
    ]
    .iter()
    .map(|(n, t)| {
        let shape: Vec<i64> = t.shape.iter().map(|&d| d as i64).collect();
        p.input(n, DType::Float32, &shape).unwrap()
    })
    .collect();
    let (x, v, pp, q, r, ss) = (inputs[0], inputs[1], inputs[2], inputs[3], inputs[4], inputs[5]);
    let y1 = p.matmul(x, v).unwrap(); // A (0, 64, 64), B (1, 16, 256)
    let y2 = p.matmul(pp, q).unwrap(); // 64×128·128×128: two more
    let y3 = p.matmul(r, ss).unwrap(); // 128×64·64×128: two more, evicting y1's
    let y4 = p.matmul(x, v).unwrap(); // y1's keys again
    for (n, y) in [("y1", y1), ("y2", y2), ("y3", y3), ("y4", y4)] {
        p.output(n, y).unwrap();
    }
    let exe = s.compile(&p).unwrap();
    let ts: Vec<Tensor> = [&hv, &hp, &hq, &hr, &hs].iter().map(|t| up(t)).collect();
    let (outs, d) = counted(&s, || {
        let args = [
            ("x", &a),
            ("v", &ts[0]),
            ("p", &ts[1]),
            ("q", &ts[2]),
            ("r", &ts[3]),
            ("s", &ts[4]),
        ];
        let o = exe.run(&args, None).unwrap();
        o.into_iter().map(|(_, t)| t).collect()
    })
    .await;
    close("x·v", &outs[0], &ha, &hv).await;
    close("p·q", &outs[1], &hp, &hq).await;
    close("r·s", &outs[2], &hr, &hs).await;
    close("x·v after its textures were evicted", &outs[3], &ha, &hv).await;
    // y1 fills B (A holds a already), y2 and y3 both, y4 both again
    assert_eq!(d, 4 * product + fills(7), "four products and their fills");
}
