//! Device commands recorded ahead of submission. An eager op, a program run or a state copy
//! records its commands into a [`Commands`] list; if the call fails the list is dropped and
//! nothing reached the device. A call that succeeds appends its list to the session's
//! [`Pending`] batch, which is encoded into one command encoder — consecutive dispatches in one
//! compute pass — and submitted at a readback, a `sync()`, an upload, a threshold of
//! [`BATCH_DISPATCHES`], or (in the browser) when the calling task yields.
//!
//! Each dispatch's parameters are recorded with it; at submission the batch's parameters are
//! written into the session's parameter ring in one queue write, each dispatch's at an offset
//! aligned to the device's `minStorageBufferOffsetAlignment`, which the dispatch binds as its
//! bind group's dynamic offset (`kernels/bindings.rs`) — no write when the ring already holds
//! those bytes (a warm loop's batches repeat their parameters). A queue write runs after every submission
//! made before it, so the ring is rewritten from its start for every submission; a batch whose
//! parameters do not fit the ring is submitted in as many command buffers as it takes, each
//! after its own write ([`slots`]).
//!
//! Buffers the pool destroys while a batch that uses them is pending are destroyed right after
//! the batch is submitted (WebGPU lets submitted work finish with a destroyed buffer; it rejects
//! new work on one).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::platform::Shared;

/// Dispatches a pending batch may hold before it is submitted without waiting for a readback.
pub(crate) const BATCH_DISPATCHES: usize = 64;

/// One recorded command. Buffers and bind groups are cheap reference-counted handles.
pub(crate) enum Cmd {
    Dispatch {
        pipeline: wgpu::ComputePipeline,
        bind: wgpu::BindGroup,
        groups: (u32, u32, u32),
        /// Where the parameters are in the list's words (`start, len`).
        params: (usize, usize),
    },
    Copy {
        src: wgpu::Buffer,
        dst: wgpu::Buffer,
        /// Where in `dst` the bytes go.
        at: u64,
        bytes: u64,
    },
    Clear {
        buffer: wgpu::Buffer,
        bytes: u64,
    },
}

/// What a recorded command does to memory that an operand texture may copy, in recording order:
/// at commit the kernel cache learns from a call's effects which buffer each texture holds the
/// words of (`operand_tex::holds_after`), so a product whose operand is unchanged since its
/// texture was filled skips the fill.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Effect<B = wgpu::Buffer, T = wgpu::TextureView> {
    /// A buffer a command may write: every buffer a dispatch binds but its parameters (where the
    /// operand textures are in use: `Ctx::texture_cap`), a copy's or a clear's destination.
    Touch(B),
    /// An operand texture (this object: a texture evicted and made again under the same key is
    /// another) filled from a buffer's words.
    Fill(T, B),
}

/// Commands of one call, in order (same method names as `wgpu::CommandEncoder`), and their
/// [`Effect`]s.
#[derive(Default)]
pub(crate) struct Commands {
    cmds: Vec<Cmd>,
    effects: Vec<Effect>,
    /// The dispatches' parameters, one after another.
    words: Vec<u32>,
    /// The parameter ring the dispatches' bind groups bind (the session's one ring).
    ring: Option<wgpu::Buffer>,
}

impl Commands {
    /// Records a dispatch whose bind group binds `ring` for its parameters, `params`.
    pub(crate) fn dispatch(
        &mut self,
        pipeline: &wgpu::ComputePipeline,
        bind: wgpu::BindGroup,
        (ring, params): (&wgpu::Buffer, &[u32]),
        groups: (u32, u32, u32),
    ) {
        self.cmds.push(Cmd::Dispatch {
            pipeline: pipeline.clone(),
            bind,
            groups,
            params: (self.words.len(), params.len()),
        });
        self.words.extend_from_slice(params);
        one_ring(&mut self.ring, ring);
    }

    /// Records a copy of `bytes` from the start of `src` to `dst` at `d` (the source offset is 0:
    /// every copy affon makes is of a whole storage; a readback appends the index-check words
    /// after the tensor's in its staging buffer).
    pub(crate) fn copy_buffer_to_buffer(
        &mut self,
        src: &wgpu::Buffer,
        so: u64,
        dst: &wgpu::Buffer,
        d: u64,
        bytes: u64,
    ) {
        debug_assert!(so == 0);
        self.touch(dst);
        self.cmds.push(Cmd::Copy {
            src: src.clone(),
            dst: dst.clone(),
            at: d,
            bytes,
        });
    }

    /// Records a zero fill of the first `bytes` of `buffer`.
    pub(crate) fn clear_buffer(&mut self, buffer: &wgpu::Buffer, offset: u64, bytes: Option<u64>) {
        debug_assert!(offset == 0);
        let bytes = bytes.unwrap_or(buffer.size());
        self.touch(buffer);
        self.cmds.push(Cmd::Clear {
            buffer: buffer.clone(),
            bytes,
        });
    }

    /// Notes that a command recorded now may write `buffer`.
    pub(crate) fn touch(&mut self, buffer: &wgpu::Buffer) {
        self.effects.push(Effect::Touch(buffer.clone()));
    }

    /// Notes that the dispatch recorded last fills operand texture `texture` from `buffer`.
    pub(crate) fn filled(&mut self, texture: &wgpu::TextureView, buffer: &wgpu::Buffer) {
        self.effects.push(Effect::Fill(texture.clone(), buffer.clone()));
    }

    /// The effects recorded, in order.
    pub(crate) fn effects(&self) -> &[Effect] {
        &self.effects
    }

    /// Dispatches recorded.
    pub(crate) fn dispatches(&self) -> usize {
        self.cmds
            .iter()
            .filter(|c| matches!(c, Cmd::Dispatch { .. }))
            .count()
    }
}

/// A session's batch: commands of completed calls not yet submitted, and buffers whose
/// destruction waits for the batch.
pub(crate) struct Pending {
    /// The device's `min_storage_buffer_offset_alignment`.
    align: usize,
    state: Mutex<Batch>,
    /// Commands pending (read without the lock by [`Graveyard`]).
    queued: Shared<AtomicUsize>,
    graveyard: Shared<Mutex<Vec<wgpu::Buffer>>>,
}

#[derive(Default)]
struct Batch {
    cmds: Vec<Cmd>,
    words: Vec<u32>,
    dispatches: usize,
    /// The session's parameter ring, from the first dispatch appended; what it holds from its
    /// start, as far as the writes so far tell; how many writes were made (a test's figure).
    ring: Option<wgpu::Buffer>,
    ring_holds: Vec<u8>,
    ring_writes: u64,
    /// The bytes of a submission's ring write, laid out here (kept: no allocation a submission).
    staged: Vec<u8>,
}

/// Keeps `ring` in `held`: a session has one parameter ring, made once and dropped only when no
/// call can record again (`KernelCache::release`), so every dispatch binds the same one.
fn one_ring(held: &mut Option<wgpu::Buffer>, ring: &wgpu::Buffer) {
    match held {
        Some(r) => debug_assert!(r == ring, "one parameter ring a session"),
        None => *held = Some(ring.clone()),
    }
}

/// Where the pool's storage sends buffers to destroy: now when nothing is pending, else after
/// the pending batch is submitted.
#[derive(Clone)]
pub(crate) struct Graveyard {
    queued: Shared<AtomicUsize>,
    buffers: Shared<Mutex<Vec<wgpu::Buffer>>>,
}

impl Graveyard {
    /// Destroys `buffer` as soon as no pending command can use it.
    pub(crate) fn destroy(&self, buffer: wgpu::Buffer) {
        let mut held = self.buffers.lock().unwrap_or_else(|p| p.into_inner());
        if self.queued.load(Ordering::SeqCst) == 0 {
            drop(held);
            buffer.destroy();
        } else {
            held.push(buffer);
        }
    }
}

impl Pending {
    /// An empty batch for a device whose storage-buffer offsets align to `align` bytes.
    pub(crate) fn new(align: u64) -> Pending {
        Pending {
            align: align.max(4) as usize,
            state: Mutex::new(Batch::default()),
            queued: Shared::new(AtomicUsize::new(0)),
            graveyard: Shared::new(Mutex::new(Vec::new())),
        }
    }

    /// The handle the pool's storage destroys buffers through.
    pub(crate) fn graveyard(&self) -> Graveyard {
        Graveyard {
            queued: self.queued.clone(),
            buffers: self.graveyard.clone(),
        }
    }

    /// Appends a completed call's commands; true when the batch should now be submitted.
    pub(crate) fn append(&self, c: Commands) -> bool {
        let mut b = self.state.lock().unwrap_or_else(|p| p.into_inner());
        b.dispatches += c.dispatches();
        let shift = b.words.len();
        b.cmds.extend(c.cmds.into_iter().map(|mut cmd| {
            if let Cmd::Dispatch { params, .. } = &mut cmd {
                params.0 += shift;
            }
            cmd
        }));
        b.words.extend(c.words);
        if let Some(ring) = &c.ring {
            one_ring(&mut b.ring, ring);
        }
        self.queued.store(b.cmds.len(), Ordering::SeqCst);
        b.dispatches >= BATCH_DISPATCHES
    }

    /// Writes of the parameter ring so far.
    #[cfg(all(test, native))]
    pub(crate) fn ring_writes(&self) -> u64 {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).ring_writes
    }

    /// Whether commands are waiting.
    #[cfg(web)]
    pub(crate) fn is_empty(&self) -> bool {
        self.queued.load(Ordering::SeqCst) == 0
    }

    /// Encodes and submits the batch (if any), then destroys the buffers that waited for it.
    /// Returns how many command buffers were submitted: one, or more when the batch's parameters
    /// did not fit the ring at once; 0 when nothing was pending.
    pub(crate) fn submit(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> usize {
        // Held through `queue.submit`: batches reach the queue in the order they were appended
        // (a readback's copy is submitted before any thread can map its staging buffer).
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let b = &mut *guard;
        b.dispatches = 0;
        let cmds = std::mem::take(&mut b.cmds);
        let words = std::mem::take(&mut b.words);
        let capacity = b.ring.as_ref().map_or(0, |r| r.size() as usize);
        let sizes = cmds.iter().map(|c| match c {
            Cmd::Dispatch { params, .. } => Some(params.1.max(1) * 4),
            _ => None,
        });
        let (offsets, starts) = slots(sizes, self.align, capacity);
        for (k, &start) in starts.iter().enumerate() {
            let end = starts.get(k + 1).copied().unwrap_or(cmds.len());
            if let Some(ring) = &b.ring {
                let staged = &mut b.staged;
                staged.clear();
                for (c, &at) in cmds[start..end].iter().zip(&offsets[start..end]) {
                    if let Cmd::Dispatch { params: (w, n), .. } = c {
                        staged.resize(at, 0);
                        staged.extend_from_slice(bytemuck::cast_slice(&words[*w..w + n]));
                    }
                }
                // a warm loop's batches lay out the same parameters every time: no write then
                if !b.ring_holds.starts_with(staged) {
                    queue.write_buffer(ring, 0, staged);
                    b.ring_writes += 1;
                    let n = staged.len().min(b.ring_holds.len());
                    b.ring_holds[..n].copy_from_slice(&staged[..n]);
                    b.ring_holds.extend_from_slice(&staged[n..]);
                }
            }
            queue.submit([encode(device, &cmds[start..end], &offsets[start..end])]);
        }
        let mut dead = self.graveyard.lock().unwrap_or_else(|p| p.into_inner());
        self.queued.store(0, Ordering::SeqCst);
        for buffer in dead.drain(..) {
            buffer.destroy();
        }
        starts.len()
    }
}

/// Where each command's parameters go in the ring (`sizes`: a dispatch's parameter bytes, `None`
/// for a copy or a clear), each dispatch's at the next offset aligned to `align`, and the indices
/// at which the batch starts a new submission because the next dispatch's parameters would pass
/// `capacity` bytes (its offsets then start again at 0). One submission for a batch that fits;
/// none for an empty batch.
pub(crate) fn slots(
    sizes: impl Iterator<Item = Option<usize>>,
    align: usize,
    capacity: usize,
) -> (Vec<usize>, Vec<usize>) {
    let (mut offsets, mut starts) = (Vec::new(), Vec::new());
    let mut used = 0usize;
    for (i, size) in sizes.enumerate() {
        if i == 0 {
            starts.push(0);
        }
        let Some(size) = size else {
            offsets.push(0);
            continue;
        };
        let mut at = used.div_ceil(align) * align;
        if at + size > capacity && used > 0 {
            starts.push(i);
            at = 0;
        }
        offsets.push(at);
        used = at + size;
    }
    (offsets, starts)
}

/// One command buffer: runs of dispatches share a compute pass, each binding its parameters at
/// its offset in the ring; copies and clears go between.
fn encode(device: &wgpu::Device, cmds: &[Cmd], offsets: &[usize]) -> wgpu::CommandBuffer {
    let mut enc = device.create_command_encoder(&Default::default());
    let mut i = 0;
    while i < cmds.len() {
        match &cmds[i] {
            Cmd::Dispatch { .. } => {
                let mut pass = enc.begin_compute_pass(&Default::default());
                let mut last: Option<&wgpu::ComputePipeline> = None;
                while let Some(Cmd::Dispatch {
                    pipeline,
                    bind,
                    groups,
                    ..
                }) = cmds.get(i)
                {
                    if last != Some(pipeline) {
                        pass.set_pipeline(pipeline);
                        last = Some(pipeline);
                    }
                    pass.set_bind_group(0, bind, &[offsets[i] as u32]);
                    pass.dispatch_workgroups(groups.0, groups.1, groups.2);
                    i += 1;
                }
            }
            Cmd::Copy { src, dst, at, bytes } => {
                enc.copy_buffer_to_buffer(src, 0, dst, *at, *bytes);
                i += 1;
            }
            Cmd::Clear { buffer, bytes } => {
                enc.clear_buffer(buffer, 0, Some(*bytes));
                i += 1;
            }
        }
    }
    enc.finish()
}

#[cfg(test)]
mod tests {
    use super::slots;

    #[test]
    fn parameters_take_aligned_slots_and_split_the_batch_when_the_ring_is_full() {
        // three dispatches of 12, 4 and 300 bytes, a copy between: 256-byte slots
        let sizes = [Some(12), Some(4), None, Some(300)];
        assert_eq!(
            slots(sizes.into_iter(), 256, 1024),
            (vec![0, 256, 0, 512], vec![0])
        );
        // a 768-byte ring holds the first two; the third starts a second submission at 0
        assert_eq!(
            slots(sizes.into_iter(), 256, 768),
            (vec![0, 256, 0, 0], vec![0, 3])
        );
        // 16-byte alignment packs them
        assert_eq!(slots(sizes.into_iter(), 16, 1024).0, vec![0, 16, 0, 32]);
        // a batch of copies only: one submission, no parameters; an empty batch: none
        assert_eq!(slots([None].into_iter(), 256, 0), (vec![0], vec![0]));
        assert_eq!(slots(std::iter::empty(), 256, 0), (vec![], vec![]));
        // 1,000 one-word dispatches in a 64 KiB ring at 256 bytes: 256 a submission
        let (offsets, starts) = slots(std::iter::repeat_n(Some(4), 1000), 256, 65536);
        assert_eq!(starts, vec![0, 256, 512, 768]);
        assert_eq!(offsets[255], 65280);
        assert_eq!(offsets[256], 0);
    }
}
