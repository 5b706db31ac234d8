//! Scenarios written once and run on both GPU targets (lavapipe natively, WebGPU in Chromium).
#![allow(dead_code)] // each test binary uses a subset

pub mod batch;
pub mod big_filters;
pub mod big_windows;
pub mod budget_edges;
pub mod composite;
pub mod grad;
pub mod idle;
pub mod lazy;
pub mod long_loops;
pub mod nn;
pub mod operand_textures;
pub mod ops;
pub mod table;
pub mod table_composites;
pub mod table_edges;
pub mod table_scans;
pub mod train;

#[path = "../shared/ledger.rs"]
pub mod ledger;

use affon::{DType, PoolOptions, Session, SessionOptions};

/// Options of the accounting scenario: 1 MiB bound, 64 KiB oversize threshold, default ladder.
pub fn scenario_options() -> SessionOptions {
    SessionOptions {
        pool: PoolOptions {
            max_total_bytes: Some(1 << 20),
            oversize_threshold_bytes: Some(64 << 10),
            size_classes: None,
            cache_limit_bytes: None,
            idle_trim_ms: None,
        },
        label: Some("accounting-scenario".into()),
        capture_stacks: false,
        release_on_collect: false,
        kernels: Default::default(),
        workgroup_limit: None,
    }
}

/// The session's figures as `(name, value)` pairs, for exact comparison.
pub fn figures(s: &Session) -> Vec<(&'static str, u64)> {
    let x = s.stats();
    vec![
        ("live_bytes", x.live_bytes),
        ("peak_bytes", x.peak_bytes),
        ("live_tensors", x.live_tensors),
        ("allocations", x.allocations),
        ("deallocations", x.deallocations),
        ("pool_bytes", x.pool_bytes),
        ("pool_cached_bytes", x.pool_cached_bytes),
        ("pool_peak_bytes", x.pool_peak_bytes),
        ("pool_hits", x.pool_hits),
        ("pool_misses", x.pool_misses),
        ("pool_evictions", x.pool_evictions),
        ("pool_max_total_bytes", x.pool_max_total_bytes),
        ("oversize_allocations", x.oversize_allocations),
        ("device_buffers", x.device_buffers),
        ("pool_padding_bytes", x.pool_padding_bytes),
    ]
}

/// The expected figures at the end of [`accounting_scenario`], derived by hand:
/// - a: float32 [3] = 12 bytes → class 256; b: zeros [100,10] = 4000 → class 4096;
///   c: int32 [1000] = 4000 → 4096; d (after b is disposed) reuses b's buffer: one hit;
///   e: bool [20000] = 80000 > 64 KiB → exact 80000, destroyed on dispose.
/// - live peaks at 12 + 4000 + 4000 + 80000 = 88012; the pool at 256 + 4096·2 + 80000 = 88448;
///   after everything is disposed 256 + 4096 + 4096 = 8448 bytes stay cached in 3 buffers.
/// - the rounding of buffers in use (`pool_padding_bytes`): (256 − 12) + 2·(4096 − 4000) = 436 with
///   a, b, c; 340 once b is disposed; 436 again with d in b's buffer; e is exact-size (no rounding);
///   0 at the end, every buffer cached.
pub const SCENARIO_END: [(&str, u64); 15] = [
    ("live_bytes", 0),
    ("peak_bytes", 88_012),
    ("live_tensors", 0),
    ("allocations", 5),
    ("deallocations", 5),
    ("pool_bytes", 8_448),
    ("pool_cached_bytes", 8_448),
    ("pool_peak_bytes", 88_448),
    ("pool_hits", 1),
    ("pool_misses", 4),
    ("pool_evictions", 0),
    ("pool_max_total_bytes", 1 << 20),
    ("oversize_allocations", 1),
    ("device_buffers", 3),
    ("pool_padding_bytes", 0),
];

fn get(f: &[(&'static str, u64)], name: &str) -> u64 {
    f.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).unwrap()
}

/// Creates and disposes tensors of every dtype, checking values and figures at each step.
/// Returns the figures at the end (compare with [`SCENARIO_END`]).
pub async fn accounting_scenario(s: &Session) -> Vec<(&'static str, u64)> {
    let a = s.tensor(&[1.5f32, -2.0, 3.25], &[3]).unwrap();
    let b = s.zeros(&[100, 10], DType::Float32).unwrap();
    let c = s.ones(&[1000], DType::Int32).unwrap();
    let f = figures(s);
    assert_eq!(get(&f, "live_bytes"), 8012);
    assert_eq!(get(&f, "pool_bytes"), 256 + 4096 + 4096);
    assert_eq!(get(&f, "pool_padding_bytes"), 244 + 96 + 96);
    assert_eq!(b.read::<f32>().await.unwrap(), vec![0.0; 1000]);
    b.dispose();
    b.dispose(); // idempotent
    let f = figures(s);
    assert_eq!(
        (
            get(&f, "live_bytes"),
            get(&f, "pool_cached_bytes"),
            get(&f, "pool_padding_bytes")
        ),
        (4012, 4096, 340)
    );
    let d = s.fill(&[1000], 7.0, DType::Uint32).unwrap();
    assert_eq!(get(&figures(s), "pool_hits"), 1, "d reuses b's buffer");
    assert_eq!(get(&figures(s), "pool_padding_bytes"), 436);
    // The reused buffer held zeros; d must read back as 7s, not stale data.
    assert_eq!(d.read::<u32>().await.unwrap(), vec![7; 1000]);
    let bools: Vec<bool> = (0..20_000).map(|i| i % 3 == 0).collect();
    let e = s.tensor(&bools, &[20_000]).unwrap();
    let f = figures(s);
    assert_eq!(
        (
            get(&f, "live_bytes"),
            get(&f, "oversize_allocations"),
            get(&f, "pool_padding_bytes")
        ),
        (88_012, 1, 436),
        "an exact-size buffer has no rounding"
    );
    assert_eq!(e.read::<bool>().await.unwrap(), bools);
    e.dispose();
    assert_eq!(
        get(&figures(s), "pool_bytes"),
        8448,
        "oversize buffer went back to the device"
    );
    assert_eq!(a.read::<f32>().await.unwrap(), vec![1.5, -2.0, 3.25]);
    assert_eq!(c.read::<i32>().await.unwrap(), vec![1; 1000]);
    for t in [a, c, d] {
        t.dispose();
    }
    figures(s)
}

/// Values that exercise every dtype's full range, in a shape of `n` elements.
pub fn float_values(n: usize) -> Vec<f32> {
    let specials = [
        0.0,
        -0.0,
        1.0,
        -1.5,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e-40,
    ];
    (0..n)
        .map(|i| {
            if i < specials.len() {
                specials[i]
            } else {
                (i as f32).sin() * 1e3
            }
        })
        .collect()
}

/// Round-trips every dtype at several odd sizes; exact equality (NaN compared by bits).
pub async fn round_trip_every_dtype(s: &Session) {
    for n in [1usize, 3, 17, 255, 1000, 65_537] {
        let fv = float_values(n);
        let t = s.tensor(&fv, &[n]).unwrap();
        let back = t.read::<f32>().await.unwrap();
        assert!(
            back.iter().zip(&fv).all(|(a, b)| a.to_bits() == b.to_bits()),
            "float32 n={n}"
        );
        let nan = s.tensor(&[f32::NAN], &[]).unwrap();
        assert!(nan.read::<f32>().await.unwrap()[0].is_nan());
        let iv: Vec<i32> = (0..n as i32)
            .map(|i| if i % 2 == 0 { i32::MIN + i } else { i32::MAX - i })
            .collect();
        assert_eq!(
            s.tensor(&iv, &[n]).unwrap().read::<i32>().await.unwrap(),
            iv,
            "int32 n={n}"
        );
        let uv: Vec<u32> = (0..n as u32).map(|i| u32::MAX - i * 7).collect();
        assert_eq!(
            s.tensor(&uv, &[n]).unwrap().read::<u32>().await.unwrap(),
            uv,
            "uint32 n={n}"
        );
        let bv: Vec<bool> = (0..n).map(|i| i % 2 == 1).collect();
        assert_eq!(
            s.tensor(&bv, &[n]).unwrap().read::<bool>().await.unwrap(),
            bv,
            "bool n={n}"
        );
        for d in [DType::Float32, DType::Int32, DType::Uint32, DType::Bool] {
            let z = s.zeros(&[n], d).unwrap();
            assert_eq!(z.read_f64().await.unwrap(), vec![0.0; n], "zeros {d}");
            let o = s.ones(&[n], d).unwrap();
            assert_eq!(o.read_f64().await.unwrap(), vec![1.0; n], "ones {d}");
        }
        let f = s.fill(&[n, 1], -3.0, DType::Int32).unwrap();
        assert_eq!(f.read::<i32>().await.unwrap(), vec![-3; n]);
    }
    let scalar = s.fill(&[], 2.5, DType::Float32).unwrap();
    assert_eq!(scalar.item_f64().await.unwrap(), 2.5);
    assert_eq!(scalar.byte_length(), 4);
    assert_eq!(
        s.stats().live_bytes,
        4,
        "every temporary above was released on drop"
    );
}

/// Misuse: every failure has its code and changes no counter.
pub async fn misuse_changes_nothing(s: &Session) {
    let keep = s.tensor(&[1.0f32, 2.0], &[2]).unwrap();
    let before = ledger::ledger();
    let e = s.tensor(&[1.0f32, 2.0, 3.0], &[2, 2]).unwrap_err();
    assert_eq!(e.code(), "SHAPE_MISMATCH");
    assert!(
        e.to_string().contains("3 elements") && e.to_string().contains("[2, 2]"),
        "{e}"
    );
    assert_eq!(
        s.zeros(&[2, 0], DType::Float32).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        s.fill(&[2], 1.5, DType::Int32).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        s.fill(&[2], 2.0, DType::Bool).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        s.zeros(&[1 << 20, 1 << 20], DType::Float32).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    assert_eq!(keep.read::<i32>().await.unwrap_err().code(), "DTYPE_MISMATCH");
    assert_eq!(keep.item_f64().await.unwrap_err().code(), "SHAPE_MISMATCH");
    ledger::assert_unchanged(&before, &ledger::ledger(), "failed creation calls");
    keep.dispose();
    let before = ledger::ledger();
    let e = keep.read::<f32>().await.unwrap_err();
    assert_eq!(e.code(), "DISPOSED");
    assert!(e.to_string().contains("tensor #"), "{e}");
    assert_eq!(keep.item_f64().await.unwrap_err().code(), "DISPOSED");
    ledger::assert_unchanged(&before, &ledger::ledger(), "reads of a disposed tensor");
    assert!(keep.is_disposed());
    assert_eq!(keep.shape(), &[2], "a disposed handle stays readable");
}

/// Disposing a session stops new work; live tensors keep their storage and values until disposed,
/// then go back to the device (not the cache).
pub async fn disposed_session_semantics(s: &Session) {
    let t = s.tensor(&[4u32, 5, 6], &[3]).unwrap();
    let spare = s.zeros(&[10], DType::Float32).unwrap();
    drop(spare); // cached now
    s.dispose();
    s.dispose();
    assert!(s.is_disposed());
    let before = ledger::ledger();
    assert_eq!(
        s.zeros(&[1], DType::Float32).unwrap_err().code(),
        "SESSION_DISPOSED"
    );
    assert_eq!(s.tensor(&[1.0f32], &[1]).unwrap_err().code(), "SESSION_DISPOSED");
    assert_eq!(s.sync().await.unwrap_err().code(), "SESSION_DISPOSED");
    ledger::assert_unchanged(&before, &ledger::ledger(), "calls on a disposed session");
    let x = s.stats();
    assert_eq!(
        (x.live_bytes, x.pool_cached_bytes, x.pool_bytes),
        (12, 0, 256),
        "cache dropped, tensor kept"
    );
    assert_eq!(t.read::<u32>().await.unwrap(), vec![4, 5, 6], "data is not lost");
    t.dispose();
    let x = s.stats();
    assert_eq!((x.live_bytes, x.pool_bytes, x.device_buffers), (0, 0, 0));
}

/// At the bound: `OUT_OF_MEMORY` names requested/live/bound bytes, changes nothing, and the
/// session keeps working once something is disposed.
pub async fn out_of_memory_at_the_bound(s: &Session) {
    // bound 64 KiB: four 16 KiB tensors fill it exactly
    let ts: Vec<_> = (0..4)
        .map(|i| s.fill(&[4096], i as f64, DType::Float32).unwrap())
        .collect();
    let before = ledger::ledger();
    let e = s.zeros(&[4096], DType::Float32).unwrap_err();
    assert_eq!(e.code(), "OUT_OF_MEMORY");
    let msg = e.to_string();
    assert!(
        msg.contains("requested 16384 bytes") && msg.contains("65536 live") && msg.contains("bound 65536"),
        "{msg}"
    );
    ledger::assert_unchanged(&before, &ledger::ledger(), "a failed acquire");
    for (i, t) in ts.iter().enumerate() {
        assert_eq!(
            t.read::<f32>().await.unwrap(),
            vec![i as f32; 4096],
            "no data lost"
        );
    }
    let mut ts = ts;
    ts.pop();
    let again = s.fill(&[4096], 9.0, DType::Float32).unwrap();
    assert_eq!(again.read::<f32>().await.unwrap()[4095], 9.0);
    assert_eq!(s.stats().pool_hits, 1);
}

/// A tensor larger than the device's largest storage buffer is `OUT_OF_MEMORY` ("never fits"),
/// with nothing changed. `s` needs a pool bound above the device limit.
pub fn larger_than_the_device_allows(s: &Session) {
    let max = s
        .adapter()
        .max_storage_buffer_binding_size
        .min(s.adapter().max_buffer_size);
    let elements = (max / 4 + 1) as usize;
    let e = ledger::fails_unchanged("OUT_OF_MEMORY", "larger than the device allows", || {
        s.zeros(&[elements], DType::Float32)
    });
    assert!(e.to_string().contains("never fits"), "{e}");
}
