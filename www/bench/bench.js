// affon vs TensorFlow.js 4.22 (WebGPU backend), ONNX Runtime Web 1.30 (WebGPU execution
// provider) and jax-js 0.1.25 (WebGPU backend, eager and `jit`), all in this page on navigator.gpu.
// The peers' code is in peers/ort.js and peers/jax.js; the timing loop and what the rows share in
// harness.js; the workloads in workloads/ (chain.js: a; ops.js: b, c, h; memory.js: d, e; models.js:
// f, m, g); the checks and tables in report.js.
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
import init, { Session } from '../../pkg/affon.js';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-webgpu';
import { status, now, peerState, pickInfo } from './harness.js';
import { chainRows } from './workloads/chain.js';
import { matmulRows, createRows, tinyOpRows } from './workloads/ops.js';
import { telemetryRows, growingShapesRows } from './workloads/memory.js';
import { mlpRows, mobileBlockRows, trainingRows } from './workloads/models.js';
import { finish } from './report.js';

export { fmtTime } from './report.js';

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

  // The workloads, in this order: a, b, c, h, d, e, f, m, g.
  const ctx = { session, tfb, ortP, jaxP };
  await chainRows(ctx);
  await matmulRows(ctx);
  await createRows(ctx);
  await tinyOpRows(ctx);
  await telemetryRows(ctx);
  const growDetail = await growingShapesRows(ctx);
  await mlpRows(ctx);
  await mobileBlockRows(ctx);
  await trainingRows(ctx);
  session.dispose();

  // --- results --------------------------------------------------------------------------------
  return finish({ adapters, growDetail, started });
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
