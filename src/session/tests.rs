//! `Gpu::sync`'s shortcut, seen from a session: what a readback or a sync saw completed is not
//! waited for again, and whatever was queued after it is.

use std::sync::atomic::Ordering::SeqCst;

use crate::platform::block_on;
use crate::{Session, SessionOptions};

#[test]
fn sync_waits_for_what_was_queued_since_the_queue_was_last_seen_done() {
    let s = Session::new(SessionOptions::default()).unwrap();
    let gpu = &s.shared.gpu;
    let queued = || gpu.queued.load(SeqCst);
    let done = || gpu.done.load(SeqCst);
    let x = s.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    assert!(done() < queued(), "an upload is queued, not yet seen done");
    let y = x.square().unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), [1.0, 4.0, 9.0, 16.0]);
    let seen = queued();
    assert_eq!(done(), seen, "the readback saw everything queued before it done");
    block_on(s.sync()).unwrap();
    assert_eq!(
        (queued(), done()),
        (seen, seen),
        "a sync with nothing new queues nothing"
    );
    let z = y.add(&x).unwrap();
    block_on(s.sync()).unwrap();
    assert!(queued() > seen, "the sync submitted the pending add");
    assert_eq!(done(), queued(), "and waited for it");
    // the device agrees: nothing is left to run
    let status = gpu.device.poll(wgpu::PollType::Poll).unwrap();
    assert!(status.is_queue_empty(), "{status:?}");
    assert_eq!(z.to_vec::<f32>().unwrap(), [2.0, 6.0, 12.0, 20.0]);
}

/// The parameter ring reaches the ledger when the call that made it succeeds (`commit`): one made
/// by a call that then failed is kept but not yet counted, and the next call that succeeds counts
/// it; a lost device's is counted out.
#[test]
fn the_parameter_ring_is_counted_when_a_call_succeeds() {
    let s = Session::new(SessionOptions::default()).unwrap();
    let counted = || {
        let st = s.stats();
        (st.param_bytes, st.param_buffers)
    };
    let ctx = s.shared.ctx();
    // what a call that fails after recording leaves: the ring made, no commit
    let ledger = s.stats();
    let made = ctx.cache.ring(ctx.device);
    assert_eq!(made.size(), crate::RING_BYTES);
    assert_eq!(counted(), (0, 0), "not counted before a call succeeds");
    assert_eq!(s.stats(), ledger, "no record moved");
    assert_eq!(ctx.cache.ring(ctx.device), made, "one ring a session");
    let x = s.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    assert_eq!(
        x.square().unwrap().to_vec::<f32>().unwrap(),
        [1.0, 4.0, 9.0, 16.0]
    );
    assert_eq!(
        counted(),
        (crate::RING_BYTES, 1),
        "counted by the next call that succeeds"
    );
    // the ring is written only when a batch's parameters differ from what it holds
    let writes = || s.shared.gpu.pending.ring_writes();
    let w = writes();
    for _ in 0..3 {
        assert_eq!(
            x.square().unwrap().to_vec::<f32>().unwrap(),
            [1.0, 4.0, 9.0, 16.0]
        );
    }
    assert_eq!(writes(), w, "the same parameters: no write");
    let y = s.tensor(&[1.0f32; 8], &[8]).unwrap();
    assert_eq!(y.square().unwrap().to_vec::<f32>().unwrap(), [1.0; 8]);
    assert_eq!(writes(), w + 1, "two vec4s, not one: written");
    assert_eq!(
        x.square().unwrap().to_vec::<f32>().unwrap(),
        [1.0, 4.0, 9.0, 16.0]
    );
    assert_eq!(writes(), w + 2, "and back");
    s.destroy_device();
    assert_eq!(counted(), (0, 0), "a lost device's ring is released");
}

/// The pending batch keeps a handle to the session's ring (`commands.rs`): disposing the session
/// while a tensor still holds its device open must still free the ring's memory, which the ledger
/// says went. A destroyed buffer cannot be bound: the bind group is a validation error.
#[test]
fn a_disposed_sessions_ring_is_destroyed_though_the_batch_held_it() {
    let s = Session::new(SessionOptions::default()).unwrap();
    let x = s.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    assert_eq!(
        x.square().unwrap().to_vec::<f32>().unwrap(),
        [1.0, 4.0, 9.0, 16.0]
    );
    let ctx = s.shared.ctx();
    let (device, ring) = (ctx.device.clone(), ctx.cache.ring(ctx.device));
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let bind = || {
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let _group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: ring.as_entire_binding(),
            }],
        });
        crate::platform::block_on(scope.pop())
    };
    assert!(bind().is_none(), "the ring is live while the session is");
    s.dispose();
    assert_eq!((s.stats().param_bytes, s.stats().param_buffers), (0, 0));
    assert!(!x.is_disposed(), "the tensor holds the device open");
    assert!(bind().is_some(), "the ring was destroyed with the session");
}

/// `dispose()` waits for a call recording on another thread (it holds the submission lock from
/// before it records to its commit), so that call's work is submitted before the ring it binds
/// is destroyed.
#[test]
fn dispose_waits_for_a_call_recording_on_another_thread() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let s = Session::new(SessionOptions::default()).unwrap();
    let shared = s.shared.clone();
    let done = Arc::new(AtomicBool::new(false));
    let ((held, holding), flag) = (std::sync::mpsc::channel(), done.clone());
    let caller = std::thread::spawn(move || {
        let _submission = shared.submission();
        held.send(()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        flag.store(true, Ordering::SeqCst);
    });
    holding.recv().unwrap();
    s.dispose();
    assert!(
        done.load(Ordering::SeqCst),
        "dispose returned while a call held the submission lock"
    );
    caller.join().unwrap();
}

/// Every dispatch reads its own parameters, however many a batch holds: twice as many dispatches as
/// the ring has slots at the device's offset alignment (and 100 more), recorded as one call, each
/// writing the word its parameters name at the index they name, overflow the ring and are
/// submitted in as many
/// command buffers as [`crate::commands::slots`] plans, each after its own write of the ring —
/// counted in `compute.execution/submits`; no bind group is made after the first dispatch.
#[test]
fn a_batch_whose_parameters_overflow_the_ring_is_split() {
    use crate::commands::{slots, Commands};
    let s = Session::new(SessionOptions::default()).unwrap();
    let ctx = s.shared.ctx();
    let align = ctx.device.limits().min_storage_buffer_offset_alignment as usize;
    // each dispatch's 8 bytes take a slot of at least 8, whatever the alignment
    let n = 2 * crate::RING_BYTES as usize / align.max(8) + 100;
    let out = s.zeros(&[n], crate::DType::Uint32).unwrap();
    let p = ctx.cache.pipeline(ctx.device, "scatter", "", || {
        "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n\
         @group(0) @binding(1) var<storage, read> params: array<u32, 2>;\n\
         @compute @workgroup_size(1) fn main() { out[params[0]] = params[1]; }"
            .into()
    });
    let mut c = Commands::default();
    for i in 0..n as u32 {
        let buffer = out.buffer().unwrap();
        crate::kernels::dispatch(
            &ctx,
            &mut c,
            &p,
            (buffer, n as u64),
            &[i, 7 * i + 1],
            &[],
            (1, 1, 1),
        );
    }
    let binds = s.stats().bind_group_cache_entries;
    let plan = slots(std::iter::repeat_n(Some(8), n), align, crate::RING_BYTES as usize);
    assert!(
        plan.1.len() > 2,
        "{n} dispatches at {align} bytes overflow the ring twice"
    );
    let before = s.stats().submits;
    s.shared.gpu.pending.append(c);
    s.shared.flush();
    assert_eq!(s.stats().submits - before, plan.1.len() as u64);
    let got = out.to_vec::<u32>().unwrap();
    let want: Vec<u32> = (0..n as u32).map(|i| 7 * i + 1).collect();
    assert_eq!(got, want);
    assert!(
        binds <= 2,
        "one bind group for {n} dispatches with distinct parameters"
    );
}

/// Operand textures (`kernels/operand_tex.rs`) are counted like the parameter ring: one made by a
/// call that then failed is cached but not counted until a call succeeds; a fifth texture evicts
/// the least recently used (counted out, with the bind groups that bind it); `clear_cache()`
/// releases the rest and returns their bytes.
#[test]
fn operand_textures_are_counted_when_a_call_succeeds() {
    let s = Session::new(SessionOptions::default()).unwrap();
    let counted = || {
        let st = s.stats();
        (st.texture_bytes, st.textures)
    };
    let ctx = s.shared.ctx();
    let a = ctx.cache.operand_texture(ctx.device, (0, 3, 5)).0; // 15 texels of 16 bytes
    assert_eq!(counted(), (0, 0), "not counted before a call succeeds");
    assert_eq!(
        ctx.cache.operand_texture(ctx.device, (0, 3, 5)).0,
        a,
        "cached by slot and size"
    );
    let x = s.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let square = || {
        assert_eq!(
            x.square().unwrap().to_vec::<f32>().unwrap(),
            [1.0, 4.0, 9.0, 16.0]
        )
    };
    square();
    assert_eq!(counted(), (240, 1), "counted by the next call that succeeds");
    for (slot, w) in [(1, 3), (0, 4), (1, 4)] {
        ctx.cache.operand_texture(ctx.device, (slot, w, 5));
    }
    // a bind group binding the first texture goes with it when it is evicted
    let p = ctx.cache.pipeline(ctx.device, "t", "", || {
        "@group(0) @binding(0) var t: texture_2d<u32>;\n@compute @workgroup_size(1) fn main() { _ = textureLoad(t, vec2<u32>(0u), 0); }".into()
    });
    ctx.cache.bind_group(ctx.device, &p, &[(0, &a)], &[]);
    let binds = s.stats().bind_group_cache_entries;
    ctx.cache.operand_texture(ctx.device, (0, 5, 5)); // the fifth: (0, 3×5) is evicted
    assert_eq!(s.stats().bind_group_cache_entries, binds - 1);
    square();
    // kept: 3×5 (slot 1), 4×5 twice, 5×5
    assert_eq!(counted(), ((15 + 20 + 20 + 25) * 16, 4));
    let st = s.stats();
    assert_eq!(
        s.clear_cache(),
        st.pool_cached_bytes + st.staging_bytes + (15 + 20 + 20 + 25) * 16,
        "the pool's cached buffers, the staging buffers and the textures"
    );
    assert_eq!(counted(), (0, 0), "clear_cache releases them");
}

/// An operand texture learns which buffer it holds from the effects of calls that succeed, in
/// order: a fill sets it, a later write of that buffer (a command's, or an upload) clears it, a
/// call that fails (its effects never settled) changes nothing, and a texture evicted and made
/// again under its key — later, or within the call that filled it — starts knowing nothing.
#[test]
fn operand_textures_hold_what_succeeding_calls_filled() {
    use crate::commands::Commands;
    let s = Session::new(SessionOptions::default()).unwrap();
    let ctx = s.shared.ctx();
    let (x, y) = (
        s.tensor(&[1.0f32; 8], &[8]).unwrap(),
        s.tensor(&[2.0f32; 8], &[8]).unwrap(),
    );
    let (bx, by) = (x.buffer().unwrap().clone(), y.buffer().unwrap().clone());
    let key = (1, 2, 1);
    let texture = || ctx.cache.operand_texture(ctx.device, key);
    let tex = texture().0;
    assert_eq!(texture().1, None, "made: nothing known");
    let mut fill = Commands::default();
    fill.filled(&tex, &bx);
    ctx.cache.settle(fill.effects());
    assert_eq!(texture().1, Some(bx.clone()), "filled from x");
    let mut failed = Commands::default();
    failed.filled(&tex, &by);
    drop(failed); // a call that fails drops its commands unsettled
    assert_eq!(texture().1, Some(bx.clone()), "a failed call's fill: no change");
    let mut other = Commands::default();
    other.clear_buffer(&by, 0, None);
    other.filled(&ctx.cache.operand_texture(ctx.device, (0, 2, 1)).0, &by);
    ctx.cache.settle(other.effects());
    assert_eq!(
        texture().1,
        Some(bx.clone()),
        "another buffer written, another texture filled"
    );
    let mut write = Commands::default();
    write.copy_buffer_to_buffer(&by, 0, &bx, 0, 32);
    ctx.cache.settle(write.effects());
    assert_eq!(texture().1, None, "x written by a copy");
    let mut again = Commands::default();
    again.filled(&tex, &bx);
    again.touch(&by);
    ctx.cache.settle(again.effects());
    assert_eq!(texture().1, Some(bx.clone()), "refilled");
    ctx.cache.forget_writes_to(&bx);
    assert_eq!(texture().1, None, "x written by an upload");
    // one call fills the texture, makes four others (evicting it), then makes its key again
    let mut call = Commands::default();
    call.filled(&tex, &bx);
    for w in 3..7 {
        ctx.cache.operand_texture(ctx.device, (1, w, 1));
    }
    let (made, held) = texture();
    assert!(made != tex, "another texture under the key");
    assert_eq!(
        crate::kernels::holds_after(held, &made, call.effects()),
        None,
        "within the call: the fill was of the evicted one"
    );
    ctx.cache.settle(call.effects());
    assert_eq!(texture().1, None, "after it: empty");
    // a batch the device rejects runs none of its fills: once the device reports an error, no
    // texture is trusted (a real validation error: MAP_READ with STORAGE)
    let mut filled = Commands::default();
    filled.filled(&texture().0, &bx);
    ctx.cache.settle(filled.effects());
    assert_eq!(texture().1, Some(bx.clone()), "filled again");
    let _invalid = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 16,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    assert_eq!(texture().1, None, "a device error: nothing known");
    assert!(s.shared.gpu.take_error().is_some(), "the error was the device's");
}

/// `Session::live` lists a session while the handle `create` returned lives, as views that dispose
/// nothing when dropped; `Session::pools` lists a disposed one while it has live tensors.
#[test]
fn live_lists_a_session_while_its_owning_handle_lives() {
    let options = SessionOptions {
        label: Some("unit-live-sessions".into()),
        ..Default::default()
    };
    let s = Session::new(options).unwrap();
    let id = s.id();
    let listed = || Session::live().iter().any(|v| v.id() == id);
    assert!(listed());
    let x = s.tensor(&[1.0f32, 2.0], &[2]).unwrap();
    drop(Session::live());
    assert!(!s.is_disposed(), "dropping views disposes nothing");
    let pool = |disposed| {
        Session::pools()
            .iter()
            .any(|p| p.session == "unit-live-sessions" && p.disposed == disposed)
    };
    assert!(pool(false));
    s.dispose();
    assert!(
        pool(true),
        "a disposed session with a live tensor keeps its pool listed"
    );
    drop(s);
    assert!(!listed(), "its owning handle went");
    assert_eq!(x.to_vec::<f32>().unwrap(), [1.0, 2.0], "its tensor lives on");
}
