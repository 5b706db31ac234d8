//! The idle trim on both targets: a session left alone for `pool.idleTrimMs` gives its cached
//! buffers and kept readback buffers back to the device, by itself (a timer: `setTimeout` in the
//! browser, a thread natively); a busy one keeps them; `0` never trims.

use affon::{DType, PoolOptions, Session, SessionOptions};

/// Waits `ms` milliseconds without blocking the browser's event loop (natively: sleeps).
pub async fn sleep_ms(ms: u32) {
    #[cfg(not(target_arch = "wasm32"))]
    std::thread::sleep(std::time::Duration::from_millis(ms.into()));
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        let promise = js_sys::Promise::new(&mut |resolve, _| {
            let set_timeout = js_sys::Reflect::get(&js_sys::global(), &"setTimeout".into())
                .unwrap()
                .unchecked_into::<js_sys::Function>();
            set_timeout
                .call2(&wasm_bindgen::JsValue::NULL, &resolve, &ms.into())
                .unwrap();
        });
        wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
    }
}

/// Milliseconds from an arbitrary origin.
fn now_ms() -> f64 {
    #[cfg(not(target_arch = "wasm32"))]
    {
        use std::sync::OnceLock;
        static START: OnceLock<std::time::Instant> = OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64() * 1000.0
    }
    #[cfg(target_arch = "wasm32")]
    js_sys::Date::now()
}

/// A session whose idle time is `ms`.
pub async fn with_idle_trim(ms: u64) -> Session {
    Session::create(SessionOptions {
        pool: PoolOptions {
            idle_trim_ms: Some(ms),
            ..Default::default()
        },
        ..Default::default()
    })
    .await
    .expect("a GPU adapter is required")
}

fn staging_bytes(s: &Session) -> u64 {
    let r = affon::telemetry::ledger_records(&s.stats(), None);
    affon::telemetry::find(&r, "compute.memory", "staging_bytes").unwrap() as u64
}

/// Leaves a cached 4096 B buffer, a cached 256 B buffer and a kept 256 B staging buffer, with one
/// live 12 B tensor (256 B class) — the figures every scenario below starts from.
async fn leave_a_cache(s: &Session) -> affon::Tensor {
    let live = s.fill(&[3], 2.0, DType::Float32).unwrap();
    let a = s.ones(&[1000], DType::Float32).unwrap(); // 4000 B → 4096 B class
    let b = live.square().unwrap();
    assert_eq!(b.read::<f32>().await.unwrap(), vec![4.0; 3]);
    drop((a, b));
    let st = s.stats();
    assert_eq!(
        (st.pool_cached_bytes, st.pool_bytes),
        (4096 + 256, 4096 + 256 + 256)
    );
    assert_eq!(staging_bytes(s), 256, "the readback's staging buffer is kept");
    live
}

/// Polls (every 25 ms, up to `limit_ms`) until the pool caches nothing; the milliseconds waited.
async fn wait_for_trim(s: &Session, limit_ms: f64) -> Option<f64> {
    let start = now_ms();
    while now_ms() - start < limit_ms {
        if s.stats().pool_cached_bytes == 0 {
            return Some(now_ms() - start);
        }
        sleep_ms(25).await;
    }
    None
}

/// A session idle for 300 ms is trimmed between 300 ms and a quarter more (plus timer latency):
/// exactly the cached bytes go, counted as evictions, with the kept staging buffer; the live tensor
/// keeps its buffer and its values; the next use misses and caches again.
pub async fn an_idle_session_gives_its_cache_back() {
    let s = with_idle_trim(300).await;
    let live = leave_a_cache(&s).await;
    let before = s.stats();
    let waited = wait_for_trim(&s, 10_000.0).await.expect("trimmed within 10 s");
    assert!(waited >= 250.0, "trimmed after {waited} ms: before the idle time");
    let after = s.stats();
    assert_eq!(after.pool_cached_bytes, 0);
    assert_eq!(after.pool_bytes, 256, "the live tensor's buffer alone");
    assert_eq!(after.device_buffers, 1);
    assert_eq!(after.pool_evictions, before.pool_evictions + 2);
    assert_eq!(staging_bytes(&s), 0, "the kept staging buffer went too");
    assert_eq!((after.live_bytes, after.live_tensors), (12, 1));
    assert_eq!(live.read::<f32>().await.unwrap(), vec![2.0; 3]);
    let misses = s.stats().pool_misses;
    drop(s.ones(&[1000], DType::Float32).unwrap());
    let again = s.stats();
    assert_eq!(again.pool_misses, misses + 1, "the trimmed class is made anew");
    assert_eq!(again.pool_cached_bytes, 4096);
    // the timer was re-armed by that release: it trims again
    assert!(
        wait_for_trim(&s, 10_000.0).await.is_some(),
        "trimmed a second time"
    );
}

/// A session used every 50 ms for three idle times keeps its cache; `idleTrimMs: 0` never trims;
/// a disposed session's timer stops without touching anything.
pub async fn busy_or_off_sessions_keep_their_cache() {
    let busy = with_idle_trim(300).await;
    let live = leave_a_cache(&busy).await;
    let evictions = busy.stats().pool_evictions;
    for _ in 0..18 {
        drop(live.square().unwrap()); // a hit and a release: activity
        sleep_ms(50).await;
    }
    let st = busy.stats();
    assert_eq!(
        (st.pool_cached_bytes, st.pool_evictions),
        (4096 + 256, evictions),
        "busy: kept"
    );
    let off = with_idle_trim(0).await;
    let _live_off = leave_a_cache(&off).await;
    sleep_ms(700).await;
    assert_eq!(
        off.stats().pool_cached_bytes,
        4096 + 256,
        "idleTrimMs 0: never trimmed"
    );
    assert_eq!(staging_bytes(&off), 256);
    drop(live);
    busy.dispose();
    sleep_ms(450).await; // the disposed session's timer ticks, finds it disposed, stops
    assert_eq!(busy.stats().pool_bytes, 0);
}
