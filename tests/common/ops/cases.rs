//! The suite, part one: elementwise unary and binary ops (odd sizes, broadcasting) and casts.

use affon::ops::{BinaryOp, UnaryOp};
use affon::{DType, Session};

use super::*;

pub async fn unary_cases(s: &Session, rng: &mut Rng) {
    use UnaryOp::*;
    let mut shapes: Vec<Vec<usize>> = SIZES.iter().map(|&n| vec![n]).collect();
    shapes.push(vec![3, 17, 5]);
    for shape in &shapes {
        for op in [Neg, Abs, Square, Relu] {
            let specials = [0.0, -0.0, 1.0, -1.5, 1e30, -1e30, f32::INFINITY];
            check_unary(s, op, &floats(rng, shape, -100.0, 100.0, &specials)).await;
        }
        for op in [Sqrt, Log] {
            check_unary(s, op, &positives(rng, shape)).await;
        }
        let x = floats(rng, shape, -10.0, 10.0, &[0.0, 1.0, -1.0, -100.0]);
        check_unary(s, Exp, &x).await;
        for op in [Sigmoid, Tanh] {
            let specials = [0.0, 1e-3, -1e-3, 50.0, -50.0, 0.5];
            check_unary(s, op, &floats(rng, shape, -20.0, 20.0, &specials)).await;
        }
        // |x| < 2³⁰ so neg/abs stay defined; square wraps
        for op in [Neg, Abs, Square, Relu] {
            check_unary(s, op, &ints(rng, shape, -(1 << 30), 1 << 30)).await;
        }
        for op in [Abs, Square, Relu] {
            check_unary(s, op, &uints(rng, shape, 0, u32::MAX)).await;
        }
    }
}

pub async fn binary_cases(s: &Session, rng: &mut Rng) {
    use BinaryOp::*;
    let mut pairs: Vec<(Vec<usize>, Vec<usize>)> = SIZES.iter().map(|&n| (vec![n], vec![n])).collect();
    pairs.extend([
        (vec![3, 1], vec![1, 4]),
        (vec![2, 3, 4], vec![4]),
        (vec![4], vec![2, 3, 4]),
        (vec![], vec![5]),
        (vec![5], vec![]),
        (vec![2, 1, 17], vec![3, 1]),
        (vec![3, 17, 5], vec![3, 17, 5]),
        // vec4 kernels: a scalar side, a repeated row of a multiple of 4 (also behind size-1
        // dims); a row of 6 falls back to the general kernel
        (vec![], vec![8]),
        (vec![2, 8], vec![]),
        (vec![5, 8], vec![1, 8]),
        (vec![3, 6], vec![6]),
    ]);
    for (sa, sb) in &pairs {
        for op in [Add, Sub, Mul, Div] {
            let a = floats(rng, sa, -100.0, 100.0, &[]);
            let b = if op == Div {
                // divisors away from zero: ±[0.5, 100)
                Host::from_fn(sb, |_| {
                    let m = rng.f32_in(0.5, 100.0);
                    if rng.one_in(2) {
                        -m
                    } else {
                        m
                    }
                })
            } else {
                floats(rng, sb, -100.0, 100.0, &[])
            };
            check_binary(s, op, &a, &b).await;

            // int32: full range (add/sub/mul wrap); division also by 0 and -1, and of i32::MIN
            let a = Host::from_fn(sa, |_| {
                if op == Div && rng.one_in(8) {
                    i32::MIN
                } else {
                    rng.next_u32() as i32
                }
            });
            let b = Host::from_fn(sb, |_| match (op, rng.next_u32() % 8) {
                (Div, 0) => 0,
                (Div, 1) => -1,
                (Div, _) => rng.i32_in(-1000, 1000),
                _ => rng.next_u32() as i32,
            });
            check_binary(s, op, &a, &b).await;

            // uint32: full range (sub wraps below 0); division also by 0
            let a = uints(rng, sa, 0, u32::MAX);
            let b = Host::from_fn(sb, |_| match (op, rng.next_u32() % 8) {
                (Div, 0) => 0,
                (Div, _) => rng.u32_in(1, 1000),
                _ => rng.next_u32(),
            });
            check_binary(s, op, &a, &b).await;
        }
    }
}

pub async fn cast_cases(s: &Session, rng: &mut Rng) {
    for shape in [vec![1], vec![17], vec![3, 5]] {
        let n: usize = shape.iter().product();
        // float32: fractions of both signs (truncation), ±0, negatives (uint32 saturates to 0)
        let specials = [
            -3.7f32,
            -0.5,
            -0.0,
            0.0,
            0.5,
            2.9,
            -2.9,
            1e9,
            -1e9,
            16_777_216.0,
            1.0,
            -1.0,
            100.5,
        ];
        let f: Vec<u32> = (0..n)
            .map(|i| match specials.get(i) {
                Some(&v) if n > 1 => v.to_bits(),
                _ => rng.f32_in(-1000.0, 1000.0).to_bits(),
            })
            .collect();
        check_cast(s, DType::Float32, &f, &shape).await;
        // int32 / uint32: multiples of 256 over the full range (each exactly a float32), small
        // values and zeros
        let i: Vec<u32> = (0..n)
            .map(|_| match rng.next_u32() % 4 {
                0 => 0,
                1 => rng.i32_in(-100, 100) as u32,
                _ => rng.next_u32() & !0xFF,
            })
            .collect();
        check_cast(s, DType::Int32, &i, &shape).await;
        check_cast(s, DType::Uint32, &i, &shape).await;
        let b: Vec<u32> = (0..n).map(|_| rng.next_u32() & 1).collect();
        check_cast(s, DType::Bool, &b, &shape).await;
    }
}
