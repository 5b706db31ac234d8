// a. The 8-op elementwise chain on 1,048,576 floats (rows a1–a9e): eager and compiled, with a readback or
// a queue drain only; the per-op diagnostics (4,096 floats, unary and broadcast-binary chains); the chain
// followed by a full sum; and the chain's peak-bytes memory row.
import { Program, telemetry } from '../../../pkg/affon.js';
import * as tf from '@tensorflow/tfjs-core';
import { status, bench, pair, RowPeers, peerWorkload, hostData, maxRelDiff, metric, tfQueueSync, memory, row, readA } from '../harness.js';

/** Section a on `session`; `ortP`, `jaxP`: the peers' modules (peers/ort.js, peers/jax.js). */
export async function chainRows({ session, ortP, jaxP }) {
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
}
