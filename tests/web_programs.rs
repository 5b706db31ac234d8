//! Programs, tidy and profile in headless Chromium on WebGPU: the shared Rust scenarios, then the
//! JS surface exactly as API.md and the TensorFlow.js memory cases use it (the op table's own
//! JS surface: `web_op_table.rs`).
#![cfg(target_arch = "wasm32")]

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/programs.rs"]
mod programs;

#[path = "shared/onnx_model.rs"]
mod onnx_model;

#[path = "shared/fusion.rs"]
mod fusion;

use affon::{Session, SessionOptions};
use ledger::{field, js_session, nums};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn session() -> Session {
    Session::create(SessionOptions::default())
        .await
        .expect("WebGPU adapter required")
}

#[wasm_bindgen_test]
async fn stateful_program_100_runs() {
    programs::stateful_program_100_runs(&session().await).await;
}

#[wasm_bindgen_test]
async fn memory_plan_matches_telemetry() {
    programs::memory_plan_matches_telemetry(&session().await).await;
}

#[wasm_bindgen_test]
async fn program_errors_change_nothing() {
    programs::program_errors_change_nothing(&session().await).await;
}

#[wasm_bindgen_test]
async fn outputs_aliasing_and_constants() {
    programs::outputs_aliasing_and_constants(&session().await).await;
}

#[wasm_bindgen_test]
async fn elementwise_chains_fuse() {
    fusion::elementwise_chains_fuse(&session().await).await;
}

#[wasm_bindgen_test]
async fn tidy_and_profile_in_rust() {
    programs::tidy_and_profile(&session().await).await;
}

#[wasm_bindgen(inline_js = r#"
const code = (f) => { try { f(); return 'no error'; } catch (e) { return `${e.name}:${e.code}`; } };

export async function apiExample(session, Program, ledger) {
  // a failing run, alone: its name lands in `moved` if the ledger moved
  const moved = [];
  const same = (name, f) => ledger.around(() => code(f), () => moved.push(`${name} moved the ledger`));
  const p = new Program('running_mean');
  const x = p.input('x', 'float32', [-1, 4]);
  const acc = p.state('acc', 'float32', [4]);
  const next = p.add(acc, p.sum(x, [0]));
  p.assign('acc', next);
  p.output('y', p.relu(next));
  const json = JSON.stringify(p);
  const exe = session.compile(Program.fromJSON(json));
  const again = JSON.stringify(Program.fromJSON(JSON.parse(json)).toJSON());
  const state = exe.createState();
  const input = session.tensor(new Float32Array([1, 2, 3, 4, -1, -2, -3, -4, 5, 5, 5, 5]), [3, 4]);
  const base = session.memory().numBytes;
  let y;
  for (let i = 0; i < 10; i++) {
    ({ y } = exe.run({ x: input }, state));
    if (i < 9) y.dispose();
  }
  // held in a variable: an unreachable handle may be collected (and its storage released by the
  // finalizer) before `flat` is read — this test once saw 16 bytes instead of 32 that way
  const accCopy = state.get('acc');
  const out = {
    name: exe.name,
    roundTrip: again === json,
    y: Array.from(await y.to_array()),
    acc: Array.from(await accCopy.to_array()),
    flat: session.memory().numBytes - base,         // y + the acc copy
    stateBytes: state.byteLength,
    plan: exe.memoryPlan({ x: [3, 4] }),
    badInput: same('badInput', () => exe.run({ z: input }, state)),
    noState: same('noState', () => exe.run({ x: input })),
    notTensor: same('notTensor', () => exe.run({ x: { id: input.id } }, state)),
    badJson: code(() => Program.fromJSON('{"format":"affon.program/1","name":"p","nodes":[{"op":"relu","args":[3]}]}')),
    cyclic: code(() => Program.fromJSON({ format: 'affon.program/1', name: 'p', nodes: [{ op: 'add', args: [0, 0] }] })),
    badNode: code(() => p.add(x, new Program('other').input('q', 'float32', [4]))),
    shapeAtAdd: code(() => p.matmul(x, acc)),
    zeroInput: code(() => p.input('z', 'float32', [0])),
    zeroReshape: code(() => p.reshape(x, [0, 4])),
    // a number for where's `b`: shapes that do not broadcast add no node (not even the constant)
    whereNoNode: (() => {
      const q = new Program('w'); const a = q.input('a', 'float32', [3]); const c = q.input('c', 'bool', [4]);
      const before = JSON.stringify(q); const e = code(() => q.where(a, c, 2));
      return `${e}|${JSON.stringify(q) === before ? 'unchanged' : 'changed'}`;
    })(),
  };
  accCopy.dispose();
  state.dispose();
  state[Symbol.dispose]();
  out.stateDisposed = same('stateDisposed', () => state.get('acc'));
  exe[Symbol.dispose]();
  out.exeDisposed = same('exeDisposed', () => exe.run({ x: input }, state));
  out.moved = moved;
  return out;
}

export function tfjsCases(session) {
  const out = {};
  const m0 = session.memory();
  const r = session.tidy(() => {
    const a = session.tensor([1, 2, 3], [3]);
    return a.sum();
  });
  const m1 = session.memory();
  out.tidySum = [m1.numTensors - m0.numTensors, m1.numBytes - m0.numBytes, r.shape.length];
  r.dispose();
  // nested tidy with keep
  let kept, inner;
  const outer = session.tidy('outer', () => {
    const a = session.ones([4]);
    inner = session.tidy(() => {
      const b = a.add(a);
      kept = session.keep(b.mul(b));
      const c = b.square();
      return [c, { d: c.neg() }];
    });
    return inner[0];
  });
  out.nested = [outer === inner[0], outer.disposed, inner[1].d.disposed, kept.disposed];
  const m2 = session.memory();
  out.nestedCounts = [m2.numTensors - m0.numTensors, m2.numBytes - m0.numBytes];
  outer.dispose(); kept.dispose();
  out.throws = code(() => session.tidy(() => { session.zeros([8]); throw new Error('boom'); }));
  out.afterThrow = session.memory().numBytes - m0.numBytes;
  out.asyncTidy = code(() => session.tidy(async () => 1));
  // an async function is refused before it runs: nothing it would make is made
  let ran = false;
  const mAsync = session.memory();
  out.asyncNotRun = [code(() => session.tidy(async () => { ran = true; session.ones([2]); await 0; })), ran,
    session.memory().numBytes - mAsync.numBytes];
  // a plain function returning a promise is refused once it returned (what it made before is disposed)
  out.promiseTidy = code(() => session.tidy(() => { session.ones([2]); return Promise.resolve(1); }));
  out.promiseBytes = session.memory().numBytes - mAsync.numBytes;
  // a class instance and an object with no prototype keep what they hold, as in TF.js; a typed
  // array beside a tensor is not walked
  class Model { constructor(w) { this.w = w; this.meta = { b: w.neg() }; } }
  const model = session.tidy(() => new Model(session.ones([2])));
  const bare = session.tidy(() => { const o = Object.create(null); o.t = session.ones([3]); return o; });
  const withData = session.tidy(() => ({ data: new Float32Array(1 << 20), t: session.ones([1]) }));
  out.objects = [model.w, model.meta.b, bare.t, withData.t].map((t) => t.disposed);
  out.objectsBytes = session.memory().numBytes - m0.numBytes;
  for (const t of [model.w, model.meta.b, bare.t, withData.t]) t.dispose();
  return out;
}

export async function profileCase(session) {
  const info = await session.profile(() => {
    const x = session.tensor([1, 2, 3], [3]);
    let x2 = x.square();
    x2.dispose();
    x2 = x.square();
    x2.dispose();
    return x;
  });
  const k = info.kernels[0];
  info.result.dispose();
  // fn runs at the call, as tf.profile's does: before the next statement, inside the caller's tidy
  let ran = 0;
  const pr = session.profile(() => { ran = 1; });
  const ranAtCall = ran;
  await pr;
  const n0 = session.memory().numTensors;
  let inTidy;
  session.tidy(() => { inTidy = session.profile(() => { session.zeros([4]); }); });
  await inTidy;
  return [info.newBytes, info.peakBytes, info.newTensors, info.kernels.length, k.name, k.bytesAdded,
          k.inputShapes[0][0], k.outputShapes[0][0], k.totalBytesSnapshot, ranAtCall, session.memory().numTensors - n0,
          k.tensorsAdded, k.totalTensorsSnapshot, info.kernels[1].totalTensorsSnapshot];
}

// A token id past the vocabulary, from JS: the gather succeeds, its first readback is an AffonError
// naming the op and the index, the next one reads (zeros where the id was bad); a program's node is
// named, and sync() reports too — each once.
export async function gatherCheckFromJs(session, Program) {
  const out = {};
  const caught = async (f) => { try { await f(); return 'no error'; } catch (e) { return `${e.name}:${e.code}:${e.message}`; } };
  const vocab = session.tensor(new Float32Array([1, 2, 3, 4, 5, 6]), [3, 2]);
  const ids = session.tensor([2, 3], [2], 'int32');
  const rows = vocab.gather(ids);
  out.first = await caught(() => rows.array());
  out.second = JSON.stringify(await rows.array());
  const p = new Program('lookup');
  p.output('h', p.gather(p.input('table', 'float32', [3, 2]), p.input('ids', 'int32', [-1]), 0));
  const { h } = session.compile(p).run({ table: vocab, ids: session.tensor([-4], [1], 'int32') });
  out.sync = await caught(() => session.sync());
  out.syncAgain = await caught(() => session.sync());
  out.program = JSON.stringify(await h.array());
  const { h: h2 } = session.compile(p).run({ table: vocab, ids: session.tensor([5], [1], 'int32') });
  out.programRead = await caught(() => h2.data());
  return out;
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = apiExample)]
    async fn api_example(session: JsValue, program: JsValue, ledger: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = tfjsCases)]
    fn tfjs_cases(session: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = profileCase)]
    async fn profile_case(session: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = gatherCheckFromJs)]
    async fn gather_check_from_js(session: JsValue, program: JsValue) -> JsValue;
}

fn bools(v: &JsValue) -> Vec<bool> {
    js_sys::Array::from(v)
        .iter()
        .map(|x| x.as_bool().unwrap())
        .collect()
}

/// The `Program` class object, taken from a program instance's constructor.
fn program_class() -> JsValue {
    let p: JsValue = affon::js::JsProgram::new("probe".into()).unwrap().into();
    field(&p, "constructor")
}

#[wasm_bindgen_test]
async fn the_api_md_program_example_runs_unchanged() {
    let out = api_example(js_session().await, program_class(), ledger::js_ledger()).await;
    ledger::assert_no_problems(&field(&out, "moved"), "in the failing runs");
    assert_eq!(field(&out, "name").as_string().unwrap(), "running_mean");
    assert_eq!(field(&out, "roundTrip").as_bool(), Some(true));
    // column sums of x: [5, 5, 5, 5] per run; after 10 runs acc = 50, y = relu(acc)
    assert_eq!(nums(&field(&out, "y")), vec![50.0; 4]);
    assert_eq!(nums(&field(&out, "acc")), vec![50.0; 4]);
    assert_eq!(
        field(&out, "flat").as_f64(),
        Some(32.0),
        "only the last y and the acc copy remain"
    );
    assert_eq!(field(&out, "stateBytes").as_f64(), Some(16.0));
    let plan = field(&out, "plan");
    assert_eq!(
        field(&plan, "intermediateBytes").as_f64(),
        Some(32.0),
        "sum [4] and acc+sum [4] live together"
    );
    assert_eq!(field(&plan, "outputBytes").as_f64(), Some(16.0));
    assert_eq!(field(&plan, "stateBytes").as_f64(), Some(16.0));
    for (k, v) in [
        ("badInput", "AffonError:INVALID_ARGUMENT"),
        ("noState", "AffonError:INVALID_ARGUMENT"),
        ("notTensor", "AffonError:INVALID_ARGUMENT"),
        ("badJson", "AffonError:INVALID_PROGRAM"),
        ("cyclic", "AffonError:INVALID_PROGRAM"),
        ("badNode", "AffonError:INVALID_PROGRAM"),
        ("shapeAtAdd", "AffonError:SHAPE_MISMATCH"),
        ("zeroInput", "AffonError:INVALID_ARGUMENT"),
        ("zeroReshape", "AffonError:INVALID_ARGUMENT"),
        ("whereNoNode", "AffonError:SHAPE_MISMATCH|unchanged"),
        ("stateDisposed", "AffonError:DISPOSED"),
        ("exeDisposed", "AffonError:DISPOSED"),
    ] {
        assert_eq!(field(&out, k).as_string().as_deref(), Some(v), "{k}");
    }
}

#[wasm_bindgen_test]
async fn tensorflow_js_memory_cases() {
    let out = tfjs_cases(js_session().await);
    assert_eq!(
        nums(&field(&out, "tidySum")),
        vec![1.0, 4.0, 0.0],
        "tidy returning a.sum(): 1 tensor, 4 bytes"
    );
    assert_eq!(bools(&field(&out, "nested")), vec![true, false, true, false]);
    // survivors: outer (c, 16 bytes) and kept (16 bytes)
    assert_eq!(nums(&field(&out, "nestedCounts")), vec![2.0, 32.0]);
    assert_eq!(
        field(&out, "throws").as_string().as_deref(),
        Some("Error:undefined")
    );
    assert_eq!(
        field(&out, "afterThrow").as_f64(),
        Some(0.0),
        "a throwing tidy still cleans up"
    );
    assert_eq!(
        field(&out, "asyncTidy").as_string().as_deref(),
        Some("AffonError:INVALID_ARGUMENT")
    );
    let not_run = js_sys::Array::from(&field(&out, "asyncNotRun"));
    assert_eq!(
        not_run.get(0).as_string().as_deref(),
        Some("AffonError:INVALID_ARGUMENT")
    );
    assert_eq!(not_run.get(1).as_bool(), Some(false), "the async fn did not run");
    assert_eq!(not_run.get(2).as_f64(), Some(0.0));
    assert_eq!(
        field(&out, "promiseTidy").as_string().as_deref(),
        Some("AffonError:INVALID_ARGUMENT")
    );
    assert_eq!(field(&out, "promiseBytes").as_f64(), Some(0.0));
    assert_eq!(
        bools(&field(&out, "objects")),
        vec![false; 4],
        "tidy keeps the tensors a class instance or a null-prototype object holds"
    );
    // [2] + [2] + [3] + [1] floats, nothing else left
    assert_eq!(field(&out, "objectsBytes").as_f64(), Some(32.0));
}

#[wasm_bindgen_test]
async fn profile_square_twice() {
    let out = nums(&profile_case(js_session().await).await);
    // newBytes 12, peakBytes 24, newTensors 1, two kernels named square of 12 bytes each
    assert_eq!(out[..4], [12.0, 24.0, 1.0, 2.0]);
    assert_eq!(out[5..8], [12.0, 3.0, 3.0]);
    assert_eq!(out[8], 24.0);
    assert_eq!(out[9], 1.0, "profile's fn ran before profile() returned");
    assert_eq!(
        out[10], 0.0,
        "a profile inside a tidy: the tidy disposed what its fn made"
    );
    // each square adds one tensor; x and that result are live after each (x2 was disposed between)
    assert_eq!(out[11..14], [1.0, 2.0, 2.0], "tensorsAdded, totalTensorsSnapshot");
}

#[wasm_bindgen_test]
async fn reductions_read_their_chain() {
    fusion::reductions_read_their_chain(&session().await).await;
}

#[wasm_bindgen_test]
async fn split_reductions_are_planned_and_accounted() {
    fusion::split_reductions_are_planned_and_accounted(&session().await).await;
}

#[wasm_bindgen_test]
async fn line_parts_are_planned_and_accounted() {
    fusion::line_parts_are_planned_and_accounted(&session().await).await;
}

#[wasm_bindgen_test]
async fn gather_indices_are_checked_from_js() {
    let out = gather_check_from_js(js_session().await, program_class()).await;
    let s = |k: &str| field(&out, k).as_string().unwrap_or_default();
    assert!(
        s("first").starts_with("AffonError:INVALID_ARGUMENT:`gather` read index 3, outside [0, 3)"),
        "{}",
        s("first")
    );
    assert_eq!(s("second"), "[[5,6],[0,0]]", "reported once; the bad row read 0");
    assert!(
        s("sync")
            .starts_with("AffonError:INVALID_ARGUMENT:`gather` (node 2 of program 'lookup') read index -4"),
        "{}",
        s("sync")
    );
    assert_eq!(s("syncAgain"), "no error");
    assert_eq!(s("program"), "[[0,0]]");
    assert!(
        s("programRead").starts_with(
            "AffonError:INVALID_ARGUMENT:`gather` (node 2 of program 'lookup') read index 5, outside [0, 3)"
        ),
        "{}",
        s("programRead")
    );
}

#[wasm_bindgen_test]
async fn an_onnx_model_imports_and_runs() {
    onnx_model::tiny_model_runs(&session().await).await;
    onnx_model::broken_models_are_errors();
    onnx_model::gather_elements_checks_its_indices(&session().await).await;
    // the JS surface: Program.fromONNX on a Uint8Array, its inputs and outputs, a bad argument
    let bytes = js_sys::Uint8Array::from(&onnx_model::tiny_model("Relu")[..]);
    let p = affon::js::JsProgram::from_onnx(bytes.into(), JsValue::UNDEFINED).expect("fromONNX");
    let inputs = js_sys::JSON::stringify(&p.inputs().unwrap())
        .unwrap()
        .as_string()
        .unwrap();
    assert_eq!(inputs, r#"[{"dtype":"float32","name":"x","shape":[-1,3]}]"#);
    let outputs = js_sys::JSON::stringify(&p.outputs().unwrap())
        .unwrap()
        .as_string()
        .unwrap();
    assert_eq!(outputs, r#"[{"dtype":"float32","name":"y","shape":[-1,2]}]"#);
    let e = affon::js::JsProgram::from_onnx(JsValue::from(3), JsValue::UNDEFINED)
        .err()
        .expect("a number is refused");
    assert_eq!(field(&e, "code").as_string().as_deref(), Some("INVALID_ARGUMENT"));
}
