// affon vs TensorFlow.js 4.22 (WebGPU backend), both in this page on navigator.gpu.
//
// Every timing is wall-clock (performance.now()) around an async body that ends in a
// synchronisation, so queued device work is included: a readback of the result (affon
// `to_array()`/`item()`, TF.js `data()`) or, where a workload has no result, a queue drain (affon
// `session.sync()`; TF.js: flush its pending command encoder, then the device's
// `queue.onSubmittedWorkDone()` — the same WebGPU call `session.sync()` makes). Each figure is the
// median over REPS repetitions after WARMUP untimed ones; affon and TF.js repetitions alternate so
// that drift (GC, other processes) hits both sides alike. Results: `window.benchResults`.
import init, { Session, Program, telemetry } from '../../pkg/affon.js';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-webgpu';

const QUICK = new URLSearchParams(location.search).has('quick');
const REPS = QUICK ? 3 : 7;
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

/** Runs `fa` (affon) and `ft` (TF.js) `warmup` times each, then `reps` alternating timed rounds. */
async function pair(fa, ft, { warmup = WARMUP, reps = REPS } = {}) {
  for (let i = 0; i < warmup; i++) { await fa(); await ft(); }
  const a = [], t = [];
  for (let i = 0; i < reps; i++) {
    let t0 = now(); await fa(); a.push(now() - t0);
    t0 = now(); await ft(); t.push(now() - t0);
  }
  return { affon: summary(a), tfjs: summary(t) };
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
function row(id, workload, r, extra = {}) {
  rows.push({ id, workload, affonMs: r.affon.ms, tfjsMs: r.tfjs.ms, ratio: r.affon.ms / r.tfjs.ms,
    affonSamples: r.affon.samples, tfjsSamples: r.tfjs.samples, ...extra });
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
  row('a1', 'chain of 8 elementwise ops, 1M floats: eager (+ readback)', await pair(() => readA(chainA), readT),
    { check, note: '8 dispatches + 4 MiB readback (to_array / data)' });
  row('a2', 'same chain: affon compiled Program vs TF.js eager (+ readback)', await pair(() => readA(runChain), readT),
    { check, note: 'exe.run({x}) then to_array; TF.js has no compiled form' });
  row('a3', 'chain, eager, queue drain only (no readback)', await pair(() => syncA(chainA), syncT),
    { note: 'session.sync() vs TF.js flush + queue.onSubmittedWorkDone()' });
  row('a4', 'chain, affon Program vs TF.js eager, queue drain only', await pair(() => syncA(runChain), syncT),
    { note: 'as a3, affon runs the Program' });
  // Diagnostics that split the eager cost: per-op overhead (tiny tensor), unary and broadcast-binary kernels.
  const xs = session.tensor(xHost.subarray(0, 4096), [4096]); const xst = tf.tensor1d(xHost.subarray(0, 4096));
  const smallA = () => session.tidy(() => xs.mul(c1a).add(c2a).relu().square().sqrt().exp().neg().abs());
  const smallT = () => tf.tidy(() => tf.abs(tf.neg(tf.exp(tf.sqrt(tf.square(tf.relu(tf.add(tf.mul(xst, c1t), c2t))))))));
  row('a5', 'same chain on 4,096 floats, eager (+ readback)', await pair(() => readA(smallA), async () => { const y = smallT(); await y.data(); y.dispose(); }),
    { note: 'device work is negligible: per-op host/driver overhead + one 16 KiB readback' });
  const reluA = () => session.tidy(() => { let y = xa; for (let i = 0; i < 8; i++) y = y.relu(); return y; });
  const reluT = () => tf.tidy(() => { let y = xt; for (let i = 0; i < 8; i++) y = tf.relu(y); return y; });
  row('a6', '8 × relu on 1M floats, eager, queue drain', await pair(async () => { const y = reluA(); await session.sync(); y.dispose(); },
    async () => { const y = reluT(); await tfQueueSync(); y.dispose(); }), { note: 'unary kernels only' });
  const mulA = () => session.tidy(() => { let y = xa; for (let i = 0; i < 8; i++) y = y.mul(c1a); return y; });
  const mulT = () => tf.tidy(() => { let y = xt; for (let i = 0; i < 8; i++) y = tf.mul(y, c1t); return y; });
  row('a7', '8 × mul by a scalar tensor on 1M floats, eager, queue drain', await pair(async () => { const y = mulA(); await session.sync(); y.dispose(); },
    async () => { const y = mulT(); await tfQueueSync(); y.dispose(); }), { note: 'broadcasting binary kernels only' });
  const ones = session.tensor(new Float32Array(N).fill(0.5), [N]); const onest = tf.tensor1d(new Float32Array(N).fill(0.5));
  const mulSameA = () => session.tidy(() => { let y = xa; for (let i = 0; i < 8; i++) y = y.mul(ones); return y; });
  const mulSameT = () => tf.tidy(() => { let y = xt; for (let i = 0; i < 8; i++) y = tf.mul(y, onest); return y; });
  row('a8', '8 × mul by a same-shape tensor on 1M floats, eager, queue drain', await pair(async () => { const y = mulSameA(); await session.sync(); y.dispose(); },
    async () => { const y = mulSameT(); await tfQueueSync(); y.dispose(); }), { note: 'binary kernels without broadcasting (reads 8 MiB per op instead of 4)' });
  xs.dispose(); xst.dispose(); ones.dispose(); onest.dispose();
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
  for (const [n, k, reps] of [[256, 4, REPS], [512, 1, Math.min(REPS, 3)], [1024, 1, Math.min(REPS, 3)]]) {
    status(`b. matmul ${n}…`);
    const aHost = hostData(n * n, 10 + n); const bHost = hostData(n * n, 20 + n);
    const A = session.tensor(aHost, [n, n]); const B = session.tensor(bHost, [n, n]);
    const At = tf.tensor2d(aHost, [n, n]); const Bt = tf.tensor2d(bHost, [n, n]);
    const ca = A.matmul(B); const ct = tf.matMul(At, Bt);
    const mcheck = maxRelDiff(await ca.to_array(), await ct.data());
    ca.dispose(); ct.dispose();
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
    const r = await pair(fa, ft, { warmup: 1, reps });
    for (const side of ['affon', 'tfjs']) {
      r[side].samples = r[side].samples.map((ms) => ms / k);
      r[side].ms /= k;
    }
    const gflops = (ms) => (2 * n ** 3) / (ms * 1e6);
    row(`b${n}`, `matmul ${n}×${n}·${n}×${n} float32`, r, {
      check: mcheck, affonGflops: gflops(r.affon.ms), tfjsGflops: gflops(r.tfjs.ms),
      note: `${k === 1 ? '1 product + its readback' : `${k} products + 1 readback of the last, per product`}; GFLOP/s affon ${gflops(r.affon.ms).toFixed(2)}, TF.js ${gflops(r.tfjs.ms).toFixed(2)}`,
    });
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
  let fcheck;
  {
    const ya = mlpA(), yc = mlpRun(), yt = mlpT();
    const tv = await yt.data();
    fcheck = Math.max(maxRelDiff(await ya.to_array(), tv), maxRelDiff(await yc.to_array(), tv));
    ya.dispose(); yc.dispose(); yt.dispose();
  }
  const mlpReadT = async () => { const y = mlpT(); await y.data(); y.dispose(); };
  row('f1', 'MLP 64×784→256→10 (relu, softmax): eager (+ readback)', await pair(() => readA(mlpA), mlpReadT),
    { check: fcheck, note: '2 matmul + 2 add + relu + softmax, then 64×10 readback' });
  row('f2', 'MLP: affon compiled Program vs TF.js eager (+ readback)', await pair(() => readA(mlpRun), mlpReadT),
    { check: fcheck, note: 'weights are Program inputs (the same tensors)' });
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
    tfjsVersion: tf.version_core, rows, memory, growDetail, totalSeconds: (now() - started) / 1000,
  };
  for (const r of rows) {
    for (const k of ['affonMs', 'tfjsMs', 'ratio']) {
      if (!Number.isFinite(r[k]) || r[k] <= 0) throw new Error(`row ${r.id}: ${k} = ${r[k]}`);
    }
    if (r.check !== undefined && !(r.check < 1e-3)) throw new Error(`row ${r.id}: affon and TF.js disagree (max rel diff ${r.check})`);
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

function markdown(r) {
  const a = r.adapters;
  const lines = [
    `Adapters — affon: ${a.affon.vendor}/${a.affon.architecture} (${a.affon.backend}, ${a.affon.deviceType}); `
      + `TF.js: ${a.tfjs.deviceAdapterInfo ? `${a.tfjs.deviceAdapterInfo.vendor}/${a.tfjs.deviceAdapterInfo.architecture} (device.adapterInfo)` : `${a.tfjs.backendAdapterInfo.vendor}/${a.tfjs.backendAdapterInfo.architecture}`}; same adapter: ${a.sameAdapter}. `
      + `TF.js ${r.tfjsVersion}; ${r.reps} reps after ${r.warmup} warm-up (median); times: lower is better, affon/TF.js < 1 means affon is faster.`,
    '',
    '| workload | affon | TF.js | affon/TF.js | notes |',
    '|---|---:|---:|---:|---|',
    ...r.rows.map((x) => `| ${x.id}. ${x.workload} | ${fmtTime(x.affonMs)} | ${fmtTime(x.tfjsMs)} | ${x.ratio.toFixed(2)} | ${x.note ?? ''}${x.check !== undefined ? ` (max rel diff ${x.check.toExponential(1)})` : ''} |`),
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
    `<h2>Adapters</h2><pre>${esc(JSON.stringify(a, null, 2))}</pre>`,
    '<h2>Time (median; lower is better)</h2><table><tr><th>workload</th><th>affon</th><th>TF.js</th><th>affon/TF.js</th><th>notes</th></tr>',
    ...r.rows.map((x) => `<tr><td>${esc(`${x.id}. ${x.workload}`)}</td><td>${fmtTime(x.affonMs)}</td><td>${fmtTime(x.tfjsMs)}</td><td>${x.ratio.toFixed(2)}</td><td class="note">${esc(x.note ?? '')}</td></tr>`),
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
