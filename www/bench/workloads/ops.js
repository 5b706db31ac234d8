// b. matmul at 256, 512 and 1024 (and 2048 with `?large`); c. creating and disposing 1 MiB tensors, and
// a tensor from a Float32Array + square + readback; h. tiny ops, 1000 × square on a [3] tensor.
import * as tf from '@tensorflow/tfjs-core';
import { QUICK, LARGE, REPS, status, PEERS, SHORT, bench, pair, peerState, RowPeers, peerWorkload, hostData, maxRelDiff, tfQueueSync, row } from '../harness.js';

/** Section b on `session`; `ortP`, `jaxP`: the peers' modules. */
export async function matmulRows({ session, ortP, jaxP }) {
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
}

/** Section c on `session` (`tfb`: TF.js's WebGPU backend); `ortP`, `jaxP`: the peers' modules. */
export async function createRows({ session, tfb, ortP, jaxP }) {
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
}

/** Section h on `session`; `jaxP`: jax-js's module (ORT has no eager op API). */
export async function tinyOpRows({ session, jaxP }) {
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
}
