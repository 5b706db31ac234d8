//! `compute.execution`: the counters of what ran and what crossed the host/device boundary, and the
//! events that bump them.

use std::sync::atomic::AtomicU64;

/// `compute.execution`: what ran and what crossed the host/device boundary.
#[derive(Debug)]
pub struct ExecCounters {
    /// `Executable.run` calls that completed.
    pub executions: AtomicU64,
    /// Compute dispatches recorded (eager ops and program nodes).
    pub dispatches: AtomicU64,
    /// Specialisations compiled (one per new concrete input-shape set of an Executable).
    pub compiles: AtomicU64,
    /// Specialisations currently cached by live Executables.
    pub executable_cache_entries: AtomicU64,
    /// Specialisations evicted from a full cache (least recently used first).
    pub executable_cache_evictions: AtomicU64,
    /// Compute pipelines currently cached by live sessions.
    pub pipeline_cache_entries: AtomicU64,
    /// Bind groups currently cached by live sessions (reused by later dispatches on the same buffers).
    pub bind_group_cache_entries: AtomicU64,
    /// Pipelines evicted from a full pipeline cache (least recently used first).
    pub pipeline_cache_evictions: AtomicU64,
    /// Bytes written from the host to the device (tensor data, constants, state init).
    pub upload_bytes: AtomicU64,
    /// Bytes read back from the device (`to_array`, `item`, `ExecutionState` reads).
    pub download_bytes: AtomicU64,
    /// Host↔device transfers (uploads + downloads).
    pub transfers: AtomicU64,
    /// Waits for the device: `sync()` and every readback.
    pub syncs: AtomicU64,
    /// Copies the runtime inserted that the user did not ask for (see docs/ownership.md).
    pub fixups: AtomicU64,
    /// Command buffers submitted to the queue (eager ops and runs are batched into few).
    pub submits: AtomicU64,
    /// `run()` wall time in microseconds: observations, sum, min, max.
    pub run_time_count: AtomicU64,
    /// See `run_time_count`.
    pub run_time_sum_us: AtomicU64,
    /// See `run_time_count` (`u64::MAX` before the first observation).
    pub run_time_min_us: AtomicU64,
    /// See `run_time_count`.
    pub run_time_max_us: AtomicU64,
}

impl ExecCounters {
    pub(super) const fn new() -> ExecCounters {
        ExecCounters {
            executions: AtomicU64::new(0),
            dispatches: AtomicU64::new(0),
            compiles: AtomicU64::new(0),
            executable_cache_entries: AtomicU64::new(0),
            executable_cache_evictions: AtomicU64::new(0),
            pipeline_cache_entries: AtomicU64::new(0),
            bind_group_cache_entries: AtomicU64::new(0),
            pipeline_cache_evictions: AtomicU64::new(0),
            upload_bytes: AtomicU64::new(0),
            download_bytes: AtomicU64::new(0),
            transfers: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            fixups: AtomicU64::new(0),
            submits: AtomicU64::new(0),
            run_time_count: AtomicU64::new(0),
            run_time_sum_us: AtomicU64::new(0),
            run_time_min_us: AtomicU64::new(u64::MAX),
            run_time_max_us: AtomicU64::new(0),
        }
    }
}

/// Which execution counter an event bumps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exec {
    Dispatch,
    Execution,
    Compile,
    Fixup,
    /// Command buffers submitted.
    Submits(u64),
    Sync,
    Upload(u64),
    Download(u64),
    /// Cache entries added (+) or removed (−).
    CacheEntries(i64),
    /// A specialisation evicted to make room for another.
    CacheEviction,
    /// Pipelines added (+) or removed (−).
    Pipelines(i64),
    /// Bind groups cached (+) or dropped (−).
    BindGroups(i64),
    /// A pipeline evicted to make room for another.
    PipelineEviction,
    /// A `run()` that took this many microseconds.
    RunTime(u64),
}
