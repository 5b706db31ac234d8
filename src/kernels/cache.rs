//! What recording reuses across calls: compute pipelines by `(kernel, specialisation)`, the
//! parameter ring, and bind groups by `(pipeline, buffers)`. A bind group binds the ring for its
//! kernel's parameters, which each dispatch reads at its own dynamic offset (`bindings.rs`,
//! `commands.rs`), so a warm program run or a tidy loop of eager ops creates no pipeline, no
//! buffer and no bind group — no per-dispatch object for the WebGPU bindings to leave on the JS
//! heap — and neither does a loop whose parameters change every call.
//!
//! Pipelines and bind groups are bounded LRU caches. A bind group holds its buffers' handles: a
//! buffer the pool destroys keeps only its (memory-less) handle alive in an entry until that
//! entry is evicted, and it is never looked up again (the pool never hands a destroyed buffer out).
//!
//! The parameter ring ([`RING_BYTES`], made at a session's first dispatch) and the index-check
//! words (16 bytes, made at its first checked dispatch: `checks.rs`) are counted in
//! `compute.memory/param_bytes` and `param_buffers` when the call that made it succeeds
//! ([`KernelCache::settle`], from `commit`), so a failed call moves no record; a ring made by a
//! failed call stays and is counted by the next call that succeeds. The operand
//! textures of the CPU matmul's texture form (`operand_tex.rs`) are cached and counted the same
//! way, in `compute.memory/texture_bytes` and `textures`.

use std::borrow::Borrow;
use std::hash::Hash;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::accounting::{Exec, Ledger};
use crate::commands::Effect;

use super::checks::{Checks, Origin, CHECK_BYTES};
use super::operand_tex;

/// Pipelines a session keeps (least recently used evicted first, counted in
/// `compute.execution/pipeline_cache_evictions`).
pub const MAX_PIPELINES: usize = 256;

/// Bytes of a session's parameter ring: 256 dispatches a submission at WebGPU's default offset
/// alignment (256 bytes), far more where the device aligns finer (a batch is submitted at 64
/// dispatches unless one call records more).
pub const RING_BYTES: u64 = 64 << 10;

/// Bind groups a session keeps.
const MAX_BIND_GROUPS: usize = 2048;

/// Identifies a bind group: its pipeline, its texture views with their bindings, then
/// `(buffer, bound bytes)` in the order of the bindings the views leave.
#[derive(Clone, PartialEq, Eq, Hash)]
struct BindKey {
    pipeline: wgpu::ComputePipeline,
    views: Vec<(u32, wgpu::TextureView)>,
    buffers: Vec<(wgpu::Buffer, u64)>,
}

/// An operand texture, and the buffer whose words it holds as of the commands already committed
/// (`None`: not known, filled by the next product that reads it).
#[derive(Clone)]
struct OperandTexture {
    view: wgpu::TextureView,
    holds: Option<wgpu::Buffer>,
}

/// The small buffers every session may make once: the parameter ring and the index-check words.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Small {
    Ring,
    Checks,
}

/// Pipelines, parameter buffers, operand textures and bind groups of one session.
pub(crate) struct KernelCache {
    pipelines: Mutex<lru::LruCache<(&'static str, String), wgpu::ComputePipeline>>,
    ring: Mutex<Settled<Small, wgpu::Buffer>>,
    /// The device-side index checks' state (`checks.rs`); their words live beside the ring.
    pub(crate) checks: Checks,
    textures: Mutex<Settled<operand_tex::Key, OperandTexture>>,
    binds: Mutex<lru::LruCache<BindKey, wgpu::BindGroup>>,
    ledger: Arc<Ledger>,
    /// The device's count of asynchronous errors ([`crate::device::Gpu::errors`]) and the count
    /// the operand textures' `holds` were last known good at.
    device_errors: (Arc<AtomicU64>, AtomicU64),
    /// The 1-D kernels' workgroup size on the device (`WORKGROUP` in every kernel's source).
    workgroup: u32,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn lru<K: std::hash::Hash + Eq, V>(n: usize) -> lru::LruCache<K, V> {
    lru::LruCache::new(NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN))
}

impl KernelCache {
    /// An empty cache reporting to `ledger`, for a device whose 1-D kernels take `workgroup`
    /// invocations a workgroup.
    pub(crate) fn new(ledger: Arc<Ledger>, device_errors: Arc<AtomicU64>, workgroup: u32) -> KernelCache {
        KernelCache {
            pipelines: Mutex::new(lru(MAX_PIPELINES)),
            ring: Mutex::new(Settled::new(2)),
            checks: Checks::default(),
            textures: Mutex::new(Settled::new(operand_tex::MAX_TEXTURES)),
            binds: Mutex::new(lru(MAX_BIND_GROUPS)),
            ledger,
            device_errors: (device_errors, AtomicU64::new(0)),
            workgroup,
        }
    }

    /// The pipeline for `kernel` specialised by `key`, compiling `source()` on first use.
    pub(crate) fn pipeline(
        &self,
        device: &wgpu::Device,
        kernel: &'static str,
        key: &str,
        source: impl FnOnce() -> String,
    ) -> wgpu::ComputePipeline {
        let mut map = lock(&self.pipelines);
        let k = (kernel, key.to_string());
        if let Some(p) = map.get(&k) {
            return p.clone();
        }
        let pipeline = super::bindings::pipeline(device, kernel, source(), self.workgroup);
        match map.push(k, pipeline.clone()) {
            Some(_) => self.ledger.count(Exec::PipelineEviction),
            None => self.ledger.count(Exec::Pipelines(1)),
        }
        pipeline
    }

    /// The session's parameter ring, made on first use: a storage buffer every batch writes its
    /// dispatches' parameters into just before it is submitted (`commands.rs`).
    pub(crate) fn ring(&self, device: &wgpu::Device) -> wgpu::Buffer {
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        self.small(device, Small::Ring, "affon params", RING_BYTES, usage)
    }

    /// The session's index-check words (`checks.rs`), made at its first checked dispatch, and
    /// the tag of `origin` for that dispatch (which arms the next look).
    pub(crate) fn check(&self, device: &wgpu::Device, origin: Origin) -> (wgpu::Buffer, u32) {
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let words = self.small(device, Small::Checks, "affon index checks", CHECK_BYTES, usage);
        (words, self.checks.tag(origin))
    }

    /// The check words when a checked dispatch was recorded since the last look (which starts
    /// now: a look that fails calls `checks.rearm_if`), else `None`: the readback copies nothing more.
    pub(crate) fn look(&self) -> Option<wgpu::Buffer> {
        if !self.checks.take_armed() {
            return None;
        }
        lock(&self.ring).get(&Small::Checks)
    }

    fn small(
        &self,
        device: &wgpu::Device,
        key: Small,
        label: &str,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> wgpu::Buffer {
        let mut r = lock(&self.ring);
        if let Some(b) = r.get(&key) {
            return b;
        }
        let b = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: false,
        });
        r.insert(key, b.clone(), size);
        b
    }

    /// The operand texture `key` (slot, width, height in texels: `operand_tex::texture`), made on
    /// first use, and the buffer whose words it holds as of the committed calls. A call that makes
    /// one is counted when it succeeds (as parameter buffers are); one it evicts leaves with the
    /// bind groups that bind it.
    pub(crate) fn operand_texture(
        &self,
        device: &wgpu::Device,
        key: operand_tex::Key,
    ) -> (wgpu::TextureView, Option<wgpu::Buffer>) {
        let mut t = lock(&self.textures);
        // the device rejected a batch since: its fills may not have run, so no texture is trusted
        let errors = self.device_errors.0.load(Ordering::SeqCst);
        if self.device_errors.1.swap(errors, Ordering::SeqCst) != errors {
            t.iter_mut().for_each(|(_, x)| x.holds = None);
        }
        if let Some(OperandTexture { view, holds }) = t.get(&key) {
            return (view, holds);
        }
        let (view, bytes) = operand_tex::texture(device, (key.1, key.2));
        let made = OperandTexture {
            view: view.clone(),
            holds: None,
        };
        if let Some(old) = t.insert(key, made, bytes) {
            drop(t);
            self.forget_binds(|k| k.views.iter().any(|(_, v)| *v == old.view));
        }
        (view, None)
    }

    /// `buffer` was written outside a call's commands (an upload): no texture holds its words now.
    pub(crate) fn forget_writes_to(&self, buffer: &wgpu::Buffer) {
        for (_, t) in lock(&self.textures).iter_mut() {
            if t.holds.as_ref() == Some(buffer) {
                t.holds = None;
            }
        }
    }

    /// Drops the cached bind groups `stale` picks (never looked up again: a buffer or view of
    /// their key is gone).
    fn forget_binds(&self, stale: impl Fn(&BindKey) -> bool) {
        let mut binds = lock(&self.binds);
        let stale: Vec<BindKey> = binds
            .iter()
            .filter(|(k, _)| stale(k))
            .map(|(k, _)| k.clone())
            .collect();
        for k in &stale {
            binds.pop(k);
        }
        self.ledger.count(Exec::BindGroups(-(stale.len() as i64)));
    }

    /// A call succeeded with `effects` (its commands', in order, now appended to the batch): each
    /// operand texture learns which buffer it holds after them; the parameter ring and operand
    /// textures made and evicted since the last call that succeeded reach the ledger.
    pub(crate) fn settle(&self, effects: &[Effect]) {
        if !effects.is_empty() {
            for (_, t) in lock(&self.textures).iter_mut() {
                t.holds = operand_tex::holds_after(t.holds.take(), &t.view, effects);
            }
        }
        let (bytes, buffers) = lock(&self.ring).settle();
        if bytes != 0 || buffers != 0 {
            self.ledger.params_changed(bytes, buffers);
        }
        let (bytes, textures) = lock(&self.textures).settle();
        if bytes != 0 || textures != 0 {
            self.ledger.textures_changed(bytes, textures);
        }
    }

    /// Drops the operand textures (the pending batch keeps what it uses) and the bind groups
    /// that bind them, counting them out; returns their bytes (`Session::clear_cache`).
    pub(crate) fn clear_textures(&self) -> u64 {
        let (bytes, textures) = lock(&self.textures).clear();
        self.ledger.textures_changed(-bytes, -textures);
        if textures > 0 {
            self.forget_binds(|k| !k.views.is_empty());
        }
        bytes as u64
    }

    /// The session is disposed or its device lost: no call will record again. Drops the
    /// parameter ring, every operand texture and bind group (the pending batch, already
    /// submitted, keeps what it uses) and counts them out. The ring is destroyed, not only
    /// dropped: the batch keeps a handle to it (`commands.rs`), and its memory must go when the
    /// ledger says it went.
    pub(crate) fn release(&self) {
        let mut ring = lock(&self.ring);
        for key in [Small::Ring, Small::Checks] {
            if let Some(b) = ring.get(&key) {
                b.destroy();
            }
        }
        let (bytes, buffers) = ring.clear();
        drop(ring);
        self.ledger.params_changed(-bytes, -buffers);
        let (bytes, textures) = lock(&self.textures).clear();
        self.ledger.textures_changed(-bytes, -textures);
        let mut binds = lock(&self.binds);
        self.ledger.count(Exec::BindGroups(-(binds.len() as i64)));
        binds.clear();
    }

    /// The bind group for `pipeline`'s group 0 binding texture `views` at their bindings and
    /// `buffers` (each its first `bytes`) at the others, in order.
    pub(crate) fn bind_group(
        &self,
        device: &wgpu::Device,
        pipeline: &wgpu::ComputePipeline,
        views: &[(u32, &wgpu::TextureView)],
        buffers: &[(&wgpu::Buffer, u64)],
    ) -> wgpu::BindGroup {
        let key = BindKey {
            pipeline: pipeline.clone(),
            views: views.iter().map(|&(i, v)| (i, v.clone())).collect(),
            buffers: buffers.iter().map(|(b, n)| ((*b).clone(), *n)).collect(),
        };
        let mut map = lock(&self.binds);
        if let Some(g) = map.get(&key) {
            return g.clone();
        }
        let taken = |i: u32| views.iter().any(|&(v, _)| v == i);
        let free = (0u32..).filter(|&i| !taken(i));
        let mut entries: Vec<wgpu::BindGroupEntry> = free
            .zip(buffers)
            .map(|(i, (b, n))| wgpu::BindGroupEntry {
                binding: i,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: b,
                    offset: 0,
                    size: std::num::NonZeroU64::new(*n),
                }),
            })
            .collect();
        entries.extend(views.iter().map(|&(i, v)| wgpu::BindGroupEntry {
            binding: i,
            resource: wgpu::BindingResource::TextureView(v),
        }));
        let g = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        if map.push(key, g.clone()).is_none() {
            self.ledger.count(Exec::BindGroups(1));
        }
        g
    }

    /// Number of pipelines cached.
    pub(crate) fn len(&self) -> usize {
        lock(&self.pipelines).len()
    }
}

impl Drop for KernelCache {
    fn drop(&mut self) {
        self.release(); // what a disposed session already released counts out as nothing
        self.ledger.count(Exec::Pipelines(-(self.len() as i64)));
    }
}

/// A bounded cache of device objects whose bytes and count reach the ledger only when the call
/// that made them succeeds: the kernel cache's parameter ring and operand textures. Objects made (and evicted) since the last successful call are *unsettled*: held
/// here, not yet counted; [`Settled::settle`] hands their total to the caller for the ledger, so a
/// failed call moves no record and its objects are counted by the next call that succeeds.
/// Least recently used first out; each value is held with its bytes.
pub(crate) struct Settled<K: Hash + Eq, V> {
    map: lru::LruCache<K, (V, u64)>,
    /// `(bytes, objects)` made minus evicted since the last [`Settled::settle`].
    unsettled: (i64, i64),
}

impl<K: Hash + Eq, V: Clone> Settled<K, V> {
    /// An empty cache of at most `capacity` objects.
    pub(crate) fn new(capacity: usize) -> Self {
        Settled {
            map: lru(capacity),
            unsettled: (0, 0),
        }
    }

    /// The cached value of `key` (now the most recently used).
    pub(crate) fn get<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.map.get(key).map(|(v, _)| v.clone())
    }

    /// Caches `value` (made now, `bytes` long) under `key`, absent until now; returns the value
    /// it evicted, dropped by the caller, not destroyed: a pending command may still use it.
    pub(crate) fn insert(&mut self, key: K, value: V, bytes: u64) -> Option<V> {
        self.unsettled.0 += bytes as i64;
        self.unsettled.1 += 1;
        let (_, (old, old_bytes)) = self.map.push(key, (value, bytes))?;
        self.unsettled.0 -= old_bytes as i64;
        self.unsettled.1 -= 1;
        Some(old)
    }

    /// Every cached key and value, to update in place.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
        self.map.iter_mut().map(|(k, (v, _))| (k, v))
    }

    /// A call succeeded: `(bytes, objects)` made minus evicted since the last call that did.
    pub(crate) fn settle(&mut self) -> (i64, i64) {
        std::mem::take(&mut self.unsettled)
    }

    /// Drops every object; returns `(bytes, objects)` of them the ledger counts (the map's total
    /// less what is unsettled).
    pub(crate) fn clear(&mut self) -> (i64, i64) {
        let held: u64 = self.map.iter().map(|(_, (_, b))| b).sum();
        let counted = (
            held as i64 - self.unsettled.0,
            self.map.len() as i64 - self.unsettled.1,
        );
        self.map.clear();
        self.unsettled = (0, 0);
        counted
    }
}
