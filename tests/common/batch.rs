//! Batched submission: eager ops and runs are recorded into one pending batch that is submitted
//! at a readback, a `sync()`, an upload or a threshold, with parameters and bind groups reused.
//! What a user relies on: results are those of unbatched execution whatever is disposed or
//! uploaded while work is pending, accounting is exact when each call returns, and a tidy loop of
//! tiny ops makes few submissions and no new bind group once warm. Both targets.

use affon::{DType, Session};

fn exec(s: &Session) -> (u64, u64, u64) {
    let st = s.stats();
    (st.submits, st.dispatches, st.bind_group_cache_entries)
}

/// 1000 × `square` on `[3]`, each in its own tidy scope (disposed unread: never computed); 1000 ×
/// `sum(square)` in tidy scopes (computed, batched, bind groups reused); 1000 kept, then `sync()`
/// (siblings: six per kernel, `lazy::siblings`).
pub async fn eager_work_is_batched(s: &Session) {
    let x = s.tensor(&[1.0f32, -2.0, 3.0], &[3]).unwrap();
    // warm-up: the pipelines, parameter buffers and bind groups are made once
    let w = s.tidy(|| x.square().unwrap().sum(&[], false).unwrap());
    assert_eq!(w.read::<f32>().await.unwrap(), vec![14.0]);
    drop(w);
    let (_, disp0, binds0) = exec(s);
    let live0 = s.stats().live_bytes;
    for _ in 0..1000 {
        s.tidy(|| {
            let y = x.square().unwrap();
            // accounting is exact when the call returns, before anything is computed
            assert_eq!(s.stats().live_bytes, live0 + 12);
            drop(y);
        });
    }
    s.sync().await.unwrap();
    let (sub1, disp1, _) = exec(s);
    assert_eq!(disp1, disp0, "results disposed unread are never computed");
    for _ in 0..1000 {
        s.tidy(|| {
            // the square (dropped unread: never computed) is read by the sum as it reduces
            let y = x.square().unwrap().sum(&[], false).unwrap();
            assert_eq!(s.stats().live_bytes, live0 + 4);
            drop(y);
        });
    }
    let y = x.square().unwrap();
    assert_eq!(y.read::<f32>().await.unwrap(), vec![1.0, 4.0, 9.0]);
    let (sub2, disp2, binds2) = exec(s);
    assert_eq!(disp2 - disp1, 1001, "every dispatch counted");
    // one submission per 64 dispatches (15 full batches), plus the readback's: without the
    // threshold the 1001 dispatches would wait for the readback in one submission
    assert!(
        (1001 / 64..=1001 / 64 + 2).contains(&(sub2 - sub1)),
        "{} submissions for 1001 ops",
        sub2 - sub1
    );
    // a warm tidy loop makes no bind group per iteration (y and its buffer may add one each)
    assert!(binds2 - binds0 <= 2, "{} new bind groups", binds2 - binds0);
    let kept: Vec<_> = (0..1000).map(|_| x.square().unwrap()).collect();
    assert_eq!(s.stats().live_bytes, live0 + 12 + 12_000);
    s.sync().await.unwrap(); // computes the pending results, six siblings per kernel
    assert_eq!(exec(s).1 - disp2, 167);
    assert_eq!(kept[999].read::<f32>().await.unwrap(), vec![1.0, 4.0, 9.0]);
}

/// Work pending on a buffer that is then disposed, destroyed, or reused by an upload still sees
/// the values it was recorded with. `strict` caches nothing (its oversize threshold is 1 byte: every released buffer is
/// destroyed, while the batch that reads it is still pending).
pub async fn pending_work_sees_its_inputs(s: &Session, strict: &Session) {
    for s in [s, strict] {
        // a disposed input, its buffer reused by an upload before the batch is submitted
        let x = s.tensor(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
        let y = x.square().unwrap();
        drop(x);
        let z = s.tensor(&[7.0f32, 8.0, 9.0], &[3]).unwrap();
        assert_eq!(y.read::<f32>().await.unwrap(), vec![1.0, 4.0, 9.0]);
        assert_eq!(z.read::<f32>().await.unwrap(), vec![7.0, 8.0, 9.0]);
        // a chain whose intermediates are disposed (destroyed when nothing is cached) as it goes
        let before = s.stats().device_buffers;
        let a = s.fill(&[1024], 1.5, DType::Float32).unwrap();
        let mut v = a.mul(&a).unwrap();
        drop(a);
        for _ in 0..5 {
            v = v.add(&v).unwrap(); // the old v is released at once: its buffer is not kept
        }
        if std::ptr::eq(s, strict) {
            assert_eq!(
                s.stats().device_buffers,
                before + 1,
                "only the last result holds a buffer"
            );
        }
        let got = v.read::<f32>().await.unwrap();
        assert!(got.iter().all(|&g| g == 2.25 * 32.0), "{:?}", &got[..4]);
        drop(v);
    }
    let strict_stats = strict.stats();
    assert_eq!(strict_stats.pool_cached_bytes, 0, "strict caches nothing");
}

/// Two of the session's `compute.memory` records.
fn memory_pair(s: &Session, bytes: &str, buffers: &str) -> (u64, u64) {
    let r = affon::telemetry::ledger_records(&s.stats(), None);
    let get = |n: &str| affon::telemetry::find(&r, "compute.memory", n).unwrap() as u64;
    (get(bytes), get(buffers))
}

fn staging(s: &Session) -> (u64, u64) {
    memory_pair(s, "staging_bytes", "staging_buffers")
}

/// Readbacks reuse a kept staging buffer (the size class, best fit), counted in
/// `compute.memory/staging_bytes` and `staging_buffers` while held; `clearCache()` and `dispose()`
/// return them to zero. `s` is a fresh session.
pub async fn readbacks_reuse_counted_staging(s: Session) {
    assert_eq!(staging(&s), (0, 0), "nothing read yet");
    let x = s.ones(&[1000], DType::Float32).unwrap(); // 4000 B: the 4096 B class
    for _ in 0..5 {
        assert_eq!(x.read::<f32>().await.unwrap(), vec![1.0; 1000]);
        assert_eq!(staging(&s), (4096, 1), "one staging buffer, kept and reused");
    }
    // a smaller read best-fits the kept buffer within half again its class: 2800 B → the 3072 B class
    let y = s.fill(&[700], 2.0, DType::Float32).unwrap();
    assert_eq!(y.read::<f32>().await.unwrap(), vec![2.0; 700]);
    assert_eq!(
        staging(&s),
        (4096, 1),
        "the kept 4096 B buffer fits a 3072 B class (≤ 1.5×)"
    );
    // a read far smaller makes (and keeps) its own
    let z = s.fill(&[3], 3.0, DType::Float32).unwrap();
    assert_eq!(z.read::<f32>().await.unwrap(), vec![3.0; 3]);
    assert_eq!(staging(&s), (4096 + 256, 2));
    // five reads of distinct sizes: at most 4 kept, least recently used dropped
    for k in 1..=5usize {
        let t = s.ones(&[k * 4096], DType::Float32).unwrap();
        assert_eq!(t.read::<f32>().await.unwrap().len(), k * 4096);
    }
    let (bytes, buffers) = staging(&s);
    assert_eq!(buffers, 4, "at most 4 kept");
    assert_eq!(
        bytes,
        (2 + 3 + 4 + 5) * 16384,
        "the four most recent: 32, 48, 64, 80 KiB"
    );
    // the pool's figures are untouched by staging: clearCache releases both
    let pool_cached = s.pool_usage().bytes_cached;
    assert_eq!(s.clear_cache(), pool_cached + bytes);
    assert_eq!(staging(&s), (0, 0));
    // dispose releases a kept one and keeps none after
    assert_eq!(x.read::<f32>().await.unwrap().len(), 1000);
    assert_eq!(staging(&s), (4096, 1));
    let process = |n: &str| {
        let r = affon::telemetry::metrics();
        r.iter()
            .filter(|m| m.scope == "compute.memory" && m.name == n && m.labels.is_none())
            .map(|m| m.value)
            .sum::<f64>()
    };
    let before = process("staging_bytes");
    drop((x, y, z));
    s.dispose();
    assert_eq!(staging(&s), (0, 0), "disposed: nothing kept");
    assert_eq!(
        process("staging_bytes"),
        before - 4096.0,
        "the process figure follows"
    );
}

/// A session bounded at 1 MiB keeps at most a quarter of it (256 KiB) in staging: a 256 KiB read's
/// buffer is kept, a 384 KiB read's is destroyed after it (the figures back where they were).
pub async fn staging_respects_the_bound(s: Session) {
    let x = s.ones(&[64 * 1024], DType::Float32).unwrap(); // 256 KiB
    assert_eq!(x.read::<f32>().await.unwrap().len(), 64 * 1024);
    assert_eq!(staging(&s), (256 << 10, 1));
    drop(x);
    let y = s.ones(&[96 * 1024], DType::Float32).unwrap(); // 384 KiB: the 384 KiB class
    assert_eq!(y.read::<f32>().await.unwrap().len(), 96 * 1024);
    assert_eq!(staging(&s), (256 << 10, 1), "the 384 KiB buffer was not kept");
}

fn params(s: &Session) -> (u64, u64) {
    memory_pair(s, "param_bytes", "param_buffers")
}

/// Kernel parameters live in one ring a session, counted in `compute.memory/param_bytes` and
/// `param_buffers`: made at the first dispatch ([`affon::RING_BYTES`], one buffer), none made
/// after whatever the parameters, rewritten by each batch; a failed call moves neither;
/// `dispose()` releases it (and every bind group that binds it). `s` is a fresh session.
pub async fn parameters_live_in_one_counted_ring(s: Session) {
    let ring = (affon::RING_BYTES, 1);
    assert_eq!(params(&s), (0, 0), "nothing dispatched yet");
    let x = s.tensor(&[1.0f32, -2.0, 3.0], &[3]).unwrap();
    assert_eq!(params(&s), (0, 0), "an upload dispatches nothing");
    let y = x.square().unwrap();
    assert_eq!(y.read::<f32>().await.unwrap(), vec![1.0, 4.0, 9.0]);
    assert_eq!(params(&s), ring, "the ring, made at the first dispatch");
    let binds = s.stats().bind_group_cache_entries;
    // 1 to 40 floats: a new parameter set each time (the length; the vec4 form's count of vec4s),
    // every one read right, into one kept output buffer class: the ring is all there is
    for n in 1..=40usize {
        let v: Vec<f32> = (0..n).map(|i| i as f32 - 3.0).collect();
        let t = s.tensor(&v, &[n]).unwrap();
        let got = t.square().unwrap().read::<f32>().await.unwrap();
        assert_eq!(got, v.iter().map(|a| a * a).collect::<Vec<_>>(), "n = {n}");
    }
    assert_eq!(params(&s), ring, "40 parameter sets: still the one ring");
    assert!(s.stats().bind_group_cache_entries > binds);
    // a failed call moves nothing (one that fails after making the ring: the unit test
    // `the_parameter_ring_is_counted_when_a_call_succeeds`)
    let z = s.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let before = s.stats();
    super::ledger::fails_unchanged("SHAPE_MISMATCH", "[3] + [4] does not broadcast", || x.add(&z));
    assert_eq!(s.stats(), before, "a failed call changes no record");
    assert!(s.stats().bind_group_cache_entries > 0);
    drop((x, y, z));
    s.dispose();
    assert_eq!(params(&s), (0, 0), "disposed: the ring released");
    assert_eq!(
        s.stats().bind_group_cache_entries,
        0,
        "and every bind group that bound it"
    );
}
