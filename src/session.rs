//! `Session`: owns a device, a pool and a ledger; creates tensors. Disposing a session prevents
//! new work; tensors still alive keep their storage until they are disposed themselves.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use std::sync::{Arc, Mutex, MutexGuard};

use crate::accounting::{Exec, Ledger, LedgerSnapshot};
use crate::device::{AdapterIdentity, DeviceStorage, Gpu};
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::forgotten::{Forgotten, ForgottenStore};
use crate::kernels::{Ctx, KernelCache};
use crate::platform::Shared;
use crate::pool::{Lease, Pool, PoolConfig, PoolOptions, PoolUsage};
use crate::scope::{ProfileInfo, Returned, Scopes};
use crate::shape;
use crate::telemetry::owners::OwnerTable;
use crate::tensor::Tensor;

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

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// What tensors share with their session.
pub(crate) struct SessionShared {
    pub(crate) id: u64,
    pub(crate) label: String,
    pub(crate) gpu: Gpu,
    pub(crate) ledger: Arc<Ledger>,
    pub(crate) kernels: KernelCache,
    pool: Mutex<Pool<DeviceStorage>>,
    disposed: AtomicBool,
    drained_after_loss: AtomicBool,
    /// Held from a command's first buffer acquisition to its queue submission. A program run gives
    /// intermediates back to the pool before it submits (so later nodes reuse them); without this,
    /// another thread could take such a buffer and submit work writing it before the run's reads.
    submission: Mutex<()>,
    /// A browser task is queued to submit the pending batch.
    #[cfg(target_arch = "wasm32")]
    flush_scheduled: AtomicBool,
    pub(crate) scopes: Scopes,
    pub(crate) capture_stacks: bool,
    pub(crate) owners: Arc<OwnerTable>,
    pub(crate) info: Arc<crate::telemetry::SessionInfo>,
    /// Objects whose JS handle was collected without `dispose()` (see `forgotten.rs`).
    pub(crate) forgotten: Arc<ForgottenStore>,
    /// Run the kernels' CPU-adapter forms (see [`Kernels`]).
    cpu_kernels: bool,
    /// This session, weakly (for the idle timer).
    pub(crate) me: crate::platform::WeakShared<SessionShared>,
    /// Activity and the idle timer (see `idle.rs`).
    pub(crate) idle: crate::idle::Idle,
}

impl Drop for SessionShared {
    /// The last handle went (a forgotten session whose tensors are all gone): the kept staging
    /// buffers go too, counted out (the pool counts out its own when it drops).
    fn drop(&mut self) {
        self.gpu.staging.drain(&self.ledger);
        self.gpu.release();
    }
}

impl SessionShared {
    pub(crate) fn pool(&self) -> MutexGuard<'_, Pool<DeviceStorage>> {
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `SESSION_DISPOSED` or `DEVICE_LOST` if no new work may start.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.disposed.load(Ordering::SeqCst) {
            return Err(Error::SessionDisposed(format!("'{}'", self.label)));
        }
        if self.gpu.is_lost() {
            self.drain_after_loss();
        }
        self.gpu.check()
    }

    /// After a device loss the cache is useless: destroy it and stop caching, so disposing the
    /// remaining tensors brings the accounting back to zero.
    fn drain_after_loss(&self) {
        if !self.drained_after_loss.swap(true, Ordering::SeqCst) {
            self.pool().drain();
            self.gpu.staging.drain(&self.ledger);
        }
    }

    /// Serialises acquire → record → submit sequences of this session (see `submission`).
    pub(crate) fn submission(&self) -> MutexGuard<'_, ()> {
        self.submission.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Submits the pending batch (counted in `compute.execution/submits`).
    pub(crate) fn flush(&self) {
        if self.gpu.flush() {
            self.ledger.count(Exec::Submit);
        }
    }

    /// What kernels need to record work.
    pub(crate) fn ctx(&self) -> Ctx<'_> {
        Ctx {
            device: &self.gpu.device,
            cache: &self.kernels,
            cpu_adapter: self.cpu_kernels,
            scratch: None,
        }
    }

    /// A handle of this session was collected without `dispose()`: its storage is marked forgotten
    /// and kept (accounted) until `releaseForgotten()` or the session's `dispose()`, or released
    /// now when the session was created with `releaseOnCollect`.
    pub(crate) fn forget(&self, ids: &[u64], f: Forgotten) {
        for &id in ids {
            self.owners.forget(id);
        }
        if !self.info.release_on_collect {
            self.forgotten.keep(f);
        }
    }

    pub(crate) fn release(&self, id: u64, lease: Lease<wgpu::Buffer>) {
        if self.gpu.is_lost() {
            self.drain_after_loss();
        }
        self.owners.remove(id);
        self.pool().release(lease);
        self.idle.touch();
        crate::idle::arm(self);
    }

    /// The idle timer found the session quiet for a whole period: the pool's cache (default
    /// policy) and the kept staging buffers go back to the device. Returns the bytes released.
    pub(crate) fn trim_idle(&self) -> u64 {
        // as an acquire: never between a run's release of an intermediate and its submission
        let _submission = self.submission();
        let pool = self.pool().trim_idle();
        pool + self.gpu.staging.clear(&self.ledger)
    }

    /// Takes storage from the pool and records its owner; on `OUT_OF_MEMORY` the error carries the
    /// largest owners and the pool state.
    pub(crate) fn acquire(
        &self,
        id: u64,
        bytes: u64,
        at_least: u64,
        origin: &str,
    ) -> Result<Lease<wgpu::Buffer>> {
        self.idle.touch();
        let result = self.pool().acquire_at_least(bytes, at_least); // the guard is dropped here: forensics lock it again
        let lease = result.map_err(|e| self.with_forensics(e))?;
        let stack = if self.capture_stacks {
            crate::platform::capture_stack()
        } else {
            None
        };
        self.owners.add(id, origin, bytes, stack);
        Ok(lease)
    }

    /// Checks, changing nothing, that storages of these byte lengths could all be live at once
    /// (device limits, the pool bound after evicting the cache). Calls that acquire several
    /// buffers, or build host data first, check here before they reserve anything.
    pub(crate) fn admit(&self, byte_lengths: &[u64]) -> Result<()> {
        let pool = self.pool();
        let rounded: Vec<u64> = byte_lengths.iter().map(|&b| pool.rounded(b)).collect();
        let total = rounded.iter().fold(0u64, |a, &b| a.saturating_add(b));
        let largest = rounded.iter().copied().max().unwrap_or(0);
        let r = pool.check_fits(total, largest);
        drop(pool);
        r.map_err(|e| self.with_forensics(e))
    }

    /// [`SessionShared::admit`] for a peak already rounded by the pool (a run's plan).
    pub(crate) fn admit_rounded(&self, total: u64, largest: u64) -> Result<()> {
        let r = self.pool().check_fits(total, largest);
        r.map_err(|e| self.with_forensics(e))
    }

    /// Adds the largest owners and the pool state to an `OUT_OF_MEMORY` error.
    fn with_forensics(&self, e: Error) -> Error {
        let Error::OutOfMemory {
            requested,
            live_bytes,
            pool_bytes,
            bound,
            detail,
            ..
        } = e
        else {
            return e;
        };
        let mut groups = std::collections::BTreeMap::new();
        self.owners.group_into(&mut groups);
        let mut owners = crate::telemetry::owners::sorted(groups);
        owners.truncate(5);
        let pool = self.pool().usage();
        let forensics = crate::error::Forensics { owners, pool, bound };
        Error::OutOfMemory {
            requested,
            live_bytes,
            pool_bytes,
            bound,
            detail,
            forensics: Some(Box::new(forensics)),
        }
    }
}

/// A scalar tensor holding `value` in `dtype`, in `s` (number operands of binary ops).
pub(crate) fn scalar_in(s: &Shared<SessionShared>, value: f64, dtype: DType) -> Result<Tensor> {
    constant_in(s, &[value], &[], dtype, "scalar")
}

/// A tensor of `data` (each value representable in `dtype`) in `s`, for composites' constants.
pub(crate) fn constant_in(
    s: &Shared<SessionShared>,
    data: &[f64],
    shape: &[usize],
    dtype: DType,
    origin: &str,
) -> Result<Tensor> {
    let words = data
        .iter()
        .map(|&v| dtype.word_from_f64(v))
        .collect::<Result<Vec<u32>>>()?;
    if words.len() as u64 != shape::element_count(shape)? {
        return Err(Error::ShapeMismatch(format!(
            "{} values for shape {shape:?}",
            words.len()
        )));
    }
    let _submission = s.submission();
    let t = Tensor::allocate(s, shape.to_vec(), dtype, origin.to_string())?;
    write(s, t.buffer()?, bytemuck::cast_slice(&words));
    s.ledger.count(Exec::Upload(t.byte_length()));
    Ok(t)
}

/// Appends a completed call's commands to the session's batch (counting its dispatches), and
/// submits the batch when it is full; in the browser a batch left pending is submitted as soon as
/// the calling task yields, so the device never idles waiting for a readback.
pub(crate) fn commit(s: &Shared<SessionShared>, c: crate::commands::Commands) {
    s.idle.touch();
    for _ in 0..c.dispatches() {
        s.ledger.dispatched();
    }
    if s.gpu.pending.append(c) {
        s.flush();
    }
    #[cfg(target_arch = "wasm32")]
    if !s.gpu.pending.is_empty() && !s.flush_scheduled.swap(true, Ordering::SeqCst) {
        let weak = Shared::downgrade(s);
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(s) = weak.upgrade() {
                s.flush_scheduled.store(false, Ordering::SeqCst);
                s.flush();
            }
        });
    }
}

/// Scratch storage for a kernel of `s` (origin `scratch of <what>`), as `Ctx::scratch` allocates it.
pub(crate) fn scratch(s: &Shared<SessionShared>, words: u64, what: &str) -> Result<crate::kernels::Scratch> {
    let t = Tensor::allocate_untracked(
        s,
        vec![words as usize],
        DType::Float32,
        format!("scratch of {what}"),
    )?;
    Ok(crate::kernels::Scratch {
        buffer: t.buffer()?.clone(),
        _hold: Box::new(t),
    })
}

/// Uploads `data` into `buffer`, after the pending batch (see `Gpu::write_buffer`).
pub(crate) fn write(s: &SessionShared, buffer: &wgpu::Buffer, data: &[u8]) {
    if s.gpu.write_buffer(buffer, data) {
        s.ledger.count(Exec::Submit);
    }
}

/// A host vector of `n` elements made by `f`, or `OUT_OF_MEMORY` if the host cannot hold it
/// (wasm32's 4 GiB linear memory): never an allocation failure that aborts the instance.
pub(crate) fn host_vec<T>(n: u64, mut f: impl FnMut(usize) -> T) -> Result<Vec<T>> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>() as u64);
    let too_big = || Error::OutOfMemory {
        requested: bytes,
        live_bytes: 0,
        pool_bytes: 0,
        bound: 0,
        detail: "; the host cannot hold the data".into(),
        forensics: None,
    };
    let n = usize::try_from(n).map_err(|_| too_big())?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| too_big())?;
    v.extend((0..n).map(&mut f));
    Ok(v)
}

/// A device, its pool and the tensors made on it.
pub struct Session {
    shared: Shared<SessionShared>,
    /// `false` once [`Session::forget`] ran: dropping the handle then leaves the session open.
    dispose_on_drop: bool,
}

impl Session {
    /// Acquires an adapter and device and sets up the pool. Fails with `INVALID_ARGUMENT` on a
    /// malformed option or environment value, `UNSUPPORTED` when there is no adapter.
    pub async fn create(options: SessionOptions) -> Result<Session> {
        let config = PoolConfig::from_options(&options.pool)?;
        let id = NEXT_SESSION.fetch_add(1, Ordering::Relaxed);
        let label = options.label.clone().unwrap_or_else(|| format!("session-{id}"));
        crate::telemetry::check_label_free(&label)?;
        let gpu = Gpu::acquire(&label).await?;
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
        let idle_trim_ms = config.idle_trim_ms;
        let pool = Pool::new(DeviceStorage::new(&gpu), config, ledger.clone());
        let kernels = KernelCache::new(ledger.clone());
        let forgotten = Arc::new(ForgottenStore::default());
        crate::telemetry::register_session(&ledger, &owners, &info, &forgotten, gpu.lost_flag());
        Ok(Session {
            shared: Shared::new_cyclic(|me| SessionShared {
                id,
                label,
                gpu,
                ledger,
                kernels,
                pool: Mutex::new(pool),
                disposed: AtomicBool::new(false),
                drained_after_loss: AtomicBool::new(false),
                submission: Mutex::new(()),
                #[cfg(target_arch = "wasm32")]
                flush_scheduled: AtomicBool::new(false),
                scopes: Scopes::default(),
                capture_stacks: options.capture_stacks,
                owners,
                info,
                forgotten,
                cpu_kernels: match options.kernels {
                    Kernels::ForAdapter => gpu_is_cpu,
                    Kernels::Gpu => false,
                    Kernels::Cpu => true,
                },
                me: me.clone(),
                idle: crate::idle::Idle::new(idle_trim_ms),
            }),
            dispose_on_drop: true,
        })
    }

    /// Blocking [`Session::create`] (native only).
    #[cfg(not(target_arch = "wasm32"))]
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

    /// Destroys the pool's cached buffers and the readback staging buffers kept for reuse;
    /// returns the bytes released. Live tensors are untouched.
    pub fn clear_cache(&self) -> u64 {
        let pool = self.shared.pool().clear_cache();
        pool + self.shared.gpu.staging.clear(&self.shared.ledger)
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
        self.shared.disposed.load(Ordering::SeqCst)
    }

    /// Prevents new work, releases the session's forgotten handles (see
    /// [`crate::telemetry::release_forgotten`]) and destroys the pool's cached buffers. Live
    /// tensors keep their storage until they are disposed; from now on their buffers go back to
    /// the device, not the cache. Idempotent.
    pub fn dispose(&self) {
        if !self.shared.disposed.swap(true, Ordering::SeqCst) {
            self.shared.flush(); // work on tensors that outlive the session still runs
            self.shared.forgotten.release();
            self.shared.pool().drain();
            self.shared.gpu.staging.drain(&self.shared.ledger);
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

    /// Waits until all queued device work has completed.
    pub async fn sync(&self) -> Result<()> {
        self.shared.check_open()?;
        let start = crate::platform::now_ms();
        self.shared.flush();
        let _busy = self.shared.idle.busy();
        self.shared.gpu.sync().await?;
        self.shared.ledger.count(Exec::Sync);
        if crate::trace::enabled() {
            let s = &self.shared;
            crate::trace::span(s.id, &s.label, "sync", "affon.sync", start, serde_json::json!({}));
        }
        Ok(())
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

    /// Opens a tidy scope (the JS `tidy` and [`Session::tidy`] use this).
    pub fn begin_scope(&self) {
        self.shared.scopes.begin();
    }

    /// Closes the innermost tidy scope; tensors with ids in `returned` survive into the enclosing one.
    pub fn end_scope(&self, returned: &std::collections::HashSet<u64>) {
        self.shared.scopes.end(returned);
    }

    /// Entries the innermost tidy scope holds: the tensors created in it that are still live, plus
    /// at most as many finished ones not yet compacted away (0 outside a scope).
    pub fn scope_entries(&self) -> usize {
        self.shared.scopes.innermost_len()
    }

    /// Exempts `t` from every enclosing tidy scope.
    pub fn keep<'t>(&self, t: &'t Tensor) -> &'t Tensor {
        t.core.kept.store(true, Ordering::SeqCst);
        t
    }

    /// Starts a profile (see [`Session::profile`]); `INVALID_ARGUMENT` if one is running.
    pub fn begin_profile(&self) -> Result<()> {
        self.shared.scopes.begin_profile(&self.shared.ledger)
    }

    /// Ends the running profile.
    pub fn end_profile(&self) -> ProfileInfo {
        self.shared.scopes.end_profile(&self.shared.ledger)
    }

    /// `tf.profile`: the bytes and tensors `f` added, the peak while it ran, and each kernel.
    pub fn profile<R>(&self, f: impl FnOnce() -> R) -> Result<(ProfileInfo, R)> {
        self.begin_profile()?;
        let r = f();
        Ok((self.end_profile(), r))
    }

    /// A tensor of normally distributed float32 values (Box–Muller over a seeded SplitMix64;
    /// the same seed gives the same values on every target).
    pub fn random_normal(&self, shape: &[usize], mean: f64, stddev: f64, seed: u64) -> Result<Tensor> {
        let n = self.admit_shape(shape)?;
        let mut rng = crate::random::Rng::new(seed);
        let v = host_vec(n, |_| ((mean + stddev * rng.normal()) as f32).to_bits())?;
        self.tensor_from_words(&v, shape, DType::Float32, "randomNormal")
    }

    /// A tensor of uniformly distributed float32 values in `[min, max)`.
    pub fn random_uniform(&self, shape: &[usize], min: f64, max: f64, seed: u64) -> Result<Tensor> {
        if min.partial_cmp(&max) != Some(std::cmp::Ordering::Less) {
            return Err(Error::InvalidArgument(format!(
                "randomUniform needs min < max, got {min} and {max}"
            )));
        }
        let n = self.admit_shape(shape)?;
        let mut rng = crate::random::Rng::new(seed);
        let v = host_vec(n, |_| ((min + (max - min) * rng.uniform()) as f32).to_bits())?;
        self.tensor_from_words(&v, shape, DType::Float32, "randomUniform")
    }

    /// Checks, changing nothing, that a tensor of `shape` could be created now (a valid shape, an
    /// open session, room in the pool and on the device); returns its element count. Creation
    /// paths that build host data call this first, so an impossible request never allocates.
    pub fn admit_shape(&self, shape: &[usize]) -> Result<u64> {
        let bytes = shape::byte_length(shape)?;
        self.shared.check_open()?;
        self.shared.admit(&[bytes])?;
        Ok(bytes / 4)
    }

    /// A tensor holding `data` with `shape`; the dtype follows the element type.
    pub fn tensor<T: Element>(&self, data: &[T], shape: &[usize]) -> Result<Tensor> {
        self.check_len(data.len(), shape)?;
        let words = host_vec(data.len() as u64, |i| data[i].to_word())?;
        self.tensor_from_words(&words, shape, T::DTYPE, "tensor")
    }

    /// A tensor from numbers (the JS path): each value must be representable in `dtype`.
    pub fn tensor_from_f64(&self, data: &[f64], shape: &[usize], dtype: DType) -> Result<Tensor> {
        self.check_len(data.len(), shape)?;
        let mut words = host_vec(data.len() as u64, |_| 0u32)?;
        for (w, &v) in words.iter_mut().zip(data) {
            *w = dtype.word_from_f64(v)?;
        }
        self.tensor_from_words(&words, shape, dtype, "tensor")
    }

    /// A tensor from raw 32-bit words (each already valid for `dtype`: the bits of an f32,
    /// an i32, a u32, or 0/1 for bool).
    pub fn tensor_from_bits(&self, words: &[u32], shape: &[usize], dtype: DType) -> Result<Tensor> {
        if dtype == DType::Bool {
            if let Some(w) = words.iter().find(|&&w| w > 1) {
                return Err(Error::InvalidArgument(format!(
                    "a bool tensor holds 0 or 1, got {w}"
                )));
            }
        }
        self.tensor_from_words(words, shape, dtype, "tensor")
    }

    /// `SHAPE_MISMATCH` unless `len` values fill `shape`; also admits the tensor.
    fn check_len(&self, len: usize, shape: &[usize]) -> Result<()> {
        let n = shape::element_count(shape)?;
        if len as u64 != n {
            return Err(Error::ShapeMismatch(format!(
                "data has {len} elements but shape {shape:?} needs {n}"
            )));
        }
        self.admit_shape(shape).map(|_| ())
    }

    fn tensor_from_words(
        &self,
        words: &[u32],
        shape: &[usize],
        dtype: DType,
        origin: &str,
    ) -> Result<Tensor> {
        let n = shape::element_count(shape)?;
        if words.len() as u64 != n {
            return Err(Error::ShapeMismatch(format!(
                "data has {} elements but shape {shape:?} needs {n}",
                words.len()
            )));
        }
        let _submission = self.shared.submission();
        let t = Tensor::allocate(&self.shared, shape.to_vec(), dtype, origin.to_string())?;
        write(&self.shared, t.buffer()?, bytemuck::cast_slice(words));
        self.shared.ledger.count(Exec::Upload(t.byte_length()));
        Ok(t)
    }

    /// A scalar (shape `[]`) holding `value` in `dtype`.
    pub fn scalar(&self, value: f64, dtype: DType) -> Result<Tensor> {
        self.tensor_from_f64(&[value], &[], dtype)
    }

    /// `[start, start + step, …]` up to but excluding `stop` (TF.js `range`); `INVALID_ARGUMENT` for a
    /// zero or non-finite step, or an empty range (zero-sized tensors are not supported).
    pub fn range(&self, start: f64, stop: f64, step: f64, dtype: DType) -> Result<Tensor> {
        if !(start.is_finite() && stop.is_finite() && step.is_finite()) || step == 0.0 {
            return Err(Error::InvalidArgument(format!(
                "range needs finite start, stop and a non-zero step, got {start}, {stop}, {step}"
            )));
        }
        let n = ((stop - start) / step).ceil();
        if n.is_nan() || n < 1.0 || n > shape::MAX_ELEMENTS as f64 {
            return Err(Error::InvalidArgument(format!(
                "range({start}, {stop}, {step}) has {n} elements: it must have between 1 and {}",
                shape::MAX_ELEMENTS
            )));
        }
        let shape = [n as usize];
        self.admit_shape(&shape)?;
        let values = host_vec(n as u64, |i| start + i as f64 * step)?;
        self.tensor_from_f64(&values, &shape, dtype)
    }

    /// The tensors joined along `axis` (all of this session; same shape but along `axis`).
    pub fn concat(&self, tensors: &[&Tensor], axis: i64) -> Result<Tensor> {
        self.shared.check_open()?;
        crate::tensor_ops::join(tensors, axis, false)
    }

    /// The tensors stacked along a new `axis` (all of one shape).
    pub fn stack(&self, tensors: &[&Tensor], axis: i64) -> Result<Tensor> {
        self.shared.check_open()?;
        crate::tensor_ops::join(tensors, axis, true)
    }

    /// The `n × n` identity matrix.
    pub fn eye(&self, n: usize, dtype: DType) -> Result<Tensor> {
        let shape = [n, n];
        let count = self.admit_shape(&shape)?;
        let values = host_vec(count, |i| if i / n == i % n { 1.0 } else { 0.0 })?;
        self.tensor_from_f64(&values, &shape, dtype)
    }

    /// A tensor of zeros.
    pub fn zeros(&self, shape: &[usize], dtype: DType) -> Result<Tensor> {
        self.fill_with(shape, 0.0, dtype, "zeros")
    }

    /// A tensor of ones.
    pub fn ones(&self, shape: &[usize], dtype: DType) -> Result<Tensor> {
        self.fill_with(shape, 1.0, dtype, "ones")
    }

    /// A tensor with every element `value` (which must be representable in `dtype`).
    pub fn fill(&self, shape: &[usize], value: f64, dtype: DType) -> Result<Tensor> {
        self.fill_with(shape, value, dtype, "fill")
    }

    fn fill_with(&self, shape: &[usize], value: f64, dtype: DType, origin: &str) -> Result<Tensor> {
        let word = dtype.word_from_f64(value)?;
        let n = shape::element_count(shape)?;
        let _submission = self.shared.submission();
        let t = Tensor::allocate(&self.shared, shape.to_vec(), dtype, origin.to_string())?;
        let s = &self.shared;
        let ctx = s.ctx();
        let mut enc = crate::commands::Commands::default();
        if word == 0 {
            enc.clear_buffer(t.buffer()?, 0, Some(n * 4));
        } else {
            crate::kernels::fill(&ctx, &mut enc, t.buffer()?, n, word);
        }
        crate::session::commit(s, enc);
        Ok(t)
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

impl Drop for Session {
    /// Dropping the handle disposes the session (unless it was [`Session::forget`]-ten).
    fn drop(&mut self) {
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
