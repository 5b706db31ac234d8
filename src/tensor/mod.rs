//! `Tensor`: a shape, a dtype and one storage lease from its session's pool. Not `Clone`: one
//! handle owns the storage, released on [`Tensor::dispose`] or `Drop`. Eager ops are in
//! `tensor_ops.rs`. What tensors keep per session (tidy scopes in `scope.rs`, pending chains in
//! `lazy/`) is `TensorState`, the upper part of the session's runtime (`SessionShared`).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::accounting::Exec;
use crate::device::Look;
use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::kernels::Operand;
use crate::platform::Shared;
use crate::pool::Lease;
use crate::runtime::{Runtime, Upper};
use crate::shape;

pub(crate) mod lazy;
mod made;
pub mod scope;

pub(crate) use made::{constant_in, scalar_in, scratch};

/// What tensors keep per session, inside its runtime.
#[derive(Default)]
pub(crate) struct TensorState {
    /// Tidy scopes and the running profile (see `scope.rs`).
    pub(crate) scopes: scope::Scopes,
    /// Pending tensors (see `lazy/`).
    pub(crate) deferred: lazy::Deferred,
}

impl Upper for TensorState {
    fn settle_pending(rt: &SessionShared) {
        lazy::settle_all(rt);
    }
}

/// A session's runtime, with its tensors' state: what tensors, kernels and programs share.
pub(crate) type SessionShared = Runtime<TensorState>;

static NEXT_TENSOR: AtomicU64 = AtomicU64::new(1);

/// What a tensor handle shares with tidy scopes (which may dispose it).
pub(crate) struct TensorCore {
    pub(crate) session: Shared<SessionShared>,
    pub(crate) id: u64,
    pub(crate) shape: Vec<usize>,
    pub(crate) dtype: DType,
    pub(crate) origin: String,
    pub(crate) byte_length: u64,
    storage: Mutex<Option<Lease<wgpu::Buffer>>>,
    buffer: wgpu::Buffer,
    disposed: AtomicBool,
    /// Exempt from tidy scopes (`keep`).
    pub(crate) kept: AtomicBool,
    /// What computes it, while it is pending (see `lazy.rs`).
    pub(crate) chain: Mutex<Option<lazy::Chain>>,
    pending: AtomicBool,
    /// Its pending kernel was dropped unrun (disposed or forgotten unread).
    unwritten: AtomicBool,
    /// Pending chains reading it as a leaf.
    pub(crate) dependents: AtomicUsize,
}

impl TensorCore {
    pub(crate) fn describe(&self) -> String {
        format!(
            "tensor #{} ({} {:?}, from '{}')",
            self.id, self.dtype, self.shape, self.origin
        )
    }

    pub(crate) fn is_disposed(&self) -> bool {
        self.disposed.load(Ordering::SeqCst)
    }

    pub(crate) fn dispose(&self) {
        if self.disposed.swap(true, Ordering::SeqCst) {
            return;
        }
        if self.dependents.load(Ordering::SeqCst) > 0 {
            lazy::settle_readers(&self.session, self); // they read it before it goes
        }
        // disposed unread: never computed
        self.drop_chain();
        // a reader still holding it (natively: a chain being built, or a reduction recording its
        // prologue, on another thread) releases the storage when it lets go (`LeafRef::drop`)
        if self.dependents.load(Ordering::SeqCst) == 0 {
            self.release_storage();
        }
    }

    /// Gives its storage back to the pool (once).
    pub(crate) fn release_storage(&self) {
        if let Some(lease) = self.storage.lock().unwrap_or_else(|p| p.into_inner()).take() {
            self.session.release(self.id, lease);
        }
    }

    /// `DISPOSED` if disposed; reads nothing (a pending tensor stays pending).
    pub(crate) fn check_live(&self) -> Result<()> {
        if self.is_disposed() {
            return Err(Error::Disposed(self.describe()));
        }
        Ok(())
    }

    /// The storage, computed first if pending (every read of a tensor's contents comes here).
    pub(crate) fn buffer(&self) -> Result<&wgpu::Buffer> {
        self.check_live()?;
        self.settle();
        Ok(&self.buffer)
    }

    /// The storage as an operand, as it is (pending or not, live or not).
    pub(crate) fn operand_unchecked(&self) -> Operand<'_> {
        Operand {
            buffer: &self.buffer,
            shape: &self.shape,
            dtype: self.dtype,
        }
    }

    /// Whether its kernel is deferred (see `lazy.rs`).
    pub(crate) fn is_pending(&self) -> bool {
        self.pending.load(Ordering::SeqCst)
    }

    pub(crate) fn set_chain(&self, chain: lazy::Chain) {
        *self.chain.lock().unwrap_or_else(|p| p.into_inner()) = Some(chain);
        self.pending.store(true, Ordering::SeqCst);
    }

    /// Records its pending kernel, if any (held locked while recording: a concurrent reader
    /// waits until the commands are in the batch).
    pub(crate) fn settle(&self) {
        if !self.is_pending() {
            return;
        }
        let taken = {
            let mut chain = self.chain.lock().unwrap_or_else(|p| p.into_inner());
            let c = chain.take();
            if let Some(c) = &c {
                lazy::record(self, &c.resolved());
            }
            self.pending.store(false, Ordering::SeqCst);
            c
        };
        // dropped unlocked: a tensor only it held is disposed, and looks for pending readers
        drop(taken);
    }

    /// No longer pending: its kernel is in the batch (recorded with siblings, `lazy::siblings`,
    /// its chain taken under the lock the caller holds).
    pub(crate) fn mark_settled(&self) {
        self.pending.store(false, Ordering::SeqCst);
    }

    /// Forgets its pending kernel (nothing will read it): its storage stays unwritten.
    pub(crate) fn drop_chain(&self) {
        if self.is_pending() {
            let c = self.chain.lock().unwrap_or_else(|p| p.into_inner()).take();
            self.unwritten.store(true, Ordering::SeqCst);
            self.pending.store(false, Ordering::SeqCst);
            drop(c);
        }
    }

    /// Whether its storage holds its value: computed, neither pending nor dropped unread (a
    /// chain that inlined it may read it as a leaf then).
    pub(crate) fn is_computed(&self) -> bool {
        !self.is_pending() && !self.unwritten.load(Ordering::SeqCst) && !self.is_disposed()
    }
}

/// A tensor owned by a session.
pub struct Tensor {
    pub(crate) core: Shared<TensorCore>,
}

impl Tensor {
    /// Acquires storage for a tensor of `shape`. Fails (changing nothing) on a bad shape, a
    /// disposed session or a full pool. The tensor joins the innermost tidy scope.
    pub(crate) fn allocate(
        session: &Shared<SessionShared>,
        shape: Vec<usize>,
        dtype: DType,
        origin: String,
    ) -> Result<Tensor> {
        let t = Self::allocate_untracked(session, shape, dtype, origin)?;
        session.upper.scopes.track(&t.core);
        Ok(t)
    }

    /// Like [`Tensor::allocate`] but outside tidy scopes: for storage owned by an executable or
    /// an execution state, and for run intermediates.
    pub(crate) fn allocate_untracked(
        session: &Shared<SessionShared>,
        shape: Vec<usize>,
        dtype: DType,
        origin: String,
    ) -> Result<Tensor> {
        Self::allocate_in_slot(session, shape, dtype, origin, 0)
    }

    /// [`Tensor::allocate_untracked`] in a buffer of at least `at_least` bytes (a run's slot).
    pub(crate) fn allocate_in_slot(
        session: &Shared<SessionShared>,
        shape: Vec<usize>,
        dtype: DType,
        origin: String,
        at_least: u64,
    ) -> Result<Tensor> {
        session.check_open()?;
        let byte_length = shape::byte_length(&shape)?;
        let id = NEXT_TENSOR.fetch_add(1, Ordering::Relaxed);
        let lease = session.acquire(id, byte_length, at_least, &origin)?;
        let core = Shared::new(TensorCore {
            session: session.clone(),
            id,
            buffer: lease.buffer.clone(),
            storage: Mutex::new(Some(lease)),
            shape,
            dtype,
            origin,
            byte_length,
            disposed: AtomicBool::new(false),
            kept: AtomicBool::new(false),
            chain: Mutex::new(None),
            pending: AtomicBool::new(false),
            unwritten: AtomicBool::new(false),
            dependents: AtomicUsize::new(0),
        });
        Ok(Tensor { core })
    }

    /// The dimensions; `[]` is a scalar.
    pub fn shape(&self) -> &[usize] {
        &self.core.shape
    }
    /// The element type.
    pub fn dtype(&self) -> DType {
        self.core.dtype
    }
    /// Number of elements.
    pub fn size(&self) -> u64 {
        self.core.byte_length / 4
    }
    /// Bytes of storage: elements × 4, for every dtype.
    pub fn byte_length(&self) -> u64 {
        self.core.byte_length
    }
    /// Id, unique within the process.
    pub fn id(&self) -> u64 {
        self.core.id
    }
    /// What created it (`tensor`, `zeros`, an op name, a program output).
    pub fn origin(&self) -> &str {
        &self.core.origin
    }
    /// Whether [`Tensor::dispose`] has been called (or a tidy scope disposed it).
    pub fn is_disposed(&self) -> bool {
        self.core.is_disposed()
    }

    /// `DISPOSED` if disposed (a pending tensor stays pending).
    pub(crate) fn check_live(&self) -> Result<()> {
        self.core.check_live()
    }

    /// The device buffer (computed first if pending), or `DISPOSED`.
    pub(crate) fn buffer(&self) -> Result<&wgpu::Buffer> {
        self.core.buffer()
    }

    /// This tensor as a kernel operand (checks it is live).
    pub(crate) fn operand(&self) -> Result<Operand<'_>> {
        Ok(Operand {
            buffer: self.buffer()?,
            shape: &self.core.shape,
            dtype: self.core.dtype,
        })
    }

    /// Whether it belongs to the session behind `s`.
    pub(crate) fn belongs_to(&self, s: &Shared<SessionShared>) -> bool {
        Shared::ptr_eq(&self.core.session, s)
    }

    /// `INVALID_ARGUMENT` (naming `op`) unless this tensor is of session `s`.
    pub(crate) fn check_in(&self, s: &Shared<SessionShared>, op: &str) -> Result<()> {
        let (theirs, ours) = (&self.core.session.label, &s.label);
        self.belongs_to(s).then_some(()).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{op}: {self:?} belongs to session '{theirs}', not '{ours}'"
            ))
        })
    }

    /// Releases the storage to the session's pool. Idempotent; later use is `DISPOSED`.
    pub fn dispose(&self) {
        self.core.dispose();
    }

    /// What the JS layer does when the garbage collector takes a handle without `dispose()`:
    /// the storage is reported as forgotten and stays accounted until
    /// [`crate::telemetry::release_forgotten`] or the session's `dispose()` (released at once
    /// with `releaseOnCollect`). Natively, useful to test that bookkeeping.
    pub fn forget(self) {
        if self.is_disposed() {
            return;
        }
        self.core.drop_chain(); // no handle can read it now
        let s = self.core.session.clone();
        s.forget(&[self.id()], Box::new(self));
    }

    /// Calls `f` with the tensor's bytes while they are mapped (synchronises with queued device
    /// work): the only host copy a readback makes is the one `f` makes.
    pub(crate) async fn read_with<R>(&self, f: impl FnOnce(&wgpu::BufferView) -> R) -> Result<R> {
        let s = &self.core.session;
        // in the browser a readback yields the task, where every pending tensor is computed:
        // computed here instead, siblings with this one (`m = x.mul(2); y = m.add(1)`: one kernel)
        #[cfg(web)]
        if self.core.is_pending() && !self.is_disposed() {
            lazy::settle_all(s);
        }
        let buffer = self.buffer()?.clone();
        let start = crate::platform::now_ms();
        let _busy = s.idle.busy();
        // a session that ran a checked kernel since the last look reads its check words along
        let words = s.kernels.look();
        let look = words.as_ref().map_or(Look::None, Look::Behind);
        let read = s
            .gpu
            .read_with(&buffer, self.core.byte_length, &s.ledger, look, f);
        let (r, seen) = read
            .await
            .inspect_err(|_| s.kernels.checks.rearm_if(words.is_some()))?;
        crate::runtime::arm(s); // the staging buffer kept for the next readback
        s.ledger.count(Exec::Download(self.core.byte_length));
        s.ledger.count(Exec::Sync);
        if let Some(w) = seen {
            s.kernels.checks.verdict(w)?; // once: the look cleared them
        }
        if crate::trace::enabled() {
            let args = serde_json::json!({ "bytes": self.core.byte_length, "origin": self.core.origin });
            crate::trace::span(s.id, &s.label, "readback", "affon.readback", start, args);
        }
        Ok(r)
    }

    /// The raw 32-bit words (synchronises with queued device work).
    pub async fn read_words(&self) -> Result<Vec<u32>> {
        self.read_with(|b| {
            b.chunks_exact(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect()
        })
        .await
    }

    /// The values, as `T` (whose dtype must match). Synchronises with queued device work.
    pub async fn read<T: Element>(&self) -> Result<Vec<T>> {
        self.check_live()?;
        if T::DTYPE != self.core.dtype {
            return Err(Error::DtypeMismatch(format!(
                "{} read as {}",
                self.core.describe(),
                T::DTYPE
            )));
        }
        self.read_with(|b| {
            b.chunks_exact(4)
                .map(|w| T::from_word(u32::from_le_bytes([w[0], w[1], w[2], w[3]])))
                .collect()
        })
        .await
    }

    /// The values as numbers, whatever the dtype (the JS path).
    pub async fn read_f64(&self) -> Result<Vec<f64>> {
        let d = self.core.dtype;
        Ok(self
            .read_words()
            .await?
            .into_iter()
            .map(|w| d.word_to_f64(w))
            .collect())
    }

    /// The single value of a one-element tensor, as a number.
    pub async fn item_f64(&self) -> Result<f64> {
        self.check_live()?;
        if self.size() != 1 {
            return Err(Error::ShapeMismatch(format!(
                "item() needs a tensor with exactly one element, got shape {:?}",
                self.core.shape
            )));
        }
        Ok(self.read_f64().await?[0])
    }

    /// Blocking [`Tensor::read`] (native only).
    #[cfg(native)]
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        crate::platform::block_on(self.read::<T>())
    }

    /// Blocking [`Tensor::item_f64`] (native only).
    #[cfg(native)]
    pub fn item(&self) -> Result<f64> {
        crate::platform::block_on(self.item_f64())
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        self.core.dispose();
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.core.describe())
    }
}

impl crate::forgotten::Kept for Tensor {
    fn bytes(&self) -> u64 {
        if self.is_disposed() {
            0
        } else {
            self.byte_length()
        }
    }
}
