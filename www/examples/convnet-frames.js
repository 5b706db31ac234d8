// A MobileNet-style convnet over a stream of frames drawn on an OffscreenCanvas
// (examples/convnet_frames.rs in the browser): compiled = eager on the first frame; the frame loop
// steady when each output is disposed, ownership-leak naming the output when outputs are kept.
import init, { Session, Program, telemetry } from '../../pkg/affon.js';
import { example, print } from './page.js';
import { SIZE, weights, program, frame } from './frames.js';

example(async () => {
  await init();
  const session = await Session.create({ label: 'convnet-frames' });
  const exe = session.compile(program(Program, weights(7)));
  const canvas = new OffscreenCanvas(SIZE, SIZE);
  const pixels = new Float32Array(SIZE * SIZE * 3); // one buffer for every frame
  // the same network eagerly, op by op, from the same weights
  const w = weights(7);
  const t = Object.fromEntries(Object.entries(w).map(([k, v]) => [k, session.tensor(v.data, v.shape)]));
  const bnRelu6 = (v, bn) => v.batchNorm(t[`${bn}_mean`], t[`${bn}_var`], t[`${bn}_offset`], t[`${bn}_scale`], 1e-3).clipByValue(0, 6);
  const f0 = session.tensor(frame(canvas, 0), [1, SIZE, SIZE, 3]);
  const eager = session.tidy(() => {
    let h = bnRelu6(f0.conv2d(t.stem, 2, 'same'), 'bn0');
    [2, 1].forEach((stride, b) => {
      const d = bnRelu6(h.depthwiseConv2d(t[`dw${b}`], stride, 'same'), `bn${b}a`);
      h = bnRelu6(d.conv2d(t[`pw${b}`], 1, 'same'), `bn${b}b`);
    });
    return h.mean([1, 2]).matmul(t.dense).softmax();
  });
  const out = exe.run({ frame: f0 }).probs;
  const [a, b] = [await out.toArray(), await eager.toArray()];
  const diff = Math.max(...a.map((v, i) => Math.abs(v - b[i])));
  print('frame 0 probabilities:', Array.from(a, (v) => v.toFixed(4)).join(' '));
  print(`max |compiled − eager| = ${diff.toExponential(2)}`);
  for (const x of [out, eager, f0, ...Object.values(t)]) x.dispose();

  const classes = [];
  const good = await telemetry.watch(async (i) => {
    const f = session.tensor(frame(canvas, i, pixels), [1, SIZE, SIZE, 3]);
    const probs = exe.run({ frame: f }).probs;
    const top = probs.argMax();
    classes.push(Number(await top.item()));
    top.dispose(); probs.dispose(); f.dispose();
  }, { warmup: 2, iterations: 20, session });
  print('outputs disposed every frame →', good.verdict, '—', good.summary);
  const history = [];
  const leaky = await telemetry.watch((i) => {
    const f = session.tensor(frame(canvas, i, pixels), [1, SIZE, SIZE, 3]);
    history.push(exe.run({ frame: f }).probs); // kept "to draw a chart later", never disposed
    f.dispose();
  }, { warmup: 2, iterations: 20, session });
  print('outputs kept in a history array →', leaky.verdict, '—', leaky.summary);
  history.forEach((h) => h.dispose());
  exe.dispose();
  const bytesAtEnd = session.memory().numBytes;
  session.dispose();
  // probs: frame 0's compiled probabilities at full precision, for the float64 reference in
  // tests/browser-examples/ (the 4 decimals printed above cannot tell frame 0 from a grey frame)
  return { diff, probs: Array.from(a), classes, good: { verdict: good.verdict, summary: good.summary }, leaky: { verdict: leaky.verdict, grown: leaky.grownOrigins }, bytesAtEnd };
});
