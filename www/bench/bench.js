// affon vs TensorFlow.js 4.22 (WebGPU backend), ONNX Runtime Web 1.30 (WebGPU execution
// provider) and jax-js 0.1.25 (WebGPU backend, eager and `jit`), all in this page on navigator.gpu.
// The peers' code is in peers/ort.js and peers/jax.js.
//
// Every timing is wall-clock (performance.now()) around an async body that ends in a
// synchronisation, so queued device work is included: a readback of the result (affon
// `to_array()`/`item()`, TF.js `data()`, ORT a CPU output location — `run()` resolves once the
// output is downloaded — or `getData()`, jax-js `data()`) or, where a workload has no result, a
// queue drain (affon `session.sync()`; TF.js: flush its pending command encoder, then the device's
// `queue.onSubmittedWorkDone()` — the same WebGPU call `session.sync()` makes; ORT: output left in
// a GPU buffer, then `onSubmittedWorkDone()` on ORT's device; jax-js: `blockUntilReady()`, then
// `onSubmittedWorkDone()` on its device). Each figure is the median over REPS repetitions after
// WARMUP untimed ones; within a repetition the libraries take turns, so that drift (GC, other
// processes) hits all alike. Every peer's result is compared with affon's for the same input
// before it is timed. Results: `window.benchResults`.
import init, { Session, Program, telemetry } from '../../pkg/affon.js';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-webgpu';

const QUICK = new URLSearchParams(location.search).has('quick');
const LARGE = new URLSearchParams(location.search).has('large');
// 11 rounds: on SwiftShader single samples of one library vary up to 3× (bimodal in places), and 7 left
// medians that moved by a third between runs
const REPS = QUICK ? 3 : 11;
const WARMUP = QUICK ? 1 : 2;

const $status = document.getElementById('status');
const status = (text) => { $status.textContent = text; console.log(`[bench] ${text}`); };
const now = () => performance.now();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const summary = (samples) => ({ ms: median(samples), min: Math.min(...samples), max: Math.max(...samples), samples });

// The peer columns, in table order. 'jax' is jax-js eager, 'jaxJit' jax-js `jit`.
const PEERS = ['tfjs', 'ort', 'jax', 'jaxJit'];
const LABEL = { affon: 'affon', tfjs: 'TF.js', ort: 'ORT-Web', jax: 'jax-js (eager)', jaxJit: 'jax-js (jit)' };
const SHORT = { tfjs: 'TF.js', ort: 'ORT', jax: 'jax', jaxJit: 'jax jit' };

/**
 * Times `sides` ({ affon, tfjs, ort?, jax?, jaxJit? }: async functions, or { run, after } where
 * `after` runs untimed after each call): `warmup` untimed calls of each, then `reps` rounds in
 * which every side runs once, in turn. `peerReps` caps a slow peer's timed rounds. A peer that
 * throws is dropped, its error kept in `failed`; affon and TF.js errors propagate.
 */
async function bench(sides, { warmup = WARMUP, reps = REPS, peerReps = {}, slow = null } = {}) {
  const active = Object.keys(sides).filter((k) => sides[k]);
  const failed = {};
  const samples = Object.fromEntries(active.map((k) => [k, []]));
  const lastWarm = {};
  const call = async (k, timed) => {
    const side = typeof sides[k] === 'function' ? { run: sides[k] } : sides[k];
    try {
      const t0 = now(); await side.run(); const ms = now() - t0;
      if (timed) samples[k].push(ms); else lastWarm[k] = ms;
      await side.after?.();
    } catch (e) {
      if (k === 'affon' || k === 'tfjs') throw e;
      failed[k] = `failed while timed: ${e?.message ?? e}`;
      active.splice(active.indexOf(k), 1);
    }
  };
  for (let i = 0; i < warmup; i++) for (const k of [...active]) await call(k, false);
  // `slow: { ms, reps }`: a peer whose last warm-up call took over `ms` gets at most `reps` timed rounds.
  peerReps = { ...peerReps };
  if (slow) for (const k of active) if (!['affon', 'tfjs'].includes(k) && lastWarm[k] > slow.ms) peerReps[k] = Math.min(peerReps[k] ?? reps, slow.reps);
  for (let i = 0; i < reps; i++) {
    for (const k of [...active]) if (i < (peerReps[k] ?? reps)) await call(k, true);
  }
  const out = { failed, reps: Object.fromEntries(active.map((k) => [k, samples[k].length])) };
  for (const k of active) out[k] = summary(samples[k]);
  return out;
}

/** Runs `fa` (affon) and `ft` (TF.js) `warmup` times each, then `reps` alternating timed rounds. */
const pair = (fa, ft, opts) => bench({ affon: fa, tfjs: ft }, opts);

// Peer state after setup: { ort: { ok, reason?, version?, adapterInfo? }, jax: { ... } }.
const peerState = {};
const peerOf = (key) => (key === 'jaxJit' ? 'jax' : key);

/**
 * The peers of one row: `add(key, run, verify, expected)` first checks `verify()` (async → the
 * peer's result) against affon's `expected` result (max rel diff, kept in `checks`), then keeps
 * `run` as the side to time; a peer that is not set up, fails, or disagrees gets a reason instead
 * (its cell is then `—`). `skip(key, reason)` records why a peer has no figure on this row.
 */
class RowPeers {
  constructor() { this.sides = {}; this.checks = {}; this.reasons = {}; }
  async add(key, run, verify, expected) {
    const st = peerState[peerOf(key)];
    if (!st?.ok) { this.reasons[key] = st?.reason ?? 'not set up'; return; }
    try {
      const got = await verify();
      const d = maxRelDiff(Array.from(got), Array.from(expected));
      if (!(d < 1e-3)) { this.reasons[key] = `disagrees with affon: max rel diff ${d.toExponential(1)}`; return; }
      this.checks[key] = d;
      this.sides[key] = run;
    } catch (e) {
      this.reasons[key] = `${e?.message ?? e}`.split('\n')[0].slice(0, 200);
    }
  }
  skip(key, reason) { this.reasons[key] = reason; }
}

/** Builds a peer's workload object; on failure records the reason for each of `keys` and returns null. */
async function peerWorkload(rp, keys, make) {
  const st = peerState[peerOf(keys[0])];
  if (!st?.ok) { for (const k of keys) rp.skip(k, st?.reason ?? 'not set up'); return null; }
  try { return await make(); } catch (e) {
    for (const k of keys) rp.skip(k, `${e?.message ?? e}`.split('\n')[0].slice(0, 200));
    return null;
  }
}

/** Deterministic host data (mulberry32) so both libraries get identical inputs. */
function hostData(n, seed, lo = -1, hi = 1) {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let r = Math.imul(s ^ (s >>> 15), 1 | s);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    out[i] = lo + (hi - lo) * (((r ^ (r >>> 14)) >>> 0) / 4294967296);
  }
  return out;
}

/** `data` of row-major `shape` with its axes permuted (`perm[i]`: the source axis of result axis i). */
function permute(data, shape, perm) {
  const outShape = perm.map((a) => shape[a]);
  const srcStride = shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
  const stride = perm.map((a) => srcStride[a]);   // source stride of each result axis
  const out = new Float32Array(data.length);
  const idx = new Array(outShape.length).fill(0);
  for (let o = 0, src = 0; o < out.length; o++) {
    out[o] = data[src];
    for (let d = outShape.length - 1; d >= 0; d--) {
      src += stride[d];
      if (++idx[d] < outShape[d]) break;
      src -= stride[d] * outShape[d]; idx[d] = 0;
    }
  }
  return out;
}

/** Largest |a - b| relative to max(1, |b|): a correctness check between the two libraries. */
function maxRelDiff(a, b) {
  if (a.length !== b.length) throw new Error(`length mismatch ${a.length} vs ${b.length}`);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i])));
  return d;
}

/** One affon metric value; `session` selects the per-session record (labels.session). */
function metric(scope, name, session) {
  const r = telemetry.metrics().find((m) => m.scope === scope && m.name === name
    && (session === undefined ? !m.labels : m.labels?.session === session));
  if (!r) throw new Error(`affon metric ${scope}/${name}${session ? ` (session ${session})` : ''} not found`);
  return r.value;
}

/** Drains TF.js's queue: submit its pending encoder, then wait for the device queue. */
async function tfQueueSync() {
  const b = tf.backend();
  if (b.commandEncoder) { b.endComputePassEncoder(); b.submitQueue(); }
  await b.device.queue.onSubmittedWorkDone();
}

const pickInfo = (info) => (info ? {
  vendor: info.vendor, architecture: info.architecture, device: info.device, description: info.description,
} : null);

const rows = [];      // timing rows
const memory = [];    // memory rows
/**
 * One timing row. `extra.peers` (a RowPeers) marks a row in the peers' scope: its ORT-Web and
 * jax-js cells are a figure, or `—` with the reason in the notes; `extra.blank` lists peer columns
 * that are not this row's form (left empty). Rows without `peers` compare affon and TF.js only.
 */
function row(id, workload, r, extra = {}) {
  const { peers: rp, blank = [], ...rest } = extra;
  const ms = Object.fromEntries(PEERS.map((k) => [k, r[k]?.ms ?? null]));
  const reasons = { ...(rp?.reasons ?? {}), ...(r.failed ?? {}) };
  for (const k of PEERS) if (ms[k] === null && !reasons[k] && rp && !blank.includes(k)) reasons[k] = 'not run';
  const best = PEERS.filter((k) => ms[k] !== null).reduce((b, k) => (b === null || ms[k] < ms[b] ? k : b), null);
  rows.push({ id, workload, affonMs: r.affon.ms, tfjsMs: r.tfjs.ms, ratio: r.affon.ms / r.tfjs.ms,
    ortMs: ms.ort, jaxMs: ms.jax, jaxJitMs: ms.jaxJit, bestPeer: best, bestMs: ms[best], bestRatio: r.affon.ms / ms[best],
    peerScope: Boolean(rp), blank, peerChecks: rp?.checks ?? {}, peerReasons: reasons,
    affonSamples: r.affon.samples, tfjsSamples: r.tfjs.samples,
    ortSamples: r.ort?.samples, jaxSamples: r.jax?.samples, jaxJitSamples: r.jaxJit?.samples, ...rest });
}

async function main() {
  const started = now();
  status('initialising affon and TF.js…');
  await init();
  const session = await Session.create({ label: 'bench' });
  if (!(await tf.setBackend('webgpu'))) throw new Error('tf.setBackend("webgpu") failed');
  await tf.ready();
  if (tf.getBackend() !== 'webgpu') throw new Error(`TF.js backend is ${tf.getBackend()}, not webgpu`);
  const tfb = tf.backend();

  // --- adapters -------------------------------------------------------------------------------
  const pageAdapter = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
  const adapters = {
    affon: session.adapter,
    tfjs: {
      backendAdapterInfo: { vendor: tfb.adapterInfo.vendor, architecture: tfb.adapterInfo.architecture },
      deviceAdapterInfo: pickInfo(tfb.device.adapterInfo),
    },
    page: pickInfo(pageAdapter?.info),
  };
  const tfInfo = adapters.tfjs.deviceAdapterInfo ?? adapters.tfjs.backendAdapterInfo;
  adapters.sameAdapter = adapters.affon.vendor === tfInfo.vendor
    && adapters.affon.architecture === tfInfo.architecture;
  if (!adapters.sameAdapter) throw new Error(`different adapters: ${JSON.stringify(adapters)}`);

  // --- peers: ORT-Web and jax-js, each on its own GPUDevice; same adapter or not run ----------
  status('initialising ONNX Runtime Web and jax-js…');
  const peerMods = {};
  for (const [key, file] of [['ort', './peers/ort.js'], ['jax', './peers/jax.js']]) {
    try {
      peerMods[key] = await import(file);
      const info = await peerMods[key].setup();
      peerState[key] = { ok: true, ...info };
      const a = info.adapterInfo;
      if (!a) peerState[key].adapterNote = 'adapter info not exposed';
      else if (a.vendor !== adapters.affon.vendor || a.architecture !== adapters.affon.architecture) {
        peerState[key] = { ...peerState[key], ok: false, reason: `different adapter: ${a.vendor}/${a.architecture}` };
      }
    } catch (e) {
      peerState[key] = { ok: false, reason: `setup failed: ${`${e?.message ?? e}`.split('\n')[0].slice(0, 200)}` };
    }
  }
  adapters.ort = { adapterInfo: peerState.ort.adapterInfo ?? null, from: 'device.adapterInfo of await ort.env.webgpu.device' };
  adapters.jax = { adapterInfo: peerState.jax.adapterInfo ?? null, from: 'getWebGPUDevice().adapterInfo' };
  adapters.peersSameAdapter = Object.fromEntries(['ort', 'jax'].map((k) => [k, peerState[k].adapterInfo
    ? peerState[k].adapterInfo.vendor === adapters.affon.vendor && peerState[k].adapterInfo.architecture === adapters.affon.architecture
    : null]));
  status(`adapters: affon ${adapters.affon.vendor}/${adapters.affon.architecture}, TF.js ${tfInfo.vendor}/${tfInfo.architecture}, `
    + ['ort', 'jax'].map((k) => `${{ ort: 'ORT-Web', jax: 'jax-js' }[k]} ${peerState[k].adapterInfo ? `${peerState[k].adapterInfo.vendor}/${peerState[k].adapterInfo.architecture}` : `(${peerState[k].reason ?? peerState[k].adapterNote})`}`).join(', ')
    + `; same adapter: TF.js ${adapters.sameAdapter}, ORT-Web ${adapters.peersSameAdapter.ort}, jax-js ${adapters.peersSameAdapter.jax}`);
  const ortP = peerMods.ort, jaxP = peerMods.jax;

  // --- a. 8-op elementwise chain on 1,048,576 floats ----------------------------------------
  status('a. elementwise chain…');
  const N = 1 << 20;
  const xHost = hostData(N, 1);
  const xa = session.tensor(xHost, [N]);
  const c1a = session.tensor(new Float32Array([0.5]), []);
  const c2a = session.tensor(new Float32Array([0.1]), []);
  const xt = tf.tensor1d(xHost);
  const c1t = tf.scalar(0.5);
  const c2t = tf.scalar(0.1);
  // mul → add → relu → square → sqrt → exp → neg → abs
  const chainA = () => session.tidy(() => xa.mul(c1a).add(c2a).relu().square().sqrt().exp().neg().abs());
  const chainT = () => tf.tidy(() => tf.abs(tf.neg(tf.exp(tf.sqrt(tf.square(tf.relu(tf.add(tf.mul(xt, c1t), c2t))))))));
  const p = new Program('chain8');
  {
    const x = p.input('x', 'float32', [N]);
    const c1 = p.constant(new Float32Array([0.5]), [], 'float32');
    const c2 = p.constant(new Float32Array([0.1]), [], 'float32');
    p.output('y', p.abs(p.neg(p.exp(p.sqrt(p.square(p.relu(p.add(p.mul(x, c1), c2))))))));
  }
  const chainExe = session.compile(p);
  const runChain = () => chainExe.run({ x: xa }, undefined).y;

  let check;
  {
    const ya = chainA(); const yt = chainT();
    check = maxRelDiff(await ya.to_array(), await yt.data());
    const yc = runChain();
    check = Math.max(check, maxRelDiff(await yc.to_array(), await yt.data()));
    ya.dispose(); yt.dispose(); yc.dispose();
  }
  const readA = async (make) => { const y = make(); await y.to_array(); y.dispose(); };
  const readT = async () => { const y = chainT(); await y.data(); y.dispose(); };
  const syncA = async (make) => { const y = make(); await session.sync(); y.dispose(); };
  const syncT = async () => { const y = chainT(); await tfQueueSync(); y.dispose(); };
  const eagerOut = await (async () => { const y = chainA(); const v = await y.to_array(); y.dispose(); return v; })();
  const progOut = await (async () => { const y = runChain(); const v = await y.to_array(); y.dispose(); return v; })();
  // Peers: ORT runs the chain as one 8-node ONNX graph (its only form); jax-js eager and jit.
  const chainPeers = async (host, expected, { jaxEager = true, readback = true } = {}) => {
    const rp = new RowPeers();
    const o = await peerWorkload(rp, ['ort'], () => ortP.chain(host));
    const j = await peerWorkload(rp, ['jax', 'jaxJit'], () => jaxP.chain(host));
    if (o) await rp.add('ort', readback ? o.read : o.drain, readback ? o.read : o.readDevice, expected);
    if (j && jaxEager) await rp.add('jax', readback ? j.eager.read : j.eager.drain, j.eager.read, expected);
    if (j) await rp.add('jaxJit', readback ? j.jit.read : j.jit.drain, j.jit.read, expected);
    rp.dispose = async () => { await o?.dispose(); j?.dispose(); };
    return rp;
  };
  const withPeers = (rp, sides, opts) => bench({ ...sides, ...rp.sides }, opts);
  const chainNote = 'ORT: the 8-node ONNX graph, input in a GPU buffer; jax-js eager: 8 kernels, recorded lazily and submitted at data(); jax-js jit: the traced chain';
  {
    const rp = await chainPeers(xHost, eagerOut);
    row('a1', 'chain of 8 elementwise ops, 1M floats: eager (+ readback)', await withPeers(rp, { affon: () => readA(chainA), tfjs: readT }),
      { check, peers: rp, note: `affon: one fused kernel (its eager ops are deferred and fused; the 7 intermediates, disposed unread by the tidy, are never written) + 4 MiB readback (to_array / data); ${chainNote}` });
    await rp.dispose();
  }
  {
    const rp = await chainPeers(xHost, progOut, { jaxEager: false });
    row('a2', 'same chain: affon compiled Program vs TF.js eager, ORT graph, jax-js jit (+ readback)', await withPeers(rp, { affon: () => readA(runChain), tfjs: readT }),
      { check, peers: rp, blank: ['jax'], note: 'exe.run({x}) then to_array; TF.js has no compiled form; jax-js eager is in a1' });
    await rp.dispose();
  }
  {
    const rp = await chainPeers(xHost, eagerOut, { readback: false });
    row('a3', 'chain, eager, queue drain only (no readback)', await withPeers(rp, { affon: () => syncA(chainA), tfjs: syncT }),
      { check, peers: rp, note: 'session.sync() vs TF.js flush + queue.onSubmittedWorkDone(); ORT: output left in a GPU buffer + onSubmittedWorkDone(); jax-js: blockUntilReady() + onSubmittedWorkDone()' });
    await rp.dispose();
  }
  {
    const rp = await chainPeers(xHost, progOut, { readback: false, jaxEager: false });
    row('a4', 'chain, affon Program vs TF.js eager, ORT graph, jax-js jit, queue drain only', await withPeers(rp, { affon: () => syncA(runChain), tfjs: syncT }),
      { check, peers: rp, blank: ['jax'], note: 'as a3, affon runs the Program; jax-js eager is in a3' });
    await rp.dispose();
  }
  // Diagnostics that split the eager cost: per-op overhead (tiny tensor), unary and broadcast-binary chains.
  const xs = session.tensor(xHost.subarray(0, 4096), [4096]); const xst = tf.tensor1d(xHost.subarray(0, 4096));
  const smallA = () => session.tidy(() => xs.mul(c1a).add(c2a).relu().square().sqrt().exp().neg().abs());
  const smallT = () => tf.tidy(() => tf.abs(tf.neg(tf.exp(tf.sqrt(tf.square(tf.relu(tf.add(tf.mul(xst, c1t), c2t))))))));
  {
    const smallOut = await (async () => { const y = smallA(); const v = await y.to_array(); y.dispose(); return v; })();
    const smallCheck = maxRelDiff(smallOut, await (async () => { const y = smallT(); const v = await y.data(); y.dispose(); return v; })());
    const rp = await chainPeers(xHost.subarray(0, 4096), smallOut);
    row('a5', 'same chain on 4,096 floats, eager (+ readback)', await withPeers(rp, { affon: () => readA(smallA), tfjs: async () => { const y = smallT(); await y.data(); y.dispose(); } }),
      { check: smallCheck, peers: rp, note: 'device work is negligible: per-op host overhead (affon: 8 deferred ops, one kernel) + one 16 KiB readback; peers as a1' });
    await rp.dispose();
  }
  const reluA = () => session.tidy(() => { let y = xa; for (let i = 0; i < 8; i++) y = y.relu(); return y; });
  const reluT = () => tf.tidy(() => { let y = xt; for (let i = 0; i < 8; i++) y = tf.relu(y); return y; });
  row('a6', '8 × relu on 1M floats, eager, queue drain', await pair(async () => { const y = reluA(); await session.sync(); y.dispose(); },
    async () => { const y = reluT(); await tfQueueSync(); y.dispose(); }), { note: 'TF.js: 8 unary kernels; affon: one fused kernel (eager elementwise ops are deferred and fused)' });
  const mulA = () => session.tidy(() => { let y = xa; for (let i = 0; i < 8; i++) y = y.mul(c1a); return y; });
  const mulT = () => tf.tidy(() => { let y = xt; for (let i = 0; i < 8; i++) y = tf.mul(y, c1t); return y; });
  row('a7', '8 × mul by a scalar tensor on 1M floats, eager, queue drain', await pair(async () => { const y = mulA(); await session.sync(); y.dispose(); },
    async () => { const y = mulT(); await tfQueueSync(); y.dispose(); }), { note: 'TF.js: 8 broadcasting binary kernels; affon: one fused kernel' });
  const ones = session.tensor(new Float32Array(N).fill(0.5), [N]); const onest = tf.tensor1d(new Float32Array(N).fill(0.5));
  const mulSameA = () => session.tidy(() => { let y = xa; for (let i = 0; i < 8; i++) y = y.mul(ones); return y; });
  const mulSameT = () => tf.tidy(() => { let y = xt; for (let i = 0; i < 8; i++) y = tf.mul(y, onest); return y; });
  row('a8', '8 × mul by a same-shape tensor on 1M floats, eager, queue drain', await pair(async () => { const y = mulSameA(); await session.sync(); y.dispose(); },
    async () => { const y = mulSameT(); await tfQueueSync(); y.dispose(); }), { note: 'TF.js: 8 binary kernels without broadcasting (8 MiB read per op); affon: one fused kernel reading x and the operand once' });
  xs.dispose(); xst.dispose(); ones.dispose(); onest.dispose();
  // a9: the chain followed by a full sum, one scalar read back.
  {
    const sp = new Program('chain8_sum');
    {
      const x = sp.input('x', 'float32', [N]);
      const c1 = sp.constant(new Float32Array([0.5]), [], 'float32');
      const c2 = sp.constant(new Float32Array([0.1]), [], 'float32');
      sp.output('y', sp.sum(sp.abs(sp.neg(sp.exp(sp.sqrt(sp.square(sp.relu(sp.add(sp.mul(x, c1), c2)))))))));
    }
    const sumExe = session.compile(sp);
    const runSum = () => sumExe.run({ x: xa }, undefined).y;
    const sumT = () => tf.tidy(() => tf.sum(tf.abs(tf.neg(tf.exp(tf.sqrt(tf.square(tf.relu(tf.add(tf.mul(xt, c1t), c2t)))))))));
    const ya = runSum(); const sumOut = [await ya.item()]; ya.dispose();
    const yt = sumT(); const sumCheck = maxRelDiff(sumOut, await yt.data()); yt.dispose();
    const rp = new RowPeers();
    const o = await peerWorkload(rp, ['ort'], () => ortP.chainSum(xHost));
    const j = await peerWorkload(rp, ['jax', 'jaxJit'], () => jaxP.chainSum(xHost));
    if (o) await rp.add('ort', o.read, o.read, sumOut);
    if (j) { await rp.add('jax', j.eager.read, j.eager.read, sumOut); await rp.add('jaxJit', j.jit.read, j.jit.read, sumOut); }
    row('a9', 'chain + full sum, 1M floats: affon compiled Program vs jax-js jit and the others (+ scalar readback)',
      await withPeers(rp, { affon: async () => { const y = runSum(); await y.item(); y.dispose(); }, tfjs: async () => { const y = sumT(); await y.data(); y.dispose(); } }),
      { check: sumCheck, peers: rp, note: `affon: one Program (chain, sum node), item(); TF.js eager + tf.sum; ORT: the graph + ReduceSum (keepdims 0); jax-js: np.sum, eager and jit; sum ≈ ${sumOut[0].toFixed(1)}` });
    const sumEagerA = () => session.tidy(() => xa.mul(c1a).add(c2a).relu().square().sqrt().exp().neg().abs().sum());
    const eagerSum = await (async () => { const y = sumEagerA(); const v = [await y.item()]; y.dispose(); return v; })();
    row('a9e', 'chain + full sum, 1M floats: affon eager vs TF.js eager, ORT graph, jax-js eager and jit (+ scalar readback)',
      await withPeers(rp, { affon: async () => { const y = sumEagerA(); await y.item(); y.dispose(); }, tfjs: async () => { const y = sumT(); await y.data(); y.dispose(); } }),
      { check: maxRelDiff(eagerSum, sumOut), peers: rp, note: 'affon: the eager chain in a tidy, then sum(): the sum reads the deferred chain as it reduces (x read once, nothing else written); check: against the compiled result; peers as a9' });
    await o?.dispose(); j?.dispose();
    sumExe.dispose(); sp.free();
  }
  {
    const before = metric('compute.storage', 'live_bytes', 'bench');
    telemetry.resetPeak();
    await readA(chainA);
    const eagerPeak = metric('compute.storage', 'peak_bytes', 'bench') - before;
    telemetry.resetPeak();
    await readA(runChain);
    const progPeak = metric('compute.storage', 'peak_bytes', 'bench') - before;
    const tBefore = tf.memory().numBytes;
    const prof = await tf.profile(readT);
    memory.push({ id: 'a', what: 'chain: peak bytes above the inputs during one call',
      affon: `eager ${eagerPeak} B, Program ${progPeak} B`, tfjs: `${prof.peakBytes - tBefore} B`,
      note: 'affon: compute.storage/peak_bytes (session) after resetPeak − live before; TF.js: tf.profile().peakBytes − tf.memory().numBytes before',
      affonEager: eagerPeak, affonProgram: progPeak, tfjsValue: prof.peakBytes - tBefore });
  }
  chainExe.dispose(); p.free();
  xa.dispose(); c1a.dispose(); c2a.dispose(); xt.dispose(); c1t.dispose(); c2t.dispose();

  // --- b. matmul ------------------------------------------------------------------------------
  // [n, products per timed round, timed rounds]: SwiftShader on a few CPU cores takes seconds per 1024 product.
  // `?large` adds 2048 (one timed round after one warm-up: on SwiftShader a product takes seconds to a minute)
  const matmulSizes = [[256, 4, REPS], [512, 1, Math.min(REPS, 3)], [1024, 1, Math.min(REPS, 3)]];
  if (LARGE) matmulSizes.push([2048, 1, 1]);
  for (const [n, k, reps] of matmulSizes) {
    status(`b. matmul ${n}…`);
    const aHost = hostData(n * n, 10 + n); const bHost = hostData(n * n, 20 + n);
    const A = session.tensor(aHost, [n, n]); const B = session.tensor(bHost, [n, n]);
    const At = tf.tensor2d(aHost, [n, n]); const Bt = tf.tensor2d(bHost, [n, n]);
    const ca = A.matmul(B); const ct = tf.matMul(At, Bt);
    const caOut = await ca.to_array();
    const mcheck = maxRelDiff(caOut, await ct.data());
    ca.dispose(); ct.dispose();
    // Peers: ORT a one-node MatMul graph on two GPU-buffer inputs (output left on the device,
    // getData() of the last); jax-js np.matmul eager and jit (its k results realised together).
    const rp = new RowPeers();
    const o = await peerWorkload(rp, ['ort'], () => ortP.matmul(aHost, bHost, n));
    const j = await peerWorkload(rp, ['jax', 'jaxJit'], () => jaxP.matmul(aHost, bHost, n));
    if (o) await rp.add('ort', () => o.run(k), () => o.run(1), caOut);
    if (j) { await rp.add('jax', () => j.eager.run(k), () => j.eager.run(1), caOut); await rp.add('jaxJit', () => j.jit.run(k), () => j.jit.run(1), caOut); }
    // k products back to back, then one readback of the last: the time per product is /k.
    const fa = async () => {
      let c = null;
      for (let i = 0; i < k; i++) { c?.dispose(); c = A.matmul(B); }
      await c.to_array(); c.dispose();
    };
    const ft = async () => {
      let c = null;
      for (let i = 0; i < k; i++) { c?.dispose(); c = tf.matMul(At, Bt); }
      await c.data(); c.dispose();
    };
    const r = await bench({ affon: fa, tfjs: ft, ...rp.sides }, { warmup: 1, reps, slow: { ms: 4000, reps: 2 } });
    for (const side of ['affon', ...PEERS]) {
      if (!r[side]) continue;
      r[side].samples = r[side].samples.map((ms) => ms / k);
      r[side].ms /= k;
    }
    const gflops = (ms) => (2 * n ** 3) / (ms * 1e6);
    const sidesRun = ['affon', ...PEERS].filter((x) => r[x]);
    const fewer = sidesRun.filter((x) => r.reps[x] < reps).map((x) => `${SHORT[x]} ${r.reps[x]}`);
    row(`b${n}`, `matmul ${n}×${n}·${n}×${n} float32`, r, {
      check: mcheck, peers: rp, affonGflops: gflops(r.affon.ms), tfjsGflops: gflops(r.tfjs.ms),
      gflops: Object.fromEntries(sidesRun.map((x) => [x, gflops(r[x].ms)])),
      note: `${k === 1 ? '1 product + its readback' : `${k} products + 1 readback of the last, per product`}; GFLOP/s ${sidesRun.map((x) => `${SHORT[x] ?? 'affon'} ${gflops(r[x].ms).toFixed(2)}`).join(', ')}`
        + `${fewer.length ? `; timed rounds (slow peer): ${fewer.join(', ')} of ${reps}` : ''}`,
    });
    await o?.dispose(); j?.dispose();
    A.dispose(); B.dispose(); At.dispose(); Bt.dispose();
  }

  // --- c. 1000 × create + dispose a 1 MiB tensor ------------------------------------------------
  status('c. create/dispose…');
  const M = 262144;
  const mHost = hostData(M, 3);
  const loops = 1000;
  const createA = async (count) => {
    for (let i = 0; i < count; i++) session.tensor(mHost, [M]).dispose();
    await session.sync();
  };
  const createT = async (count) => {
    for (let i = 0; i < count; i++) tf.tensor1d(mHost).dispose();
    await tfQueueSync();
  };
  const uploadT = async (count) => {
    for (let i = 0; i < count; i++) { const t = tf.tensor1d(mHost); tfb.uploadToGPU(t.dataId); t.dispose(); }
    await tfQueueSync();
  };
  const fillA = async (count) => {
    for (let i = 0; i < count; i++) session.fill([M], 1.5, 'float32').dispose();
    await session.sync();
  };
  const fillT = async (count) => {
    for (let i = 0; i < count; i++) tf.fill([M], 1.5, 'float32').dispose();
    await tfQueueSync();
  };
  await createA(50); await createT(50); await uploadT(50); await fillA(50); await fillT(50);
  const cReps = QUICK ? 2 : 5;
  row('c1', '1000 × create 1 MiB tensor from a Float32Array + dispose', await pair(() => createA(loops), () => createT(loops), { warmup: 0, reps: cReps }),
    { note: 'then one queue drain; affon uploads (writeBuffer) each time, TF.js keeps the data on the CPU until first GPU use (never here)' });
  row('c1u', '1000 × create 1 MiB tensor + upload to the device + dispose', await pair(() => createA(loops), () => uploadT(loops), { warmup: 0, reps: cReps }),
    { note: 'affon as c1; TF.js forced to upload with its backend\'s internal uploadToGPU(dataId) (mapped staging buffer + copy), then one queue drain' });
  row('c2', '1000 × fill 1 MiB tensor on the device + dispose', await pair(() => fillA(loops), () => fillT(loops), { warmup: 0, reps: cReps }),
    { note: 'session.fill vs tf.fill (both a GPU fill kernel), then one queue drain' });
  // c3: a tensor from the 1 MiB Float32Array, one op (square), read back.
  {
    status('c3. create + square + readback…');
    const sqA = async () => { const t = session.tensor(mHost, [M]); const y = t.square(); const v = await y.to_array(); t.dispose(); y.dispose(); return v; };
    const sqT = async () => { const t = tf.tensor1d(mHost); const y = tf.square(t); const v = await y.data(); t.dispose(); y.dispose(); return v; };
    const sqOut = await sqA();
    const sqCheck = maxRelDiff(sqOut, await sqT());
    const rp = new RowPeers();
    const o = await peerWorkload(rp, ['ort'], () => ortP.fromHostSquare(M));
    if (o) await rp.add('ort', () => o.run(mHost), () => o.run(mHost), sqOut);
    await rp.add('jax', () => jaxP.fromHostSquare(mHost), () => jaxP.fromHostSquare(mHost), sqOut);
    row('c3', 'tensor from a 1 MiB Float32Array + square + readback', await bench({ affon: sqA, tfjs: sqT, ...rp.sides }),
      { check: sqCheck, peers: rp, blank: ['jaxJit'], note: 'affon session.tensor / TF.js tf.tensor1d (uploaded at first use) / ORT a CPU ort.Tensor over the array fed to a one-node graph Mul(x, x) (ORT uploads, runs, downloads) / jax-js np.array (uploaded) → np.square → data(); then dispose' });
    await o?.dispose();
  }

  // --- h. tiny ops: 1000 × square on a [3] tensor -----------------------------------------------
  status('h. tiny ops…');
  {
    const h3 = hostData(3, 11);
    const x3a = session.tensor(h3, [3]); const x3t = tf.tensor1d(h3);
    const t3 = jaxP && peerState.jax.ok ? jaxP.tiny(h3) : null;
    const sq3 = await (async () => { const y = x3a.square(); const v = await y.to_array(); y.dispose(); return v; })();
    const h3check = maxRelDiff(sq3, await (async () => { const y = tf.square(x3t); const v = await y.data(); y.dispose(); return v; })());
    const hN = 1000;
    let keptA = [], keptT = [];
    const noJit = 'a single op: jit not run';
    // h1: plain — every result kept (disposed after the clock stops).
    {
      const rp = new RowPeers();
      if (t3) await rp.add('jax', { run: () => t3.plain(hN), after: () => t3.release() }, t3.check, sq3);
      else rp.skip('jax', peerState.jax.reason);
      const r = await bench({
        affon: { run: async () => { for (let i = 0; i < hN; i++) keptA.push(x3a.square()); await session.sync(); }, after: () => { keptA.forEach((t) => t.dispose()); keptA = []; } },
        tfjs: { run: async () => { for (let i = 0; i < hN; i++) keptT.push(tf.square(x3t)); await tfQueueSync(); }, after: () => { keptT.forEach((t) => t.dispose()); keptT = []; } },
        ...rp.sides,
      });
      row('h1', '1000 × square on a [3] tensor, plain (results kept, no dispose), queue drain', r, { check: h3check, peers: rp, blank: ['ort', 'jaxJit'],
        note: `results disposed after the clock stops; jax-js: results realised together with blockUntilReady(all 1000) (its way to dispatch them), then onSubmittedWorkDone(); ${noJit}; h rows: ORT not run (no eager op API: each op would be a session.run)` });
    }
    // h2: inside one tidy scope.
    {
      const rp = new RowPeers();
      rp.skip('jax', 'jax-js has no tidy scope (reference counting: every op consumes its arguments)');
      const r = await bench({
        affon: async () => { session.tidy(() => { for (let i = 0; i < hN; i++) x3a.square(); }); await session.sync(); },
        tfjs: async () => { tf.tidy(() => { for (let i = 0; i < hN; i++) tf.square(x3t); }); await tfQueueSync(); },
      });
      row('h2', '1000 × square on a [3] tensor inside one tidy, queue drain', r, { check: h3check, peers: rp, blank: ['ort', 'jaxJit'],
        note: 'session.tidy / tf.tidy free the 1000 results at the end of the scope; affon defers elementwise ops, so the 1000 results, disposed unread, are never dispatched (TF.js runs 1000 kernels)' });
    }
    // h3: dispose each result right away.
    {
      const rp = new RowPeers();
      // jax-js and affon are both lazy here: a result disposed before it is read is never
      // dispatched, so this loop does no device work in either (TF.js runs 1000 kernels)
      if (t3) await rp.add('jax', () => t3.disposeEach(hN), t3.check, sq3);
      else rp.skip('jax', peerState.jax.reason);
      const r = await bench({
        affon: async () => { for (let i = 0; i < hN; i++) x3a.square().dispose(); await session.sync(); },
        tfjs: async () => { for (let i = 0; i < hN; i++) tf.square(x3t).dispose(); await tfQueueSync(); },
        ...rp.sides,
      });
      row('h3', '1000 × square on a [3] tensor, dispose each, queue drain', r, { check: h3check, peers: rp, blank: ['ort', 'jaxJit'],
        note: `affon and jax-js are lazy: each result is disposed unread, so neither dispatches a kernel (TF.js runs 1000); ${noJit}` });
    }
    t3?.dispose(); x3a.dispose(); x3t.dispose();
  }

  // --- d. telemetry cost ----------------------------------------------------------------------
  status('d. telemetry…');
  const perCall = async (fn, n) => { for (let i = 0; i < n; i++) fn(); };
  const keepA = [session.ones([64]), session.ones([128])]; const keepT = [tf.ones([64]), tf.ones([128])];
  const dN = QUICK ? 200 : 500;
  // tf.memory() takes nanoseconds: time enough calls that the (coarsened) clock resolves them
  const tN = 400 * dN;
  const dm = await pair(() => perCall(() => telemetry.metrics(), dN), () => perCall(() => tf.memory(), tN), { warmup: 1 });
  dm.affon.ms /= dN; dm.tfjs.ms /= tN;
  dm.affon.samples = dm.affon.samples.map((x) => x / dN); dm.tfjs.samples = dm.tfjs.samples.map((x) => x / tN);
  const records = telemetry.metrics().length;
  row('d1', 'one telemetry.metrics() vs one tf.memory()', dm,
    { note: `per call, averaged over ${dN} (affon) / ${tN} (TF.js) calls; metrics() returns ${records} records (process + per session), tf.memory() 5–6 fields` });
  const ds = await pair(() => perCall(() => session.memory(), 20 * dN), () => perCall(() => tf.memory(), tN), { warmup: 1 });
  ds.affon.ms /= 20 * dN; ds.tfjs.ms /= tN;
  ds.affon.samples = ds.affon.samples.map((x) => x / (20 * dN)); ds.tfjs.samples = ds.tfjs.samples.map((x) => x / tN);
  row('d2', 'one session.memory() vs one tf.memory()', ds, { note: `per call, averaged over ${20 * dN} (affon) / ${tN} (TF.js) calls; same TF.js-shaped summary` });
  {
    // the same with 1000 live tensors in 10 origins (100 results each of 10 different ops)
    const base = session.ones([4]); const baseT = tf.ones([4]);
    const ops = ['square', 'exp', 'neg', 'abs', 'relu', 'sqrt', 'sigmoid', 'tanh', 'log', 'sign'];
    const liveA = [], liveT = [];
    for (const op of ops) for (let i = 0; i < 100; i++) { liveA.push(base[op]()); liveT.push(tf[op](baseT)); }
    const dk = await pair(() => perCall(() => telemetry.metrics(), dN), () => perCall(() => tf.memory(), tN), { warmup: 1 });
    dk.affon.ms /= dN; dk.tfjs.ms /= tN;
    dk.affon.samples = dk.affon.samples.map((x) => x / dN); dk.tfjs.samples = dk.tfjs.samples.map((x) => x / tN);
    row('d1k', 'one telemetry.metrics() vs one tf.memory(), 1000 live tensors in 10 origins', dk,
      { note: `as d1; metrics() returns ${telemetry.metrics().length} records (10 more per origin set: process-wide and per session)` });
    liveA.forEach((t) => t.dispose()); liveT.forEach((t) => t.dispose()); base.dispose(); baseT.dispose();
  }
  keepA.forEach((t) => t.dispose()); keepT.forEach((t) => t.dispose());

  // --- e. growing shapes ----------------------------------------------------------------------
  status('e. growing shapes…');
  const ITER = 200, W = 1024;
  const gHost = hostData(ITER * W, 4);
  const grow = await Session.create({ label: 'grow' });   // its own pool: the figures are this workload's alone
  const bm = tfb.bufferManager;
  const bmSnap = () => ({ numBytesAllocated: bm.numBytesAllocated, numBytesUsed: bm.numBytesUsed,
    numFreeBuffers: bm.numFreeBuffers, numUsedBuffers: bm.numUsedBuffers });
  let liveMaxA = 0, liveMaxT = 0, tfBase = 0;
  const growA = async () => {
    for (let i = 0; i < ITER; i++) {
      const t = grow.tensor(gHost.subarray(0, (i + 1) * W), [i + 1, W]);
      const sq = t.square(); const s = sq.sum();
      liveMaxA = Math.max(liveMaxA, grow.memory().numBytes);
      await s.item();
      t.dispose(); sq.dispose(); s.dispose();
    }
  };
  const growT = async () => {
    for (let i = 0; i < ITER; i++) {
      const t = tf.tensor2d(gHost.subarray(0, (i + 1) * W), [i + 1, W]);
      const sq = tf.square(t); const s = tf.sum(sq);
      liveMaxT = Math.max(liveMaxT, tf.memory().numBytes - tfBase);
      await s.data();
      t.dispose(); sq.dispose(); s.dispose();
    }
  };
  telemetry.resetPeak();
  tfBase = tf.memory().numBytes;
  const tfBmBefore = bmSnap();
  const tfMemBefore = tf.memory();
  let t0 = now(); await growA(); const firstA = now() - t0;
  const growFirst = {
    pool_bytes: metric('compute.memory', 'pool_bytes', 'grow'),
    pool_cached_bytes: metric('compute.memory', 'pool_cached_bytes', 'grow'),
    peak_bytes: metric('compute.storage', 'peak_bytes', 'grow'),
    live_bytes: metric('compute.storage', 'live_bytes', 'grow'),
    device_buffers: metric('compute.memory', 'device_buffers', 'grow'),
    pool_hits: metric('compute.memory', 'pool_hits', 'grow'),
    pool_misses: metric('compute.memory', 'pool_misses', 'grow'),
  };
  t0 = now(); await growT(); const firstT = now() - t0;
  const tfBmFirst = bmSnap();
  const ge = await pair(growA, growT, { warmup: 0, reps: 2 });
  ge.affon.samples.unshift(firstA); ge.tfjs.samples.unshift(firstT);
  ge.affon.ms = median(ge.affon.samples); ge.tfjs.ms = median(ge.tfjs.samples);
  const growAfter = {
    pool_bytes: metric('compute.memory', 'pool_bytes', 'grow'),
    peak_bytes: metric('compute.storage', 'peak_bytes', 'grow'),
    device_buffers: metric('compute.memory', 'device_buffers', 'grow'),
  };
  const tfBmAfter = bmSnap();
  const tfMemAfter = tf.memory();
  row('e', '200 × growing [i+1,1024]: create, square, sum, read back, dispose', ge, {
    note: `whole 200-iteration loop; median of 3 passes (first, cold pass: affon ${firstA.toFixed(0)} ms, TF.js ${firstT.toFixed(0)} ms)`,
  });
  const MiB = (b) => `${(b / 2 ** 20).toFixed(2)} MiB`;
  memory.push({ id: 'e', what: 'growing shapes: largest live set',
    affon: `${MiB(growFirst.peak_bytes)} (compute.storage/peak_bytes)`,
    tfjs: `${MiB(liveMaxT)} (max tf.memory().numBytes sampled after sum)`,
    note: `exact answer: 2·200·1024·4 + 4 B = ${MiB(2 * ITER * W * 4 + 4)}; affon sampled session.memory() max ${MiB(liveMaxA)}`,
    affonValue: growFirst.peak_bytes, tfjsValue: liveMaxT });
  memory.push({ id: 'e', what: 'growing shapes: bytes the pool retains after pass 1',
    affon: `${MiB(growFirst.pool_bytes)} held, ${MiB(growFirst.pool_cached_bytes)} cached, ${growFirst.device_buffers} buffers (compute.memory)`,
    tfjs: `+${MiB(tfBmFirst.numBytesAllocated - tfBmBefore.numBytesAllocated)} bufferManager.numBytesAllocated, +${tfBmFirst.numFreeBuffers - tfBmBefore.numFreeBuffers} free buffers`,
    note: `affon pool hits/misses ${growFirst.pool_hits}/${growFirst.pool_misses} (size classes: 4 per power of two); TF.js pools by exact (size, usage), incl. uniform and MAP_READ staging buffers`,
    affonValue: growFirst.pool_bytes, tfjsValue: tfBmFirst.numBytesAllocated - tfBmBefore.numBytesAllocated });
  memory.push({ id: 'e', what: 'growing shapes: pool bytes after 3 passes',
    affon: `${MiB(growAfter.pool_bytes)}, ${growAfter.device_buffers} buffers`,
    tfjs: `+${MiB(tfBmAfter.numBytesAllocated - tfBmBefore.numBytesAllocated)} allocated; tf.memory() numBytes ${tfMemBefore.numBytes}→${tfMemAfter.numBytes}, numBytesInGPU ${tfMemAfter.numBytesInGPU}, numBytesAllocatedInGPU ${MiB(tfMemAfter.numBytesAllocatedInGPU)}`,
    note: 'a second and third pass reuse what the first left cached on both sides',
    affonValue: growAfter.pool_bytes, tfjsValue: tfBmAfter.numBytesAllocated - tfBmBefore.numBytesAllocated });
  const growDetail = { affonFirst: growFirst, affonAfter: growAfter, tfBufferManager: { before: tfBmBefore, afterFirst: tfBmFirst, after: tfBmAfter },
    tfMemory: { before: tfMemBefore, after: tfMemAfter }, liveMaxAffonSampled: liveMaxA, liveMaxTfjsSampled: liveMaxT };
  grow.dispose();

  // --- f. MLP forward -------------------------------------------------------------------------
  status('f. MLP…');
  const [BATCH, IN, HID, OUT] = [64, 784, 256, 10];
  const hx = hostData(BATCH * IN, 5, 0, 1), hw1 = hostData(IN * HID, 6, -0.05, 0.05), hb1 = hostData(HID, 7, -0.1, 0.1);
  const hw2 = hostData(HID * OUT, 8, -0.1, 0.1), hb2 = hostData(OUT, 9, -0.1, 0.1);
  const mA = { x: session.tensor(hx, [BATCH, IN]), w1: session.tensor(hw1, [IN, HID]), b1: session.tensor(hb1, [HID]),
    w2: session.tensor(hw2, [HID, OUT]), b2: session.tensor(hb2, [OUT]) };
  const mT = { x: tf.tensor2d(hx, [BATCH, IN]), w1: tf.tensor2d(hw1, [IN, HID]), b1: tf.tensor1d(hb1),
    w2: tf.tensor2d(hw2, [HID, OUT]), b2: tf.tensor1d(hb2) };
  const mlpA = () => session.tidy(() => mA.x.matmul(mA.w1).add(mA.b1).relu().matmul(mA.w2).add(mA.b2).softmax());
  const mlpT = () => tf.tidy(() => tf.softmax(tf.add(tf.matMul(tf.relu(tf.add(tf.matMul(mT.x, mT.w1), mT.b1)), mT.w2), mT.b2)));
  const mp = new Program('mlp');
  {
    const x = mp.input('x', 'float32', [BATCH, IN]); const w1 = mp.input('w1', 'float32', [IN, HID]);
    const b1 = mp.input('b1', 'float32', [HID]); const w2 = mp.input('w2', 'float32', [HID, OUT]);
    const b2 = mp.input('b2', 'float32', [OUT]);
    mp.output('y', mp.softmax(mp.add(mp.matmul(mp.relu(mp.add(mp.matmul(x, w1), b1)), w2), b2), -1));
  }
  const mlpExe = session.compile(mp);
  const mlpRun = () => mlpExe.run(mA, undefined).y;
  let fcheck, mlpEagerOut, mlpProgOut;
  {
    const ya = mlpA(), yc = mlpRun(), yt = mlpT();
    const tv = await yt.data();
    mlpEagerOut = await ya.to_array(); mlpProgOut = await yc.to_array();
    fcheck = Math.max(maxRelDiff(mlpEagerOut, tv), maxRelDiff(mlpProgOut, tv));
    ya.dispose(); yc.dispose(); yt.dispose();
  }
  const mlpReadT = async () => { const y = mlpT(); await y.data(); y.dispose(); };
  // Peers: ORT one graph (MatMul, Add, Relu, MatMul, Add, Softmax) with the weights as
  // initializers and x in a GPU buffer; jax-js eager and jit with all five arrays on the device.
  const mlpHost = { x: hx, w1: hw1, b1: hb1, w2: hw2, b2: hb2 };
  const mlpPeers = async (expected, jaxEager) => {
    const rp = new RowPeers();
    const o = await peerWorkload(rp, ['ort'], () => ortP.mlp(mlpHost, [BATCH, IN, HID, OUT]));
    const j = await peerWorkload(rp, ['jax', 'jaxJit'], () => jaxP.mlp(mlpHost, [BATCH, IN, HID, OUT]));
    if (o) await rp.add('ort', o.read, o.read, expected);
    if (j && jaxEager) await rp.add('jax', j.eager.read, j.eager.read, expected);
    if (j) await rp.add('jaxJit', j.jit.read, j.jit.read, expected);
    rp.dispose = async () => { await o?.dispose(); j?.dispose(); };
    return rp;
  };
  {
    const rp = await mlpPeers(mlpEagerOut, true);
    row('f1', 'MLP 64×784→256→10 (relu, softmax): eager (+ readback)', await bench({ affon: () => readA(mlpA), tfjs: mlpReadT, ...rp.sides }),
      { check: fcheck, peers: rp, note: '2 matmul + 2 add + relu + softmax, then 64×10 readback; ORT: the 6-node graph, weights as initializers' });
    await rp.dispose();
  }
  {
    const rp = await mlpPeers(mlpProgOut, false);
    row('f2', 'MLP: affon compiled Program vs TF.js eager, ORT graph, jax-js jit (+ readback)', await bench({ affon: () => readA(mlpRun), tfjs: mlpReadT, ...rp.sides }),
      { check: fcheck, peers: rp, blank: ['jax'], note: 'weights are Program inputs (the same tensors); jax-js jit: weights are arguments; jax-js eager is in f1' });
    await rp.dispose();
  }
  {
    const before = metric('compute.storage', 'live_bytes', 'bench');
    telemetry.resetPeak();
    await readA(mlpA);
    const eagerPeak = metric('compute.storage', 'peak_bytes', 'bench');
    telemetry.resetPeak();
    await readA(mlpRun);
    const progPeak = metric('compute.storage', 'peak_bytes', 'bench');
    const tBefore = tf.memory().numBytes;
    const prof = await tf.profile(mlpReadT);
    memory.push({ id: 'f', what: 'MLP: peak device bytes during one forward (absolute, weights + input included)',
      affon: `eager ${eagerPeak} B (+${eagerPeak - before}), Program ${progPeak} B (+${progPeak - before})`,
      tfjs: `${prof.peakBytes} B (+${prof.peakBytes - tBefore})`,
      note: 'affon: compute.storage/peak_bytes (session) after resetPeak; TF.js: tf.profile().peakBytes (max tf.memory().numBytes after each kernel); (+…) = above the bytes live before the call',
      affonEager: eagerPeak, affonProgram: progPeak, tfjsValue: prof.peakBytes, affonBefore: before, tfjsBefore: tBefore });
  }
  mlpExe.dispose(); mp.free();
  Object.values(mA).forEach((t) => t.dispose()); Object.values(mT).forEach((t) => t.dispose());

  // --- m. MobileNet-style block: depthwise 3×3 + batchNorm + relu6, pointwise 1×1 + batchNorm + relu6
  status('m. MobileNet block…');
  {
    const [H, W, C, CO] = [112, 112, 32, 64];
    const eps = 1e-3;
    // Ranges chosen so that both relu6 clip at 0 and at 6 (about half the outputs are 0, 1.3 % are 6).
    const hx = hostData(H * W * C, 61, -2, 2), hdw = hostData(3 * 3 * C, 62, -1, 1), hpw = hostData(C * CO, 63, -0.5, 0.5);
    const bnHost = (ch, seed) => ({ mean: hostData(ch, seed, -0.1, 0.1), variance: hostData(ch, seed + 1, 0.5, 1.5),
      offset: hostData(ch, seed + 2, -0.1, 0.1), scale: hostData(ch, seed + 3, 0.5, 1.5) });
    const bn1 = bnHost(C, 64), bn2 = bnHost(CO, 68);
    // affon / TF.js: NHWC input, filters [3, 3, C, 1] and [1, 1, C, CO]; the batch-norm vectors [ch].
    const bnA = (b, ch) => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, session.tensor(v, [ch])]));
    const bA = { x: session.tensor(hx, [1, H, W, C]), dw: session.tensor(hdw, [3, 3, C, 1]), pw: session.tensor(hpw, [1, 1, C, CO]) };
    const b1A = bnA(bn1, C), b2A = bnA(bn2, CO);
    const bnT = (b) => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, tf.tensor1d(v)]));
    const bT = { x: tf.tensor4d(hx, [1, H, W, C]), dw: tf.tensor4d(hdw, [3, 3, C, 1]), pw: tf.tensor4d(hpw, [1, 1, C, CO]) };
    const b1T = bnT(bn1), b2T = bnT(bn2);
    const blockA = () => session.tidy(() => bA.x.depthwiseConv2d(bA.dw, [1, 1], 'same')
      .batchNorm(b1A.mean, b1A.variance, b1A.offset, b1A.scale, eps).clipByValue(0, 6)
      .conv2d(bA.pw, [1, 1], 'same').batchNorm(b2A.mean, b2A.variance, b2A.offset, b2A.scale, eps).clipByValue(0, 6));
    const blockT = () => tf.tidy(() => {
      const t = tf.clipByValue(tf.batchNorm(tf.depthwiseConv2d(bT.x, bT.dw, [1, 1], 'same'), b1T.mean, b1T.variance, b1T.offset, b1T.scale, eps), 0, 6);
      return tf.clipByValue(tf.batchNorm(tf.conv2d(t, bT.pw, [1, 1], 'same'), b2T.mean, b2T.variance, b2T.offset, b2T.scale, eps), 0, 6);
    });
    const bp = new Program('mobilenet_block');
    const bnNames = (k) => ['mean', 'variance', 'offset', 'scale'].map((n) => `${k}_${n}`);
    {
      const x = bp.input('x', 'float32', [1, H, W, C]); const dw = bp.input('dw', 'float32', [3, 3, C, 1]);
      const pw = bp.input('pw', 'float32', [1, 1, C, CO]);
      const [m1, v1, o1, s1] = bnNames('bn1').map((n) => bp.input(n, 'float32', [C]));
      const [m2, v2, o2, s2] = bnNames('bn2').map((n) => bp.input(n, 'float32', [CO]));
      const t = bp.clipByValue(bp.batchNorm(bp.depthwiseConv2d(x, dw, [1, 1], 'same'), m1, v1, o1, s1, eps), 0, 6);
      bp.output('y', bp.clipByValue(bp.batchNorm(bp.conv2d(t, pw, [1, 1], 'same'), m2, v2, o2, s2, eps), 0, 6));
    }
    const blockExe = session.compile(bp);
    const feeds = { ...bA, ...Object.fromEntries(Object.entries(b1A).map(([k, v]) => [`bn1_${k}`, v])),
      ...Object.fromEntries(Object.entries(b2A).map(([k, v]) => [`bn2_${k}`, v])) };
    const blockRun = () => blockExe.run(feeds, undefined).y;
    let mcheck, blockEagerOut, blockProgOut;
    {
      const ya = blockA(), yc = blockRun(), yt = blockT();
      const tv = await yt.data();
      blockEagerOut = await ya.to_array(); blockProgOut = await yc.to_array();
      mcheck = Math.max(maxRelDiff(blockEagerOut, tv), maxRelDiff(blockProgOut, tv));
      ya.dispose(); yc.dispose(); yt.dispose();
    }
    const blockReadT = async () => { const y = blockT(); await y.data(); y.dispose(); };
    // Peers (NCHW): the input and weights transposed on the host once, here, before any timing;
    // their NCHW results are transposed back (untimed, in the check) to compare with affon's.
    const nchwHost = { x: permute(hx, [1, H, W, C], [0, 3, 1, 2]), dw: permute(hdw, [3, 3, C, 1], [2, 3, 0, 1]),
      pw: permute(hpw, [1, 1, C, CO], [3, 2, 0, 1]), bn1, bn2 };
    const dims = { c: C, cOut: CO, height: H, width: W, eps };
    const toNhwc = (y) => permute(y, [1, CO, H, W], [0, 2, 3, 1]);
    const blockPeers = async (expected, jaxEager) => {
      const rp = new RowPeers();
      const o = await peerWorkload(rp, ['ort'], () => ortP.mobileBlock(nchwHost, dims));
      const j = await peerWorkload(rp, ['jax', 'jaxJit'], () => jaxP.mobileBlock(nchwHost, dims));
      if (o) await rp.add('ort', o.read, async () => toNhwc(await o.read()), expected);
      if (j && jaxEager) await rp.add('jax', j.eager.read, async () => toNhwc(await j.eager.read()), expected);
      if (j) await rp.add('jaxJit', j.jit.read, async () => toNhwc(await j.jit.read()), expected);
      rp.dispose = async () => { await o?.dispose(); j?.dispose(); };
      return rp;
    };
    const blockNote = `output ${H}×${W}×${CO} floats (${(H * W * CO * 4 / 2 ** 20).toFixed(2)} MiB) read back; batch-norm epsilon ${eps}; `
      + 'ORT: one 6-node NCHW graph (Conv group=32, BatchNormalization, Clip, Conv 1×1, BatchNormalization, Clip), weights and statistics as initializers, x in a GPU buffer (graphOptimizationLevel all: ORT may fold each BatchNormalization into its Conv); '
      + 'jax-js: NCHW, lax.convGeneralDilated (featureGroupCount 32) + lax.conv, batch norm as elementwise ops, np.clip; ORT/jax-js inputs and weights transposed to NCHW on the host before timing, their output transposed back for the check only';
    {
      const rp = await blockPeers(blockEagerOut, true);
      row('m1', 'MobileNet-style block on 1×112×112×32: depthwise 3×3 + batchNorm + relu6, pointwise 1×1 → 64 + batchNorm + relu6: eager (+ readback)',
        await bench({ affon: () => readA(blockA), tfjs: blockReadT, ...rp.sides }),
        { check: mcheck, peers: rp, note: `affon/TF.js: NHWC, 6 ops (depthwiseConv2d, batchNorm, clipByValue, conv2d, batchNorm, clipByValue); ${blockNote}` });
      await rp.dispose();
    }
    {
      const rp = await blockPeers(blockProgOut, false);
      row('m2', 'MobileNet-style block: affon compiled Program vs TF.js eager, ORT graph, jax-js jit (+ readback)',
        await bench({ affon: () => readA(blockRun), tfjs: blockReadT, ...rp.sides }),
        { check: mcheck, peers: rp, blank: ['jax'], note: 'weights and statistics are Program inputs (the same tensors); jax-js jit: they are arguments; jax-js eager is in m1' });
      await rp.dispose();
    }
    blockExe.dispose(); bp.free();
    [...Object.values(bA), ...Object.values(b1A), ...Object.values(b2A)].forEach((t) => t.dispose());
    [...Object.values(bT), ...Object.values(b1T), ...Object.values(b2T)].forEach((t) => t.dispose());
  }

  // --- g. one training step: MLP 784-128-10, batch 64, Adam -----------------------------------
  status('g. training step…');
  {
    const B = 64;
    const hostW1 = hostData(784 * 128, 41, -0.05, 0.05), hostW2 = hostData(128 * 10, 42, -0.1, 0.1);
    const hostX = hostData(B * 784, 43, 0, 1);
    const hostY = new Float32Array(B * 10);
    for (let i = 0; i < B; i++) hostY[i * 10 + (i % 10)] = 1;
    const tp = new Program('train_step');
    const x = tp.input('x', 'float32', [-1, 784]), y = tp.input('y', 'float32', [-1, 10]);
    const w1 = tp.state('w1', 'float32', [784, 128]), b1 = tp.state('b1', 'float32', [128]);
    const w2 = tp.state('w2', 'float32', [128, 10]), b2 = tp.state('b2', 'float32', [10]);
    const logits = tp.add(tp.matmul(tp.relu(tp.add(tp.matmul(x, w1), b1)), w2), b2);
    const loss = tp.neg(tp.mean(tp.sum(tp.mul(y, tp.logSoftmax(logits)), [1])));
    tp.adam([w1, b1, w2, b2], tp.grad(loss, [w1, b1, w2, b2]), { learningRate: 1e-3 });
    tp.output('loss', loss);
    const step = session.compile(tp);
    const iw1 = session.tensor(hostW1, [784, 128]), iw2 = session.tensor(hostW2, [128, 10]);
    const state = step.createState({ w1: iw1, w2: iw2 });
    iw1.dispose(); iw2.dispose();
    const xa2 = session.tensor(hostX, [B, 784]), ya2 = session.tensor(hostY, [B, 10]);
    const stepA = async () => { const out = step.run({ x: xa2, y: ya2 }, state); const l = await out.loss.item(); out.loss.dispose(); return l; };
    const vars = [tf.variable(tf.tensor2d(hostW1, [784, 128])), tf.variable(tf.zeros([128])),
      tf.variable(tf.tensor2d(hostW2, [128, 10])), tf.variable(tf.zeros([10]))];
    const xt2 = tf.tensor2d(hostX, [B, 784]), yt2 = tf.tensor2d(hostY, [B, 10]);
    const opt = tf.train.adam(1e-3);
    const lossT = () => {
      const h = tf.relu(tf.add(tf.matMul(xt2, vars[0]), vars[1]));
      const lg = tf.add(tf.matMul(h, vars[2]), vars[3]);
      return tf.neg(tf.mean(tf.sum(tf.mul(yt2, tf.logSoftmax(lg)), 1)));
    };
    const stepT = async () => { const l = opt.minimize(lossT, true, vars); const v = (await l.data())[0]; l.dispose(); return v; };
    let lastA = 0, lastT = 0;
    const r = await pair(async () => { lastA = await stepA(); }, async () => { lastT = await stepT(); });
    const tcheck = Math.abs(lastA - lastT) / Math.max(1, Math.abs(lastT)); // the same number of steps on each side
    row('g', 'training step: MLP 784-128-10, batch 64, Adam (+ loss readback)', r,
      { check: tcheck, note: `affon: one compiled step (forward, p.grad, p.adam); TF.js: tf.train.adam().minimize; losses after the same steps: ${lastA.toFixed(5)} vs ${lastT.toFixed(5)}` });
    const plan = step.memoryPlan({ x: [B, 784], y: [B, 10] });
    const before = metric('compute.storage', 'live_bytes', 'bench');
    telemetry.resetPeak();
    await stepA();
    const peakA = metric('compute.storage', 'peak_bytes', 'bench');
    const tBefore = tf.memory().numBytes;
    const prof = await tf.profile(stepT);
    memory.push({ id: 'g', what: 'training step: peak device bytes (absolute: weights, optimizer slots and batch included)',
      affon: `${peakA} B (+${peakA - before})`, tfjs: `${prof.peakBytes} B (+${prof.peakBytes - tBefore})`,
      note: 'affon: compute.storage/peak_bytes (session) after resetPeak; TF.js: tf.profile().peakBytes; ratio affon/TF.js '
        + `${(peakA / prof.peakBytes).toFixed(2)}; affon state (parameters + Adam slots) ${state.byteLength} B, `
        + `memoryPlan peakBytes ${plan.peakBytes} B (= the measured peak above the live bytes: ${peakA - before === plan.peakBytes})`,
      affonValue: peakA, tfjsValue: prof.peakBytes, affonBefore: before, tfjsBefore: tBefore });
    step.dispose(); state.dispose(); xa2.dispose(); ya2.dispose();
    vars.forEach((v) => v.dispose()); xt2.dispose(); yt2.dispose(); opt.dispose();
  }
  session.dispose();

  // --- results --------------------------------------------------------------------------------
  const results = {
    adapters, quick: QUICK, reps: REPS, warmup: WARMUP, userAgent: navigator.userAgent,
    tfjsVersion: tf.version_core, ortVersion: peerState.ort.version ?? null, jaxVersion: peerState.jax.version ?? null,
    peers: Object.fromEntries(['ort', 'jax'].map((k) => [k, { ok: peerState[k].ok, reason: peerState[k].reason ?? null }])),
    rows, memory, growDetail, totalSeconds: (now() - started) / 1000,
  };
  for (const r of rows) {
    for (const k of ['affonMs', 'tfjsMs', 'ratio', 'bestMs', 'bestRatio']) {
      if (!Number.isFinite(r[k]) || r[k] <= 0) throw new Error(`row ${r.id}: ${k} = ${r[k]}`);
    }
    for (const k of ['ortMs', 'jaxMs', 'jaxJitMs']) {
      if (r[k] !== null && (!Number.isFinite(r[k]) || r[k] <= 0)) throw new Error(`row ${r.id}: ${k} = ${r[k]}`);
    }
    if (r.check !== undefined && !(r.check < 1e-3)) throw new Error(`row ${r.id}: affon and TF.js disagree (max rel diff ${r.check})`);
    for (const [k, d] of Object.entries(r.peerChecks)) if (!(d < 1e-3)) throw new Error(`row ${r.id}: affon and ${LABEL[k]} disagree (max rel diff ${d})`);
  }
  for (const m of memory) {
    for (const k of ['affonValue', 'affonEager', 'affonProgram', 'tfjsValue']) {
      if (k in m && !Number.isFinite(m[k])) throw new Error(`memory ${m.id}: ${k} = ${m[k]}`);
    }
  }
  results.markdown = markdown(results);
  render(results);
  return results;
}

export function fmtTime(ms) {
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  if (ms >= 0.01) return `${(ms * 1000).toFixed(1)} µs`;
  return `${(ms * 1000).toFixed(2)} µs`;
}

const msOf = (x, k) => (k === 'tfjs' ? x.tfjsMs : x[`${k}Ms`]);
/** A peer's cell: its median, `—` (could not run: reason in the notes), or empty (not this row's form / scope). */
function peerCell(x, k) {
  const v = msOf(x, k);
  if (v !== null) return fmtTime(v);
  return !x.peerScope || x.blank.includes(k) ? '' : '—';
}
/** The row's note, then affon-vs-peer max rel diffs, then why each `—` peer has no figure. */
function rowNote(x) {
  let s = x.note ?? '';
  const diffs = [];
  if (x.check !== undefined) diffs.push(`${x.peerScope ? 'TF.js ' : ''}${x.check.toExponential(1)}`);
  for (const k of ['ort', 'jax', 'jaxJit']) if (x.peerChecks[k] !== undefined && msOf(x, k) !== null) diffs.push(`${SHORT[k]} ${x.peerChecks[k].toExponential(1)}`);
  if (diffs.length) s += ` (max rel diff${x.peerScope ? ' vs affon' : ''}${x.peerScope ? ':' : ''} ${diffs.join(', ')})`;
  const why = Object.entries(x.peerReasons).filter(([k]) => msOf(x, k) === null && !x.blank.includes(k)).map(([k, v]) => `${LABEL[k]} —: ${v}`);
  if (why.length) s += `. ${why.join('; ')}`;
  return s;
}

function adapterLine(r) {
  const a = r.adapters;
  const info = (i) => (i ? `${i.vendor}/${i.architecture}` : 'not exposed');
  const peer = (k, name, ver) => (r.peers[k].ok || peerState[k].adapterInfo
    ? `${name} ${ver}: ${info(a[k].adapterInfo)} (${a[k].from})`
    : `${name}: not run (${r.peers[k].reason})`);
  return `Adapters — affon: ${a.affon.vendor}/${a.affon.architecture} (${a.affon.backend}, ${a.affon.deviceType}); `
    + `TF.js ${r.tfjsVersion}: ${a.tfjs.deviceAdapterInfo ? `${a.tfjs.deviceAdapterInfo.vendor}/${a.tfjs.deviceAdapterInfo.architecture} (device.adapterInfo)` : `${a.tfjs.backendAdapterInfo.vendor}/${a.tfjs.backendAdapterInfo.architecture}`}; `
    + `${peer('ort', 'ORT-Web', r.ortVersion)}; ${peer('jax', 'jax-js', r.jaxVersion)}; `
    + `same adapter as affon: TF.js ${a.sameAdapter}, ORT-Web ${a.peersSameAdapter.ort ?? 'unknown'}, jax-js ${a.peersSameAdapter.jax ?? 'unknown'} `
    + '(each library on its own GPUDevice).';
}

function markdown(r) {
  const lines = [
    adapterLine(r),
    `${r.reps} reps after ${r.warmup} warm-up (median); times: lower is better; best peer: the fastest figure on the row, whatever its form (eager, ONNX graph, jit); affon / best < 1 means affon is faster than it, `
      + 'affon/TF.js < 1 that it is faster than TF.js. — : the peer could not run the workload (reason in the notes); empty: not that row\'s form, or not in the peers\' scope (rows compared with TF.js only).',
    '',
    `| workload | affon | ${PEERS.map((k) => LABEL[k]).join(' | ')} | best peer | affon / best | affon/TF.js | notes |`,
    `|---|---:|${PEERS.map(() => '---:').join('|')}|---|---:|---:|---|`,
    ...r.rows.map((x) => `| ${x.id}. ${x.workload} | ${fmtTime(x.affonMs)} | ${PEERS.map((k) => peerCell(x, k)).join(' | ')} | ${LABEL[x.bestPeer]} | ${x.bestRatio.toFixed(2)} | ${x.ratio.toFixed(2)} | ${rowNote(x)} |`),
    '',
    '| memory | affon | TF.js | notes |',
    '|---|---|---|---|',
    ...r.memory.map((m) => `| ${m.id}. ${m.what} | ${m.affon} | ${m.tfjs} | ${m.note} |`),
    '',
    `Total benchmark time in the page: ${r.totalSeconds.toFixed(1)} s.`,
  ];
  return lines.join('\n');
}

function render(r) {
  const esc = (s) => String(s).replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' }[c]));
  const a = r.adapters;
  const html = [
    `<h2>Adapters</h2><p>${esc(adapterLine(r))}</p><pre>${esc(JSON.stringify(a, null, 2))}</pre>`,
    `<h2>Time (median; lower is better)</h2><table><tr><th>workload</th><th>affon</th>${PEERS.map((k) => `<th>${esc(LABEL[k])}</th>`).join('')}<th>best peer</th><th>affon / best</th><th>affon/TF.js</th><th>notes</th></tr>`,
    ...r.rows.map((x) => `<tr><td>${esc(`${x.id}. ${x.workload}`)}</td><td>${fmtTime(x.affonMs)}</td>${PEERS.map((k) => `<td>${peerCell(x, k)}</td>`).join('')}`
      + `<td>${esc(LABEL[x.bestPeer])}</td><td>${x.bestRatio.toFixed(2)}</td><td>${x.ratio.toFixed(2)}</td><td class="note">${esc(rowNote(x))}</td></tr>`),
    '</table><h2>Memory</h2><table><tr><th>figure</th><th>affon</th><th>TF.js</th><th>notes</th></tr>',
    ...r.memory.map((m) => `<tr><td>${esc(`${m.id}. ${m.what}`)}</td><td class="note">${esc(m.affon)}</td><td class="note">${esc(m.tfjs)}</td><td class="note">${esc(m.note)}</td></tr>`),
    '</table>',
  ];
  document.getElementById('out').innerHTML = html.join('\n');
}

main().then((results) => {
  window.benchResults = results;
  status(`done in ${results.totalSeconds.toFixed(1)} s`);
  document.body.dataset.done = 'true';
}, (e) => {
  window.benchError = `${e?.name ?? 'Error'}: ${e?.message ?? e}\n${e?.stack ?? ''}`;
  status(`failed: ${e?.message ?? e}`);
  document.body.dataset.done = 'error';
});
