//! What a pool holds, for reports and the panel.

/// Figures of one pool, for reports and the panel.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolUsage {
    /// Bytes held, in use + cached.
    pub bytes_held: u64,
    /// Bytes of cached (free) buffers.
    pub bytes_cached: u64,
    /// Device buffers in use.
    pub buffers_in_use: u64,
    /// Device buffers cached.
    pub buffers_cached: u64,
    /// Cached bytes by size class: `(class, buffers, bytes)`, ascending.
    pub cached_by_class: Vec<(u64, u64, u64)>,
    /// Buffers in use by size (class, or exact size when oversize): `(size, buffers, requested
    /// bytes)`, ascending; `size · buffers − requested` is that size's rounding (`pool_padding_bytes`).
    pub in_use_by_class: Vec<(u64, u64, u64)>,
}

impl std::fmt::Display for PoolUsage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pool holds {} bytes in {} buffers ({} in use, {} bytes cached in {})",
            self.bytes_held,
            self.buffers_in_use + self.buffers_cached,
            self.buffers_in_use,
            self.bytes_cached,
            self.buffers_cached
        )
    }
}
