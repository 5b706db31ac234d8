//! The default retention policy: how much a pool without `cacheLimitBytes` keeps cached.
//!
//! A pool that cached every buffer it ever made would hold one buffer per size class a
//! growing-shape loop passes through (6.9× the largest live set for 200 shapes `[i+1, 1024]`).
//! A fixed bound on the cache would instead make a loop that cycles through many sizes miss on
//! every iteration. The two cannot be told apart on their first pass, so the policy learns:
//!
//! - the pool holds (in use + cached) at most `budget = peak + peak/4 + credit` bytes, where
//!   `peak` is the most bytes of buffers it ever had in use at once. A miss that would go above it
//!   first evicts cached buffers, least recently released first (counted in `pool_evictions`);
//!   buffers in use are never touched, so the budget never fails a request;
//! - each class the budget evicted is remembered (a *ghost*, the last [`GHOSTS`] of them). A later
//!   miss that a ghost would have served shows the loop comes back to that size: its class is added
//!   to `credit` (up to `maxTotalBytes`), so from then on the cache keeps it. A miss no ghost
//!   explains is growth: the credit decays by an eighth. A loop that has learned its sizes makes no
//!   misses and keeps its credit; growth that happens to meet an old size now and then (tensors of
//!   two sizes growing at different rates) does not accumulate it.
//!
//! An idle trim (`Pool::trim_idle`) destroys the cache but keeps this state, and the misses that
//! make its bytes anew are not growth: up to the trimmed bytes, they leave the credit alone.
//!
//! A growing loop never returns to a size it left, so its pool stays within a quarter of its
//! largest set of buffers in use; a cycling loop misses once more on its second pass and then
//! keeps everything it reuses, as an unbounded cache would. Setting `cacheLimitBytes` replaces this
//! with MLX's fixed cache limit (`cacheLimitBytes = maxTotalBytes` caches everything).

use std::collections::VecDeque;

/// How many evicted classes are remembered.
pub const GHOSTS: usize = 256;

/// The learned state of the default policy.
#[derive(Debug, Default, Clone)]
pub struct Retention {
    /// The most bytes of buffers (rounded) in use at once.
    peak: u64,
    /// Bytes of classes a loop came back to after the budget evicted them.
    credit: u64,
    /// Classes the budget evicted, oldest first.
    ghosts: VecDeque<u64>,
    /// Bytes an idle trim gave back that misses have not yet made anew.
    refill: u64,
}

impl Retention {
    /// The bytes the pool may hold once `in_use` bytes of buffers are in use, under a bound of
    /// `max_total` bytes, counting `extra` bytes of credit not yet committed.
    pub fn budget(&self, in_use: u64, max_total: u64, extra: u64) -> u64 {
        let peak = self.peak.max(in_use);
        peak.saturating_add(peak / 4)
            .saturating_add(self.credit)
            .saturating_add(extra)
            .min(max_total)
    }

    /// The class of the ghost a miss for class `want` matches — one within the best-fit range
    /// `want..=want + want/2`, the tightest. Changes nothing.
    pub fn ghost_for(&self, want: u64) -> Option<u64> {
        self.ghosts
            .iter()
            .copied()
            .filter(|&c| c >= want && c <= want + want / 2)
            .min()
    }

    /// Commits a successful miss: with the class of the ghost it matched (from
    /// [`Retention::ghost_for`]), that class becomes credit (and the ghost, if the evictions since
    /// did not push it out, is consumed); without one, the miss is growth and the credit decays by
    /// an eighth — a loop that has learned its sizes makes no misses and keeps it — unless it
    /// makes anew what the last idle trim gave back (`cached`: a buffer of `size` bytes the cache
    /// will keep; an exact-size one is not).
    pub fn missed(&mut self, ghost: Option<u64>, size: u64, cached: bool, max_total: u64) {
        match ghost {
            Some(class) => {
                if let Some(i) = self.ghosts.iter().position(|&c| c == class) {
                    self.ghosts.remove(i);
                }
                self.credit = self.credit.saturating_add(class).min(max_total);
            }
            None if cached && self.refill > 0 => self.refill = self.refill.saturating_sub(size),
            None => self.credit -= self.credit / 8,
        }
    }

    /// Records that an idle trim destroyed `bytes` of cache: what the misses after it may make
    /// anew without decaying the credit (what an earlier trim left unspent is not carried over).
    pub fn trimmed(&mut self, bytes: u64) {
        self.refill = bytes;
    }

    /// Notes `in_use` bytes of buffers in use (a new peak when larger).
    pub fn saw(&mut self, in_use: u64) {
        self.peak = self.peak.max(in_use);
    }

    /// Records that the budget evicted a buffer of `class`.
    pub fn evicted(&mut self, class: u64) {
        if self.ghosts.len() == GHOSTS {
            self.ghosts.pop_front();
        }
        self.ghosts.push_back(class);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_a_quarter_over_the_peak_plus_what_loops_came_back_to() {
        let mut r = Retention::default();
        assert_eq!(r.budget(4096, 1 << 20, 0), 5120);
        r.saw(4096);
        assert_eq!(r.budget(0, 1 << 20, 0), 5120, "the peak is remembered");
        r.evicted(1024);
        r.evicted(2048);
        assert_eq!(r.ghost_for(512), None, "1024 is more than half again 512");
        assert_eq!(r.ghost_for(1536), Some(2048));
        assert_eq!(r.ghost_for(1024), Some(1024), "the tightest ghost");
        assert_eq!(r.budget(0, 1 << 20, 1024), 6144);
        r.missed(Some(1024), 1024, true, 1 << 20);
        assert_eq!(r.budget(0, 1 << 20, 0), 6144);
        assert_eq!(r.ghost_for(1024), None, "a ghost earns credit once");
        assert_eq!(r.budget(0, 4000, 0), 4000, "never above the bound");
        r.missed(None, 4096, true, 1 << 20);
        assert_eq!(
            r.credit,
            1024 - 128,
            "a miss no ghost explains: an eighth of the credit goes"
        );
        for k in 0..GHOSTS as u64 + 1 {
            r.evicted((1 << 12) | (k * 4));
        }
        assert_eq!(r.ghosts.len(), GHOSTS);
        assert_eq!(r.ghost_for(2048), None, "the oldest ghosts are forgotten");
        r.missed(Some(2048), 2048, true, 1 << 20);
        assert_eq!(
            r.credit,
            1024 - 128 + 2048,
            "a matched ghost pushed out since still counts"
        );
    }
}
