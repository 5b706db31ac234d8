//! The one place where the two targets differ: blocking, waiting for device work, the adapter's
//! browser identity. Everything else in the crate is target-independent.

/// The shared-ownership pointer for objects holding wgpu handles: `Arc` natively (wgpu types
/// are `Send + Sync` there, and sessions are used from several threads), `Rc` on the web (wgpu's
/// WebGPU types are not `Send`, and wasm32 is single-threaded).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type Shared<T> = std::sync::Arc<T>;
/// See the native definition.
#[cfg(target_arch = "wasm32")]
pub(crate) type Shared<T> = std::rc::Rc<T>;
/// The weak counterpart of [`Shared`].
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type WeakShared<T> = std::sync::Weak<T>;
/// See the native definition.
#[cfg(target_arch = "wasm32")]
pub(crate) type WeakShared<T> = std::rc::Weak<T>;

/// What may be shared across threads where there are threads: `Send + Sync` natively, anything on
/// the web (one thread, `Rc`-based handles).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) trait Threaded: Send + Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + Sync + ?Sized> Threaded for T {}
/// See the native definition.
#[cfg(target_arch = "wasm32")]
pub(crate) trait Threaded {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> Threaded for T {}

/// Milliseconds from an arbitrary origin, for durations.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn now_ms() -> f64 {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64() * 1000.0
}

/// Milliseconds from an arbitrary origin (`performance.now()`), for durations.
#[cfg(target_arch = "wasm32")]
pub(crate) fn now_ms() -> f64 {
    web::affon_now()
}

/// A seed for a random op called without one (`Math.random()`'s 53 bits).
#[cfg(target_arch = "wasm32")]
pub(crate) fn random_seed() -> u64 {
    (js_sys::Math::random() * 9.0e15) as u64
}

/// A seed for a random op called without one (the process's random hasher keys, a counter mixed in).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn random_seed() -> u64 {
    use std::hash::BuildHasher;
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::collections::hash_map::RandomState::new().hash_one(n)
}

/// Runs `f` when the calling browser task yields (a microtask after it).
#[cfg(target_arch = "wasm32")]
pub(crate) fn on_yield(f: impl std::future::Future<Output = ()> + 'static) {
    wasm_bindgen_futures::spawn_local(f);
}

/// The browser's user agent (`navigator.userAgent`), if it has one.
#[cfg(target_arch = "wasm32")]
pub(crate) fn user_agent() -> Option<String> {
    let nav = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).unwrap_or_default();
    js_sys::Reflect::get(&nav, &"userAgent".into())
        .ok()
        .and_then(|v| v.as_string())
}

/// Calls `f` every `ms` milliseconds until it returns `false`, on one thread of its own.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn every_ms(ms: u32, mut f: impl FnMut() -> bool + Send + 'static) {
    std::thread::spawn(move || loop {
        std::thread::sleep(std::time::Duration::from_millis(ms.into()));
        if !f() {
            break;
        }
    });
}

/// Calls `f` every `ms` milliseconds until it returns `false`, from the event loop (`setTimeout`).
#[cfg(target_arch = "wasm32")]
pub(crate) fn every_ms<F: FnMut() -> bool + 'static>(ms: u32, mut f: F) {
    let tick = move || {
        if f() {
            every_ms(ms, f);
        }
    };
    web::affon_after(ms, &wasm_bindgen::closure::Closure::once_into_js(tick));
}

/// The browser's readings, each one call across the boundary (no property lookups by name from
/// Rust, which cost a string conversion each).
#[cfg(target_arch = "wasm32")]
mod web {
    #[wasm_bindgen::prelude::wasm_bindgen(inline_js = r#"
export function affon_after(ms, f) { setTimeout(f, ms); }
const NativeError = globalThis.Error, describe = Object.getOwnPropertyDescriptor, define = Object.defineProperty,
  captureStack = NativeError.captureStackTrace;
export function affon_stack(limit) {
  // The calling stack in the engine's own format, with no page code run on the way: a page's
  // Error.prepareStackTrace (or a getter on Error's fields) could call back into affon mid-call.
  // Both fields are shadowed by own data properties for the capture and put back as they were;
  // null when either cannot be (a non-configurable field) or anything throws.
  const E = NativeError;
  let format, depth, shadowed = false;
  try {
    format = describe(E, 'prepareStackTrace');
    depth = describe(E, 'stackTraceLimit');
    if ((format && !format.configurable) || (depth && !depth.configurable)) return null;
    shadowed = true;
    define(E, 'prepareStackTrace', { value: undefined, writable: true, configurable: true });
    define(E, 'stackTraceLimit', { value: limit, writable: true, configurable: true });
    // V8's captureStackTrace leaves out this function's own frame; elsewhere an Error's stack
    let stack;
    if (typeof captureStack === 'function') {
      const holder = { name: 'Error', message: '' }; // own fields: its header reads no prototype
      captureStack(holder, affon_stack);
      stack = holder.stack;
    } else {
      stack = new E('').stack;
    }
    return typeof stack === 'string' ? stack : null;
  } catch (e) {
    return null;
  } finally {
    if (shadowed) {
      try { if (format) define(E, 'prepareStackTrace', format); else delete E.prepareStackTrace; } catch (e) { /* left shadowed */ }
      try { if (depth) define(E, 'stackTraceLimit', depth); else delete E.stackTraceLimit; } catch (e) { /* left shadowed */ }
    }
  }
}
// taken at load: the ledger reads the clock under the pool's lock, and metrics() the heap figure
// between two walks of the records, where a page's replacement must not run
const dateNow = Date.now, perf = globalThis.performance, perfNow = perf ? perf.now.bind(perf) : dateNow,
  apply = Reflect.apply, perfMemory = perf ? describe(Object.getPrototypeOf(perf), 'memory')?.get : undefined,
  usedHeap = (() => {
    try {
      const m = perfMemory ? apply(perfMemory, perf, []) : undefined;
      return m ? describe(Object.getPrototypeOf(m), 'usedJSHeapSize')?.get : undefined;
    } catch (e) { return undefined; }
  })();
export function affon_now() { return perfNow(); }
// The JS heap figure, decided once at the first reading: 'precise' where performance.memory moves
// (Chromium with --enable-precise-memory-info); without that flag Chromium answers one bucket it
// refreshes every 20 minutes, told apart by a probe — 2 MiB of doubles made between two readings do
// not move it. Then, in a cross-origin-isolated page, 'sampled': performance.measureUserAgentSpecificMemory(),
// one measurement at a time, started at most once a second and read when it resolves (never waited
// for). Else 'none': the figure is left out (and a diagnosis says the heap is unobserved).
const measureMemory = perf && typeof perf.measureUserAgentSpecificMemory === 'function'
  ? perf.measureUserAgentSpecificMemory : undefined, promiseThen = Promise.prototype.then;
let heapMode, heapAt = -Infinity, heap = -1, ballast = null, measuring = false, measuredAt = -Infinity;
const SAMPLE_EVERY_MS = 1000;
function readHeap() { return apply(usedHeap, apply(perfMemory, perf, []), []); }
function decideHeap() {
  try {
    if (perfMemory && usedHeap) {
      const before = readHeap();
      ballast = new Array(1 << 18).fill(0.5);
      const after = readHeap();
      ballast = null;
      if (after !== before) return 'precise';
    }
  } catch (e) { ballast = null; }
  return globalThis.crossOriginIsolated === true && measureMemory ? 'sampled' : 'none';
}
function sample(t) {
  if (measuring || Math.abs(t - measuredAt) < SAMPLE_EVERY_MS) return;
  measuring = true;
  measuredAt = t;
  try {
    apply(promiseThen, apply(measureMemory, perf, []), [
      (r) => { measuring = false; if (typeof r?.bytes === 'number') heap = r.bytes; },
      () => { measuring = false; },
    ]);
  } catch (e) { measuring = false; }
}
export function affon_js_heap(maxAgeMs) {
  heapMode ??= decideHeap();
  // Date.now(), not performance.now(): a tenth of the cost, and whole milliseconds are enough to
  // age a reading (a clock set back takes a new one too)
  const t = dateNow();
  if (heapMode === 'sampled') { sample(t); return heap; }
  if (heapMode !== 'precise') return -1;
  if (!(Math.abs(t - heapAt) < maxAgeMs)) {
    heapAt = t;
    // the getters as they were at load (Chromium's): no page code runs while records are made
    try { heap = readHeap(); } catch (e) { heap = -1; }
  }
  return heap;
}
// While armed, `GPUAdapter.prototype.requestDevice` adds 'subgroups' to the required features of
// a request made to an adapter that offers them with one subgroup size, and notes that size.
let savedRequest = null, grantedLanes = 0;
export function affon_subgroups_arm() {
  grantedLanes = 0;
  const proto = globalThis.GPUAdapter?.prototype;
  if (!proto || savedRequest) return;
  const original = savedRequest = proto.requestDevice;
  proto.requestDevice = function (desc) {
    const info = this.info ?? {};
    const lanes = info.subgroupMinSize;
    if (this.features?.has('subgroups') && lanes > 0 && lanes === info.subgroupMaxSize) {
      grantedLanes = lanes;
      return original.call(this, { ...desc, requiredFeatures: [...(desc?.requiredFeatures ?? []), 'subgroups'] });
    }
    return original.call(this, desc);
  };
}
export function affon_subgroups_disarm() {
  if (savedRequest) { GPUAdapter.prototype.requestDevice = savedRequest; savedRequest = null; }
  return grantedLanes;
}
"#)]
    extern "C" {
        pub fn affon_subgroups_arm();
        pub fn affon_subgroups_disarm() -> u32;
        pub fn affon_now() -> f64;
        /// `new Error('').stack` with `stackTraceLimit` = `limit` and the default formatting (no
        /// user `prepareStackTrace` or getter runs), or null.
        pub fn affon_stack(limit: u32) -> Option<String>;
        pub fn affon_after(ms: u32, f: &wasm_bindgen::JsValue);
        /// The JS heap's used bytes, or -1 where the page does not observe it: Chromium's
        /// precise `performance.memory.usedJSHeapSize` (a reading younger than `max_age_ms` is
        /// reused), or in a cross-origin-isolated page the last `measureUserAgentSpecificMemory()`
        /// result (sampled at most once a second).
        pub fn affon_js_heap(max_age_ms: f64) -> f64;
    }
}

/// Web: calls `request`, which must call `GPUAdapter.requestDevice` before it returns (wgpu's
/// `Adapter::request_device` does), with `'subgroups'` added to the device's required features when
/// the adapter offers them with a single subgroup size (SwiftShader: 4 lanes), and returns that
/// size, or 0 when the device was not asked for them. wgpu 30's WebGPU backend does not map the
/// feature, so it is asked for here, for this one request only: the method is restored before this
/// returns, and nothing else on the page sees the change.
#[cfg(target_arch = "wasm32")]
pub(crate) fn with_subgroups<R>(request: impl FnOnce() -> R) -> (R, u32) {
    web::affon_subgroups_arm();
    let r = request();
    (r, web::affon_subgroups_disarm())
}

/// Native: wait for all submitted work (wgpu does not poll by itself natively).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn wait_idle(device: &wgpu::Device) -> crate::Result<()> {
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map(|_| ())
        .map_err(|e| crate::Error::DeviceLost(format!("waiting for the device failed: {e}")))
}

/// Web: the browser drives the device; nothing to do.
#[cfg(target_arch = "wasm32")]
pub(crate) fn wait_idle(_device: &wgpu::Device) -> crate::Result<()> {
    Ok(())
}

/// Native: blocks the calling thread on a future.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    pollster::block_on(f)
}

/// `(vendor, architecture)` as the browser reports them (`GPUAdapter.info`); wgpu leaves them
/// empty on the web, so they are asked for separately.
#[cfg(target_arch = "wasm32")]
pub(crate) async fn browser_adapter_identity() -> (String, String) {
    use wasm_bindgen::JsCast;
    let get = |o: &wasm_bindgen::JsValue, k: &str| js_sys::Reflect::get(o, &k.into()).unwrap_or_default();
    let global = js_sys::global();
    let gpu = get(&get(&global, "navigator"), "gpu");
    let Ok(request) = get(&gpu, "requestAdapter").dyn_into::<js_sys::Function>() else {
        return (String::new(), String::new());
    };
    let Ok(promise) = request.call0(&gpu).and_then(|p| p.dyn_into::<js_sys::Promise>()) else {
        return (String::new(), String::new());
    };
    let adapter = wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .unwrap_or_default();
    let info = get(&adapter, "info");
    let s = |k| get(&info, k).as_string().unwrap_or_default();
    (s("vendor"), s("architecture"))
}

/// `runtime.memory` readings natively: resident bytes (Linux `/proc/self/status` VmRSS; macOS
/// `proc_pid_rusage`), and on macOS the physical footprint.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn runtime_memory() -> Vec<(&'static str, u64)> {
    #[cfg(target_os = "macos")]
    {
        // SAFETY: proc_pid_rusage writes a rusage_info_v2 into the zeroed struct we pass.
        let mut info: libc::rusage_info_v2 = unsafe { std::mem::zeroed() };
        let ok = unsafe {
            libc::proc_pid_rusage(
                libc::getpid(),
                libc::RUSAGE_INFO_V2,
                &mut info as *mut libc::rusage_info_v2 as *mut libc::rusage_info_t,
            )
        } == 0;
        if ok {
            return vec![
                ("process_resident_bytes", info.ri_resident_size),
                ("process_footprint_bytes", info.ri_phys_footprint),
            ];
        }
        vec![]
    }
    #[cfg(not(target_os = "macos"))]
    {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let kb = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        kb.map(|kb| vec![("process_resident_bytes", kb * 1024)])
            .unwrap_or_default()
    }
}

/// How old a JS heap reading may be before `metrics()` takes a new one. With precise memory info
/// (`--enable-precise-memory-info`) Chromium measures the heap on every read, which
/// would dominate a `metrics()` call; without it the figure is one bucket, and left out.
#[cfg(target_arch = "wasm32")]
pub(crate) const JS_HEAP_MAX_AGE_MS: f64 = 1.0;

/// `runtime.memory` readings on the web: the wasm linear memory, and the JS heap where the page
/// observes it — Chromium's precise `performance.memory.usedJSHeapSize` (at most
/// [`JS_HEAP_MAX_AGE_MS`] old), or a cross-origin-isolated page's sampled
/// `measureUserAgentSpecificMemory()`; never Chromium's fixed bucket, which would read as flat.
#[cfg(target_arch = "wasm32")]
pub(crate) fn runtime_memory() -> Vec<(&'static str, u64)> {
    let mut out = Vec::with_capacity(2);
    // the linear memory's size in 64 KiB pages, read by the instance itself (no call out)
    out.push((
        "wasm_memory_bytes",
        core::arch::wasm32::memory_size(0) as u64 * 65_536,
    ));
    let heap = web::affon_js_heap(JS_HEAP_MAX_AGE_MS);
    if heap >= 0.0 {
        out.push(("js_heap_used_bytes", heap as u64));
    }
    out
}

/// The creating call's stack, trimmed to the user's frames (web); `None` natively.
#[cfg(target_arch = "wasm32")]
pub(crate) fn capture_stack() -> Option<String> {
    // the default limit (10) is used up by the bindings' own frames
    let stack = web::affon_stack(64)?;
    let internal = |l: &str| {
        l.contains("wasm-function")
            || l.contains("wasm://")
            || l.contains(".wasm:")
            || l.contains("__wbg")
            || l.contains("/affon.js")
            || l.contains("affon_stack") // its own frame, where the engine has no captureStackTrace
            || l.contains("wasm-bindgen-test")
            || l.trim() == "Error"
            || l.trim().is_empty()
    };
    let frames: Vec<&str> = stack
        .lines()
        .filter(|l| !internal(l))
        .map(str::trim)
        .take(8)
        .collect();
    (!frames.is_empty()).then(|| frames.join("\n"))
}

/// Stacks are a browser feature; natively none is recorded.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn capture_stack() -> Option<String> {
    None
}
