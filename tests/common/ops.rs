//! Every eager op against a CPU reference, written once and run on both GPU targets (lavapipe
//! natively, WebGPU in Chromium): [`ops_match_cpu_reference`].
//!
//! Tolerances (asserted by [`compare`]; `w` is the reference value, `g` the GPU's):
//! - **exact** (`g == w`; ±0 compare equal): every integer/bool result; float32 `neg`, `abs`,
//!   `relu`, `square`, `add`, `sub`, `mul` (IEEE-754 correctly rounded on every backend), `cast`,
//!   `reshape`, `transpose`, `max`, `min`.
//! - **relative 1e-5, absolute 1e-6** (`|g − w| ≤ 1e-5·|w| + 1e-6`): float32 `div`, `sqrt`, `exp`,
//!   `log`, `sigmoid`, `tanh` (WGSL allows a few ULP, ~1e-6 relative over the input ranges used,
//!   and `log` an absolute 2⁻²¹ near 1).
//! - **scaled by the reduction length `n`**: `sum` `|g − w| ≤ 1e-5·n·max|x| + 1e-6`; `mean` that
//!   bound divided by `n` (`1e-5·max|x| + 1e-6`); `matmul` `1e-5·k·max|a|·max|b| + 1e-6`;
//!   `softmax` `2e-5·|w| + 1e-6` (whatever the axis length).
//!
//! The reference computes float32 results exactly where the GPU must (single IEEE operations) and in
//! float64 rounded once to float32 elsewhere. Integer arithmetic wraps (two's complement) and integer
//! division follows WGSL: truncating, `x / 0 = x`, `i32::MIN / -1 = i32::MIN`.

mod cases;
mod checks;
mod host;
mod inputs;
mod reference;
mod suite;

pub use cases::*;
pub use checks::*;
pub use host::*;
pub use inputs::*;
pub use reference::*;
pub use suite::*;

use affon::Session;

/// Every eager op on random inputs (odd sizes, broadcasting, batched matmul, reductions over any
/// axes, softmax over each axis, every cast, reshape and transpose) compared with the CPU reference
/// (`reference`); op errors carry their codes and change nothing; every intermediate is released.
pub async fn ops_match_cpu_reference(s: &Session) {
    let mut rng = Rng::new(0xAFF0_5EED);
    unary_cases(s, &mut rng).await;
    binary_cases(s, &mut rng).await;
    cast_cases(s, &mut rng).await;
    matmul_cases(s, &mut rng).await;
    reduce_cases(s, &mut rng).await;
    softmax_cases(s, &mut rng).await;
    layout_cases(s, &mut rng).await;
    error_cases(s).await;
    crate::common::table::table_ops_match_f64_reference(s).await;
    let x = s.stats();
    assert_eq!(
        (x.live_bytes, x.live_tensors),
        (0, 0),
        "every input and result was dropped"
    );
}
