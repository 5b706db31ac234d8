// Training inside a compiled program: an MLP (2-64-64-2) learns two interleaved spirals. One
// Executable is the whole step — forward, p.grad backward, Adam — and the parameters and Adam's
// slots live in one ExecutionState. telemetry.watch judges the loop from its second step.
import init, { Session, Program, telemetry } from '../../pkg/affon.js';
import uPlot from '../vendor/uPlot.esm.js';
import { example, print } from './page.js';
import { spirals, mlpStep, mlpInit, accuracy, loopFigures, printSettled } from './training.js';

example(async () => {
  await init();
  const session = await Session.create({ label: 'train-mlp' });
  const step = session.compile(mlpStep(Program));
  const init0 = mlpInit(session);
  const state = step.createState(init0); // biases and Adam's m, v, t start at zero
  for (const t of Object.values(init0)) t.dispose();
  const train = spirals(200, 1);
  const x = session.tensor(train.x, [train.labels.length, 2]);
  const y = session.tensor(train.y, [train.labels.length, 2]);
  print('training state:', state.byteLength, 'bytes (parameters and Adam slots)');

  const steps = 400;
  const losses = [];
  // the live loss curve: a point every 10 steps (the readback is the only sync in the loop)
  const curve = [[], []];
  const chart = new uPlot({ width: 640, height: 200, title: 'loss', scales: { x: { time: false } },
    series: [{ label: 'step' }, { label: 'loss', stroke: '#d62728' }] }, curve, document.querySelector('#curve'));
  const liveAfter = [];
  const settleAt = steps / 4; // the pool's best fit settles each slot's buffer within a few steps
  let settled, end;
  const d = await telemetry.watch(async (i) => {
    const out = step.run({ x, y }, state);
    if (i % 10 === 0) {
      const l = Number(await out.loss.item());
      if (i % 50 === 0) losses.push(l);
      curve[0].push(i); curve[1].push(l);
      chart.setData(curve);
    }
    out.loss.dispose();
    out.logits.dispose();
    liveAfter.push(session.memory().numBytes);
    if (i === settleAt) settled = loopFigures(telemetry);
    if (i === steps - 1) end = loopFigures(telemetry); // in the loop: not the diagnosis built after it
  }, { warmup: 1, iterations: steps - 1, session });
  losses.forEach((l, k) => print(`step ${k * 50}: loss ${l.toFixed(4)}`));

  // held-out points, through the same step's logits (a copy of the state, so it does not train on them)
  const test = spirals(100, 2);
  const names = ['w0', 'b0', 'w1', 'b1', 'w2', 'b2'];
  const trained = Object.fromEntries(names.map((n) => [n, state.get(n)]));
  const evalState = step.createState(trained);
  const tx = session.tensor(test.x, [test.labels.length, 2]);
  const ty = session.tensor(test.y, [test.labels.length, 2]);
  const out = step.run({ x: tx, y: ty }, evalState);
  const acc = await accuracy(out.logits, test.labels);
  print(`held-out accuracy: ${(acc * 100).toFixed(1)} %`);
  print('watch:', d.verdict, '—', d.summary);
  printSettled(print, settleAt, settled, end, steps);
  const flat = liveAfter.every((b) => b === liveAfter[0]);
  for (const t of [out.logits, out.loss, tx, ty, x, y, ...Object.values(trained)]) t.dispose();
  const stateBytes = state.byteLength;
  evalState.dispose(); state.dispose(); step.dispose();
  const bytesAtEnd = session.memory().numBytes;
  session.dispose();
  const runtime = (snap) => (snap ?? []).filter((m) => m.scope === 'runtime.memory').map((m) => [m.name, m.value]);
  // liveBytes: session.memory().numBytes after the first step (`flat`: after every step the same),
  // for tests/browser-examples/ to check against the bytes the shapes imply
  return { liveBytes: liveAfter[0], curvePoints: curve[0].length, summary: d.summary, runtimeWarm: runtime(d.snapshots?.warm), runtimeAfter: runtime(d.snapshots?.after), settled, end, accuracy: acc, verdict: d.verdict, flat, firstLoss: losses[0], lastLoss: losses.at(-1), stateBytes, bytesAtEnd };
});
