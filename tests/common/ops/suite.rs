//! The suite, part two: products, reductions, softmax, layout ops and op errors.

use affon::ops::ReduceOp;
use affon::{Result, Session, Tensor};

use super::*;

pub async fn matmul_cases(s: &Session, rng: &mut Rng) {
    // GPU forms: the first eight use the small kernel; the next three have at least 16 64×64 output
    // tiles and use the large one, with edges that are not multiples of 64 or 4; the last two the
    // big one (128×128 tiles). CPU form (every
    // case): 4×8 blocks, N a multiple of 4 or not (vec4 or scalar loads of B), batches broadcast;
    // 8×16 blocks where K and N are multiples of 4 (16×16, 256×64·64×256 and the last four, whose
    // rows are not in eights and columns in eights but not sixteens: a block half outside). A
    // workgroup spans 1, 2, 4 or 8 blocks across (the fewest that cover N): 8×16 blocks two across
    // (N = 32, rows in neither eights nor a workgroup's 256) and four across with the last outside
    // (N = 40); 4×8 blocks two across (N = 13, K not in fours) and four (N = 18).
    let cases: [(&[usize], &[usize]); 17] = [
        (&[17, 33], &[33, 5]),
        (&[1, 1], &[1, 1]),
        (&[2, 3, 17, 9], &[9, 4]),
        (&[2, 1, 5, 6], &[3, 6, 7]),
        (&[4, 5], &[2, 5, 3]),
        (&[16, 16], &[16, 16]),
        (&[33, 40], &[40, 18]),
        (&[1, 255], &[255, 3]),
        (&[256, 64], &[64, 256]),
        (&[301, 37], &[37, 259]),
        (&[3, 130, 70], &[70, 150]),
        (&[21, 12], &[12, 40]),
        (&[2, 70, 20], &[20, 136]),
        (&[301, 24], &[24, 32]),
        (&[9, 7], &[7, 13]),
        // GPU forms: 128 128×128 output tiles (64 make the big kernel), plain operands with K and N in fours:
        // rows and columns not in 128s, K over three 16-deep tiles with the last partial, B broadcast
        // over the batch; then A broadcast, K = 4 (one partial tile)
        (&[32, 130, 36], &[36, 132]),
        (&[130, 4], &[32, 4, 136]),
    ];
    for (sa, sb) in cases {
        check_matmul(
            s,
            &floats(rng, sa, -1.0, 1.0, &[]),
            &floats(rng, sb, -1.0, 1.0, &[]),
        )
        .await;
        check_matmul(s, &ints(rng, sa, -100, 100), &ints(rng, sb, -100, 100)).await;
        check_matmul(s, &uints(rng, sa, 0, 100), &uints(rng, sb, 0, 100)).await;
    }
    // transposed operands, both GPU kernels (cases 8 to 10 and 15 use the large one: the big kernel
    // takes plain operands only), batched;
    // the CPU form with edges (rows not in fours, columns not in eights, k not in fours) and without
    for (sa, sb) in [
        cases[0], cases[3], cases[6], cases[8], cases[9], cases[10], cases[13], cases[14], cases[15],
    ] {
        for (ta, tb) in [(true, false), (false, true), (true, true)] {
            let (a, b) = (floats(rng, sa, -1.0, 1.0, &[]), floats(rng, sb, -1.0, 1.0, &[]));
            check_matmul_t(s, &a, &b, ta, tb).await;
        }
    }
    // wrapping integer products and sums: exact whatever the order
    let (a, b) = (
        ints(rng, &[5, 17], i32::MIN, i32::MAX),
        ints(rng, &[17, 3], i32::MIN, i32::MAX),
    );
    check_matmul(s, &a, &b).await;
}

pub async fn reduce_cases(s: &Session, rng: &mut Rng) {
    use ReduceOp::*;
    let shape = [3usize, 17, 5];
    let axes_sets: [&[i64]; 11] = [
        &[0],
        &[1],
        &[2],
        &[-1],
        &[-2],
        &[0, 2],
        &[-3, -1],
        &[1, 2],
        &[2, 0],
        &[0, 1, 2],
        &[],
    ];
    let x = floats(rng, &shape, -10.0, 10.0, &[]);
    let xi = ints(rng, &shape, i32::MIN, i32::MAX); // sums wrap
    let xu = uints(rng, &shape, 0, u32::MAX);
    for axes in axes_sets {
        for keep in [false, true] {
            for op in [Sum, Mean, Max, Min] {
                check_reduce(s, op, &x, axes, keep).await;
            }
            for op in [Sum, Max, Min] {
                check_reduce(s, op, &xi, axes, keep).await;
                check_reduce(s, op, &xu, axes, keep).await;
            }
        }
    }
    // longer than the 64-thread workgroup; 4096+ per output (256 threads), trailing axes
    // (contiguous) or not, size-1 axes between; 1-element and scalar inputs
    let others: [(&[usize], &[i64]); 16] = [
        (&[2, 1000], &[1]),
        (&[2, 1000], &[0]),
        (&[2, 5003], &[1]),
        (&[5003, 2], &[0]),
        (&[70, 1, 70], &[0, 2]),
        (&[3, 1, 1500], &[1, 2]),
        (&[1, 4, 1], &[0]),
        // long reductions into few outputs: split into parts, then combined
        (&[70_000], &[]),
        (&[3, 40_000], &[1]),
        (&[40_000, 3], &[0]),
        // split, the length not a multiple of 4 (no vec4 loads)
        (&[70_001], &[]),
        (&[3, 40_002], &[1]),
        (&[255], &[]),
        (&[255], &[0]),
        (&[1], &[0]),
        (&[], &[]),
    ];
    for (shape, axes) in others {
        let x = floats(rng, shape, -10.0, 10.0, &[]);
        let xi = ints(rng, shape, -1000, 1000);
        let xu = uints(rng, shape, 0, 1000);
        for keep in [false, true] {
            for op in [Sum, Mean, Max, Min] {
                check_reduce(s, op, &x, axes, keep).await;
            }
            for op in [Sum, Max, Min] {
                check_reduce(s, op, &xi, axes, keep).await;
                check_reduce(s, op, &xu, axes, keep).await;
            }
        }
    }
}

pub async fn softmax_cases(s: &Session, rng: &mut Rng) {
    let x = floats(rng, &[3, 17, 5], -5.0, 5.0, &[]);
    for axis in [0, 1, 2, -1, -2, -3] {
        check_softmax(s, &x, axis).await;
    }
    // wide range: the row maximum must be subtracted before exp
    let wide = floats(rng, &[3, 17, 5], -100.0, 100.0, &[]);
    for axis in [0, 1, -1] {
        check_softmax(s, &wide, axis).await;
    }
    let long = floats(rng, &[2, 255], -5.0, 5.0, &[]);
    for axis in [0, -1] {
        check_softmax(s, &long, axis).await;
    }
    check_softmax(s, &floats(rng, &[1], -5.0, 5.0, &[]), 0).await;
}

pub async fn layout_cases(s: &Session, rng: &mut Rng) {
    for shape in [vec![3, 17, 5], vec![17, 33], vec![255], vec![2, 3, 4, 5], vec![]] {
        check_layout(s, &floats(rng, &shape, -100.0, 100.0, &[])).await;
        check_layout(s, &ints(rng, &shape, i32::MIN, i32::MAX)).await;
        check_layout(s, &uints(rng, &shape, 0, u32::MAX)).await;
        check_layout(s, &Host::from_fn(&shape, |_| rng.one_in(2))).await;
    }
}

pub async fn error_cases(s: &Session) {
    let a23 = s.tensor(&[1.0f32; 6], &[2, 3]).unwrap();
    let a4 = s.tensor(&[1.0f32; 4], &[4]).unwrap();
    let a24 = s.tensor(&[1.0f32; 8], &[2, 4]).unwrap();
    let i23 = s.tensor(&[1i32; 6], &[2, 3]).unwrap();
    let scalar = s.tensor(&[3.0f32], &[]).unwrap();
    let before = s.stats();
    // each failed call leaves every compute.storage / compute.memory record where it was
    type Call<'a> = Box<dyn FnOnce() -> Result<Tensor> + 'a>;
    let cases: [(&str, Call, &str); 7] = [
        ("add [2, 3] + [4]", Box::new(|| a23.add(&a4)), "SHAPE_MISMATCH"),
        (
            "add float32 + int32",
            Box::new(|| a23.add(&i23)),
            "DTYPE_MISMATCH",
        ),
        ("sqrt int32 [2, 3]", Box::new(|| i23.sqrt()), "DTYPE_MISMATCH"),
        (
            "matmul [2, 3] · [2, 4]",
            Box::new(|| a23.matmul(&a24)),
            "SHAPE_MISMATCH",
        ),
        (
            "sum [2, 3] axis 5",
            Box::new(|| a23.sum(&[5], false)),
            "INVALID_ARGUMENT",
        ),
        // a scalar has no axis (TF.js: "in range [-0, 0)"); axis 0 was accepted (found by the
        // browser property test)
        (
            "max [] axis 0",
            Box::new(|| scalar.max(&[0], true)),
            "INVALID_ARGUMENT",
        ),
        (
            "softmax [] axis -1",
            Box::new(|| scalar.softmax(-1)),
            "INVALID_ARGUMENT",
        ),
    ];
    for (what, call, code) in cases {
        crate::common::ledger::fails_unchanged(code, what, call);
    }
    assert_eq!(s.stats(), before, "failed op calls change no counter");
}
