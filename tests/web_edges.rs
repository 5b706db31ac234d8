//! The core's promises at the edges in headless Chromium on WebGPU: the shared scenarios (the whole
//! ledger compared around every failure), and from JavaScript every argument of every method given a
//! value of the wrong kind — each an `AffonError`, none a binding error or an aborted instance.
#![cfg(target_arch = "wasm32")]

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/edges.rs"]
mod edges;

#[path = "shared/limits.rs"]
mod limits;

#[path = "shared/program_check.rs"]
mod program_check;

#[path = "shared/scratch_edges.rs"]
mod scratch_edges;

#[path = "shared/index_checks.rs"]
mod index_checks;

use affon::{PoolOptions, Session, SessionOptions};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn bounded(max_total_bytes: u64) -> Session {
    Session::create(SessionOptions {
        pool: PoolOptions {
            max_total_bytes: Some(max_total_bytes),
            ..Default::default()
        },
        ..Default::default()
    })
    .await
    .expect("WebGPU adapter required")
}

#[wasm_bindgen_test]
async fn creation_limits() {
    edges::creation_limits(&bounded(64 << 30).await).await;
}

#[wasm_bindgen_test]
async fn eager_op_out_of_room() {
    edges::eager_op_out_of_room(&bounded(1 << 20).await).await;
}

#[wasm_bindgen_test]
async fn split_reduction_at_the_bound() {
    scratch_edges::split_reduction_at_the_bound(&bounded(1 << 20).await).await;
}

#[wasm_bindgen_test]
async fn composite_scratch_at_the_bound() {
    scratch_edges::composite_scratch_at_the_bound(&bounded(1 << 20).await).await;
}

#[wasm_bindgen_test]
async fn line_parts_at_the_bound() {
    scratch_edges::line_parts_at_the_bound(&bounded(1 << 20).await).await;
}

#[wasm_bindgen_test]
async fn eager_gather_reports_at_the_next_readback() {
    index_checks::eager_gather_reports_at_the_next_readback(&bounded(64 << 20).await).await;
}

#[wasm_bindgen_test]
async fn sync_reports_a_bad_index_once() {
    index_checks::sync_reports_a_bad_index_once(&bounded(64 << 20).await).await;
}

#[wasm_bindgen_test]
async fn one_hot_is_not_checked() {
    index_checks::one_hot_is_not_checked(&bounded(64 << 20).await).await;
}

#[wasm_bindgen_test]
async fn program_gather_names_its_node() {
    index_checks::program_gather_names_its_node(&bounded(64 << 20).await).await;
}

#[wasm_bindgen_test]
async fn run_out_of_room_mid_program() {
    edges::run_out_of_room_mid_program(&bounded(1 << 20).await).await;
}

#[wasm_bindgen_test]
async fn create_state_all_or_nothing() {
    edges::create_state_all_or_nothing(&bounded(1 << 20).await).await;
}

#[wasm_bindgen_test]
async fn assignments_read_old_values() {
    edges::assignments_read_old_values(&bounded(1 << 30).await).await;
}

#[wasm_bindgen_test]
async fn grids_past_the_workgroup_limit() {
    limits::grids_past_the_workgroup_limit(&bounded(1 << 30).await).await;
}

#[wasm_bindgen_test]
async fn long_tidy_stays_small() {
    limits::long_tidy_stays_small(&bounded(1 << 30).await).await;
}

#[wasm_bindgen_test]
async fn specialisation_cache_is_bounded() {
    limits::specialisation_cache_is_bounded(&bounded(1 << 30).await).await;
}

#[wasm_bindgen_test]
async fn forgotten_handles() {
    limits::forgotten_handles_release(&bounded(1 << 30).await).await;
    limits::forgotten_session(bounded(1 << 30).await, &bounded(1 << 30).await).await;
    limits::dispose_releases_forgotten(bounded(1 << 30).await).await;
}

/// The size arithmetic as wasm32 computes it: plans of shapes past 2^32 bytes are exact.
#[wasm_bindgen_test]
fn plans_past_4_gib() {
    limits::plans_past_4_gib();
}

#[wasm_bindgen(inline_js = r#"
const CODES = new Set(['DISPOSED', 'SESSION_DISPOSED', 'SHAPE_MISMATCH', 'DTYPE_MISMATCH', 'INVALID_PROGRAM',
  'INVALID_ARGUMENT', 'OUT_OF_MEMORY', 'DEVICE_LOST', 'UNSUPPORTED']);
// Every argument of every method, given each wrong kind; returns the failures found.
export async function wrongKinds(Session, Program, telemetry, ledger) {
  const problems = [];
  const s = await Session.create({ label: 'wrong-kinds', pool: { maxTotalBytes: 64 << 20 } });
  const t = s.ones([2, 4]);
  const p = new Program('p');
  const x = p.input('x', 'float32', [-1, 4]);
  const acc = p.state('acc', 'float32', [4]);
  const n = p.add(acc, p.sum(x, [0]));
  p.assign('acc', n);
  p.output('y', p.relu(n));
  const exe = s.compile(p);
  const state = exe.createState();
  const other = new Program('other');
  const foreign = other.input('z', 'float32', [4]);
  const wrong = [{}, null, 'text', 42, [], [{}], () => 1, 1n, Symbol('s'), other, state, exe, p, Number.NaN];
  let calls = 0;
  const expectAffon = async (label, f) => {
    calls += 1;
    const before = ledger();
    try {
      await f();
    } catch (e) {
      if (!(e instanceof Error) || e.name !== 'AffonError' || !CODES.has(e.code)) {
        problems.push(`${label}: threw ${e?.name}: ${e?.message ?? e}`);
      }
      if (ledger() !== before) problems.push(`${label}: the ledger moved`);
      return;
    }
    // A wrong kind may be accepted only where the API allows it (e.g. an ignored optional); the
    // caller lists those.
    problems.push(`${label}: no error`);
  };
  // Tensor methods: every positional argument
  const tensorArgs = { add: [t], sub: [t], mul: [t], div: [t], matmul: [s.ones([4, 2])], reshape: [[8]],
    cast: ['int32'], transpose: [[1, 0]], softmax: [-1], sum: [[0], false], mean: [[0], false],
    max: [[0], false], min: [[0], false] };
  for (const [name, good] of Object.entries(tensorArgs)) {
    for (let i = 0; i < good.length; i++) {
      for (const w of wrong) {
        if ((w === null || w === undefined) && ['transpose', 'softmax', 'sum', 'mean', 'max', 'min'].includes(name)) continue; // optional
        if (typeof w === 'number' && !Number.isNaN(w) && ['softmax', 'sum', 'mean', 'max', 'min'].includes(name) && i === 0) continue; // an axis
        if (Array.isArray(w) && w.length === 0 && ['sum', 'mean', 'max', 'min'].includes(name) && i === 0) continue; // all axes
        if (typeof w === 'number' && ['add', 'sub', 'mul', 'div'].includes(name)) continue; // a number operand (NaN too)
        const a = good.slice(); a[i] = w;
        await expectAffon(`tensor.${name}(arg ${i} = ${String(w?.constructor?.name ?? w)})`, () => t[name](...a));
      }
    }
  }
  // Session methods
  const sessionArgs = { tensor: [[1, 2], [2], 'float32'], zeros: [[2], 'float32'], ones: [[2], 'int32'],
    fill: [[2], 3, 'float32'], randomNormal: [[2], { seed: 1 }], randomUniform: [[2], { seed: 1 }],
    compile: [p], keep: [t], tidy: [() => 1] };
  for (const [name, good] of Object.entries(sessionArgs)) {
    for (let i = 0; i < good.length; i++) {
      for (const w of wrong) {
        if (w === null && ((name === 'tensor' && (i === 1 || i === 2)) || ['zeros', 'ones', 'randomNormal', 'randomUniform'].includes(name) && i === 1 || name === 'fill' && i === 2)) continue; // optional
        if (name === 'fill' && i === 1 && typeof w === 'number') continue; // any number fills
        if (['randomNormal', 'randomUniform'].includes(name) && i === 1 && w !== null && w.constructor === Object) continue; // {}: defaults
        if (name === 'tidy' && typeof w === 'function') continue;
        if (i === 0 && Array.isArray(w) && w.length === 0 && name !== 'tensor') continue; // shape []: a scalar
        if (name === 'compile' && w === p) continue; // the program itself
        const a = good.slice(); a[i] = w;
        await expectAffon(`session.${name}(arg ${i} = ${String(w?.constructor?.name ?? w)})`, () => s[name](...a));
      }
    }
  }
  await expectAffon('session.profile({})', () => s.profile({}));
  await expectAffon('telemetry.watch({})', () => telemetry.watch({}, { warmup: 1, iterations: 1 }));
  // a report context JSON.stringify throws on (a BigInt, a cycle, a throwing toJSON)
  const cyclic = {}; cyclic.self = cyclic;
  for (const ctx of [{ x: 1n }, cyclic, { toJSON() { throw new Error('no'); } }]) {
    await expectAffon(`telemetry.report(${Object.keys(ctx).join(',')})`, () => telemetry.report(ctx));
  }
  for (const w of [-1, {}, 'text', [], [{}], () => 1, 1n, Symbol('s'), Number.NaN, 1.5]) {
    await expectAffon(`telemetry.storages(${String(w?.constructor?.name ?? w)})`, () => telemetry.storages(w));
  }
  // Program methods
  const programArgs = { input: ['x2', 'float32', [4]], state: ['s2', 'float32', [4]], constant: [[1, 2], [2]],
    output: ['o2', x], assign: ['acc', n], add: [x, x], matmul: [x, x], relu: [x], sum: [x, [0]],
    reshape: [x, [4, -1]], transpose: [x], cast: [x, 'int32'], softmax: [x] };
  for (const [name, good] of Object.entries(programArgs)) {
    for (let i = 0; i < good.length; i++) {
      for (const w of wrong) {
        if (w === null && ['sum', 'softmax', 'transpose'].includes(name) && i > 0) continue;
        if (typeof w === 'number' && (name === 'constant' && i === 0 || name === 'sum' && i === 1 || name === 'add' && i === 1)) continue; // allowed forms (a number operand)
        if (Array.isArray(w) && w.length === 0 && (['input', 'state'].includes(name) && i === 2 || name === 'sum' && i === 1)) continue; // a scalar; all axes
        if (typeof w === 'string' && ['input', 'state', 'output'].includes(name) && i === 0) continue; // any name
        const q = Program.fromJSON(p.toJSON());
        const a = good.map((g) => (g === x ? q.input('x' + Math.random(), 'float32', [4]) : g === n ? q.relu(q.input('n' + Math.random(), 'float32', [4])) : g));
        a[i] = w;
        await expectAffon(`program.${name}(arg ${i} = ${String(w?.constructor?.name ?? w)})`, () => q[name](...a));
        // the program stays usable after a rejected call
        try { q.relu(q.input('after' + Math.random(), 'float32', [4])); } catch (e) { problems.push(`program.${name}: unusable after a rejected call: ${e.message}`); }
      }
    }
  }
  await expectAffon('a node of another program', () => p.add(x, foreign));
  await expectAffon('session.compile({})', () => s.compile({}));
  await expectAffon('Program.fromJSON({})', () => Program.fromJSON({}));
  await expectAffon('new Program({})', () => new Program({}));
  // Executable / ExecutionState
  for (const w of wrong) {
    if (w !== null) await expectAffon(`exe.run(${String(w?.constructor?.name ?? w)})`, () => exe.run(w, state));
    await expectAffon(`exe.run({x: ${String(w?.constructor?.name ?? w)}})`, () => exe.run({ x: w }, state));
    if (w !== null && w !== state) await expectAffon(`exe.run(inputs, ${String(w?.constructor?.name ?? w)})`, () => exe.run({ x: t }, w));
    if (w !== null && w.constructor !== Object) await expectAffon(`exe.createState(${String(w?.constructor?.name ?? w)})`, () => exe.createState(w));
    if (w !== null) await expectAffon(`exe.memoryPlan(${String(w?.constructor?.name ?? w)})`, () => exe.memoryPlan(w));
    await expectAffon(`state.get(${String(w?.constructor?.name ?? w)})`, () => state.get(w));
  }
  // Sizes that used to abort the instance
  await expectAffon('randomNormal([1 << 30])', () => s.randomNormal([1 << 30]));
  await expectAffon('zeros([65536, 65536])', () => s.zeros([65536, 65536]));
  await expectAffon('tensor(Float32Array(4), [2 ** 32])', () => s.tensor(new Float32Array(4), [2 ** 32]));
  await expectAffon('tensor(DataView)', () => s.tensor(new DataView(new ArrayBuffer(8)), [2]));
  // Typed arrays of every kind, BigInt arrays included, convert exactly
  const kinds = [new Float64Array([1, -2]), new Int16Array([1, -2]), new Int8Array([1, -2]), new BigInt64Array([1n, -2n]),
    new Int32Array([1, -2]), new Float32Array([1, -2])];
  for (const k of kinds) {
    const v = Array.from(await s.tensor(k, [2], 'int32').toArray());
    if (v.join() !== '1,-2') problems.push(`${k.constructor.name} → int32 gave ${v}`);
    const f = Array.from(await s.tensor(k, [2]).toArray());
    if (f.join() !== '1,-2') problems.push(`${k.constructor.name} → float32 gave ${f}`);
  }
  const u = Array.from(await s.tensor(new BigUint64Array([3n, 4n]), [2], 'uint32').toArray());
  if (u.join() !== '3,4') problems.push(`BigUint64Array gave ${u}`);
  await expectAffon('BigInt64Array out of int32 range', () => s.tensor(new BigInt64Array([1n << 40n, 1n]), [2], 'int32'));
  // data the binding must not trust: a forged view (its getters throw), a detached buffer (a hundred
  // times: the instance survives each), a constant too large for the host (OUT_OF_MEMORY, no abort)
  await expectAffon('a forged Float32Array', () => s.tensor(Object.create(Float32Array.prototype), [1]));
  const detached = new Float32Array(4);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  for (let i = 0; i < 100; i++) await expectAffon('a detached Float32Array', () => s.tensor(detached, [4]));
  // an own `length` is not consulted: the array's own slots give its length and contents
  const liar = new Float32Array([1, 2, 3, 4]);
  Object.defineProperty(liar, 'length', { value: 1e12 });
  const honest = s.tensor(liar, [4]);
  const read = Array.from(await honest.toArray()).join();
  if (read !== '1,2,3,4') problems.push(`a Float32Array whose own length lies gave ${read}`);
  honest.dispose();
  await expectAffon('a constant too large for the host',
    () => new Program('big').constant(new Uint8Array(2 ** 28), [2 ** 28], 'bool'));
  // array() of a tensor of rank 50,000 (every dim 1): nested that deep without recursion
  const deep = s.zeros(new Array(50000).fill(1));
  let nested = await deep.array(), depth = 0;
  while (Array.isArray(nested)) { nested = nested[0]; depth += 1; }
  if (depth !== 50000 || nested !== 0) problems.push(`array() of rank 50000 gave depth ${depth} and ${nested}`);
  deep.dispose();
  // after all of it the session works
  const y = exe.run({ x: s.ones([3, 4]) }, state).y;
  const v = Array.from(await y.toArray()).join();
  if (v !== '3,3,3,3') problems.push(`a run after the rejected calls gave ${v}`);
  s.dispose();
  return { problems, calls };
}
// The exact code of each refusal, the ledger unchanged around it, and nothing run: telemetry options
// of the wrong kind or with a misspelt key, Program.fromJSON of a value that is not a program's JSON
// form, and dims no program may hold (API.md: "anywhere is INVALID_ARGUMENT").
export async function exactCodes(Session, Program, telemetry, ledger) {
  const problems = [];
  const s = await Session.create({ label: 'exact-codes' });
  let ran = 0;
  const step = () => { ran += 1; };
  const expect = async (label, code, f) => {
    const before = ledger();
    try { await f(); problems.push(`${label}: no error`); } catch (e) {
      if (e?.name !== 'AffonError' || e.code !== code) problems.push(`${label}: ${e?.name} ${e?.code}, expected ${code}: ${e?.message}`);
    }
    if (ledger() !== before) problems.push(`${label}: the ledger moved`);
  };
  const IA = 'INVALID_ARGUMENT', IP = 'INVALID_PROGRAM';
  for (const w of ['x', 5, true, [], [1], () => 1, 1n, Symbol('s')]) {
    await expect(`watch(fn, ${String(w)})`, IA, () => telemetry.watch(step, w));
  }
  await expect('watch: a misspelt key', IA, () => telemetry.watch(step, { warmup: 0, iteration: 1 }));
  await expect('watch: session misspelt', IA, () => telemetry.watch(step, { iterations: 1, sesion: s }));
  await expect('watch: iterations 1.5', IA, () => telemetry.watch(step, { iterations: 1.5 }));
  if (ran !== 0) problems.push(`a refused watch ran its function ${ran} times`);
  const d = await telemetry.watch(step, { warmup: 0, iterations: 2, session: s }).catch((e) => e);
  if (ran !== 2 || typeof d?.verdict !== 'string') problems.push(`watch with good options: ran ${ran}, ${d?.message ?? d?.verdict}`);
  const snap = telemetry.metrics();
  const samples = [snap, snap, snap];
  await expect('diagnose: unknown key', IA, () => telemetry.diagnose({ samples, warmup: 0, bogus: 1 }));
  await expect('diagnose: synchronized "yes"', IA, () => telemetry.diagnose({ samples, synchronized: 'yes' }));
  await expect('diagnose: session with snapshots', IA,
    () => telemetry.diagnose({ before: snap, warm: snap, after: snap, session: 'exact-codes' }));
  await expect('diagnose: an array', IA, () => telemetry.diagnose([snap]));
  for (const input of [{ samples, warmup: 0, session: 'exact-codes', synchronized: true },
    { before: snap, warm: snap, after: snap, iterations: 1, synchronized: false, samples: undefined }]) {
    try { telemetry.diagnose(input); } catch (e) { problems.push(`diagnose(${Object.keys(input)}): ${e.code} ${e.message}`); }
  }
  for (const w of [null, undefined, 42, true, () => 1, 1n, Symbol('s')]) {
    await expect(`Program.fromJSON(${String(w)})`, IA, () => Program.fromJSON(w));
  }
  await expect("Program.fromJSON('null')", IP, () => Program.fromJSON('null'));
  await expect('Program.fromJSON({})', IP, () => Program.fromJSON({}));
  const json = new Program('j');
  json.output('y', json.relu(json.input('x', 'float32', [2])));
  const good = json.toJSON();
  for (const shape of [[0], [2, -3], [1.5], [1e30]]) {
    const bad = structuredClone(good);
    bad.nodes[0].shape = shape;
    await expect(`fromJSON: input shape ${JSON.stringify(shape)}`, IA, () => Program.fromJSON(bad));
    await expect(`fromJSON (text): input shape ${JSON.stringify(shape)}`, IA, () => Program.fromJSON(JSON.stringify(bad)));
  }
  const p = new Program('dims');
  await expect('p.state([0])', IA, () => p.state('s', 'float32', [0]));
  await expect('p.constant(shape [2, 0])', IA, () => p.constant([], [2, 0]));
  await expect('p.constant(1.5 as int32)', IA, () => p.constant([1.5], [1], 'int32'));
  if (p.toJSON().nodes.length !== 0) problems.push('a refused declaration added a node');
  // tidy(async fn) is refused before fn runs: nothing it would make is made, the whole ledger unchanged
  let asyncRan = false;
  await expect('tidy(async fn)', IA, () => s.tidy(async () => { asyncRan = true; s.ones([2]); await 0; }));
  if (asyncRan) problems.push('tidy ran the async function it refused');
  s.dispose();
  return { problems };
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = wrongKinds)]
    async fn wrong_kinds(session: JsValue, program: JsValue, telemetry: JsValue, ledger: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = exactCodes)]
    async fn exact_codes(session: JsValue, program: JsValue, telemetry: JsValue, ledger: JsValue) -> JsValue;
}

#[wasm_bindgen_test]
async fn every_argument_of_the_wrong_kind_is_an_affon_error() {
    let [s, p, t] = ledger::js_classes().await;
    let out = wrong_kinds(s, p, t, ledger::js_ledger()).await;
    let calls = js_sys::Reflect::get(&out, &"calls".into())
        .unwrap()
        .as_f64()
        .unwrap();
    let problems = js_sys::Reflect::get(&out, &"problems".into()).unwrap();
    ledger::assert_no_problems(&problems, &format!("in {calls} calls"));
    assert!(calls > 500.0, "{calls} wrong-kind calls");
}

/// The program-JSON fuzz property on the committed seeds, with dynamic dims up to 2^20.
#[wasm_bindgen_test]
fn program_json_seeds_plan_in_64_bit_arithmetic() {
    program_check::check_seeds();
}

/// Telemetry options, `Program.fromJSON`'s argument and a program's dims are checked with the codes
/// API.md gives, the whole ledger unchanged around each refusal.
#[wasm_bindgen_test]
async fn options_json_and_dims_are_refused_with_exact_codes() {
    let [s, p, t] = ledger::js_classes().await;
    let out = exact_codes(s, p, t, ledger::js_ledger()).await;
    let problems = js_sys::Reflect::get(&out, &"problems".into()).unwrap();
    ledger::assert_no_problems(&problems, "exact codes");
}
