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
