//! The passes a convolution kernel's walk is split into on CPU adapters (`conv.rs`): lavapipe stops
//! an invocation's loops after `MAX_LOOP` iterations, silently, so a thread that would walk more
//! taps × channels than that walks them in passes, each adding to what the ones before it wrote.

use super::{passes, LOOP_MARGIN, MAX_LOOP};

/// One pass of a convolution kernel's walk, `[c0, c1, fy0, fy1, fx0, fx1]`: the channels, filter
/// rows and filter columns its threads walk (parameters 15–20 of `conv2d.wgsl`, `depthwise.wgsl`
/// and `conv_input_grad.wgsl`). The first pass (every range starting at 0) writes, each later one
/// adds to what the passes before it wrote, and the last (every range ending at its extent) stores.
pub(super) type Pass = [u32; 6];

/// Where a [`Pass`] sits in the parameters.
pub(super) const PASS_AT: usize = 15;

/// The passes of a kernel whose thread walks an `fh × fw` window and, at each tap, `chans`
/// channels, a tap costing `per_tap + p·per_chan` of lavapipe's loop budget for `p` channels: one
/// pass on GPUs (`cpu` false); on CPU adapters as few as keep each pass's walk under `MAX_LOOP` (lavapipe stops
/// an invocation's loops there, silently: a 3×3 convolution over 8,000 input channels summed 21,842
/// of 72,000; a 160×160 filter gave 13 where 5 is exact). Ranges of channels over the whole window
/// while one channel's walk fits, else one channel at a time over blocks of filter rows (and of
/// columns, when a row alone takes half the budget).
///
/// The costs are measured, not derived: lavapipe counts more than each loop's iterations and exit
/// (in one pass `conv2d` over one channel into 4 was cut short past 13,000 taps of a row, into 1
/// past 9,000, into 3 past 7,000: 5, 7 and 9 a tap; a row 5 more). The callers' figures and
/// `ROW` stay above those.
pub(super) fn window_passes(
    cpu: bool,
    [fh, fw]: [usize; 2],
    chans: usize,
    (per_tap, per_chan): (usize, usize),
) -> Vec<Pass> {
    const ROW: usize = 6;
    let budget = MAX_LOOP - LOOP_MARGIN;
    let tap = |p: usize| p.saturating_mul(per_chan).saturating_add(per_tap);
    let walk = |r: usize, q: usize, p: usize| r.saturating_mul(q.saturating_mul(tap(p)).saturating_add(ROW));
    let (rows, cols, step) = if !cpu || walk(fh, fw, chans) < budget {
        (fh, fw, chans)
    } else if walk(fh, fw, 1) < budget {
        // the most channels whose taps fit: fh·(fw·tap(p) + ROW) < budget
        let most = (budget / fh - ROW) / fw;
        let step = most.saturating_sub(per_tap) / per_chan.max(1);
        (fh, fw, step.max(1))
    } else {
        let t = tap(1);
        let q = if fw.saturating_mul(t).saturating_add(ROW) < budget / 2 {
            fw
        } else {
            (budget / 2 / t).max(1)
        };
        ((budget / (q * t + ROW)).max(1), q, 1)
    };
    passes(fh, rows)
        .flat_map(|r| {
            passes(fw, cols)
                .flat_map(move |q| passes(chans, step).map(move |c| [c[0], c[1], r[0], r[1], q[0], q[1]]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (channel, row, column) is walked by exactly one pass, the first pass starts every range
    /// at 0 and the last ends every range at its extent, and each pass's walk fits the budget.
    fn check(shape: [usize; 2], chans: usize, cost: (usize, usize)) -> usize {
        let ps = window_passes(true, shape, chans, cost);
        let [fh, fw] = shape;
        let mut seen = vec![0u8; chans * fh * fw];
        for p in &ps {
            for c in p[0]..p[1] {
                for y in p[2]..p[3] {
                    for x in p[4]..p[5] {
                        seen[(c as usize * fh + y as usize) * fw + x as usize] += 1;
                    }
                }
            }
            let (r, q, k) = (
                (p[3] - p[2]) as usize,
                (p[5] - p[4]) as usize,
                (p[1] - p[0]) as usize,
            );
            let walk = r * (q * (cost.0 + k * cost.1) + 6);
            assert!(
                walk < MAX_LOOP - LOOP_MARGIN,
                "{shape:?}×{chans}: a pass walks {walk}"
            );
        }
        assert!(
            seen.iter().all(|&n| n == 1),
            "{shape:?}×{chans}: not covered once"
        );
        assert_eq!(ps[0][0] + ps[0][2] + ps[0][4], 0);
        let last = ps[ps.len() - 1];
        assert_eq!([last[1], last[3], last[5]], [chans as u32, fh as u32, fw as u32]);
        ps.len()
    }

    #[test]
    fn passes_cover_the_walk_once_within_the_budget() {
        // a 3×3 window over 8,000 channels: channel ranges over the whole window
        assert_eq!(check([3, 3], 8000, (5, 1)), 2);
        // a 160×160 filter over one channel: blocks of rows
        assert_eq!(check([160, 160], 1, (5, 1)), 3);
        // a row wider than half the budget: blocks of columns too
        assert!(check([2, 11_000], 4, (5, 2)) > 4);
        // a depthwise 300×300 window and a tall one
        assert!(check([300, 300], 1, (3, 0)) > 1);
        assert!(check([60_000, 1], 1, (3, 0)) > 1);
        // inside the budget: one pass
        assert_eq!(check([3, 3], 64, (5, 1)), 1);
        // on a GPU: one pass with every range whole
        assert_eq!(
            window_passes(false, [160, 160], 8000, (5, 1)),
            vec![[0, 8000, 0, 160, 0, 160]]
        );
    }
}
