//! `Tensor`: a shape, a dtype and one storage lease from its session's pool. Not `Clone`: one
//! handle owns the storage, released on [`Tensor::dispose`] or `Drop`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::dtype::{DType, Element};
use crate::error::{Error, Result};
use crate::platform::Shared;
use crate::pool::Lease;
use crate::session::SessionShared;
use crate::shape;

/// A tensor owned by a session.
pub struct Tensor {
    session: Shared<SessionShared>,
    id: u64,
    shape: Vec<usize>,
    dtype: DType,
    origin: String,
    byte_length: u64,
    /// The buffer; set once at creation, taken on dispose.
    storage: Mutex<Option<Lease<wgpu::Buffer>>>,
    /// A cheap copy of the buffer handle for recording commands without the lock.
    buffer: Option<wgpu::Buffer>,
    disposed: AtomicBool,
}

impl Tensor {
    /// Acquires storage for a tensor of `shape`. Fails (changing nothing) on a bad shape, a
    /// disposed session or a full pool.
    pub(crate) fn allocate(
        session: &Shared<SessionShared>,
        shape: Vec<usize>,
        dtype: DType,
        origin: String,
    ) -> Result<Tensor> {
        session.check_open()?;
        let byte_length = shape::byte_length(&shape)?;
        let lease = session.pool().acquire(byte_length)?;
        Ok(Tensor {
            session: session.clone(),
            id: session.next_tensor_id(),
            buffer: Some(lease.buffer.clone()),
            storage: Mutex::new(Some(lease)),
            shape,
            dtype,
            origin,
            byte_length,
            disposed: AtomicBool::new(false),
        })
    }

    /// The dimensions; `[]` is a scalar.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// Number of elements.
    pub fn size(&self) -> u64 {
        self.byte_length / 4
    }
    /// Bytes of storage: elements × 4, for every dtype.
    pub fn byte_length(&self) -> u64 {
        self.byte_length
    }
    /// Id, unique within the session.
    pub fn id(&self) -> u64 {
        self.id
    }
    /// What created it (`tensor`, `zeros`, an op or program output).
    pub fn origin(&self) -> &str {
        &self.origin
    }
    /// Whether [`Tensor::dispose`] has been called.
    pub fn is_disposed(&self) -> bool {
        self.disposed.load(Ordering::SeqCst)
    }

    fn describe(&self) -> String {
        format!(
            "tensor #{} ({} {:?}, from '{}')",
            self.id, self.dtype, self.shape, self.origin
        )
    }

    /// The device buffer, or `DISPOSED`.
    pub(crate) fn buffer(&self) -> Result<&wgpu::Buffer> {
        if self.is_disposed() {
            return Err(Error::Disposed(self.describe()));
        }
        Ok(self.buffer.as_ref().expect("set at creation"))
    }

    /// Releases the storage to the session's pool. Idempotent; later use is `DISPOSED`.
    pub fn dispose(&self) {
        if self.disposed.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(lease) = self.storage.lock().unwrap_or_else(|p| p.into_inner()).take() {
            self.session.release(lease);
        }
    }

    /// The raw 32-bit words (synchronises with queued device work).
    pub async fn read_words(&self) -> Result<Vec<u32>> {
        let buffer = self.buffer()?.clone();
        self.session.gpu.read(&buffer, self.byte_length).await
    }

    /// The values, as `T` (whose dtype must match). Synchronises with queued device work.
    pub async fn read<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype {
            return Err(Error::DtypeMismatch(format!(
                "{} read as {}",
                self.describe(),
                T::DTYPE
            )));
        }
        Ok(self.read_words().await?.into_iter().map(T::from_word).collect())
    }

    /// The values as numbers, whatever the dtype (the JS path).
    pub async fn read_f64(&self) -> Result<Vec<f64>> {
        Ok(self
            .read_words()
            .await?
            .into_iter()
            .map(|w| self.dtype.word_to_f64(w))
            .collect())
    }

    /// The single value of a one-element tensor, as a number.
    pub async fn item_f64(&self) -> Result<f64> {
        self.buffer()?;
        self.check_single()?;
        Ok(self.read_f64().await?[0])
    }

    fn check_single(&self) -> Result<()> {
        if self.size() != 1 {
            return Err(Error::ShapeMismatch(format!(
                "item() needs a tensor with exactly one element, got shape {:?}",
                self.shape
            )));
        }
        Ok(())
    }

    /// Blocking [`Tensor::read`] (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        crate::platform::block_on(self.read::<T>())
    }

    /// Blocking [`Tensor::item_f64`] (native only).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn item(&self) -> Result<f64> {
        crate::platform::block_on(self.item_f64())
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        self.dispose();
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}
