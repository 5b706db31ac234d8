//! Device acquisition (wgpu over Vulkan/Metal/DX12 natively, over WebGPU in the browser), the
//! adapter's identity, the wgpu [`Storage`] the pool draws from, and readback.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::accounting::Ledger;
use crate::commands::{Commands, Graveyard, Pending};
use crate::error::{Error, Result};
use crate::pool::Storage;
use crate::staging::Staging;

/// Which adapter a session runs on. Appears in `Session.adapter` and in reports.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdapterIdentity {
    /// `vulkan`, `metal`, `dx12`, `gl` or `webgpu`.
    pub backend: String,
    /// The adapter name (e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`); empty in browsers.
    pub name: String,
    /// Vendor: the PCI id natively, the browser's `GPUAdapterInfo.vendor` on the web.
    pub vendor: String,
    /// The browser's `GPUAdapterInfo.architecture` (e.g. `swiftshader`); empty natively.
    pub architecture: String,
    /// `discrete`, `integrated`, `virtual`, `cpu` or `other`.
    pub device_type: String,
    /// Driver name and version where reported.
    pub driver: String,
    /// Largest single buffer the device allows.
    pub max_buffer_size: u64,
    /// Largest storage-buffer binding the device allows.
    pub max_storage_buffer_binding_size: u64,
    /// Invocations per subgroup when the device was granted subgroup operations and the adapter
    /// has a single subgroup size (SwiftShader 4, lavapipe 8 with 256-bit vectors); 0 otherwise.
    /// The CPU matmul shares operand loads across a subgroup when it is 4 or 8.
    pub subgroup_size: u32,
}

impl AdapterIdentity {
    /// SwiftShader (the browser's `architecture`, or natively the Vulkan device's name), whose
    /// storage-buffer loads are per-lane gathers: the CPU matmul reads large operands from
    /// textures there (`kernels/operand_tex.rs`), not on lavapipe, where it measured slower.
    pub fn is_swiftshader(&self) -> bool {
        self.architecture.eq_ignore_ascii_case("swiftshader") || self.name.contains("SwiftShader")
    }
}

/// The device and queue of one session.
pub struct Gpu {
    /// The wgpu device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// The adapter's identity.
    pub identity: AdapterIdentity,
    /// Invocations per workgroup of the 1-D kernels on this device (`kernels::workgroup_for`).
    pub(crate) workgroup: u32,
    lost: Arc<AtomicBool>,
    last_error: Arc<Mutex<Option<String>>>,
    /// Errors the device has reported asynchronously so far (see [`Gpu::errors`]).
    errors: Arc<AtomicU64>,
    /// Commands of completed calls not yet submitted (see `commands.rs`).
    pub(crate) pending: Pending,
    /// Readback staging buffers kept for reuse (see `staging.rs`).
    pub(crate) staging: Staging,
    /// Queue operations so far (submissions and buffer writes), and how many of them are known to
    /// have completed (a readback or a `sync` saw them done): `sync` with nothing new since returns
    /// without a round trip to the device.
    pub(crate) queued: AtomicU64,
    pub(crate) done: AtomicU64,
}

impl Gpu {
    /// Requests an adapter and a device with the adapter's full limits.
    /// No adapter is `UNSUPPORTED` (never a silent fallback).
    pub async fn acquire(label: &str) -> Result<Gpu> {
        Gpu::acquire_with(label, None).await
    }

    /// [`Gpu::acquire`], asking for at most `workgroup_limit` invocations per workgroup (and
    /// workgroup width and height) where the adapter allows more
    /// (`SessionOptions::workgroup_limit`). A device on which no kernel set fits
    /// (`kernels::workgroup_for`) is `UNSUPPORTED`.
    pub async fn acquire_with(label: &str, workgroup_limit: Option<u32>) -> Result<Gpu> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = Gpu::request_adapter(&instance).await?;
        let info = adapter.get_info();
        let limits = Gpu::capped_limits(&adapter, workgroup_limit);
        let (device, queue, lanes) = Gpu::request_device(&adapter, &info, label, &limits).await?;
        let identity = Gpu::adapter_identity(&info, &limits, lanes).await;
        let (lost, last_error, errors) = Gpu::watch_device(&device);
        let align = device.limits().min_storage_buffer_offset_alignment as u64;
        let workgroup = Gpu::kernel_workgroup(&device)?;
        Ok(Gpu {
            workgroup,
            device,
            queue,
            identity,
            lost,
            last_error,
            errors,
            pending: Pending::new(align),
            staging: Staging::default(),
            queued: AtomicU64::new(0),
            done: AtomicU64::new(0),
        })
    }

    /// The high-performance adapter; none is `UNSUPPORTED`.
    async fn request_adapter(instance: &wgpu::Instance) -> Result<wgpu::Adapter> {
        instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                ..Default::default()
            })
            .await
            .map_err(|e| {
                Error::Unsupported(format!(
                    "no GPU adapter is available ({e}); natively install a Vulkan/Metal/DX12 driver (Mesa's lavapipe on Linux), in a browser enable WebGPU"
                ))
            })
    }

    /// The adapter's full limits, its workgroup limits capped at `workgroup_limit`.
    fn capped_limits(adapter: &wgpu::Adapter, workgroup_limit: Option<u32>) -> wgpu::Limits {
        let mut limits = adapter.limits();
        if let Some(cap) = workgroup_limit {
            limits.max_compute_invocations_per_workgroup =
                limits.max_compute_invocations_per_workgroup.min(cap);
            limits.max_compute_workgroup_size_x = limits.max_compute_workgroup_size_x.min(cap);
            limits.max_compute_workgroup_size_y = limits.max_compute_workgroup_size_y.min(cap);
        }
        limits
    }

    /// The device with `limits` and, where the adapter has them with one subgroup size, subgroup
    /// operations: the device, its queue and that size (0 without).
    #[cfg_attr(target_arch = "wasm32", allow(unused_variables))]
    async fn request_device(
        adapter: &wgpu::Adapter,
        info: &wgpu::AdapterInfo,
        label: &str,
        limits: &wgpu::Limits,
    ) -> Result<(wgpu::Device, wgpu::Queue, u32)> {
        // subgroup operations when the adapter has them with one subgroup size (see `subgroup_size`)
        #[cfg(not(target_arch = "wasm32"))]
        let lanes = if adapter.features().contains(wgpu::Features::SUBGROUP)
            && info.subgroup_min_size == info.subgroup_max_size
        {
            info.subgroup_min_size
        } else {
            0
        };
        let desc = wgpu::DeviceDescriptor {
            label: Some(label),
            required_limits: limits.clone(),
            #[cfg(not(target_arch = "wasm32"))]
            required_features: if lanes > 0 {
                wgpu::Features::SUBGROUP
            } else {
                wgpu::Features::empty()
            },
            ..Default::default()
        };
        #[cfg(not(target_arch = "wasm32"))]
        let request = adapter.request_device(&desc);
        // wgpu does not ask the browser for subgroups: the request is made with them added
        #[cfg(target_arch = "wasm32")]
        let (request, lanes) = crate::platform::with_subgroups(|| adapter.request_device(&desc));
        let (device, queue) = request
            .await
            .map_err(|e| Error::Unsupported(format!("the adapter refused a device: {e}")))?;
        Ok((device, queue, lanes))
    }

    /// The adapter's identity (`lanes`: the subgroup size granted, or 0).
    async fn adapter_identity(
        info: &wgpu::AdapterInfo,
        limits: &wgpu::Limits,
        lanes: u32,
    ) -> AdapterIdentity {
        #[cfg(target_arch = "wasm32")]
        let (vendor, architecture) = crate::platform::browser_adapter_identity().await;
        #[cfg(not(target_arch = "wasm32"))]
        let (vendor, architecture) = (format!("{:#06x}", info.vendor), String::new());
        AdapterIdentity {
            backend: info.backend.to_str().to_string(),
            name: info.name.clone(),
            vendor,
            architecture,
            device_type: format!("{:?}", info.device_type).to_lowercase(),
            driver: format!("{} {}", info.driver, info.driver_info).trim().to_string(),
            max_buffer_size: limits.max_buffer_size,
            max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
            subgroup_size: lanes,
        }
    }

    /// Watches `device`: the flag its loss sets, and the last and the count of the errors it
    /// reports asynchronously.
    fn watch_device(device: &wgpu::Device) -> (Arc<AtomicBool>, Arc<Mutex<Option<String>>>, Arc<AtomicU64>) {
        let lost = Arc::new(AtomicBool::new(false));
        let flag = lost.clone();
        // a device affon destroyed itself is not lost: `destroy` sets the flag, `release` must not
        device.set_device_lost_callback(move |reason, _| {
            if reason != wgpu::DeviceLostReason::Destroyed {
                flag.store(true, Ordering::SeqCst)
            }
        });
        let last_error = Arc::new(Mutex::new(None));
        let errors = Arc::new(AtomicU64::new(0));
        let (sink, count) = (last_error.clone(), errors.clone());
        // wgpu's default handler panics; record the error instead and surface it on the next call.
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            *sink.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
            count.fetch_add(1, Ordering::SeqCst);
        }));
        (lost, last_error, errors)
    }

    /// Invocations per workgroup of the 1-D kernels on `device`; a device on which no kernel set
    /// fits is destroyed and `UNSUPPORTED`.
    fn kernel_workgroup(device: &wgpu::Device) -> Result<u32> {
        let granted = device.limits();
        let Some(workgroup) = crate::kernels::workgroup_for(&granted) else {
            device.destroy();
            return Err(Error::Unsupported(format!(
                "the device allows {} invocations per workgroup ({} × {} at most); affon's kernels need 128 (128 × 8)",
                granted.max_compute_invocations_per_workgroup,
                granted.max_compute_workgroup_size_x,
                granted.max_compute_workgroup_size_y
            )));
        };
        Ok(workgroup)
    }

    /// `DEVICE_LOST` if the device has been lost.
    pub fn check(&self) -> Result<()> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(Error::DeviceLost(
                "the GPU device was lost; dispose() still works".into(),
            ));
        }
        Ok(())
    }

    /// Destroys the device, as a device loss would (for testing loss handling): new work fails
    /// with `DEVICE_LOST`.
    pub fn destroy(&self) {
        self.lost.store(true, Ordering::SeqCst);
        self.device.destroy();
    }

    /// Destroys the device once nothing can use it any more (the session disposed with no tensor,
    /// executable or state left, or its last handle gone): otherwise the browser keeps every
    /// device until its JS object is garbage-collected, and a page making many sessions exhausts
    /// the GPU process. Not a loss: the lost flag stays as it was.
    pub(crate) fn release(&self) {
        self.device.destroy();
    }

    /// The shared lost flag (telemetry reads it).
    pub(crate) fn lost_flag(&self) -> Arc<AtomicBool> {
        self.lost.clone()
    }

    /// Whether the device has been lost.
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// How many errors the device has reported asynchronously, shared: a command buffer the device
    /// rejected ran none of its commands, so what the session believed they did (an operand texture's
    /// fill) is known false once this moves.
    pub(crate) fn errors(&self) -> Arc<AtomicU64> {
        self.errors.clone()
    }

    /// Takes the last error the device reported asynchronously, if any.
    pub fn take_error(&self) -> Option<String> {
        self.last_error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Calls `f` with the first `bytes` of `buffer`, mapped on the host (natively the view derefs to
    /// the bytes; in the browser `as_uint8array()` is the mapped JS memory, so copying it into a
    /// TypedArray is the only host copy). Synchronises with all queued work. The staging buffer
    /// comes from the session's kept ones and goes back to them (counted in `ledger`). With
    /// `Look::Behind(words)` the session's index-check words ride along (copied behind the bytes,
    /// then cleared, in the same submission: `kernels/checks.rs`) and are returned; with
    /// `Look::Only`, `buffer` is the check words: returned, and cleared.
    pub(crate) async fn read_with<R>(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
        ledger: &Ledger,
        look: Look<'_>,
        f: impl FnOnce(&wgpu::BufferView) -> R,
    ) -> Result<(R, Option<[u32; 4]>)> {
        self.check()?;
        let size = match look {
            Look::Behind(_) => behind(bytes) + crate::kernels::CHECK_BYTES,
            _ => bytes,
        };
        let lent = self.staging.lend(&self.device, size, ledger);
        match self.read_through(buffer, bytes, look, lent.buffer(), f).await {
            Ok((read, submits)) => {
                // a readback the check words reject is a failed call: its staging buffer, if
                // made for it, goes (no figure moves)
                lent.give_back(read.1.is_none_or(|w| w[0] == 0));
                // the pending batch and the copy to the staging buffer (more than one command
                // buffer only when the batch's parameters overflowed the ring)
                ledger.count(crate::accounting::Exec::Submits(submits as u64));
                Ok(read)
            }
            // a device error reported at this readback: the buffer was unmapped, sound
            Err(e @ Error::Unsupported(_)) => {
                lent.give_back(false);
                Err(e)
            }
            // a failed map may leave it mapped, or the device is lost: dropping `lent` destroys it
            Err(e) => Err(e),
        }
    }

    #[allow(clippy::type_complexity)]
    async fn read_through<R>(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
        look: Look<'_>,
        staging: &wgpu::Buffer,
        f: impl FnOnce(&wgpu::BufferView) -> R,
    ) -> Result<((R, Option<[u32; 4]>), usize)> {
        // The copy joins the pending batch: one submission runs the batch and the copy.
        let mut c = Commands::default();
        c.copy_buffer_to_buffer(buffer, 0, staging, 0, bytes);
        let (mapped_bytes, words_at) = match look {
            Look::Behind(words) => {
                let at = behind(bytes);
                c.copy_buffer_to_buffer(words, 0, staging, at, crate::kernels::CHECK_BYTES);
                c.clear_buffer(words, 0, None);
                (at + crate::kernels::CHECK_BYTES, Some(at))
            }
            Look::Only => {
                c.clear_buffer(buffer, 0, None);
                (bytes, Some(0))
            }
            Look::None => (bytes, None),
        };
        self.pending.append(c);
        let submits = self.flush();
        let queued = self.queued.load(Ordering::SeqCst);
        let (tx, rx) = futures_channel::oneshot::channel();
        staging
            .slice(..mapped_bytes)
            .map_async(wgpu::MapMode::Read, move |r| {
                let _ = tx.send(r);
            });
        crate::platform::wait_idle(&self.device)?;
        let mapped = rx
            .await
            .map_err(|_| Error::DeviceLost("readback was cancelled".into()))?;
        mapped.map_err(|e| Error::DeviceLost(format!("readback failed: {e}")))?;
        // the copy ran after everything queued before it
        self.done.fetch_max(queued, Ordering::SeqCst);
        if let Some(e) = self.take_error() {
            // Validation errors (a shader the browser rejected, say) arrive asynchronously; the
            // first readback after one reports it instead of returning stale data silently.
            staging.unmap();
            return Err(Error::Unsupported(format!("the device reported an error: {e}")));
        }
        let read = {
            let failed = |e| Error::DeviceLost(format!("readback failed: {e}"));
            let view = staging.slice(..bytes).get_mapped_range().map_err(failed)?;
            let words = match words_at {
                Some(at) => {
                    let end = at + crate::kernels::CHECK_BYTES;
                    let w = staging.slice(at..end).get_mapped_range().map_err(failed)?;
                    Some(crate::kernels::check_words(&w))
                }
                None => None,
            };
            (f(&view), words)
        };
        staging.unmap();
        Ok((read, submits))
    }

    /// Submits the pending batch, if any; returns the command buffers submitted (see
    /// `Pending::submit`).
    pub(crate) fn flush(&self) -> usize {
        let submitted = self.pending.submit(&self.device, &self.queue);
        if submitted > 0 {
            self.queued.fetch_add(1, Ordering::SeqCst);
        }
        submitted
    }

    /// Writes `data` at the start of `buffer`, after the pending batch (a queue write runs
    /// before any later submission, so pending commands that read the buffer go first); returns
    /// the command buffers the batch took.
    pub(crate) fn write_buffer(&self, buffer: &wgpu::Buffer, data: &[u8]) -> usize {
        let submitted = self.flush();
        self.queue.write_buffer(buffer, 0, data);
        self.queued.fetch_add(1, Ordering::SeqCst);
        submitted
    }

    /// Waits until all queued work (the pending batch included) has completed; at once when
    /// nothing was queued since a readback or a sync saw the queue done (a loop that reads its
    /// result back, then syncs, pays one round trip, not two). With `words` (the session's
    /// index-check words, armed) the wait is their readback (`Look::Only`), and they are returned.
    pub(crate) async fn sync(
        &self,
        words: Option<&wgpu::Buffer>,
        ledger: &Ledger,
    ) -> Result<Option<[u32; 4]>> {
        self.check()?;
        if let Some(words) = words {
            let bytes = crate::kernels::CHECK_BYTES;
            let ((), w) = self.read_with(words, bytes, ledger, Look::Only, |_| ()).await?;
            return Ok(w);
        }
        self.flush();
        let queued = self.queued.load(Ordering::SeqCst);
        if self.done.load(Ordering::SeqCst) >= queued {
            return Ok(None);
        }
        let (tx, rx) = futures_channel::oneshot::channel();
        self.queue.on_submitted_work_done(move || {
            let _ = tx.send(());
        });
        crate::platform::wait_idle(&self.device)?;
        rx.await
            .map_err(|_| Error::DeviceLost("sync was cancelled".into()))?;
        self.done.fetch_max(queued, Ordering::SeqCst);
        Ok(None)
    }
}

/// What a readback does besides reading its buffer (`Gpu::read_with`).
#[derive(Clone, Copy)]
pub(crate) enum Look<'a> {
    /// Nothing.
    None,
    /// Reads the session's index-check words (this buffer) behind the bytes, and clears them.
    Behind(&'a wgpu::Buffer),
    /// The buffer read is the check words (a `sync`'s look): returns them, and clears them.
    Only,
}

/// Where a readback of `bytes` puts the check words in its staging buffer: mapped ranges start at
/// multiples of 8 bytes (`wgpu::MAP_ALIGNMENT`).
fn behind(bytes: u64) -> u64 {
    bytes.next_multiple_of(wgpu::MAP_ALIGNMENT)
}

/// The pool's storage on a real device: buffers usable as storage and as copy source/target.
pub struct DeviceStorage {
    device: wgpu::Device,
    max_buffer_size: u64,
    graveyard: Graveyard,
}

impl DeviceStorage {
    /// Storage drawing from `gpu`'s device.
    pub fn new(gpu: &Gpu) -> Self {
        DeviceStorage {
            device: gpu.device.clone(),
            max_buffer_size: gpu
                .identity
                .max_buffer_size
                .min(gpu.identity.max_storage_buffer_binding_size),
            graveyard: gpu.pending.graveyard(),
        }
    }
}

impl Storage for DeviceStorage {
    type Buffer = wgpu::Buffer;

    fn alloc(&mut self, size: u64) -> Result<wgpu::Buffer> {
        // The pool checked `max_buffer_size` before calling; a larger request here is a bug, and
        // wgpu would only report it asynchronously.
        debug_assert!(size <= self.max_buffer_size);
        Ok(self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("affon storage"),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }))
    }

    fn dealloc(&mut self, buffer: wgpu::Buffer) {
        self.graveyard.destroy(buffer);
    }

    fn max_buffer_size(&self) -> u64 {
        self.max_buffer_size
    }
}
