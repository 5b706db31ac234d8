//! Gradient cases, part two: shape ops (reshape, transpose, slice, concat, gather and the like) and
//! `matmul` with transposed operands.

use super::*;

pub(super) fn shape_cases() -> Vec<Case> {
    let s: &[usize] = &[3, 4];
    let at = |x: &[f64], r: usize, c: usize| x[r * 4 + c];
    vec![
        case(
            "reshape",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.reshape(x[0], vec![2, 6])),
            Box::new(|x| x[0].clone()),
        ),
        case(
            "transpose",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.transpose(x[0], Some(vec![1, 0]))),
            Box::new(move |x| (0..12).map(|i| at(&x[0], i % 3, i / 3)).collect()),
        ),
        case(
            "slice",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.slice(x[0], vec![1, 1], vec![2, 2])),
            Box::new(move |x| vec![at(&x[0], 1, 1), at(&x[0], 1, 2), at(&x[0], 2, 1), at(&x[0], 2, 2)]),
        ),
        case(
            "pad",
            &[(&[2, 2], -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.pad(x[0], vec![(1, 0), (0, 1)], 0.0)),
            Box::new(|x| vec![0.0, 0.0, 0.0, x[0][0], x[0][1], 0.0, x[0][2], x[0][3], 0.0]),
        ),
        case(
            "tile",
            &[(&[2, 2], -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.tile(x[0], vec![2, 1])),
            Box::new(|x| [x[0].clone(), x[0].clone()].concat()),
        ),
        case(
            "concat(axis 1)",
            &[(&[2, 2], -2.0, 2.0, 0.0), (&[2, 1], -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.join(&[x[0], x[1]], 1, false)),
            Box::new(|x| vec![x[0][0], x[0][1], x[1][0], x[0][2], x[0][3], x[1][1]]),
        ),
        case(
            "where (constant condition, broadcast b)",
            &[(s, -2.0, 2.0, 0.0), (&[4], -2.0, 2.0, 0.0)],
            Box::new(|p, x| {
                let c = p.constant(
                    &[1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0],
                    &[3, 4],
                    DType::Bool,
                )?;
                p.select(x[0], c, x[1])
            }),
            Box::new(|x| {
                let c = [1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0];
                (0..12)
                    .map(|i| if c[i] == 1 { x[0][i] } else { x[1][i % 4] })
                    .collect()
            }),
        ),
        case(
            "gather (embedding rows, repeats)",
            &[(&[5, 3], -2.0, 2.0, 0.0)],
            Box::new(|p, x| {
                let i = p.constant(&[4.0, 0.0, 2.0, 2.0], &[4], DType::Int32)?;
                p.gather(x[0], i, 0)
            }),
            Box::new(|x| {
                [4, 0, 2, 2]
                    .iter()
                    .flat_map(|&r| x[0][r * 3..r * 3 + 3].to_vec())
                    .collect()
            }),
        ),
        case(
            "gather (axis 1, 2-D indices)",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| {
                let i = p.constant(&[2.0, 0.0, 3.0, 3.0], &[2, 2], DType::Int32)?;
                p.gather(x[0], i, 1)
            }),
            Box::new(move |x| {
                (0..3)
                    .flat_map(|r| [2, 0, 3, 3].map(|c| at(&x[0], r, c)))
                    .collect()
            }),
        ),
        case(
            "clipByValue",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| p.clip_by_value(x[0], -1.0, 1.0)),
            Box::new(|x| x[0].iter().map(|v| v.clamp(-1.0, 1.0)).collect()),
        ),
        case(
            "x · oneHot(argMax x) (indices are constants)",
            &[(s, -2.0, 2.0, 0.0)],
            Box::new(|p, x| {
                let am = p.arg_max(x[0], 1)?;
                let hot = p.one_hot(am, 4)?;
                p.mul(x[0], hot)
            }),
            Box::new(|x| {
                x[0].chunks(4)
                    .flat_map(|r| {
                        let m = (0..4).fold(0, |b, j| if r[j] > r[b] { j } else { b });
                        (0..4).map(move |j| if j == m { r[j] } else { 0.0 })
                    })
                    .collect()
            }),
        ),
    ]
}

/// `matmul(a, b, ta, tb)` for `M = 2, K = 3, N = 4`, each operand stored transposed when its flag is set.
pub(super) fn matmul_t_case(ta: bool, tb: bool) -> Case {
    let sa: &[usize] = if ta { &[3, 2] } else { &[2, 3] };
    let sb: &[usize] = if tb { &[4, 3] } else { &[3, 4] };
    case(
        &format!("matmul (transposeA {ta}, transposeB {tb})"),
        &[(sa, -1.0, 1.0, 0.0), (sb, -1.0, 1.0, 0.0)],
        Box::new(move |p, x| p.matmul_t(x[0], x[1], ta, tb)),
        Box::new(move |x| {
            let a = |i: usize, k: usize| if ta { x[0][k * 2 + i] } else { x[0][i * 3 + k] };
            let b = |k: usize, j: usize| if tb { x[1][j * 3 + k] } else { x[1][k * 4 + j] };
            (0..8)
                .map(|o| (0..3).map(|k| a(o / 4, k) * b(k, o % 4)).sum())
                .collect()
        }),
    )
}
