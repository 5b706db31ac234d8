//! The idle trim: a session that has done nothing for a whole idle period gives its cached
//! buffers back to the device (the pool's cache under the default policy, and the readback
//! staging buffers kept for reuse), so an application that goes quiet does not keep the memory of
//! its last burst of work.
//!
//! Activity is counted, not timed: every acquire, release, committed op and readback bumps a
//! counter (one relaxed atomic add, no clock read on the hot path). A timer armed by a release or
//! a readback ticks [`TICKS`] times per idle time (`pool.idleTrimMs`); after that many ticks in a
//! row with the counter unmoved and no readback or `sync()` in flight, the session has been idle
//! for at least the idle time (at most a quarter more) and is trimmed. After a trim the timer
//! stops; the next release or readback arms it again. It holds only a weak handle: a disposed
//! or collected session stops it. `idleTrimMs: 0` never arms it.
//!
//! In the browser the timer is `setTimeout`; natively one sleeping thread per armed timer (wgpu's
//! native handles are `Send + Sync`). The trim takes the submission lock, as an acquire does, and
//! checks again under it that nothing happened (a call may have held the lock through the ticks).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use super::Runtime;
use crate::platform::{Shared, WeakShared};

/// Ticks per idle time: a session quiet for this many ticks in a row is trimmed.
pub(crate) const TICKS: u32 = 4;

/// One session's activity counter and timer state.
pub(crate) struct Idle {
    /// Milliseconds between ticks (`0`: the idle trim is off).
    tick_ms: u32,
    activity: AtomicU64,
    /// The counter when the timer last ticked.
    seen: AtomicU64,
    /// Ticks in a row without activity.
    quiet: AtomicU32,
    /// Readbacks and `sync()`s waiting on the device: the session is busy, not idle.
    in_flight: AtomicU64,
    armed: AtomicBool,
}

/// Held while a readback or `sync()` waits on the device (see [`Idle::busy`]).
pub(crate) struct Busy<'a>(&'a Idle);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.0.touch();
    }
}

impl Idle {
    /// The state for an idle time of `idle_trim_ms` (`0`: off; at most 2^31 − 1, checked with
    /// the pool options).
    pub(crate) fn new(idle_trim_ms: u64) -> Idle {
        Idle {
            tick_ms: idle_trim_ms.div_ceil(TICKS as u64).min(u32::MAX as u64) as u32,
            activity: AtomicU64::new(0),
            seen: AtomicU64::new(0),
            quiet: AtomicU32::new(0),
            in_flight: AtomicU64::new(0),
            armed: AtomicBool::new(false),
        }
    }

    /// Something happened: the current period is not idle.
    pub(crate) fn touch(&self) {
        self.activity.fetch_add(1, Ordering::Relaxed);
    }

    /// Marks the session busy until the guard drops (then counts as activity).
    pub(crate) fn busy(&self) -> Busy<'_> {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.touch();
        Busy(self)
    }

    /// Whether nothing happened since the last tick and nothing waits on the device (checked
    /// again under the submission lock, which a call may have held through the ticks).
    pub(crate) fn still_quiet(&self) -> bool {
        self.activity.load(Ordering::Relaxed) == self.seen.load(Ordering::Relaxed)
            && self.in_flight.load(Ordering::SeqCst) == 0
    }

    /// The timer stops (the trim runs): the next release or readback arms it again.
    pub(crate) fn disarm(&self) {
        self.armed.store(false, Ordering::SeqCst);
    }

    /// Records a tick; true when the last [`TICKS`] ticks were all quiet.
    fn idle_for_ticks(&self) -> bool {
        let now = self.activity.load(Ordering::Relaxed);
        let before = self.seen.swap(now, Ordering::Relaxed);
        if now != before || self.in_flight.load(Ordering::SeqCst) != 0 {
            self.quiet.store(0, Ordering::Relaxed);
            return false;
        }
        self.quiet.fetch_add(1, Ordering::Relaxed) + 1 >= TICKS
    }
}

/// Starts the idle timer of `s` unless it runs already (called after a release or a readback;
/// not for a disposed session, whose releases give their buffers to the device).
pub(crate) fn arm<T: super::Upper>(s: &Runtime<T>) {
    let idle = &s.idle;
    if idle.tick_ms == 0 || idle.armed.load(Ordering::Relaxed) || s.is_disposed() {
        return;
    }
    if !idle.armed.swap(true, Ordering::SeqCst) {
        idle.seen
            .store(idle.activity.load(Ordering::Relaxed), Ordering::Relaxed);
        idle.quiet.store(0, Ordering::Relaxed);
        let weak: WeakShared<Runtime<T>> = s.me.clone();
        crate::platform::every_ms(idle.tick_ms, move || weak.upgrade().is_some_and(|s| tick(&s)));
    }
}

/// One tick; whether to keep ticking. Trims a session quiet for [`TICKS`] ticks and stops.
fn tick<T: super::Upper>(s: &Shared<Runtime<T>>) -> bool {
    if s.check_open().is_err() {
        s.idle.armed.store(false, Ordering::SeqCst);
        return false;
    }
    if !s.idle.idle_for_ticks() {
        return true;
    }
    let start = crate::platform::now_ms();
    let Some(bytes) = s.trim_idle() else {
        // a call was under way when the ticks ran out (it held the submission lock): not idle
        s.idle.quiet.store(0, Ordering::Relaxed);
        return true;
    };
    if bytes > 0 && crate::trace::enabled() {
        let args = serde_json::json!({ "bytes": bytes });
        crate::trace::span(s.id, &s.label, "idle trim", "affon.pool", start, args);
    }
    false
}
