//! The JS surface of sessions and tensors, driven from JavaScript itself: `using` declarations,
//! the stable error codes (every rejected call leaves the ledger as it was), the shape of
//! `metrics()` records. Part of `web.rs`.

use affon::js::JsSession;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

use super::common;

#[wasm_bindgen(inline_js = r#"
const code = (f) => { try { f(); return 'no error'; } catch (e) { return `${e.name}:${e.code}`; } };
const acode = async (f) => { try { await f(); return 'no error'; } catch (e) { return `${e.name}:${e.code}`; } };

export async function usingReleasesStorage(session) {
  const out = {};
  const before = session.memory().numBytes;
  let handle;
  {
    using t = session.tensor(new Float32Array([1, 2, 3, 4]), [2, 2]);
    handle = t;
    out.inside = session.memory().numBytes - before;
  }
  out.after = session.memory().numBytes - before;
  out.disposed = handle.disposed;
  out.shape = handle.shape;              // still readable
  out.read = await acode(() => handle.to_array());
  out.again = code(() => handle.dispose());   // idempotent
  out.isPlainArray = Array.isArray(handle.shape);
  return out;
}

export async function jsErrors(session, ledger) {
  const t = session.tensor([1, 2, 3], [3], 'int32');
  const out = {};
  const before = ledger(); // every compute.storage / compute.memory record
  out.badShape = code(() => session.tensor([1, 2, 3], [2, 2]));
  out.negDim = code(() => session.zeros([-1, 2]));
  out.fracDim = code(() => session.zeros([1.5]));
  out.zeroDim = code(() => session.zeros([0]));
  out.shapeNotArray = code(() => session.zeros(4));
  out.badDtype = code(() => session.zeros([2], 'float64'));
  out.badData = code(() => session.tensor(['a'], [1]));
  out.fracInt = code(() => session.tensor([1.5], [1], 'int32'));
  out.unchanged = ledger() === before;
  // each later failing call, alone: its name lands in `moved` if the ledger moved
  out.moved = [];
  const still = (name, f) => ledger.around(() => acode(f), () => out.moved.push(`${name} moved the ledger`));
  out.values = Array.from(await t.to_array());
  out.arrayType = (await t.toArray()).constructor.name;
  out.boolType = (await session.tensor([true, false, 1], [3], 'bool').to_array()).constructor.name;
  out.item = await session.fill([], 2.5).item();
  out.itemMulti = await still('itemMulti', () => t.item());
  t.dispose();
  out.disposedRead = await still('disposedRead', () => t.to_array());
  out.disposedItem = await still('disposedItem', () => t.item());
  out.disposed = t.disposed;
  out.badOptions = await still('badOptions', () => session.constructor.create({ pool: { maxTotalBytes: -1 } }));
  out.unknownOption = await still('unknownOption', () => session.constructor.create({ pol: {} }));
  out.badClasses = await still('badClasses', () => session.constructor.create({ pool: { sizeClasses: 3 } }));
  out.badCacheLimit = await still('badCacheLimit', () => session.constructor.create({ pool: { cacheLimitBytes: 1.5 } }));
  const badIdle = [];
  for (const idleTrimMs of [-1, 1.5, 'soon', NaN, 2 ** 31]) {
    badIdle.push(await still(`idleTrimMs ${idleTrimMs}`, () => session.constructor.create({ pool: { idleTrimMs } })));
  }
  out.badIdleTrim = badIdle.join(' ');
  {
    using idle = await session.constructor.create({ pool: { idleTrimMs: 500 } });
    using off = await session.constructor.create({ pool: { idleTrimMs: 0 } });
    out.idleTrim = `${session.poolConfig.idleTrimMs} ${idle.poolConfig.idleTrimMs} ${off.poolConfig.idleTrimMs}`;
  }
  {
    // cacheLimitBytes: 1024 keeps one 1 KiB buffer cached; the least recently released goes
    using limited = await session.constructor.create({ pool: { cacheLimitBytes: 1024 } });
    const a = limited.zeros([256]), b = limited.zeros([256]);
    b.dispose();
    a.dispose();
    const u = limited.poolUsage();
    out.cacheLimit = `${limited.poolConfig.cacheLimitBytes} ${u.bytesHeld} ${u.bytesCached} ${u.buffersCached}`;
  }
  session.dispose();
  session.dispose();
  out.sessionDisposed = await still('sessionDisposed', () => session.zeros([1]));
  out.sessionDisposedFlag = session.disposed;
  using s2 = await session.constructor.create({ label: 'second' });
  out.label = s2.label;
  return out;
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = usingReleasesStorage)]
    async fn using_releases_storage(session: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = jsErrors)]
    async fn js_errors(session: JsValue, ledger: JsValue) -> JsValue;
}

fn field(o: &JsValue, k: &str) -> JsValue {
    js_sys::Reflect::get(o, &k.into()).unwrap()
}

async fn js_session(options: JsValue) -> JsValue {
    JsSession::create(options)
        .await
        .map(JsValue::from)
        .expect("WebGPU adapter required")
}

#[wasm_bindgen_test]
async fn using_declaration_releases_storage_and_keeps_the_handle_readable() {
    let s = js_session(JsValue::UNDEFINED).await;
    let out = using_releases_storage(s).await;
    assert_eq!(field(&out, "inside").as_f64(), Some(16.0));
    assert_eq!(
        field(&out, "after").as_f64(),
        Some(0.0),
        "using released the storage"
    );
    assert_eq!(field(&out, "disposed").as_bool(), Some(true));
    assert_eq!(field(&out, "read").as_string().unwrap(), "AffonError:DISPOSED");
    assert_eq!(field(&out, "again").as_string().unwrap(), "no error");
    assert_eq!(field(&out, "isPlainArray").as_bool(), Some(true));
}

#[wasm_bindgen_test]
async fn js_errors_carry_stable_codes() {
    let s = js_session(JsValue::UNDEFINED).await;
    let out = js_errors(s, common::ledger::js_ledger()).await;
    let expect = [
        ("badShape", "AffonError:SHAPE_MISMATCH"),
        ("negDim", "AffonError:INVALID_ARGUMENT"),
        ("fracDim", "AffonError:INVALID_ARGUMENT"),
        ("zeroDim", "AffonError:INVALID_ARGUMENT"),
        ("shapeNotArray", "AffonError:INVALID_ARGUMENT"),
        ("badDtype", "AffonError:INVALID_ARGUMENT"),
        ("badData", "AffonError:INVALID_ARGUMENT"),
        ("fracInt", "AffonError:INVALID_ARGUMENT"),
        ("itemMulti", "AffonError:SHAPE_MISMATCH"),
        ("disposedRead", "AffonError:DISPOSED"),
        ("disposedItem", "AffonError:DISPOSED"),
        ("badOptions", "AffonError:INVALID_ARGUMENT"),
        ("unknownOption", "AffonError:INVALID_ARGUMENT"),
        ("badClasses", "AffonError:INVALID_ARGUMENT"),
        ("badCacheLimit", "AffonError:INVALID_ARGUMENT"),
        ("badIdleTrim", &["AffonError:INVALID_ARGUMENT"; 5].join(" ")),
        ("idleTrim", "10000 500 0"),
        ("cacheLimit", "1024 1024 1024 1"),
        ("sessionDisposed", "AffonError:SESSION_DISPOSED"),
        ("arrayType", "Int32Array"),
        ("boolType", "Uint8Array"),
        ("label", "second"),
    ];
    for (k, v) in expect {
        assert_eq!(field(&out, k).as_string().as_deref(), Some(v), "{k}");
    }
    assert_eq!(
        field(&out, "unchanged").as_bool(),
        Some(true),
        "failed calls changed the ledger"
    );
    common::ledger::assert_no_problems(&field(&out, "moved"), "in the failing calls after the first");
    assert_eq!(field(&out, "disposed").as_bool(), Some(true));
    assert_eq!(field(&out, "sessionDisposedFlag").as_bool(), Some(true));
    assert_eq!(field(&out, "item").as_f64(), Some(2.5));
    let values: Vec<f64> = js_sys::Array::from(&field(&out, "values"))
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(values, vec![1.0, 2.0, 3.0]);
}

#[wasm_bindgen_test]
async fn telemetry_metrics_from_js_have_the_record_shape() {
    let _s = js_session(JsValue::UNDEFINED).await;
    let recs = affon::js::JsTelemetry::metrics().unwrap();
    let arr = js_sys::Array::from(&recs);
    let live = arr
        .iter()
        .find(|r| {
            field(r, "scope").as_string().as_deref() == Some("compute.storage")
                && field(r, "name").as_string().as_deref() == Some("live_bytes")
                && field(r, "labels").is_undefined()
        })
        .expect("compute.storage/live_bytes");
    assert_eq!(field(&live, "kind").as_string().as_deref(), Some("gauge"));
    assert_eq!(field(&live, "unit").as_string().as_deref(), Some("bytes"));
    assert!(field(&live, "value").as_f64().is_some());
    let hits = arr
        .iter()
        .find(|r| field(r, "name").as_string().as_deref() == Some("pool_hits"))
        .unwrap();
    assert_eq!(field(&hits, "kind").as_string().as_deref(), Some("counter"));
}
