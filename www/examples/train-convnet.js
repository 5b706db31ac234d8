// A convnet trained inside one compiled step: conv2d → relu → maxPool → conv2d → relu → maxPool →
// dense on 28×28 images of three shapes drawn here (hollow squares, discs, crosses). The
// convolution and pooling gradients have kernels of their own; Adam's slots are states.
import init, { Session, Program, telemetry } from '../../pkg/affon.js';
import { example, print } from './page.js';
import { shapes, convnetStep, convnetInit, accuracy, loopFigures, printSettled } from './training.js';

example(async () => {
  await init();
  const session = await Session.create({ label: 'train-convnet' });
  const step = session.compile(convnetStep(Program));
  const constantBytes = session.memory().numBytes; // the step's constants, held by the Executable
  const init0 = convnetInit(session);
  const state = step.createState(init0);
  for (const t of Object.values(init0)) t.dispose();
  const batch = 32, nBatches = 20;
  const data = shapes(batch * nBatches, 11);
  const batches = [];
  for (let b = 0; b < nBatches; b++) {
    batches.push({
      x: session.tensor(data.x.subarray(b * batch * 784, (b + 1) * batch * 784), [batch, 28, 28, 1]),
      y: session.tensor(data.y.subarray(b * batch * 3, (b + 1) * batch * 3), [batch, 3]),
    });
  }
  print('training state:', state.byteLength, 'bytes');
  const liveBefore = session.memory().numBytes; // constants, state and the batches
  const steps = 200;
  const losses = [];
  const liveAfter = [];
  const settleAt = steps / 4; // the pool's best fit settles each slot's buffer within a few steps
  let settled, end;
  const d = await telemetry.watch(async (i) => {
    const out = step.run(batches[i % nBatches], state);
    if (i % 25 === 0) losses.push(Number(await out.loss.item()));
    out.loss.dispose();
    out.logits.dispose();
    liveAfter.push(session.memory().numBytes);
    if (i === settleAt) settled = loopFigures(telemetry);
    if (i === steps - 1) end = loopFigures(telemetry); // in the loop: not the diagnosis built after it
  }, { warmup: 1, iterations: steps - 1, session });
  losses.forEach((l, k) => print(`step ${k * 25}: loss ${l.toFixed(4)}`));

  const test = shapes(300, 99);
  const names = ['k1', 'c1', 'k2', 'c2', 'w', 'b'];
  const trained = Object.fromEntries(names.map((n) => [n, state.get(n)]));
  const evalState = step.createState(trained);
  const tx = session.tensor(test.x, [300, 28, 28, 1]);
  const ty = session.tensor(test.y, [300, 3]);
  const out = step.run({ x: tx, y: ty }, evalState);
  const acc = await accuracy(out.logits, test.labels);
  print(`held-out accuracy: ${(acc * 100).toFixed(1)} %`);
  print('watch:', d.verdict, '—', d.summary);
  printSettled(print, settleAt, settled, end, steps);
  const flat = liveAfter.every((b) => b === liveAfter[0]);
  for (const t of [out.logits, out.loss, tx, ty, ...Object.values(trained)]) t.dispose();
  for (const b of batches) { b.x.dispose(); b.y.dispose(); }
  evalState.dispose(); state.dispose(); step.dispose();
  const bytesAtEnd = session.memory().numBytes;
  session.dispose();
  const runtime = (snap) => (snap ?? []).filter((m) => m.scope === 'runtime.memory').map((m) => [m.name, m.value]);
  return { summary: d.summary, runtimeWarm: runtime(d.snapshots?.warm), runtimeAfter: runtime(d.snapshots?.after), settled, end, accuracy: acc, verdict: d.verdict, flat, constantBytes, stateBytes: state.byteLength, liveBefore, liveBytes: liveAfter[0], firstLoss: losses[0], lastLoss: losses.at(-1), bytesAtEnd };
});
