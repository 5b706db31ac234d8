//! Hardening in headless Chromium on WebGPU: the shared scenarios (disposed objects in every method,
//! cross-session use, NaN/Infinity, device loss, a 10,000-run soak), and from JavaScript every method
//! of every class called on a disposed object, on a freed handle and on something not a handle.
#![cfg(target_arch = "wasm32")]

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/programs.rs"]
mod programs;

#[path = "shared/hardening.rs"]
mod hardening;

use affon::js::JsSession;
use affon::{PoolOptions, Session, SessionOptions};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn session() -> Session {
    Session::create(SessionOptions::default())
        .await
        .expect("WebGPU adapter required")
}

#[wasm_bindgen_test]
async fn disposed_objects_in_every_method() {
    hardening::disposed_objects_in_every_method(&session().await).await;
}

#[wasm_bindgen_test]
async fn cross_session_use() {
    hardening::cross_session_use(&session().await, &session().await).await;
}

#[wasm_bindgen_test]
async fn wide_sizes_never_wrap() {
    hardening::wide_sizes_never_wrap(&session().await).await;
}

#[wasm_bindgen_test]
async fn nan_and_infinity_propagate() {
    hardening::nan_and_infinity_propagate(&session().await).await;
}

#[wasm_bindgen_test]
async fn device_loss() {
    hardening::device_loss(&session().await).await;
}

#[wasm_bindgen_test]
async fn soak_10000_runs() {
    let s = Session::create(SessionOptions {
        pool: PoolOptions {
            max_total_bytes: Some(1 << 20),
            ..Default::default()
        },
        ..Default::default()
    })
    .await
    .unwrap();
    let (warm, end, max_pool) = hardening::soak(&s, 10_000).await;
    web_sys::console::log_1(
        &format!("soak web: live after warm-up {warm} B, at end {end} B, max pool {max_pool} B").into(),
    );
}

#[wasm_bindgen(inline_js = r#"
// Calls every method of every class on a disposed object (arguments that would be valid on a live
// one), collecting the error codes; and checks memory() is unchanged by all those failures.
export async function everyMethod(Session, Program, ledger) {
  const codes = {};
  const call = async (label, f) => {
    try { await f(); codes[label] = 'no error'; } catch (e) { codes[label] = e.code ?? `${e.name}: ${e.message}`; }
  };
  const s = await Session.create({ label: 'disposed-everywhere' });
  const live = s.ones([2, 4]);
  const dead = s.ones([2, 4]);
  dead.dispose();
  const p = new Program('p');
  const x = p.input('x', 'float32', [-1, 4]);
  const acc = p.state('acc', 'float32', [4]);
  const n = p.add(acc, p.sum(x, [0]));
  p.assign('acc', n);
  p.output('y', p.relu(n));
  const exe = s.compile(p);
  const state = exe.createState();
  const args = { add: [live], sub: [live], mul: [live], div: [live], matmul: [s.ones([4, 2])], reshape: [[8]],
                 cast: ['int32'], transpose: [undefined], softmax: [-1], sum: [undefined], mean: [undefined],
                 max: [undefined], min: [undefined] };
  const skip = new Set(['constructor', 'dispose', 'free', '__destroy_into_raw']);
  const before = ledger(); // every compute.storage / compute.memory record
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(dead))) {
    const d = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(dead), name);
    if (skip.has(name) || typeof d.value !== 'function') continue;
    await call(`tensor.${name}`, () => dead[name](...(args[name] ?? [])));
  }
  for (const name of ['add', 'sub', 'mul', 'div']) await call(`live.${name}(dead)`, () => live[name](dead));
  await call('run(dead input)', () => exe.run({ x: dead }, state));
  await call('createState(dead init)', () => exe.createState({ acc: dead.reshape([8]) }));
  codes.unchanged = ledger() === before;
  state.dispose();
  await call('state.get', () => state.get('acc'));
  await call('run(dead state)', () => exe.run({ x: live }, state));
  exe.dispose();
  await call('exe.run', () => exe.run({ x: live }, exe.createState()));
  await call('exe.createState', () => exe.createState());
  await call('exe.memoryPlan', () => exe.memoryPlan({ x: [2, 4] }));
  s.dispose();
  const sessionArgs = { tensor: [[1], [1]], zeros: [[1]], ones: [[1]], fill: [[1], 2], randomNormal: [[1]],
                        randomUniform: [[1]], compile: [p], tidy: [() => 1], profile: [() => 1], sync: [] };
  for (const [name, a] of Object.entries(sessionArgs)) await call(`session.${name}`, () => s[name](...a));
  await call('live.square after session.dispose', () => live.square());
  codes.liveStillReadable = Array.from(await live.to_array()).join(',');
  return codes;
}

// `free()` is public: after it a handle's pointer is 0, and wasm-bindgen's own code threw a plain
// Error ('null pointer passed to rust') from every method and getter; `this` that is not a handle
// did the same, and free() inside the handle's own call threw 'attempted to take ownership'.
export async function freedHandles(Session, Program, telemetry, ledger) {
  const problems = [];
  const check = (ok, what) => { if (!ok) problems.push(what); };
  const expect = (what, code, f, unchanged = true) => {
    const l0 = ledger();
    try { f(); problems.push(`${what}: no error`); } catch (e) {
      check(e?.name === 'AffonError' && e.code === code, `${what}: ${e?.name} ${e?.code} ${e?.message}`);
    }
    check(!unchanged || ledger() === l0, `${what}: the ledger moved`);
  };
  const quiet = (what, f) => {
    const l0 = ledger();
    try { f(); } catch (e) { problems.push(`${what}: ${e?.name} ${e?.message}`); }
    check(ledger() === l0, `${what}: the ledger moved`);
  };
  const s = await Session.create({ label: 'freed-handles' });
  const t = s.ones([4]), live = s.ones([4]);
  const Tensor = t.constructor;
  t.free(); // as a collection would: the tensor is forgotten, still accounted
  expect('freed tensor: add', 'DISPOSED', () => t.add(1));
  expect('freed tensor: square', 'DISPOSED', () => t.square());
  expect('freed tensor: disposed', 'DISPOSED', () => t.disposed);
  expect('freed tensor: shape', 'DISPOSED', () => t.shape);
  expect('freed tensor: toArray', 'DISPOSED', () => t.toArray());
  expect('freed tensor as an argument', 'INVALID_ARGUMENT', () => live.add(t));
  quiet('freed tensor: free() again', () => { t.free(); t.free(); });
  // `this` that is not a Tensor
  const getter = Object.getOwnPropertyDescriptor(Tensor.prototype, 'shape').get;
  expect('square on {}', 'INVALID_ARGUMENT', () => Tensor.prototype.square.call({}));
  expect('square on undefined', 'INVALID_ARGUMENT', () => Tensor.prototype.square.call(undefined));
  expect('square on a number', 'INVALID_ARGUMENT', () => Tensor.prototype.square.call(5));
  expect('square on { __wbg_ptr: 0 }', 'INVALID_ARGUMENT', () => Tensor.prototype.square.call({ __wbg_ptr: 0 }));
  expect('square on a Session', 'INVALID_ARGUMENT', () => Tensor.prototype.square.call(s));
  expect('square on a revoked Proxy', 'INVALID_ARGUMENT', () => {
    const r = Proxy.revocable({}, {}); r.revoke(); Tensor.prototype.square.call(r.proxy);
  });
  expect('the shape getter on {}', 'INVALID_ARGUMENT', () => getter.call({}));
  expect('free on {}', 'INVALID_ARGUMENT', () => Tensor.prototype.free.call({}));
  expect('telemetry free on {}', 'INVALID_ARGUMENT', () => telemetry.prototype.free.call({}));
  // a freed handle of every other class
  const p = new Program('freed');
  const x = p.input('x', 'float32', [2]);
  p.output('y', p.neg(x));
  const exe = s.compile(p);
  const other = new Program('freed-node');
  const node = other.input('x', 'float32', [2]);
  node.free();
  expect('freed node: id', 'DISPOSED', () => node.id);
  expect('freed node as an argument', 'INVALID_ARGUMENT', () => other.neg(node));
  p.free();
  expect('freed program: input', 'DISPOSED', () => p.input('z', 'float32', [1]));
  expect('freed program: toJSON', 'DISPOSED', () => p.toJSON());
  expect('freed program: name', 'DISPOSED', () => p.name);
  exe.free();
  expect('freed executable: run', 'DISPOSED', () => exe.run({}));
  expect('freed executable: dispose', 'DISPOSED', () => exe.dispose());
  const s2 = await Session.create({ label: 'freed-session' });
  s2.free();
  expect('freed session: ones', 'DISPOSED', () => s2.ones([1]));
  expect('freed session: label', 'DISPOSED', () => s2.label);
  expect('freed session: profile', 'DISPOSED', () => s2.profile(() => 1));
  quiet('freed session: free() again', () => s2.free());
  // free() from inside the handle's own call: the handle is freed, and its session released (as a
  // plain free() releases an empty one) once the call returns; no other record moves
  const s3 = await Session.create({ label: 'freed-in-tidy' });
  const others = (l) => JSON.stringify(JSON.parse(l).filter(([, name, labels]) =>
    !labels.includes('freed-in-tidy') && name !== 'pool_max_total_bytes'));
  const l3 = ledger();
  expect('free inside its own tidy', 'INVALID_ARGUMENT', () => s3.tidy(() => s3.free()), false);
  check(others(ledger()) === others(l3), 'free inside its own tidy: records of others moved');
  check(!ledger().includes('freed-in-tidy'), 'free inside its own tidy: the session was not released');
  expect('after free inside tidy: memory', 'DISPOSED', () => s3.memory());
  s.dispose();
  return problems;
}

// A copy of a handle — an object of its prototype given its pointer, as a deep clone (lodash's
// cloneDeep: Object.create(proto), then own properties copied) or Object.assign makes — ran as the
// handle in wasm-bindgen's glue, and its free() freed the memory the handle still pointed at.
export async function copiedHandles(Session, Program, ledger) {
  const problems = [];
  const check = (ok, what) => { if (!ok) problems.push(what); };
  const expect = (what, code, f) => {
    const l0 = ledger();
    try { f(); problems.push(`${what}: no error`); } catch (e) {
      check(e?.name === 'AffonError' && e.code === code, `${what}: ${e?.name} ${e?.code} ${e?.message}`);
    }
    check(ledger() === l0, `${what}: the ledger moved`);
  };
  const s = await Session.create({ label: 'copied-handles' });
  const t = s.tensor(new Float32Array([1, 2, 3, 4]), [4]);
  const Tensor = t.constructor;
  const clone = (h) => Object.assign(Object.create(Object.getPrototypeOf(h)), h);
  const c = clone(t);
  check(typeof c.__wbg_ptr === 'number' && c.__wbg_ptr === t.__wbg_ptr, 'the clone carries the pointer');
  expect('free() on a clone', 'INVALID_ARGUMENT', () => c.free());
  expect('a method on a clone', 'INVALID_ARGUMENT', () => c.square());
  expect('a getter on a clone', 'INVALID_ARGUMENT', () => c.shape);
  expect('dispose() on a clone', 'INVALID_ARGUMENT', () => c.dispose());
  expect('a clone as an argument', 'INVALID_ARGUMENT', () => t.add(c));
  const forged = Object.create(Tensor.prototype);
  Object.defineProperty(forged, '__wbg_ptr', { value: t.__wbg_ptr, writable: true });
  expect('free() on a defined copy', 'INVALID_ARGUMENT', () => forged.free());
  // the handle itself is untouched by all of that
  check(Array.from(await t.toArray()).join(',') === '1,2,3,4', 'the handle still reads its values');
  check(Array.from(await t.square().toArray()).join(',') === '1,4,9,16', 'the handle still computes');
  // a graph node's copy, as an argument to a Program method and inside an inputs object
  const p = new Program('copied');
  const x = p.input('x', 'float32', [4]);
  expect('a node clone as an argument', 'INVALID_ARGUMENT', () => p.neg(clone(x)));
  expect('a program clone (its constructor made the handle): free()', 'INVALID_ARGUMENT', () => clone(p).free());
  expect('a program clone: input()', 'INVALID_ARGUMENT', () => clone(p).input('z', 'float32', [1]));
  try {
    Object.defineProperty(Program.prototype, '__wbg_ptr', { value: 1 });
    problems.push('Program.prototype\'s __wbg_ptr accessor could be redefined');
  } catch (e) { /* refused: it is not configurable */ }
  p.output('y', p.neg(x));
  const exe = s.compile(p);
  expect('a tensor clone in run inputs', 'INVALID_ARGUMENT', () => exe.run({ x: clone(t) }));
  // once the handle is freed its copy stays refused, also once its pointer is another handle's
  t.free();
  expect('a clone of a freed handle', 'INVALID_ARGUMENT', () => c.square());
  const batch = Array.from({ length: 32 }, () => s.ones([1]));
  const clones = new Map(batch.map((h) => [h.__wbg_ptr, clone(h)]));
  for (const h of batch) h.free();
  const fresh = Array.from({ length: 256 }, () => s.ones([1]));
  const reused = fresh.filter((h) => clones.has(h.__wbg_ptr));
  check(reused.length > 0, 'a freed pointer was reused by one of 256 new tensors (the cases below ran)');
  for (const h of reused) {
    expect('a clone once its pointer is reused: free()', 'INVALID_ARGUMENT', () => clones.get(h.__wbg_ptr).free());
    check(Array.from(await h.toArray()).join(',') === '1', 'the new owner of the pointer reads its values');
  }
  const ok = exe.run({ x: s.tensor(new Float32Array([1, -2, 3, -4]), [4]) }).y;
  check(Array.from(await ok.toArray()).join(',') === '-1,2,-3,4', 'the program runs on a handle');
  s.dispose();
  return problems;
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = everyMethod)]
    async fn every_method(session: JsValue, program: JsValue, ledger: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = copiedHandles)]
    async fn copied_handles(session: JsValue, program: JsValue, ledger: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = freedHandles)]
    async fn freed_handles(
        session: JsValue,
        program: JsValue,
        telemetry: JsValue,
        ledger: JsValue,
    ) -> JsValue;
}

#[wasm_bindgen_test]
async fn every_js_method_of_a_disposed_object_throws() {
    let s: JsValue = JsSession::create(JsValue::UNDEFINED)
        .await
        .map(JsValue::from)
        .expect("WebGPU adapter required");
    let session_class = js_sys::Reflect::get(&s, &"constructor".into()).unwrap();
    let p: JsValue = affon::js::JsProgram::new("probe".into()).unwrap().into();
    let program_class = js_sys::Reflect::get(&p, &"constructor".into()).unwrap();
    let codes = every_method(session_class, program_class, ledger::js_ledger()).await;
    let entries = js_sys::Object::entries(codes.unchecked_ref::<js_sys::Object>());
    let mut tensor_methods = 0;
    for e in entries.iter() {
        let pair = js_sys::Array::from(&e);
        let (k, v) = (pair.get(0).as_string().unwrap(), pair.get(1));
        match k.as_str() {
            "unchanged" => assert_eq!(v.as_bool(), Some(true), "failed calls changed the ledger"),
            "liveStillReadable" => assert_eq!(v.as_string().as_deref(), Some("1,1,1,1,1,1,1,1")),
            k if k.starts_with("session.") || k.starts_with("live.square") => {
                assert_eq!(v.as_string().as_deref(), Some("SESSION_DISPOSED"), "{k}")
            }
            k => {
                if k.starts_with("tensor.") {
                    tensor_methods += 1;
                }
                // getters of a disposed tensor stay readable; only methods are listed here
                assert_eq!(v.as_string().as_deref(), Some("DISPOSED"), "{k}");
            }
        }
    }
    assert!(
        tensor_methods >= 25,
        "every tensor method was tried ({tensor_methods})"
    );
}

/// Every class's methods, getters and `free()` on a freed handle (`DISPOSED`; `free()` again does
/// nothing), on a `this` that is not a handle of the class (`INVALID_ARGUMENT`), and `free()` from
/// inside the handle's own call: `AffonError`s, the ledger unmoved.
#[wasm_bindgen_test]
async fn freed_handles_and_foreign_this_throw_affon_errors() {
    let [s, p, t] = ledger::js_classes().await;
    let problems = freed_handles(s, p, t, ledger::js_ledger()).await;
    ledger::assert_no_problems(&problems, "on freed handles");
}

/// A copy of a handle (its pointer copied onto an object of its prototype, as a deep clone does) is
/// refused as `this` and as an argument (`INVALID_ARGUMENT`, the ledger unmoved); its `free()` no
/// longer frees the memory the handle points at, which stays readable.
#[wasm_bindgen_test]
async fn copies_of_handles_are_refused() {
    let [s, p, _] = ledger::js_classes().await;
    let problems = copied_handles(s, p, ledger::js_ledger()).await;
    ledger::assert_no_problems(&problems, "on copied handles");
}
