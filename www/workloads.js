// The demo's workloads: the leak patterns of the seeds (TensorFlow.js habits and affon's ownership
// rules) and their correct counterparts. Each is `{id, title, expect, pattern, code, setup(session),
// iterate(ctx, i), release(ctx), context}`; `iterate` runs one iteration (the loop calls
// `telemetry.nextIteration()` before it, and awaits it when it returns a promise). Tensors are 64 × 1024 float32 = 256 KiB unless stated.
import { Program } from '../pkg/affon.js';
import { spirals, mlpStep, mlpInit } from './examples/training.js';
import { weights as decoderWeights, stepProgram as decoderStep, generate, PROMPT } from './examples/decoder.js';
import { SIZE as FRAME, weights as convnetWeights, program as convnetProgram, frame } from './examples/frames.js';

const ROWS = 64;
const COLS = 1024;

function affineProgram() {
  const p = new Program('affine');
  const x = p.input('x', 'float32', [-1, COLS]);
  const bias = p.constant(new Float32Array(COLS).fill(0.5), [COLS]);
  p.output('y', p.relu(p.add(x, bias)));
  return p;
}

function runningMeanProgram() {
  const p = new Program('running_mean');
  const x = p.input('x', 'float32', [-1, COLS]);
  const acc = p.state('acc', 'float32', [ROWS, COLS]);
  const next = p.add(acc, x);
  p.assign('acc', next);
  p.output('y', p.relu(next));
  return p;
}

/** A "model": a program whose weights (64 KiB) are a constant uploaded by compile. */
function modelProgram(weights) {
  const p = new Program('model');
  const x = p.input('x', 'float32', [-1, 128]);
  const w = p.constant(weights, [128, 128]);
  p.output('y', p.relu(p.matmul(x, w)));
  return p;
}

/** Disposes whatever a workload kept (tensors, states, executables; idempotent). */
function disposeAll(list) {
  let n = 0;
  for (const o of list.splice(0)) {
    const obj = o instanceof WeakRef ? o.deref() : o;
    if (obj && !obj.disposed) { obj.dispose(); n++; }
  }
  return n;
}

const SIZES = [1000, 1500, 2300, 3500, 5200, 7800, 11700, 17500, 26000, 39000, 58000, 87000];

export const WORKLOADS = [
  {
    id: 'square-leak',
    title: 'square loop without tidy (leaks)',
    expect: 'ownership-leak',
    pattern: "each iteration b = a.square() and b is never disposed (the TF.js seed's leak)",
    code: `const a = session.randomNormal([64, 1024]);
loop: const b = a.square();   // b never disposed`,
    setup(session) { return { session, a: session.randomNormal([ROWS, COLS], { seed: 1 }), kept: [] }; },
    iterate(ctx) {
      const b = ctx.a.square(); // never disposed
      ctx.kept.push(b); // not part of the pattern: only so "release retained" can reclaim it
    },
    release(ctx) { const n = disposeAll(ctx.kept); ctx.a.dispose(); return `disposed ${n} leaked tensors`; },
    context: { program: 'eager square', inputs: [{ name: 'a', shape: [ROWS, COLS], dtype: 'float32' }] },
  },
  {
    id: 'square-forgotten',
    title: 'square loop, handles left to the GC (leaks, forgotten)',
    expect: 'ownership-leak',
    pattern: 'each iteration b = a.square() and the handle is dropped: the JS GC collects it, the storage stays (forgotten)',
    code: `const a = session.randomNormal([64, 1024]);
loop: a.square();   // result dropped: collected, never disposed`,
    setup(session) { return { session, a: session.randomNormal([ROWS, COLS], { seed: 1 }), weak: [] }; },
    iterate(ctx) {
      ctx.weak.push(new WeakRef(ctx.a.square())); // a WeakRef does not keep the handle alive
    },
    release(ctx) {
      const n = disposeAll(ctx.weak);
      ctx.a.dispose();
      return `disposed ${n} handles not yet collected; collected ones stay allocated until the page reloads (see "forgotten")`;
    },
    context: { program: 'eager square', inputs: [{ name: 'a', shape: [ROWS, COLS], dtype: 'float32' }] },
  },
  {
    id: 'square-tidy',
    title: 'the same inside session.tidy (steady)',
    expect: 'steady',
    pattern: 'each iteration session.tidy(() => a.square()) disposes b when the scope closes',
    code: `const a = session.randomNormal([64, 1024]);
loop: session.tidy(() => { const b = a.square(); });`,
    setup(session) { return { session, a: session.randomNormal([ROWS, COLS], { seed: 1 }) }; },
    iterate(ctx) { ctx.session.tidy(() => { ctx.a.square(); }); },
    release(ctx) { ctx.a.dispose(); return 'disposed a'; },
    context: { program: 'eager square in tidy', inputs: [{ name: 'a', shape: [ROWS, COLS], dtype: 'float32' }] },
  },
  {
    id: 'retained-outputs',
    title: 'program outputs kept in a list (leaks)',
    expect: 'ownership-leak',
    pattern: 'exe.run() outputs pushed to a history array and never disposed',
    code: `const exe = session.compile(affine);     // y = relu(x + bias)
loop: history.push(exe.run({ x }).y);     // outputs retained`,
    setup(session) {
      const exe = session.compile(affineProgram());
      return { session, exe, x: session.randomNormal([ROWS, COLS], { seed: 2 }), history: [] };
    },
    iterate(ctx) { ctx.history.push(ctx.exe.run({ x: ctx.x }).y); },
    release(ctx) { const n = disposeAll(ctx.history); ctx.x.dispose(); ctx.exe.dispose(); return `disposed ${n} outputs`; },
    context: { program: 'affine', inputs: [{ name: 'x', shape: [ROWS, COLS], dtype: 'float32' }] },
  },
  {
    id: 'retained-states',
    title: 'a new ExecutionState per iteration, kept (leaks)',
    expect: 'ownership-leak',
    pattern: 'exe.createState() every iteration; old states kept alive, never disposed (outputs are disposed)',
    code: `const exe = session.compile(runningMean); // state acc [64, 1024]
loop: const s = exe.createState(); states.push(s);
      exe.run({ x }, s).y.dispose();`,
    setup(session) {
      const exe = session.compile(runningMeanProgram());
      return { session, exe, x: session.ones([ROWS, COLS]), states: [] };
    },
    iterate(ctx) {
      const state = ctx.exe.createState();
      ctx.states.push(state);
      ctx.exe.run({ x: ctx.x }, state).y.dispose();
    },
    release(ctx) { const n = disposeAll(ctx.states); ctx.x.dispose(); ctx.exe.dispose(); return `disposed ${n} states`; },
    context: { program: 'running_mean', inputs: [{ name: 'x', shape: [ROWS, COLS], dtype: 'float32' }] },
  },
  {
    id: 'model-recreated',
    title: 'model recreated every iteration, never disposed (leaks)',
    expect: 'ownership-leak',
    pattern: 'session.compile(model) every iteration (weights are a 64 KiB constant), kept in a list of models; the Executable is never disposed',
    code: `loop: const exe = session.compile(model(weights)); // constant [128, 128]
      models.push(exe);                             // exe.dispose() missing
      exe.run({ x }).y.dispose();`,
    setup(session) {
      const weights = new Float32Array(128 * 128).map((_, i) => ((i * 7919) % 200) / 1000 - 0.1);
      return { session, weights, x: session.ones([8, 128]), exes: [] };
    },
    iterate(ctx) {
      const exe = ctx.session.compile(modelProgram(ctx.weights));
      ctx.exes.push(exe); // kept (an unreachable Executable is freed by the GC's finalizer)
      exe.run({ x: ctx.x }).y.dispose();
    },
    release(ctx) { const n = disposeAll(ctx.exes); ctx.x.dispose(); return `disposed ${n} executables`; },
    context: { program: 'model', inputs: [{ name: 'x', shape: [8, 128], dtype: 'float32' }] },
  },
  {
    id: 'growing-shapes',
    title: 'growing shapes [i+1, 1024] (shape growth)',
    expect: 'shape-growth',
    pattern: 'each iteration a tidy over ones([i + 1, 1024]).square(): nothing retained, shapes grow',
    code: `loop(i): session.tidy(() => session.ones([i + 1, 1024]).square());`,
    setup(session) { return { session }; },
    iterate(ctx, i) { ctx.session.tidy(() => { ctx.session.ones([i + 1, COLS]).square(); }); },
    release() { return 'nothing retained'; },
    context: { program: 'eager ones + square', inputs: [{ name: 'x', shape: ['i + 1', COLS], dtype: 'float32' }] },
  },
  {
    id: 'distinct-sizes',
    title: `${SIZES.length} distinct sizes in turn (pool retention)`,
    expect: 'pool-retention',
    pattern: `each iteration a tidy over ones([n]).square(), n cycling through ${SIZES.length} sizes: the pool caches one class per size`,
    code: `const sizes = [${SIZES.slice(0, 4).join(', ')}, …, ${SIZES.at(-1)}];
loop(i): session.tidy(() => session.ones([sizes[i % ${SIZES.length}]]).square());`,
    setup(session) { return { session }; },
    iterate(ctx, i) { ctx.session.tidy(() => { ctx.session.ones([SIZES[i % SIZES.length]]).square(); }); },
    release() { return 'nothing retained (the pool keeps its cache: "clear pool cache" releases it)'; },
    context: { program: 'eager ones + square', inputs: [{ name: 'x', shape: ['n of ' + SIZES.join('|')], dtype: 'float32' }] },
  },
  ...trainingWorkloads(),
  ...decodingWorkloads(),
  ...frameWorkloads(),
];

/** The MobileNet-style network of examples/frames.js over frames drawn on an OffscreenCanvas. */
function frameWorkloads() {
  const setup = (session) => ({
    session,
    exe: session.compile(convnetProgram(Program, convnetWeights(7))),
    canvas: new OffscreenCanvas(FRAME, FRAME),
    pixels: new Float32Array(FRAME * FRAME * 3),
    kept: [],
  });
  const classify = (ctx, i) => {
    const f = ctx.session.tensor(frame(ctx.canvas, i, ctx.pixels), [1, FRAME, FRAME, 3]);
    const probs = ctx.exe.run({ frame: f }).probs;
    f.dispose();
    return probs;
  };
  const release = (ctx) => { const n = disposeAll(ctx.kept); ctx.exe.dispose(); return `disposed ${n} kept outputs`; };
  const context = { program: 'mobilenet (conv 3×3/2, 2 depthwise-separable blocks, batchNorm, relu6, avg pool, dense)', inputs: [{ name: 'frame', shape: [1, FRAME, FRAME, 3], dtype: 'float32' }] };
  return [
    {
      id: 'frames-convnet',
      title: 'camera-style frames through a convnet, output disposed (correct)',
      expect: 'steady',
      pattern: 'each frame is drawn on an OffscreenCanvas, uploaded, classified by one compiled network; the frame and the output are disposed',
      code: `loop(i): const f = session.tensor(draw(canvas, i, pixels), [1, 64, 64, 3]);
         const probs = net.run({ frame: f }).probs; f.dispose(); /* use probs */ probs.dispose();`,
      setup,
      iterate(ctx, i) { classify(ctx, i).dispose(); },
      release,
      context,
    },
    {
      id: 'frames-history',
      title: 'camera-style frames: every output kept in a history array (leaks)',
      expect: 'ownership-leak',
      pattern: "each frame's probabilities are pushed to a history array (to draw a chart later) and never disposed",
      code: `loop(i): const f = session.tensor(draw(canvas, i, pixels), [1, 64, 64, 3]);
         history.push(net.run({ frame: f }).probs); f.dispose();   // 40 B a frame, never disposed`,
      setup,
      iterate(ctx, i) { ctx.kept.push(classify(ctx, i)); },
      release,
      context,
    },
  ];
}

/** One "generate call" of the decoder (examples/decoder.js): greedy decoding of 4 tokens after a
 *  4-token prompt through the compiled step and `cache` — each predicted token is read back
 *  (`await next.item()`) and fed to the next step. The tokens are kept on ctx for the page and tests. */
async function decodeCall(ctx, cache) {
  const { tokens } = await generate(ctx.session, ctx.exe, cache, PROMPT.slice(0, 4), 4);
  ctx.tokens = tokens;
  ctx.calls = (ctx.calls ?? 0) + 1;
}

function decodingWorkloads() {
  const setup = (session) => ({ session, exe: session.compile(decoderStep(Program, decoderWeights(42))), kept: [] });
  const release = (ctx) => {
    const n = disposeAll(ctx.kept);
    ctx.cache?.dispose(); ctx.exe.dispose();
    return `disposed ${n} retained caches`;
  };
  const context = { program: 'decode (transformer, 2 layers, KV cache 2 × 2 × [64, 32] in state)', inputs: [{ name: 'token', shape: [1], dtype: 'int32' }, { name: 'pos', shape: [], dtype: 'int32' }] };
  return [
    {
      id: 'decode-cache-reused',
      title: 'decoding: one KV cache reused by every generate call (correct)',
      expect: 'steady',
      pattern: 'the KV cache is an ExecutionState of fixed capacity, rows written in place each step; every generate call reuses it',
      code: `const cache = step.createState({});        // k0, v0, k1, v1: [64, 32] each
loop: await generate(step, cache, prompt, 4)  // greedy: next = await step.run({ token, pos }, cache).next.item()`,
      setup(session) { const ctx = setup(session); ctx.cache = ctx.exe.createState({}); return ctx; },
      iterate(ctx) { return decodeCall(ctx, ctx.cache); },
      release,
      context,
    },
    {
      id: 'decode-new-cache',
      title: 'decoding: a new KV cache per generate call, never disposed (leaks)',
      expect: 'ownership-leak',
      pattern: 'each generate call creates its own cache and drops it without dispose() (transformers.js #1734: past_key_values never freed)',
      code: `loop: const cache = step.createState({});   // 32 KiB a call, never disposed
      await generate(step, cache, prompt, 4)`,
      setup,
      // ctx.kept is not part of the pattern (the caller drops each cache): only so "release retained" can reclaim them
      iterate(ctx) { const cache = ctx.exe.createState({}); ctx.kept.push(cache); return decodeCall(ctx, cache); },
      release,
      context,
    },
  ];
}

/** The spirals MLP's training data (400 points) and compiled step, for the training workloads. */
function trainingSetup(session) {
  const exe = session.compile(mlpStep(Program, [2, 32, 32, 2]));
  const data = spirals(200, 1);
  const n = data.labels.length;
  return { session, exe, x: session.tensor(data.x, [n, 2]), y: session.tensor(data.y, [n, 2]), kept: [], losses: [] };
}

function trainingState(ctx) {
  const init = mlpInit(ctx.session, [2, 32, 32, 2]);
  const state = ctx.exe.createState(init);
  for (const t of Object.values(init)) t.dispose();
  return state;
}

/** Every 5th step, the loss read back (`await loss.item()`) into `ctx.losses` as [iteration, loss]:
 *  the demo draws them as a live loss curve. Returns a promise on those steps only. */
function noteLoss(ctx, i, loss) {
  if (i % 5 !== 0) return null;
  return loss.item().then((v) => { ctx.losses.push([i, Number(v)]); if (ctx.losses.length > 500) ctx.losses.shift(); });
}

function trainingRelease(ctx) {
  const n = disposeAll(ctx.kept);
  ctx.state?.dispose();
  ctx.x.dispose(); ctx.y.dispose(); ctx.exe.dispose();
  return `disposed ${n} retained objects`;
}

function trainingWorkloads() {
  const trainingContext = { program: 'spirals_step (MLP 2-32-32-2, Adam)', inputs: [{ name: 'x', shape: [400, 2], dtype: 'float32' }, { name: 'y', shape: [400, 2], dtype: 'float32' }] };
  return [
    {
      id: 'train-step',
      title: 'training: one compiled step per iteration (correct)',
      expect: 'steady',
      pattern: 'forward, p.grad and p.adam in one Executable; parameters and Adam slots in one ExecutionState; outputs disposed',
      code: `const step = session.compile(mlpStep);  // forward + p.grad + p.adam
const state = step.createState(init);    // parameters + Adam's m, v, t
loop: { const out = step.run({ x, y }, state); out.loss.dispose(); out.logits.dispose(); }`,
      setup(session) { const ctx = trainingSetup(session); ctx.state = trainingState(ctx); return ctx; },
      async iterate(ctx, i) {
        const out = ctx.exe.run({ x: ctx.x, y: ctx.y }, ctx.state);
        out.logits.dispose();
        try { await noteLoss(ctx, i, out.loss); } finally { out.loss.dispose(); }
      },
      release: trainingRelease,
      context: trainingContext,
    },
    {
      id: 'train-state-recreated',
      title: 'training: optimizer state recreated every epoch (leaks)',
      expect: 'ownership-leak',
      pattern: 'every 2 steps (a short "epoch") a new ExecutionState — parameters and Adam slots — is created and the old one is never disposed (the TF.js seed: optimizers and models recreated)',
      code: `loop(i): if (i % 2 === 0) state = step.createState(init);  // old state never disposed
         const out = step.run({ x, y }, state); out.loss.dispose(); out.logits.dispose();`,
      setup(session) { return trainingSetup(session); },
      async iterate(ctx, i) {
        if (i % 2 === 0 || !ctx.state) { ctx.state = trainingState(ctx); ctx.kept.push(ctx.state); }
        const out = ctx.exe.run({ x: ctx.x, y: ctx.y }, ctx.state);
        out.logits.dispose();
        try { await noteLoss(ctx, i, out.loss); } finally { out.loss.dispose(); }
      },
      release(ctx) { ctx.state = null; return trainingRelease(ctx); },
      context: trainingContext,
    },
    {
      id: 'train-loss-history',
      title: 'training: loss tensors kept in a history array (leaks)',
      expect: 'ownership-leak',
      pattern: "each step's loss tensor is pushed to a history array to plot later, never disposed (keep the number: await loss.item(), then dispose)",
      code: `loop: const out = step.run({ x, y }, state);
      history.push(out.loss);          // a 4-byte tensor per step, never disposed
      out.logits.dispose();`,
      setup(session) { const ctx = trainingSetup(session); ctx.state = trainingState(ctx); return ctx; },
      iterate(ctx, i) { const out = ctx.exe.run({ x: ctx.x, y: ctx.y }, ctx.state); ctx.kept.push(out.loss); out.logits.dispose(); return noteLoss(ctx, i, out.loss); },
      release: trainingRelease,
      context: trainingContext,
    },
  ];
}

export const byId = (id) => WORKLOADS.find((w) => w.id === id);
