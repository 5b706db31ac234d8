// f. MLP forward; m. a MobileNet-style block; g. one training step (Adam): eager and compiled, with
// their peak-bytes memory rows.
import { Program, telemetry } from '../../../pkg/affon.js';
import * as tf from '@tensorflow/tfjs-core';
import { status, bench, pair, RowPeers, peerWorkload, hostData, permute, maxRelDiff, metric, memory, row, readA } from '../harness.js';

/** Section f on `session`; `ortP`, `jaxP`: the peers' modules. */
export async function mlpRows({ session, ortP, jaxP }) {
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
}

/** Section m on `session`; `ortP`, `jaxP`: the peers' modules. */
export async function mobileBlockRows({ session, ortP, jaxP }) {
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
}

/** Section g on `session` (affon and TF.js only). */
export async function trainingRows({ session }) {
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
}
