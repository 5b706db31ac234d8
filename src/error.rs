//! The one error type. Every variant has a stable code ([`Error::code`]) that the JS layer copies to
//! `AffonError.code`; messages say what was expected and what was given.

/// A failed affon call. A failed call changes no accounting and loses no data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A tensor, executable, state or session handle was used after `dispose()`.
    #[error("{0} has been disposed")]
    Disposed(String),
    /// New work was requested from a disposed session.
    #[error("the session {0} is disposed: no new work can be created on it")]
    SessionDisposed(String),
    /// Shapes disagree (or a data length does not match its shape).
    #[error("{0}")]
    ShapeMismatch(String),
    /// Dtypes disagree.
    #[error("{0}")]
    DtypeMismatch(String),
    /// A program is malformed.
    #[error("{0}")]
    InvalidProgram(String),
    /// An argument or option is out of range or malformed.
    #[error("{0}")]
    InvalidArgument(String),
    /// The pool bound (or the device) cannot hold the request. Retry after disposing tensors or
    /// `clear_cache()`; a request larger than the bound never fits.
    #[error(
        "out of memory: requested {requested} bytes (pool holds {pool_bytes} bytes, {live_bytes} live in tensors, bound {bound} bytes){detail}{}",
        forensics.as_ref().map(|f| f.describe()).unwrap_or_default()
    )]
    OutOfMemory {
        /// Bytes the device buffer would have taken (after size-class rounding).
        requested: u64,
        /// Bytes of live storage in the session at the time of the failure.
        live_bytes: u64,
        /// Bytes the pool held (in use + cached) at the time of the failure.
        pool_bytes: u64,
        /// The pool bound.
        bound: u64,
        /// Extra context, starting with a separator, or empty.
        detail: String,
        /// The largest live owners and the pool state at the failure (set by the session).
        forensics: Option<Box<Forensics>>,
    },
    /// The device was lost; only `dispose()` still works.
    #[error("device lost: {0}")]
    DeviceLost(String),
    /// The platform or adapter cannot do what was asked (no adapter, missing feature).
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// What an `OUT_OF_MEMORY` error carries to explain itself.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Forensics {
    /// The session's largest live owners (origin, count, bytes), largest first (at most 5).
    pub owners: Vec<crate::telemetry::owners::OwnerGroup>,
    /// The pool at the failure.
    pub pool: crate::pool::usage::PoolUsage,
    /// The pool bound.
    pub bound: u64,
}

impl Error {
    /// The stable code of this error, as listed in API.md.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Disposed(_) => "DISPOSED",
            Error::SessionDisposed(_) => "SESSION_DISPOSED",
            Error::ShapeMismatch(_) => "SHAPE_MISMATCH",
            Error::DtypeMismatch(_) => "DTYPE_MISMATCH",
            Error::InvalidProgram(_) => "INVALID_PROGRAM",
            Error::InvalidArgument(_) => "INVALID_ARGUMENT",
            Error::OutOfMemory { .. } => "OUT_OF_MEMORY",
            Error::DeviceLost(_) => "DEVICE_LOST",
            Error::Unsupported(_) => "UNSUPPORTED",
        }
    }
}

impl Forensics {
    fn describe(&self) -> String {
        let owners: Vec<String> = self
            .owners
            .iter()
            .map(|o| format!("'{}' {} bytes in {}", o.origin, o.bytes, o.count))
            .collect();
        format!(
            "; largest owners: {}; {}",
            if owners.is_empty() {
                "none".into()
            } else {
                owners.join(", ")
            },
            self.pool
        )
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Builds an [`Error::InvalidArgument`] from format arguments.
macro_rules! invalid_arg {
    ($($t:tt)*) => { $crate::error::Error::InvalidArgument(format!($($t)*)) };
}
pub(crate) use invalid_arg;
