//! Device commands recorded ahead of submission. An eager op, a program run or a state copy
//! records its commands into a [`Commands`] list; if the call fails the list is dropped and
//! nothing reached the device. A call that succeeds appends its list to the session's
//! [`Pending`] batch, which is encoded into one command encoder — consecutive dispatches in one
//! compute pass — and submitted at a readback, a `sync()`, an upload, a threshold of
//! [`BATCH_DISPATCHES`], or (in the browser) when the calling task yields.
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
    },
    Copy {
        src: wgpu::Buffer,
        dst: wgpu::Buffer,
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
}

impl Commands {
    /// Records a dispatch.
    pub(crate) fn dispatch(
        &mut self,
        pipeline: &wgpu::ComputePipeline,
        bind: wgpu::BindGroup,
        groups: (u32, u32, u32),
    ) {
        self.cmds.push(Cmd::Dispatch {
            pipeline: pipeline.clone(),
            bind,
            groups,
        });
    }

    /// Records a copy of `bytes` from the start of `src` to the start of `dst` (offsets are 0:
    /// every copy affon makes is of a whole storage).
    pub(crate) fn copy_buffer_to_buffer(
        &mut self,
        src: &wgpu::Buffer,
        so: u64,
        dst: &wgpu::Buffer,
        d: u64,
        bytes: u64,
    ) {
        debug_assert!(so == 0 && d == 0);
        self.touch(dst);
        self.cmds.push(Cmd::Copy {
            src: src.clone(),
            dst: dst.clone(),
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
    state: Mutex<Batch>,
    /// Commands pending (read without the lock by [`Graveyard`]).
    queued: Shared<AtomicUsize>,
    graveyard: Shared<Mutex<Vec<wgpu::Buffer>>>,
}

#[derive(Default)]
struct Batch {
    cmds: Vec<Cmd>,
    dispatches: usize,
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
    pub(crate) fn new() -> Pending {
        Pending {
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
        b.cmds.extend(c.cmds);
        self.queued.store(b.cmds.len(), Ordering::SeqCst);
        b.dispatches >= BATCH_DISPATCHES
    }

    /// Whether commands are waiting.
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn is_empty(&self) -> bool {
        self.queued.load(Ordering::SeqCst) == 0
    }

    /// Encodes and submits the batch (if any), then destroys the buffers that waited for it.
    /// Returns whether anything was submitted.
    pub(crate) fn submit(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> bool {
        // Held through `queue.submit`: batches reach the queue in the order they were appended
        // (a readback's copy is submitted before any thread can map its staging buffer).
        let mut b = self.state.lock().unwrap_or_else(|p| p.into_inner());
        b.dispatches = 0;
        let cmds = std::mem::take(&mut b.cmds);
        let submitted = !cmds.is_empty();
        if submitted {
            queue.submit([encode(device, &cmds)]);
        }
        let mut dead = self.graveyard.lock().unwrap_or_else(|p| p.into_inner());
        self.queued.store(0, Ordering::SeqCst);
        for buffer in dead.drain(..) {
            buffer.destroy();
        }
        submitted
    }
}

/// One command buffer: runs of dispatches share a compute pass; copies and clears go between.
fn encode(device: &wgpu::Device, cmds: &[Cmd]) -> wgpu::CommandBuffer {
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
                }) = cmds.get(i)
                {
                    if last != Some(pipeline) {
                        pass.set_pipeline(pipeline);
                        last = Some(pipeline);
                    }
                    pass.set_bind_group(0, bind, &[]);
                    pass.dispatch_workgroups(groups.0, groups.1, groups.2);
                    i += 1;
                }
            }
            Cmd::Copy { src, dst, bytes } => {
                enc.copy_buffer_to_buffer(src, 0, dst, 0, *bytes);
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
