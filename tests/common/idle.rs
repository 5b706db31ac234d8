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
/// live 12 B tensor (256 B class) — the figures every scenario below starts from. Also returns
/// the time just before the last activity (the releases).
async fn leave_a_cache(s: &Session) -> (affon::Tensor, f64) {
    let live = s.fill(&[3], 2.0, DType::Float32).unwrap();
    let a = s.ones(&[1000], DType::Float32).unwrap(); // 4000 B → 4096 B class
    let b = live.square().unwrap();
    assert_eq!(b.read::<f32>().await.unwrap(), vec![4.0; 3]);
    let last = now_ms();
    drop((a, b));
    let st = s.stats();
    assert_eq!(
        (st.pool_cached_bytes, st.pool_bytes),
        (4096 + 256, 4096 + 256 + 256)
    );
    assert_eq!(staging_bytes(s), 256, "the readback's staging buffer is kept");
    (live, last)
}

/// Polls (every 25 ms, up to `limit_ms`) until `done` holds; when it did (`now_ms()`).
async fn wait_until(limit_ms: f64, mut done: impl FnMut() -> bool) -> Option<f64> {
    let start = now_ms();
    while now_ms() - start < limit_ms {
        if done() {
            return Some(now_ms());
        }
        sleep_ms(25).await;
    }
    None
}

/// A session idle for 300 ms is trimmed between 300 ms and a quarter more (plus timer latency):
/// exactly the cached bytes go, counted as evictions, with the kept staging buffer; the live tensor
/// keeps its buffer and its values; a release arms the timer again and the next trim follows.
pub async fn an_idle_session_gives_its_cache_back() {
    let s = with_idle_trim(300).await;
    let (live, last) = leave_a_cache(&s).await;
    let before = s.stats();
    // the figures move one by one (the timer may be another thread): wait for all of them
    let trimmed = |s: &Session| {
        let st = s.stats();
        st.pool_cached_bytes == 0
            && st.pool_evictions == before.pool_evictions + 2
            && st.device_buffers == 1
            && staging_bytes(s) == 0
    };
    let at = wait_until(10_000.0, || trimmed(&s))
        .await
        .expect("trimmed within 10 s");
    // between the idle time and a quarter more (ticks of 75 ms), plus timer and polling latency
    // (up to 1 s allowed on a loaded 2-core machine): not at the first tick, not many idle times late
    assert!(
        (290.0..=375.0 + 1000.0).contains(&(at - last)),
        "trimmed {} ms after the last release",
        at - last
    );
    let after = s.stats();
    assert_eq!(after.pool_bytes, 256, "the live tensor's buffer alone");
    assert_eq!((after.live_bytes, after.live_tensors), (12, 1));
    // a release alone arms the timer again: the trimmed class is made anew, cached, trimmed
    let misses = after.pool_misses;
    drop(s.ones(&[1000], DType::Float32).unwrap());
    let again = s.stats();
    assert_eq!(again.pool_misses, misses + 1, "the trimmed class is made anew");
    assert_eq!(again.pool_cached_bytes, 4096);
    let evictions = again.pool_evictions;
    let second = wait_until(10_000.0, || {
        let st = s.stats();
        st.pool_cached_bytes == 0 && st.pool_evictions == evictions + 1
    });
    assert!(second.await.is_some(), "trimmed a second time");
    assert_eq!(live.read::<f32>().await.unwrap(), vec![2.0; 3]);
}

/// A session used every 50 ms for three idle times keeps its cache; `idleTrimMs: 0` never trims
/// (it is 0 in the configuration, not the default); disposing a session whose timer is armed is
/// safe: its figures go to zero and stay there while the timer runs out.
pub async fn busy_or_off_sessions_keep_their_cache() {
    let busy = with_idle_trim(300).await;
    let (live, _) = leave_a_cache(&busy).await;
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
    assert_eq!(off.pool_config().idle_trim_ms, 0);
    let (_live_off, _) = leave_a_cache(&off).await;
    sleep_ms(700).await;
    assert_eq!(
        off.stats().pool_cached_bytes,
        4096 + 256,
        "idleTrimMs 0: never trimmed"
    );
    assert_eq!(staging_bytes(&off), 256);
    drop(live);
    busy.dispose();
    let gone = busy.stats();
    assert_eq!(
        (gone.pool_bytes, gone.live_bytes, staging_bytes(&busy)),
        (0, 0, 0)
    );
    sleep_ms(450).await; // past the timer's next ticks
    assert_eq!(busy.stats(), gone);
}
