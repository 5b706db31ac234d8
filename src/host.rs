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
