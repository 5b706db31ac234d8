//! What recording reuses across calls: compute pipelines by `(kernel, specialisation)`, parameter
//! buffers by content, and bind groups by `(pipeline, buffers)`. A warm program run or a tidy
//! loop of eager ops therefore creates no pipeline, no buffer and no bind group — no per-dispatch
//! object for the WebGPU bindings to leave on the JS heap.
//!
//! All three are bounded LRU caches. A bind group holds its buffers' handles: a buffer the pool
//! destroys keeps only its (memory-less) handle alive in an entry until that entry is evicted,
//! and it is never looked up again (the pool never hands a destroyed buffer out).

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, MutexGuard};

use wgpu::util::DeviceExt;

use crate::accounting::{Exec, Ledger};

/// Pipelines a session keeps (least recently used evicted first, counted in
/// `compute.execution/pipeline_cache_evictions`).
pub const MAX_PIPELINES: usize = 256;

/// Parameter buffers a session keeps (each a few dozen bytes).
const MAX_PARAMS: usize = 1024;

/// Bind groups a session keeps.
const MAX_BIND_GROUPS: usize = 2048;

/// Identifies a bind group: its pipeline, then `(buffer, bound bytes)` in binding order.
#[derive(PartialEq, Eq, Hash)]
struct BindKey {
    pipeline: wgpu::ComputePipeline,
    buffers: Vec<(wgpu::Buffer, u64)>,
}

/// Pipelines, parameter buffers and bind groups of one session.
pub(crate) struct KernelCache {
    pipelines: Mutex<lru::LruCache<(&'static str, String), wgpu::ComputePipeline>>,
    params: Mutex<lru::LruCache<Vec<u32>, wgpu::Buffer>>,
    binds: Mutex<lru::LruCache<BindKey, wgpu::BindGroup>>,
    ledger: Arc<Ledger>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn lru<K: std::hash::Hash + Eq, V>(n: usize) -> Mutex<lru::LruCache<K, V>> {
    Mutex::new(lru::LruCache::new(
        NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN),
    ))
}

impl KernelCache {
    /// An empty cache reporting to `ledger`.
    pub(crate) fn new(ledger: Arc<Ledger>) -> KernelCache {
        KernelCache {
            pipelines: lru(MAX_PIPELINES),
            params: lru(MAX_PARAMS),
            binds: lru(MAX_BIND_GROUPS),
            ledger,
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
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(kernel),
            source: wgpu::ShaderSource::Wgsl(source().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(kernel),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        match map.push(k, pipeline.clone()) {
            Some(_) => self.ledger.count(Exec::PipelineEviction),
            None => self.ledger.count(Exec::Pipelines(1)),
        }
        pipeline
    }

    /// A read-only storage buffer holding `words` (never written after creation, so shared by
    /// every dispatch with the same parameters).
    pub(crate) fn params(&self, device: &wgpu::Device, words: &[u32]) -> wgpu::Buffer {
        let mut map = lock(&self.params);
        if let Some(b) = map.get(words) {
            return b.clone();
        }
        let b = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("affon params"),
            contents: bytemuck::cast_slice(words),
            usage: wgpu::BufferUsages::STORAGE,
        });
        // An evicted buffer is dropped, not destroyed: a pending bind group may still use it.
        map.push(words.to_vec(), b.clone());
        b
    }

    /// The bind group binding `buffers` (binding `i` = `buffers[i]`, its first `bytes`) for
    /// `pipeline`'s group 0.
    pub(crate) fn bind_group(
        &self,
        device: &wgpu::Device,
        pipeline: &wgpu::ComputePipeline,
        buffers: &[(&wgpu::Buffer, u64)],
    ) -> wgpu::BindGroup {
        let key = BindKey {
            pipeline: pipeline.clone(),
            buffers: buffers.iter().map(|(b, n)| ((*b).clone(), *n)).collect(),
        };
        let mut map = lock(&self.binds);
        if let Some(g) = map.get(&key) {
            return g.clone();
        }
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, (b, n))| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: b,
                    offset: 0,
                    size: std::num::NonZeroU64::new(*n),
                }),
            })
            .collect();
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
        self.ledger.count(Exec::Pipelines(-(self.len() as i64)));
        self.ledger
            .count(Exec::BindGroups(-(lock(&self.binds).len() as i64)));
    }
}
