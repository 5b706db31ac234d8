//! `Session`: owns a device, a pool and a ledger; creates tensors. Disposing a session prevents
//! new work; tensors still alive keep their storage until they are disposed themselves.

mod live;
mod make;

pub use live::PoolSnapshot;

use std::sync::atomic::{AtomicBool, Ordering};

use std::sync::{Arc, Mutex};

use crate::accounting::{Exec, Ledger, LedgerSnapshot};
use crate::device::{AdapterIdentity, DeviceStorage, Gpu};
use crate::error::Result;
use crate::forgotten::ForgottenStore;
use crate::kernels::KernelCache;
use crate::platform::Shared;
use crate::pool::{Pool, PoolConfig, PoolOptions, PoolUsage};
use crate::runtime::{Idle, Runtime, NEXT_SESSION};
use crate::telemetry::owners::OwnerTable;
use crate::tensor::scope::{ProfileInfo, Returned};
use crate::tensor::{SessionShared, Tensor};

/// Options for [`Session::create`].
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Pool configuration; unset fields come from the environment (native) or the defaults.
    pub pool: PoolOptions,
    /// A name for reports and per-session metric labels (default `session-<id>`).
    pub label: Option<String>,
    /// Record the creating call stack of each tensor (web only; shown by `liveTensors()`).
    pub capture_stacks: bool,
    /// When a JS handle is garbage-collected without `dispose()`, release its storage (default:
    /// keep it, accounted and reported as forgotten, so figures stay deterministic).
    pub release_on_collect: bool,
    /// Which kernel variants to run (default: those for the adapter's kind).
    pub kernels: Kernels,
    /// At most this many invocations per workgroup (and workgroup width and height) asked of the
    /// device, where the adapter allows more (default: the adapter's limits). The kernels then take
    /// the workgroup sizes such a device allows — WebGPU's compatibility mode and OpenGL ES 3.1
    /// allow 128 — so any adapter can run as one of those; below 128 `create` fails with `UNSUPPORTED`.
    pub workgroup_limit: Option<u32>,
}

/// Kernel variants. Some kernels have two forms: one for GPUs (workgroups cooperating through
/// shared memory) and one for CPU adapters such as lavapipe and SwiftShader, where a workgroup
/// barrier costs more than the work it saves (each invocation folds its own elements instead).
/// Both give the same results within float rounding; forcing one tests it on any adapter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Kernels {
    /// The CPU forms on a CPU adapter, the GPU forms elsewhere.
    #[default]
    ForAdapter,
    /// The GPU forms on any adapter.
    Gpu,
    /// The CPU forms on any adapter.
    Cpu,
}

/// `Session.memory()`: TensorFlow.js's `tf.memory()` shape, for this session only.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryInfo {
    /// Live storages owned by this session (tensors, and later states and constants).
    pub num_tensors: u64,
    /// Their bytes (`byteLength` sum; no size-class rounding).
    pub num_bytes: u64,
    /// Device buffers in use by them.
    pub num_data_buffers: u64,
    /// Highest `num_bytes` since the session was created (or the last peak reset).
    pub peak_bytes: u64,
    /// Always `false`: nothing here is estimated.
    pub unreliable: bool,
    /// Why the figures would be unreliable (empty).
    pub reasons: Vec<String>,
}

/// A device, its pool and the tensors made on it.
pub struct Session {
    shared: Shared<SessionShared>,
    /// `false` once [`Session::forget`] ran: dropping the handle then leaves the session open.
    dispose_on_drop: bool,
    /// The handle `create` returned (not a view from [`Session::live`]): while it lives, the
    /// session is live.
    owner: bool,
}

impl Session {
    /// The runtime this session fronts (the op-table methods it carries run through it).
    pub(crate) fn shared(&self) -> &Shared<SessionShared> {
        &self.shared
    }

    /// Acquires an adapter and device and sets up the pool. Fails with `INVALID_ARGUMENT` on a
    /// malformed option or environment value, `UNSUPPORTED` when there is no adapter.
    pub async fn create(options: SessionOptions) -> Result<Session> {
        let config = PoolConfig::from_options(&options.pool)?;
        let id = NEXT_SESSION.fetch_add(1, Ordering::Relaxed);
        let label = options.label.clone().unwrap_or_else(|| format!("session-{id}"));
        let claim = crate::telemetry::claim_label(&label)?; // held until the session is registered
        let gpu = Gpu::acquire_with(&label, options.workgroup_limit).await?;
        let ledger = Arc::new(Ledger::for_session(id, &label));
        let owners = Arc::new(OwnerTable::default());
        let info = Arc::new(crate::telemetry::SessionInfo {
            label: label.clone(),
            adapter: gpu.identity.clone(),
            pool: config.clone(),
            capture_stacks: options.capture_stacks,
            release_on_collect: options.release_on_collect,
        });
        gpu.staging.set_pool_bound(config.max_total_bytes);
        let gpu_is_cpu = gpu.identity.device_type == "cpu";
        let cpu_kernels = match options.kernels {
            Kernels::ForAdapter => gpu_is_cpu,
            Kernels::Gpu => false,
            Kernels::Cpu => true,
        };
        let swiftshader = cpu_kernels && gpu.identity.is_swiftshader();
        let texture_cap = crate::kernels::texture_cap(swiftshader, config.max_total_bytes);
        let min_workgroups = crate::kernels::min_workgroups(swiftshader);
        let idle_trim_ms = config.idle_trim_ms;
        let pool = Pool::new(DeviceStorage::new(&gpu), config, ledger.clone());
        let kernels = KernelCache::new(ledger.clone(), gpu.errors(), gpu.workgroup);
        let forgotten = Arc::new(ForgottenStore::default());
        let disposed = Arc::new(AtomicBool::new(false));
        let flags = (gpu.lost_flag(), disposed.clone());
        crate::telemetry::register_session(&ledger, &owners, &info, &forgotten, flags);
        drop(claim);
        let session = Session {
            shared: Shared::new_cyclic(|me| Runtime {
                id,
                label,
                gpu,
                ledger,
                kernels,
                pool: Mutex::new(pool),
                disposed,
                drained_after_loss: AtomicBool::new(false),
                submission: Mutex::new(()),
                #[cfg(web)]
                flush_scheduled: AtomicBool::new(false),
                capture_stacks: options.capture_stacks,
                owners,
                info,
                forgotten,
                cpu_kernels,
                texture_cap,
                min_workgroups,
                me: me.clone(),
                idle: Idle::new(idle_trim_ms),
                upper: Default::default(),
            }),
            dispose_on_drop: true,
            owner: true,
        };
        live::register(&session.shared);
        Ok(session)
    }

    /// Blocking [`Session::create`] (native only).
    #[cfg(native)]
    pub fn new(options: SessionOptions) -> Result<Session> {
        crate::platform::block_on(Session::create(options))
    }

    /// The session's label.
    pub fn label(&self) -> &str {
        &self.shared.label
    }

    /// A process-unique id.
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// Which adapter this session runs on.
    pub fn adapter(&self) -> &AdapterIdentity {
        &self.shared.gpu.identity
    }

    /// What reports say about this session (label, adapter, pool settings, options).
    pub fn info(&self) -> &crate::telemetry::SessionInfo {
        &self.shared.info
    }

    /// Whether tensors record their creating call stack.
    pub fn captures_stacks(&self) -> bool {
        self.shared.capture_stacks
    }

    /// The pool configuration in force.
    pub fn pool_config(&self) -> PoolConfig {
        self.shared.pool().config().clone()
    }

    /// The pool's current figures.
    pub fn pool_usage(&self) -> PoolUsage {
        self.shared.pool().usage()
    }

    /// This session's ledger values (the same fields as the process-wide metrics).
    pub fn stats(&self) -> LedgerSnapshot {
        self.shared.ledger.snapshot()
    }

    /// TensorFlow.js-shaped summary of this session's live storage.
    pub fn memory(&self) -> MemoryInfo {
        let s = self.shared.ledger.snapshot();
        MemoryInfo {
            num_tensors: s.live_tensors,
            num_bytes: s.live_bytes,
            num_data_buffers: s.live_tensors,
            peak_bytes: s.peak_bytes,
            unreliable: false,
            reasons: Vec::new(),
        }
    }

    /// Destroys the pool's cached buffers, the readback staging buffers kept for reuse and the
    /// CPU matmul's operand textures (`compute.memory/texture_bytes`); returns the bytes
    /// released. Live tensors are untouched.
    pub fn clear_cache(&self) -> u64 {
        let pool = self.shared.pool().clear_cache();
        pool + self.shared.gpu.staging.clear(&self.shared.ledger) + self.shared.kernels.clear_textures()
    }

    /// Destroys the device, as a loss would (to test loss handling): new work fails with
    /// `DEVICE_LOST`, `dispose()` keeps working and the accounting returns to zero as tensors are
    /// disposed; telemetry counts the session in `compute.execution/devices_lost`.
    pub fn destroy_device(&self) {
        self.shared.gpu.destroy();
        self.shared.drain_after_loss();
    }

    /// Whether the device has been lost (or destroyed).
    pub fn is_device_lost(&self) -> bool {
        self.shared.gpu.is_lost()
    }

    /// Whether [`Session::dispose`] has been called.
    pub fn is_disposed(&self) -> bool {
        self.shared.is_disposed()
    }

    /// Prevents new work, releases the session's forgotten handles (see
    /// [`crate::telemetry::release_forgotten`]) and destroys the pool's cached buffers. Live
    /// tensors keep their storage until they are disposed; from now on their buffers go back to
    /// the device, not the cache. Idempotent.
    pub fn dispose(&self) {
        if !self.shared.disposed.swap(true, Ordering::SeqCst) {
            crate::tensor::lazy::settle_all(&self.shared);
            // a call recording on another thread commits first, its work submitted below:
            // the ring its dispatches bind is destroyed after that, not under it
            let _submission = self.shared.submission();
            self.shared.flush(); // work on tensors that outlive the session still runs
            self.shared.forgotten.release();
            self.shared.pool().drain();
            self.shared.gpu.staging.drain(&self.shared.ledger);
            self.shared.kernels.release();
            if Shared::strong_count(&self.shared) == 1 {
                // nothing else holds the session: no work can reach the device again
                self.shared.gpu.release();
            }
        }
    }

    /// What happens when the JS garbage collector takes a `Session` handle without `dispose()`:
    /// nothing observable. The session stays open for its tensors, executables and states (eager
    /// ops on them keep working, so GC timing never changes a result), their storage stays
    /// accounted, and the device and pool are released when the last of them is disposed (or
    /// collected and released with `releaseForgotten()`).
    pub fn forget(mut self) {
        self.dispose_on_drop = false;
    }

    /// Waits until all queued device work has completed. The future holds the session's state,
    /// not the handle (it may outlive the borrow).
    pub fn sync(&self) -> impl std::future::Future<Output = Result<()>> + 'static {
        let s = self.shared.clone();
        async move {
            s.check_open()?;
            let start = crate::platform::now_ms();
            crate::tensor::lazy::settle_all(&s);
            s.flush();
            let _busy = s.idle.busy();
            // an armed session's sync maps its index-check words (the same one round trip)
            let words = s.kernels.look();
            let seen = s.gpu.sync(words.as_ref(), &s.ledger).await;
            let seen = seen.inspect_err(|_| s.kernels.checks.rearm_if(words.is_some()))?;
            s.ledger.count(Exec::Sync);
            if let Some(w) = seen {
                s.kernels.checks.verdict(w)?;
            }
            if crate::trace::enabled() {
                crate::trace::span(s.id, &s.label, "sync", "affon.sync", start, serde_json::json!({}));
            }
            Ok(())
        }
    }

    /// Runs `f` in a tidy scope: tensors created inside and not returned are disposed when it
    /// returns (unless kept with [`Session::keep`]). Nests.
    pub fn tidy<R: Returned>(&self, f: impl FnOnce() -> R) -> R {
        self.begin_scope();
        let r = f();
        let mut ids = std::collections::HashSet::new();
        r.tensor_ids(&mut ids);
        self.end_scope(&ids);
        r
    }

    /// [`Session::tidy`] for a fallible `f` whose survivors `returned` names from its result (the
    /// JS `tidy` walks the returned value). A result `returned` refuses (a promise, in JS) ends the
    /// scope with no survivors and is the call's error; so does a failed `f`.
    pub fn tidy_with<R, E>(
        &self,
        f: impl FnOnce() -> std::result::Result<R, E>,
        returned: impl FnOnce(&R) -> std::result::Result<std::collections::HashSet<u64>, E>,
    ) -> std::result::Result<R, E> {
        self.begin_scope();
        let r = f();
        let none = std::collections::HashSet::new();
        match r.as_ref().map(returned) {
            Ok(Ok(ids)) => self.end_scope(&ids),
            Ok(Err(refused)) => {
                self.end_scope(&none);
                return Err(refused);
            }
            Err(_) => self.end_scope(&none),
        }
        r
    }

    /// Why `tidy` refuses an async function (or one that returned a promise): its tensors would
    /// be disposed before it finishes.
    #[cfg(web)]
    pub(crate) fn tidy_refuses_async() -> crate::Error {
        crate::Error::InvalidArgument(
            "tidy cannot take an async function: tensors would be disposed before it finishes".into(),
        )
    }

    /// Opens a tidy scope (the JS `tidy` and [`Session::tidy`] use this).
    pub fn begin_scope(&self) {
        self.shared.upper.scopes.begin();
    }

    /// Closes the innermost tidy scope; tensors with ids in `returned` survive into the enclosing one.
    pub fn end_scope(&self, returned: &std::collections::HashSet<u64>) {
        self.shared.upper.scopes.end(returned);
    }

    /// Entries the innermost tidy scope holds: the tensors created in it that are still live, plus
    /// at most as many finished ones not yet compacted away (0 outside a scope).
    pub fn scope_entries(&self) -> usize {
        self.shared.upper.scopes.innermost_len()
    }

    /// Exempts `t` from every enclosing tidy scope.
    pub fn keep<'t>(&self, t: &'t Tensor) -> &'t Tensor {
        t.core.kept.store(true, Ordering::SeqCst);
        t
    }

    /// Starts a profile (see [`Session::profile`]); `INVALID_ARGUMENT` if one is running.
    pub fn begin_profile(&self) -> Result<()> {
        self.shared.upper.scopes.begin_profile(&self.shared.ledger)
    }

    /// Ends the running profile.
    pub fn end_profile(&self) -> ProfileInfo {
        self.shared.upper.scopes.end_profile(&self.shared.ledger)
    }

    /// [`Session::end_profile`] for later, not tied to this handle's lifetime (a profile whose
    /// function returned a promise ends when it settles).
    #[cfg_attr(native, allow(dead_code))]
    pub(crate) fn profile_end(&self) -> impl FnOnce() -> ProfileInfo + 'static {
        let shared = self.shared.clone();
        move || shared.upper.scopes.end_profile(&shared.ledger)
    }

    /// `tf.profile`: the bytes and tensors `f` added, the peak while it ran, and each kernel.
    pub fn profile<R>(&self, f: impl FnOnce() -> R) -> Result<(ProfileInfo, R)> {
        self.begin_profile()?;
        let r = f();
        Ok((self.end_profile(), r))
    }

    /// Validates and compiles a program for this session.
    pub fn compile(&self, program: &crate::Program) -> Result<crate::Executable> {
        crate::Executable::compile(&self.shared, program)
    }

    /// Number of compute pipelines this session has created.
    pub fn pipelines(&self) -> usize {
        self.shared.kernels.len()
    }
}

impl crate::telemetry::Watched for Session {
    fn label(&self) -> &str {
        Session::label(self)
    }
    fn is_disposed(&self) -> bool {
        Session::is_disposed(self)
    }
    fn is_device_lost(&self) -> bool {
        Session::is_device_lost(self)
    }
    fn sync(&self) -> impl std::future::Future<Output = Result<()>> {
        Session::sync(self)
    }
}

impl Drop for Session {
    /// Dropping the handle disposes the session (unless it was [`Session::forget`]-ten).
    fn drop(&mut self) {
        if self.owner {
            live::unregister(self.shared.id);
        }
        if self.dispose_on_drop {
            self.dispose();
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Session({}, {} on {})",
            self.shared.label, self.shared.gpu.identity.backend, self.shared.gpu.identity.name
        )
    }
}

#[cfg(all(test, native))]
mod tests;
