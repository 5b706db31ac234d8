// d. the cost of reading the memory figures (telemetry.metrics(), session.memory() vs tf.memory());
// e. growing shapes: time, and the memory rows for what each side's pool holds.
import { Session, telemetry } from '../../../pkg/affon.js';
import * as tf from '@tensorflow/tfjs-core';
import { QUICK, status, now, median, pair, hostData, metric, memory, row } from '../harness.js';

/** Section d on `session`. */
export async function telemetryRows({ session }) {
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
}

/** Section e, on a session of its own (`tfb`: TF.js's WebGPU backend); returns its detail for the results. */
export async function growingShapesRows({ tfb }) {
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
  return growDetail;
}
