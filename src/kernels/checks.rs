//! Device-side index checks. A kernel that indexes with device data (`gather`'s indices) cannot
//! stop at a bad index: it writes 0 there, and records the first bad index it meets in the
//! session's **check words** — a 16-byte storage buffer made at the session's first
//! checked dispatch, counted like the parameter ring (`compute.memory/param_bytes`,
//! `param_buffers`, when the call that made it succeeds). Four words: the tag of the dispatch
//! that saw it (0: none), the index, the length it had to be below, and a spare.
//!
//! Every checked dispatch gets the tag of its origin (the op, or the program node), and arms the
//! session: the next readback copies the words behind the tensor's bytes in its staging buffer
//! and clears them, in the same submission (no extra round trip: the flag travels with a map
//! the readback makes anyway); a `sync()` of an armed session maps the words instead of waiting
//! for the queue to drain (one round trip, as before). A set tag rejects that readback or sync
//! once with `INVALID_ARGUMENT` naming the origin and the index. An unarmed session's readbacks
//! copy nothing more.
//!
//! Among the lanes of one dispatch that see bad indices, which one's index is kept is the
//! device's race; across dispatches, the first dispatch's (a later one sees the tag set).
//!
//! `oneHot` is not checked: a row of zeros for an index outside `[0, depth)` is its definition (TF.js's
//! `oneHot`, ONNX `OneHot`), not a wrong answer; `gather`'s gradient builds on that.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::error::{invalid_arg, Result};

/// Bytes of a session's check words.
pub(crate) const CHECK_BYTES: u64 = 16;

/// Origins a session names at most; a dispatch past them is tagged with the last, "an op".
const MAX_ORIGINS: usize = 4096;

/// What a recorded kernel computes, as an index-check report names it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Origin<'a> {
    /// Not named (a kernel recorded for the runtime's own purposes).
    Unnamed,
    /// An eager op (its name).
    Eager(&'a str),
    /// Node `node` (an op named `op`) of the program named `program`.
    Node {
        program: &'a str,
        node: usize,
        op: &'a str,
    },
}

impl fmt::Display for Origin<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Unnamed => write!(f, "an op"),
            Origin::Eager(op) => write!(f, "`{op}`"),
            Origin::Node { program, node, op } => {
                write!(f, "`{op}` (node {node} of program '{program}')")
            }
        }
    }
}

/// One session's check state: the origins its checked dispatches were tagged with, and whether
/// one was recorded since the words were last looked at.
#[derive(Default)]
pub(crate) struct Checks {
    armed: AtomicBool,
    origins: Mutex<Vec<String>>,
}

impl Checks {
    /// The tag of `origin` (1-based, the same for the same origin), arming the session.
    pub(crate) fn tag(&self, origin: Origin) -> u32 {
        self.armed.store(true, Ordering::SeqCst);
        let name = origin.to_string();
        let mut o = self.origins.lock().unwrap_or_else(|p| p.into_inner());
        let at = match o.iter().position(|n| *n == name) {
            Some(i) => i,
            None if o.len() < MAX_ORIGINS => {
                o.push(name);
                o.len() - 1
            }
            None => return MAX_ORIGINS as u32 + 1,
        };
        at as u32 + 1
    }

    /// Whether a checked dispatch was recorded since the last look; the look starts now.
    pub(crate) fn take_armed(&self) -> bool {
        self.armed.swap(false, Ordering::SeqCst)
    }

    /// A look did not complete (its readback failed) when `looked`: the next one looks again.
    pub(crate) fn rearm_if(&self, looked: bool) {
        if looked {
            self.armed.store(true, Ordering::SeqCst);
        }
    }

    /// The report the check words `w` (as a look read them) make: `INVALID_ARGUMENT` naming the
    /// origin and the index when a kernel saw a bad one.
    pub(crate) fn verdict(&self, w: [u32; 4]) -> Result<()> {
        let (tag, index, bound) = (w[0], w[1] as i32, w[2]);
        if tag == 0 {
            return Ok(());
        }
        let o = self.origins.lock().unwrap_or_else(|p| p.into_inner());
        let origin = o.get(tag as usize - 1).map_or("an op", |s| s.as_str());
        Err(invalid_arg!(
            "{origin} read index {index}, outside [0, {bound}): its slice was written as 0. \
             Reported by the first readback or sync() after the kernel ran (indices on the \
             device are checked by the kernel, once)"
        ))
    }
}

/// The check words as a look read them (little-endian words).
pub(crate) fn words(bytes: &[u8]) -> [u32; 4] {
    let mut w = [0u32; 4];
    for (i, c) in bytes.chunks_exact(4).take(4).enumerate() {
        w[i] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_their_origin_once() {
        let c = Checks::default();
        assert!(!c.take_armed());
        let a = c.tag(Origin::Eager("gather"));
        let b = c.tag(Origin::Node {
            program: "p",
            node: 3,
            op: "gather",
        });
        assert_eq!((a, b, c.tag(Origin::Eager("gather"))), (1, 2, 1));
        assert!(c.take_armed());
        assert!(!c.take_armed());
        assert!(c.verdict([0, 7, 5, 0]).is_ok());
        let e = c.verdict([2, 7, 5, 0]).unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT");
        assert!(
            e.to_string()
                .contains("`gather` (node 3 of program 'p') read index 7, outside [0, 5)"),
            "{e}"
        );
        let e = c.verdict([1, (-2i32) as u32, 5, 0]).unwrap_err().to_string();
        assert!(e.contains("`gather` read index -2"), "{e}");
    }

    #[test]
    fn words_read_little_endian() {
        assert_eq!(
            words(&[1, 0, 0, 0, 255, 255, 255, 255, 5, 0, 0, 0, 0, 0, 0, 0]),
            [1, u32::MAX, 5, 0]
        );
    }
}
