//! Gradient cases, part three: linear layers and norms, then convolutions, pooling and softmax
//! cross-entropy (float64 references from `nn.rs`).

use super::*;

pub(super) fn linear_and_norm_cases() -> Vec<Case> {
    vec![
        case(
            "matmul (batch broadcast)",
            &[(&[2, 3, 4], -1.0, 1.0, 0.0), (&[4, 2], -1.0, 1.0, 0.0)],
            Box::new(|p, x| p.matmul(x[0], x[1])),
            Box::new(|x| {
                (0..12)
                    .map(|i| {
                        let (b, r, c) = (i / 6, (i / 2) % 3, i % 2);
                        (0..4).map(|k| x[0][b * 12 + r * 4 + k] * x[1][k * 2 + c]).sum()
                    })
                    .collect()
            }),
        ),
        // op(a)·op(b) with a stored [2, 3] or [3, 2] and b [3, 4] or [4, 3]: M = 2, K = 3, N = 4
        matmul_t_case(false, true),
        matmul_t_case(true, false),
        matmul_t_case(true, true),
        case(
            "matmul then bias then relu (fused)",
            &[
                (&[3, 4], -1.0, 1.0, 0.0),
                (&[4, 2], -1.0, 1.0, 0.0),
                (&[2], -1.0, 1.0, 0.0),
            ],
            Box::new(|p, x| {
                let m = p.matmul(x[0], x[1])?;
                let b = p.add(m, x[2])?;
                p.relu(b)
            }),
            Box::new(|x| {
                (0..6)
                    .map(|i| {
                        let (r, c) = (i / 2, i % 2);
                        let d: f64 = (0..4).map(|k| x[0][r * 4 + k] * x[1][k * 2 + c]).sum();
                        (d + x[2][c]).max(0.0)
                    })
                    .collect()
            }),
        ),
        case(
            "layerNorm (x, gamma, beta)",
            &[
                (&[3, 6], -2.0, 2.0, 0.0),
                (&[6], 0.5, 1.5, 0.0),
                (&[6], -1.0, 1.0, 0.0),
            ],
            Box::new(|p, x| p.layer_norm(x[0], x[1], x[2], 1e-5)),
            Box::new(|x| {
                x[0].chunks(6)
                    .flat_map(|r| {
                        let mean = r.iter().sum::<f64>() / 6.0;
                        let var = r.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 6.0;
                        (0..6)
                            .map(move |j| (r[j] - mean) / (var + 1e-5).sqrt() * x[1][j] + x[2][j])
                            .collect::<Vec<_>>()
                    })
                    .collect()
            }),
        ),
        case(
            "batchNorm",
            &[
                (&[2, 3], -2.0, 2.0, 0.0),
                (&[3], -1.0, 1.0, 0.0),
                (&[3], 0.5, 2.0, 0.0),
            ],
            Box::new(|p, x| p.batch_norm(x[0], x[1], x[2], None, None, 1e-3)),
            Box::new(|x| {
                (0..6)
                    .map(|i| (x[0][i] - x[1][i % 3]) / (x[2][i % 3] + 1e-3).sqrt())
                    .collect()
            }),
        ),
        case(
            "softmax cross-entropy via logSoftmax",
            &[(&[4, 3], -2.0, 2.0, 0.0)],
            Box::new(|p, x| {
                let y = p.constant(
                    &[1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0],
                    &[4, 3],
                    DType::Float32,
                )?;
                let ls = p.log_softmax(x[0], -1)?;
                let t = p.mul(y, ls)?;
                let s = p.sum(t, &[1], false)?;
                let m = p.mean(s, &[], false)?;
                p.neg(m)
            }),
            Box::new(|x| {
                let hot = [0, 2, 1, 0];
                let l: f64 = x[0]
                    .chunks(3)
                    .enumerate()
                    .map(|(i, r)| {
                        let m = r.iter().copied().fold(f64::MIN, f64::max);
                        let lse = m + r.iter().map(|v| (v - m).exp()).sum::<f64>().ln();
                        r[hot[i]] - lse
                    })
                    .sum();
                vec![-l / 4.0]
            }),
        ),
    ]
}

pub(super) fn nn_cases() -> Vec<Case> {
    let conv = |name: &str, xs: &[usize], fs: &[usize], s: Pair, pad: Pad, d: Pair, depthwise: bool| {
        let (xs2, fs2) = (xs.to_vec(), fs.to_vec());
        case(
            name,
            &[(xs, -1.0, 1.0, 0.0), (fs, -1.0, 1.0, 0.0)],
            Box::new(move |p, x| {
                if depthwise {
                    p.depthwise_conv2d(x[0], x[1], s, pad, d)
                } else {
                    p.conv2d(x[0], x[1], s, pad, d)
                }
            }),
            Box::new(move |x| conv_f64(&x[0], &xs2, &x[1], &fs2, s, pad, d, depthwise).1),
        )
    };
    let pool = |name: &str, xs: &[usize], size: Pair, s: Pair, pad: Pad, max: bool| {
        let xs2 = xs.to_vec();
        case(
            name,
            &[(xs, -2.0, 2.0, 0.0)],
            Box::new(move |p, x| {
                if max {
                    p.max_pool(x[0], size, s, pad)
                } else {
                    p.avg_pool(x[0], size, s, pad)
                }
            }),
            Box::new(move |x| pool_f64(&x[0], &xs2, size, s, pad, max).1),
        )
    };
    let (one, two) = (Pair::ONE, Pair(2, 2));
    vec![
        conv(
            "conv2d 'same', batch 2",
            &[2, 5, 5, 2],
            &[3, 3, 2, 3],
            one,
            Pad::SAME,
            one,
            false,
        ),
        conv(
            "conv2d stride 2 'valid'",
            &[1, 6, 6, 2],
            &[2, 2, 2, 2],
            two,
            Pad::VALID,
            one,
            false,
        ),
        conv(
            "conv2d dilation 2, pad 1",
            &[1, 5, 5, 1],
            &[2, 2, 1, 2],
            one,
            Pad::Explicit(1),
            two,
            false,
        ),
        conv(
            "conv2d pointwise (the matmul path)",
            &[1, 3, 3, 2],
            &[1, 1, 2, 3],
            one,
            Pad::SAME,
            one,
            false,
        ),
        conv(
            "depthwiseConv2d 'same', multiplier 2",
            &[1, 5, 5, 2],
            &[3, 3, 2, 2],
            one,
            Pad::SAME,
            one,
            true,
        ),
        conv(
            "depthwiseConv2d stride 2 'valid'",
            &[2, 6, 6, 2],
            &[3, 3, 2, 1],
            two,
            Pad::VALID,
            one,
            true,
        ),
        pool("maxPool 2/2 'valid'", &[1, 4, 4, 2], two, two, Pad::VALID, true),
        pool(
            "maxPool 3/1 'same'",
            &[1, 4, 5, 1],
            Pair(3, 3),
            one,
            Pad::SAME,
            true,
        ),
        pool(
            "avgPool 3/2 'same'",
            &[2, 5, 5, 2],
            Pair(3, 3),
            two,
            Pad::SAME,
            false,
        ),
        // stride past the window (cells in no window get 0) and padding cutting the edge windows
        pool(
            "maxPool 2/3 pad 1",
            &[1, 7, 8, 2],
            two,
            Pair(3, 3),
            Pad::Explicit(1),
            true,
        ),
        pool(
            "avgPool 2×3 / 3×2 pad 1",
            &[1, 7, 8, 1],
            Pair(2, 3),
            Pair(3, 2),
            Pad::Explicit(1),
            false,
        ),
    ]
}
