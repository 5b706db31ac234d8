//! A kernel's scratch at the memory bound, on both targets: a split reduction (a long sum writes
//! partial results to a scratch buffer, then combines them) is admitted with its output *and* its
//! scratch before either is taken, so at a bound with room for the output alone it fails with
//! nothing moved, and with room for both it runs and gives the scratch back.
#![allow(dead_code)]

use affon::{DType, Session, Tensor};

use crate::ledger::{fails_unchanged, ledger};

/// `s` has a 1 MiB bound. x is [1, 65536] ones (256 KiB); its sum splits into 4 parts of 64
/// partial results each (1 KiB of scratch, one 1 KiB buffer) beside a 4-byte output (a 256-byte
/// buffer). Zero-filled tensors whose sizes are size classes take all but the room each case needs.
pub async fn split_reduction_at_the_bound(s: &Session) {
    let x = s.ones(&[1, 65536], DType::Float32).unwrap();
    let in_use = || {
        let u = s.pool_usage();
        u.bytes_held - u.bytes_cached
    };
    // room for the output, and for the scratch but 256 bytes
    let fillers = leave_free(s, 1024);
    assert_eq!(in_use(), (1 << 20) - 1024, "1 KiB of room: {}", s.pool_usage());
    fails_unchanged(
        "OUT_OF_MEMORY",
        "a split sum with room for its output and all but 256 B of its scratch",
        || x.sum(&[0, 1], false),
    );
    let e = fails_unchanged(
        "OUT_OF_MEMORY",
        "a split mean with room for its output and all but 256 B of its scratch",
        || x.mean(&[1], true),
    );
    assert!(
        e.to_string().contains("1280"),
        "the call needs output + scratch at once: {e}"
    );
    drop(fillers);
    // room for both: 1280 bytes free
    let fillers = leave_free(s, 1280);
    let before = ledger();
    let total = x.sum(&[0, 1], false).unwrap();
    assert_eq!(total.read::<f32>().await.unwrap(), vec![65536.0]);
    // the scratch came back: in use is x, the fillers and the output
    assert_eq!(in_use(), (1 << 20) - 1024);
    assert_eq!(
        ledger().get("live_tensors", "") - before.get("live_tensors", ""),
        1.0,
        "only the output stays live"
    );
    drop((total, fillers));
    // room for both, and a free 320-byte buffer in the cache (320 is the class after 256): best fit
    // would take it for the 4-byte output, leaving 64 bytes too few for the scratch in the middle
    // of the call; within an admitted call it takes a buffer larger than the class only while the
    // room the admission left covers the padding, so the sum runs
    let fillers = leave_free(s, 1280);
    drop(s.zeros(&[80], DType::Float32).unwrap());
    assert_eq!(s.pool_usage().bytes_cached, 320);
    let total = x.sum(&[0, 1], false).unwrap();
    assert_eq!(total.read::<f32>().await.unwrap(), vec![65536.0]);
    assert_eq!(in_use(), (1 << 20) - 1024, "x, the fillers and the output");
    drop((total, fillers, x));

    // A composite admits its values *and* its kernels' scratch at once, before it starts: `any`
    // over a bool [1, 65536] makes a uint32 copy (256 KiB), a split max (256 B out, 1 KiB of
    // scratch) and a bool result (256 B). With room for all but 256 B it fails, nothing moved.
    let b = s.ones(&[1, 65536], DType::Bool).unwrap();
    let fillers = leave_free(s, (256 << 10) + 1280);
    fails_unchanged(
        "OUT_OF_MEMORY",
        "any with room for its values and all but 256 B of its max's scratch",
        || b.any(&[1], false),
    );
    drop(fillers);
    let fillers = leave_free(s, (256 << 10) + 1536);
    let any = b.any(&[1], false).unwrap();
    assert_eq!(any.read::<bool>().await.unwrap(), vec![true]);
    drop((any, fillers, b));
}

/// `s` has a 1 MiB bound. Softmax and `cumsum` along a line of 81,920 ones (320 KiB, a size class;
/// past `ops::LONG_LINE`) run in 2 parts whose summaries take scratch (16 and 8 bytes: a 256-byte
/// buffer each): with room for the output alone each fails with nothing moved, with 256 B more it
/// runs, gives the scratch back, and its values are exact (1/81,920 each; 1, 2, …, 81,920).
pub async fn line_parts_at_the_bound(s: &Session) {
    let n = 81_920usize;
    let x = s.ones(&[n], DType::Float32).unwrap();
    let in_use = || {
        let u = s.pool_usage();
        u.bytes_held - u.bytes_cached
    };
    for softmax in [true, false] {
        let what = if softmax { "softmax" } else { "cumsum" };
        let run = || {
            if softmax {
                x.softmax(-1)
            } else {
                x.cumsum(0, false, false)
            }
        };
        let fillers = leave_free(s, 320 << 10);
        let e = fails_unchanged(
            "OUT_OF_MEMORY",
            &format!("{what} in parts with room for its output but not its scratch"),
            run,
        );
        assert!(e.to_string().contains("327936"), "output + scratch at once: {e}");
        drop(fillers);
        let fillers = leave_free(s, (320 << 10) + 256);
        let y = run().unwrap();
        // the scratch came back: 256 B of room are left beside the output
        assert_eq!(in_use(), (1 << 20) - 256, "{what}: {}", s.pool_usage());
        let got = y.read::<f32>().await.unwrap();
        let want: Vec<f32> = (0..n)
            .map(|i| if softmax { 1.0 / n as f32 } else { (i + 1) as f32 })
            .collect();
        if softmax {
            let close = got.iter().zip(&want).all(|(g, w)| (g - w).abs() <= 1e-6 * w);
            assert!(close, "{what}: {:?} vs {}", &got[..4], want[0]);
        } else {
            assert!(
                got == want,
                "{what}: first difference at {:?}",
                got.iter().zip(&want).position(|(g, w)| g != w)
            );
        }
        drop((y, fillers));
    }
}

/// Zero-filled tensors whose sizes are size classes (powers of two from 256 B), so that exactly
/// `free` bytes are left under the bound; `free` is a multiple of 256.
fn leave_free(s: &Session, free: u64) -> Vec<Tensor> {
    s.clear_cache();
    let u = s.pool_usage();
    let need = s.pool_config().max_total_bytes - (u.bytes_held - u.bytes_cached) - free;
    let fillers: Vec<Tensor> = (8..40)
        .rev()
        .filter(|p| need & (1u64 << p) != 0)
        .map(|p| s.zeros(&[(1usize << p) / 4], DType::Float32).unwrap())
        .collect();
    let u = s.pool_usage();
    assert_eq!(
        s.pool_config().max_total_bytes - (u.bytes_held - u.bytes_cached),
        free
    );
    fillers
}

/// A composite whose inner reductions split (logSumExp over x's 65536 elements: a max and a sum,
/// each 1 KiB of scratch beside its 4-byte output, and the max again for the result) is admitted
/// with every value its recipe makes and every inner kernel's scratch, rounded as the pool rounds:
/// 256 + 1024 (max) + 2 · 262144 (x − max, its exp) + 256 + 1024 (sum) + 256 (log) + 256 + 1024
/// (max) + 256 (add) = 528640 bytes. At the bound with 256 bytes less than that it fails with nothing
/// moved; with that room it runs, and every byte but its output's comes back.
pub async fn composite_scratch_at_the_bound(s: &Session) {
    let x = s.ones(&[1, 65536], DType::Float32).unwrap();
    let in_use = || {
        let u = s.pool_usage();
        u.bytes_held - u.bytes_cached
    };
    let need = 528_640;
    let fillers = leave_free(s, need - 256);
    let e = fails_unchanged(
        "OUT_OF_MEMORY",
        "logSumExp with room for all but 256 B of its values and inner scratch",
        || x.log_sum_exp(&[0, 1], false),
    );
    assert!(e.to_string().contains(&need.to_string()), "admitted whole: {e}");
    drop(fillers);
    let fillers = leave_free(s, need);
    let held = in_use();
    let before = ledger();
    let lse = x.log_sum_exp(&[0, 1], false).unwrap();
    let want = (65536f64).ln() + 1.0;
    let got = lse.read::<f32>().await.unwrap()[0] as f64;
    assert!(
        (got - want).abs() <= 1e-5 * want,
        "logSumExp: {got} against {want}"
    );
    assert_eq!(in_use(), held + 256, "only the output's buffer stays in use");
    assert_eq!(
        ledger().get("live_tensors", "") - before.get("live_tensors", ""),
        1.0
    );
    drop((lse, fillers));
}
