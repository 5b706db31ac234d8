//! Kernels whose serial form sits near lavapipe's loop budget (65,535 iterations an invocation,
//! counted across every loop with a runtime bound it runs — helper functions' index loops
//! included): each case was silently wrong there while the bound checked one walk's length alone.
//! Inputs are small integers wherever a sum is compared exactly.

use affon::ops::Pad;
use affon::Session;

use super::big_filters::ones_filter_gradient;
use super::composite::read;

/// Sums over 30,000 rows into 64 outputs (each element's index walks the reduced axes: 3 a step),
/// and over 12,000 rows of a broadcasting product read as the sum reduces (its index loop too);
/// softmax over rows of 30,000 (three walks of the row); a dot product with K = 262,140 (65,535
/// steps of four); a 3×1 filter's gradient over outputs of 60,000 and 30,000 rows one wide and
/// 12,000 rows four wide (an output row costs its columns and two: the thread form's bound
/// counted the positions and rows once, then not the rows' loop exits).
pub async fn budget_edges_match(s: &Session) {
    super::long_loops::column_sums_match(s, 30_000, 64).await;

    let (rows, cols) = (12_000usize, 64usize);
    let x: Vec<f32> = (0..rows * cols).map(|i| (i % 3) as f32).collect();
    let b: Vec<f32> = (0..rows).map(|r| (r % 5) as f32 - 2.0).collect();
    let want: Vec<f32> = (0..cols)
        .map(|c| {
            (0..rows)
                .map(|r| x[r * cols + c] as f64 * b[r] as f64)
                .sum::<f64>() as f32
        })
        .collect();
    let xt = s.tensor(&x, &[rows, cols]).unwrap();
    let bt = s.tensor(&b, &[rows, 1]).unwrap();
    let got = read(&xt.mul(&bt).unwrap().sum(&[0], false).unwrap()).await;
    assert_eq!(
        got, want,
        "sum over {rows} rows of a broadcast product into {cols} outputs"
    );

    // two rows of 30,000 zeros with a 10 in each (the last element; the fourth)
    let len = 30_000usize;
    let mut x = vec![0f32; 2 * len];
    x[len - 1] = 10.0;
    x[len + 3] = 10.0;
    let got = read(&s.tensor(&x, &[2, len]).unwrap().softmax(-1).unwrap()).await;
    let z = 10f64.exp() + (len - 1) as f64;
    for (i, &g) in got.iter().enumerate() {
        let w = if i == len - 1 || i == len + 3 {
            10f64.exp() / z
        } else {
            1.0 / z
        };
        // a float32 sum of 30,000 exponentials (29,999 of them 1: exact partial sums) and one
        // division: 1e-5 of float64 (a sum that dropped one term of the 30,000 is off by 2e-5);
        // cut short, elements came out 1 or 10
        assert!(
            (g as f64 - w).abs() <= w * 1e-5,
            "softmax over rows of {len}: element {i} is {g}, not {w}"
        );
    }

    let k = 262_140usize;
    let a = s.tensor(&vec![1f32; 2 * k], &[2, k]).unwrap();
    let b = s.tensor(&vec![1f32; 3 * k], &[k, 3]).unwrap();
    let got = read(&a.matmul(&b).unwrap()).await;
    assert_eq!(got, vec![k as f32; 6], "matmul with K = {k}");

    for (h, w) in [(60_002usize, 1usize), (30_002, 1), (12_002, 4)] {
        assert_eq!(
            ones_filter_gradient(s, [1, h, w], (3, 1), Pad::VALID).await,
            vec![((h - 2) * w) as f32; 3],
            "filter gradient over {} output rows {w} wide",
            h - 2
        );
    }
}
