//! Host memory the runtime reserves: a vector that is `OUT_OF_MEMORY` when the host cannot hold it,
//! never an allocation failure that aborts the instance.

use crate::error::{Error, Result};

/// `OUT_OF_MEMORY` for `bytes` of host memory that could not be reserved.
pub(crate) fn host_oom(bytes: u64) -> Error {
    Error::OutOfMemory {
        requested: bytes,
        live_bytes: 0,
        pool_bytes: 0,
        bound: 0,
        detail: "; the host cannot hold the data".into(),
        forensics: None,
    }
}

/// A host vector of `n` elements made by `f`, or `OUT_OF_MEMORY` if the host cannot hold it
/// (wasm32's 4 GiB linear memory): never an allocation failure that aborts the instance.
pub(crate) fn host_vec<T>(n: u64, mut f: impl FnMut(usize) -> T) -> Result<Vec<T>> {
    let too_big = || host_oom(n.saturating_mul(std::mem::size_of::<T>() as u64));
    let n = usize::try_from(n).map_err(|_| too_big())?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| too_big())?;
    v.extend((0..n).map(&mut f));
    Ok(v)
}

/// A count (a limit, a number of iterations) given as a host number, as it arrives from JS: a
/// non-negative integer no larger than 2⁵³ (past it a double no longer counts in ones), else
/// `INVALID_ARGUMENT` naming `what` — one rule for every count the bindings take.
#[cfg(any(web, test))]
pub(crate) fn count_from_f64(what: &str, x: f64) -> Result<u64> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if x.fract() == 0.0 && (0.0..=EXACT).contains(&x) {
        Ok(x as u64)
    } else {
        Err(crate::error::invalid_arg!(
            "{what} must be a non-negative integer, got {x}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::count_from_f64;

    #[test]
    fn counts_are_non_negative_integers() {
        assert_eq!(count_from_f64("n", 0.0).unwrap(), 0);
        assert_eq!(count_from_f64("n", 20.0).unwrap(), 20);
        assert_eq!(count_from_f64("n", 9_007_199_254_740_992.0).unwrap(), 1 << 53);
        for bad in [-1.0, 0.5, f64::NAN, f64::INFINITY, 1e16] {
            let e = count_from_f64("limit", bad).unwrap_err().to_string();
            assert!(e.contains("limit must be a non-negative integer"), "{bad}: {e}");
        }
    }
}
