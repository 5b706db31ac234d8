// The JS examples in www/examples/, opened in headless Chromium (WebGPU) through scripts/serve.mjs:
// each page must finish with body[data-result="ok"], no page errors, and the exact figures it
// documents in `window.exampleResult`. Run: scripts/build-pkg.sh && node --test tests/browser-examples/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open } from '../browser/chromium.mjs';
import { VOCAB, D, LAYERS, HIDDEN, CAPACITY, PROMPT } from '../../www/examples/decoder.js';
import { decoderLogits, greedyMismatches, convnetProbs, erf, gelu } from './reference.mjs';

let env;
before(async () => { env = await launch(); }); // Chromium with WebGPU + scripts/serve.mjs on a free port
after(async () => { await env?.close(); });

/** Opens an example page and returns its `window.exampleResult` once it has finished; with `inPage`
 *  (a function for page.evaluate), also what that returns, evaluated in the finished page. */
async function runExample(name, timeout = 60_000, inPage = null) {
  const { page, errors } = await open(env, `/www/examples/${name}.html`);
  await page.waitForSelector('body[data-result]', { state: 'attached', timeout });
  const status = await page.evaluate(() => document.body.dataset.result);
  const result = await page.evaluate(() => window.exampleResult);
  const text = await page.textContent('#out');
  const extra = inPage && status === 'ok' ? await page.evaluate(inPage) : undefined;
  await page.close();
  assert.equal(status, 'ok', `${name}: ${status}\n${text}`);
  assert.deepEqual(errors.map(String), [], `${name}: page errors`);
  assert.ok(text.trim().length > 0, `${name}: nothing printed`);
  return { result, text, extra };
}

test('the float64 reference: erf and gelu against published values', () => {
  // erf, gelu: mpmath at 30 digits, rounded to doubles
  for (const [x, v] of [[0.1, 0.1124629160182849], [0.5, 0.5204998778130465], [1, 0.8427007929497149],
    [2, 0.9953222650189527], [3, 0.9999779095030014], [4, 0.9999999845827421]]) {
    assert.ok(Math.abs(erf(x) - v) < 1e-15 && Math.abs(erf(-x) + v) < 1e-15, `erf(${x}) = ${erf(x)}, not ${v}`);
  }
  assert.ok(Math.abs(gelu(1) - 0.8413447460685429) < 1e-15, `gelu(1) = ${gelu(1)}`); // Φ(1)
  assert.ok(Math.abs(gelu(-2) + 0.04550026389635842) < 1e-15, `gelu(-2) = ${gelu(-2)}`); // −2 Φ(−2)
});

test('index links every example', async () => {
  const { page, errors } = await open(env, '/www/examples/');
  const links = await page.$$eval('a[href$=".html"]', (as) => as.map((a) => a.getAttribute('href')));
  assert.deepEqual(links.sort(), ['convnet-frames.html', 'decode-kv.html', 'eager.html', 'leak-diagnosis.html', 'program.html', 'tidy.html', 'train-convnet.html', 'train-mlp.html']);
  for (const href of links) {
    const res = await page.request.get(`${env.base}/www/examples/${href}`);
    assert.equal(res.status(), 200, href);
  }
  await page.close();
  assert.deepEqual(errors, []);
});

test('eager.html: op results, dtypes, and bytes back to 0 after dispose', async () => {
  const { result: r } = await runExample('eager');
  assert.deepEqual(r.sum, [11, 22, 33, 14, 25, 36]); // [[1,2,3],[4,5,6]] + [10,20,30], broadcast
  assert.deepEqual(r.sumShape, [2, 3]);
  assert.deepEqual(r.rowTotals, [6, 15]);
  assert.deepEqual(r.gram, [14, 32, 32, 77]); // a · aᵀ
  assert.deepEqual(r.gramShape, [2, 2]);
  assert.deepEqual(r.probs, [0.25, 0.25, 0.25, 0.25]);
  assert.deepEqual(r.quotient, [3, -3]); // int32 division truncates toward zero
  assert.equal(r.quotientType, 'Int32Array');
  assert.deepEqual(r.truncated, [1, -1]); // float → int32 truncates
  assert.equal(r.mean, 3.5);
  // 13 tensors: 24+12+24+8+24+16+16+16+8+8+8+8+8 bytes (4 bytes per element, every dtype).
  assert.equal(r.bytesBeforeDispose, 180);
  assert.equal(r.bytesAfterDispose, 0);
});

test('program.html: state after 100 runs, flat live bytes, one compile, memory plan', async () => {
  const { result: r } = await runExample('program');
  assert.deepEqual(r.acc, [300, 300, 300, 300]); // 100 runs × 3 rows of ones
  assert.equal(r.bytesBefore, 48 + 16); // input [3, 4] + state [4]
  assert.equal(r.bytesAfter, r.bytesBefore); // every output disposed: nothing accumulates
  assert.equal(r.bytesAtEnd, 0);
  assert.equal(r.compiles, 1);
  assert.equal(r.stateBytes, 16);
  assert.deepEqual(r.plan, { intermediateBytes: 32, outputBytes: 16, stateBytes: 16, peakBytes: 32 });
  assert.equal(r.json.format, 'affon.program/1');
  assert.deepEqual(r.json.nodes.map((n) => n.op), ['input', 'state', 'sum', 'add', 'relu']);
  assert.deepEqual(r.json.outputs, [{ name: 'y', node: 4 }]);
  assert.deepEqual(r.json.assign, [{ state: 'acc', node: 3 }]);
});

test('tidy.html: numBytes before/after tidy and keep', async () => {
  const { result: r } = await runExample('tidy');
  const x = 64 * 784 * 4; // 200,704
  const w = 784 * 10 * 4; // 31,360
  const out = 64 * 10 * 4; // 2,560: each [64, 10] tensor of the chain
  assert.deepEqual(r.start, { numTensors: 2, numBytes: x + w });
  assert.deepEqual(r.withoutTidy, { numTensors: 5, numBytes: x + w + 3 * out }); // matmul, relu, softmax
  assert.deepEqual(r.leftover, { numTensors: 4, numBytes: x + w + 2 * out }); // two leaked
  assert.deepEqual(r.afterTidy, { numTensors: 5, numBytes: x + w + 3 * out }); // + the tidy result only
  assert.deepEqual(r.afterKeep, { numTensors: 7, numBytes: x + w + 4 * out + 4 }); // + kept relu + scalar sum
  assert.deepEqual(r.afterObject, { numTensors: 9, numBytes: x + w + 4 * out + 12 }); // + mean, max scalars
  assert.deepEqual(r.end, { numTensors: 2, numBytes: 2 * out }); // only the untidy chain's leak remains
  assert.equal(r.rowsSumToOne, true);
  // The peak is inside the keep-tidy, once h.sum() is made: x, w, the 2 leaked, probs, h, the kept
  // relu and the scalar sum are live (x + w + 5·out + 4). Every other moment holds less: the untidy
  // chain x + w + 3·out; the tidy chain x + w + 5·out (2 leaked + its matmul, relu and softmax before
  // the first two are disposed); the object tidy x + w + 4·out + 12; probs.sum(1) 256 bytes more. No
  // op here takes scratch: a reduction of 640 elements runs unsplit (reduce_parts: 640 / 16,384 < 2
  // parts), softmax rows of 10 run whole (line_parts), matmul and relu take none, and the random
  // inputs are made on the host (src/ops/mod.rs scratch_words, src/session/make.rs).
  assert.equal(r.peakBytes, x + w + 5 * out + 4, `peakBytes ${r.peakBytes}`);
});

test('leak-diagnosis.html: ownership-leak naming square, then steady after the fix', async () => {
  const { result: r, text } = await runExample('leak-diagnosis');
  assert.equal(r.leaky.verdict, 'ownership-leak');
  assert.deepEqual(r.leaky.grownOrigins, ['square']);
  const live = r.leaky.evidence.find((e) => e.metric === 'compute.storage/live_bytes');
  assert.equal(live.perIteration, 4000); // one [1000] float32 square kept per iteration
  assert.equal(live.after - live.warm, 20 * 4000);
  assert.match(r.leaky.summary, /square/);
  // Owners after the leaky loop: 5 warm-up + 20 measured squares, and x.
  assert.deepEqual(r.owners.map(({ origin, count, bytes }) => ({ origin, count, bytes })), [
    { origin: 'square', count: 25, bytes: 100_000 },
    { origin: 'ones', count: 1, bytes: 4000 },
  ]);
  assert.equal(r.report.diagnosis.verdict, 'ownership-leak');
  assert.equal(r.report.ownership.liveTensors, 26);
  assert.equal(r.report.ownership.owners[0].origin, 'square');
  assert.equal(r.report.affon.version, '0.1.0');
  assert.equal(r.fixed.verdict, 'steady');
  assert.deepEqual(r.fixed.grownOrigins, []);
  assert.match(text, /leaky loop → ownership-leak/);
  assert.match(text, /fixed loop → steady/);
});

/** Steady, and settled: from a quarter of the way in, no bind group is made (a step binds only
 *  ones it made before) and wasm memory does not grow. */
function steadyAndSettled(r) {
  console.log(`${r.verdict}: bind groups ${r.settled.bindGroups} → ${r.end.bindGroups}, wasm ${r.settled.wasm} → ${r.end.wasm}, JS heap ${r.settled.heap} → ${r.end.heap}`);
  assert.equal(r.verdict, 'steady', r.summary);
  assert.equal(r.end.bindGroups, r.settled.bindGroups, 'no bind group made after the loop settled');
  // wasm memory grows by whole 64 KiB pages: one after settling is the allocator's granule (a
  // 1,600-step run of train-mlp shows the same single page as 400 steps: bounded, not per step), and
  // a second one comes when V8 has not collected within the window — dispose() releases a handle's
  // storage at once, but its few dozen bytes of wasm-side wrapper wait for the JS collection: in 8
  // runs of train-mlp (node --test --test-name-pattern=train-mlp tests/browser-examples/), the 3 whose
  // JS heap had been collected grew one page, the 5 without two
  assert.ok(r.end.wasm - r.settled.wasm <= 2 * 65536, `wasm memory grew by ${r.end.wasm - r.settled.wasm} B after the loop settled`);
}

test('train-mlp.html: two spirals to ≥ 95 % held-out, a steady loop, flat live bytes', async () => {
  const { result: r } = await runExample('train-mlp', 300_000);
  assert.ok(r.accuracy >= 0.95, `accuracy ${r.accuracy}`);
  steadyAndSettled(r);
  assert.ok(r.lastLoss < r.firstLoss / 10, `loss ${r.firstLoss} → ${r.lastLoss}`);
  // parameters (2·64 + 64 + 64·64 + 64 + 64·2 + 2 floats) × 3 (Adam's m and v) + adam/t
  const state = (128 + 64 + 4096 + 64 + 128 + 2) * 4 * 3 + 4;
  assert.equal(r.stateBytes, state);
  // Live after every step: the state, x and y (spirals(200): 400 points [400, 2]) and the step's
  // constants, 51 scalars of 4 bytes (mlpStep's JSON): p.adam's 6 per parameter (β1, 1 − β1, β2,
  // 1 − β2, ε, learning rate) × 6 parameters and 5 for the step count and bias corrections (1, β1,
  // 1, β2, 1), and p.grad's 10 (the loss seed and mean's count: 1, true, 1, true; logSoftmax's
  // two where-masks: true, true; each relu's 0 and 0, two relus). Outputs are disposed each step.
  const x = 400 * 2 * 4, y = 400 * 2 * 4, constants = (6 * 6 + 5 + 10) * 4;
  assert.equal(r.liveBytes, state + x + y + constants, `live bytes after the first step: ${r.liveBytes}`);
  assert.equal(r.flat, true, `live bytes after every step = ${r.liveBytes}`);
  assert.equal(r.bytesAtEnd, 0);
  assert.equal(r.curvePoints, 40, 'the live loss curve: a point every 10 steps');
});

test('train-convnet.html: shapes to ≥ 90 % held-out, a steady loop, flat live bytes', async () => {
  const { result: r } = await runExample('train-convnet', 600_000); // SwiftShader: minutes
  assert.ok(r.accuracy >= 0.9, `accuracy ${r.accuracy}`);
  steadyAndSettled(r);
  // parameters k1 [3,3,1,8], c1 [8], k2 [3,3,8,16], c2 [16], w [784,3], b [3] × 3 (Adam's m and v) + adam/t
  const state = (3 * 3 * 1 * 8 + 8 + 3 * 3 * 8 * 16 + 16 + 784 * 3 + 3) * 4 * 3 + 4;
  assert.equal(r.stateBytes, state);
  // before the loop: the step's constants (live from compile), the state and 20 batches of x [32, 28, 28, 1]
  // and y [32, 3]; after the first step and every later one exactly that: a step leaves nothing behind
  const batches = 20 * (32 * 28 * 28 * 4 + 32 * 3 * 4);
  assert.ok(r.constantBytes > 0 && r.constantBytes % 4 === 0, `constants ${r.constantBytes} B`);
  assert.equal(r.liveBefore, r.constantBytes + state + batches);
  assert.equal(r.liveBytes, r.liveBefore, 'live bytes after the first step = before the loop');
  assert.equal(r.flat, true, 'live bytes identical after every step');
  assert.ok(r.lastLoss < r.firstLoss / 5, `loss ${r.firstLoss} → ${r.lastLoss}`);
  assert.equal(r.bytesAtEnd, 0);
});

/** The compiled decoding step's logits (the argMax's input, added as a second output of the same
 *  stepProgram) at every position of `tokens`, run in order on one fresh KV cache, and its `next`. */
async function compiledStepLogits(tokens) {
  const { page, errors } = await open(env, '/www/examples/index.html');
  const r = await page.evaluate(async (tokens) => {
    const affon = await import('/pkg/affon.js');
    const { weights, stepProgram } = await import('/www/examples/decoder.js');
    await affon.default();
    const session = await affon.Session.create({ label: 'decode-logits' });
    let program, logits;
    // stepProgram(Program, w) with argMax's input kept: a proxy over the real Program
    function Tapped(name) {
      program = new affon.Program(name);
      return new Proxy(program, {
        get(p, k) {
          if (k === 'argMax') return (x, axis) => { logits = x; return p.argMax(x, axis); };
          const v = Reflect.get(p, k);
          return typeof v === 'function' ? v.bind(p) : v;
        },
      });
    }
    stepProgram(Tapped, weights(42));
    program.output('logits', logits);
    const exe = session.compile(program);
    const cache = exe.createState({});
    const out = { logits: [], next: [] };
    for (let pos = 0; pos < tokens.length - 1; pos++) {
      const t = session.tensor([tokens[pos]], [1], 'int32');
      const at = session.tensor([pos], [], 'int32');
      const o = exe.run({ token: t, pos: at }, cache);
      out.logits.push(Array.from(await o.logits.toArray()));
      out.next.push(Number(await o.next.item()));
      for (const x of [o.logits, o.next, t, at]) x.dispose();
    }
    cache.dispose(); exe.dispose(); session.dispose();
    return out;
  }, tokens);
  await page.close();
  assert.deepEqual(errors.map(String), [], 'page errors');
  return r;
}

test('decode-kv.html: tokens and logits against a float64 decoder; a new cache per call leaks, named; one cache is steady', async () => {
  const { result: r } = await runExample('decode-kv', 300_000);
  assert.equal(r.tokens.length, PROMPT.length + 12);
  assert.deepEqual(r.tokens.slice(0, PROMPT.length), PROMPT);
  // The generated tokens against the float64 decoder (reference.mjs: weights(42) from decoder.js's own
  // generator, exact-erf gelu, layerNorm ε 1e-5, causal attention over positions 0…pos): each must
  // be the reference's argMax wherever its top-2 margin exceeds MARGIN (1e-3) of the logit scale.
  const { mismatches, ties } = greedyMismatches(r.tokens, PROMPT.length);
  assert.deepEqual(mismatches, [], `generated ${r.tokens.slice(PROMPT.length)} (${ties} near-ties)`);
  // The compiled step's logits at every position, on a KV cache filled as it goes. Tolerance 1e-5 of
  // the position's logit scale (its largest |logit|, 20-31: 2-3e-4 absolute): the float32 step
  // (sums of 32 and 64 products, three layerNorms, softmax, gelu's erf to 1.5e-7) came within 7e-7
  // of the scale (1.3e-5 absolute) on SwiftShader. Against these same float32 logits, the reference
  // with a tanh-form gelu is off by 2.9e-4 of the scale, with layerNorm ε 1e-3 by 4.8e-3, with
  // scores scaled by 1/√D for 1/√DH by 0.4: each well outside.
  const compiled = await compiledStepLogits(r.tokens);
  assert.deepEqual(compiled.next.slice(PROMPT.length - 1), r.tokens.slice(PROMPT.length), 'the tapped step, teacher-forced, predicts the page\'s tokens');
  const reference = decoderLogits(r.tokens.slice(0, -1));
  reference.forEach((ref, pos) => {
    const scale = Math.max(...ref.map(Math.abs));
    const worst = Math.max(...ref.map((v, i) => Math.abs(v - compiled.logits[pos][i])));
    assert.ok(worst <= 1e-5 * scale, `position ${pos}: max |logit − float64| = ${worst} (scale ${scale})`);
  });
  // secondary: the eager path (no cache) agrees with the compiled one — the same kernels, so this
  // alone could not catch a wrong one
  assert.equal(r.same, true, 'compiled (KV cache) and eager (no cache) give the same tokens and prompt predictions');
  const cache = LAYERS * 2 * CAPACITY * D * 4; // k and v per layer, [64, 32] float32
  assert.equal(r.cacheBytes, cache);
  assert.equal(r.leaky.verdict, 'ownership-leak');
  assert.deepEqual([...r.leaky.grown].sort(), ["state 'k0' of program 'decode'", "state 'k1' of program 'decode'", "state 'v0' of program 'decode'", "state 'v1' of program 'decode'"]);
  assert.equal(r.fixed.verdict, 'steady', r.fixed.summary);
  // Live after each generation on the one cache: the cache and the executable's constants (every
  // constant node is uploaded at compile, 4 bytes an element, int32 too): emb, ones, zeros, iota;
  // the mask's 0 and −1e9; per layer wq, wk, wv, wo, w1, w2, the 1/√DH scale and two layerNorm ε;
  // the last layerNorm's ε, unemb, and argMax's index row [1, VOCAB] and its "none" scalar.
  const constants = 4 * (VOCAB * D + D + D + CAPACITY + 2
    + LAYERS * (4 * D * D + 2 * D * HIDDEN + 1 + 2) + 1 + D * VOCAB + VOCAB + 1);
  assert.deepEqual(r.after, r.after.map(() => cache + constants), `bytes after each generation: ${r.after}`);
  assert.equal(r.bytesAtEnd, 0);
});

test('convnet-frames.html: frame 0 against a float64 convnet; outputs disposed is steady, outputs kept leaks, named', async () => {
  // frame 0's pixels from the page's own generator, drawn in the finished page as the example drew them
  const { result: r, extra: pixels } = await runExample('convnet-frames', 300_000, async () => {
    const { SIZE, frame } = await import('/www/examples/frames.js');
    return Array.from(frame(new OffscreenCanvas(SIZE, SIZE), 0));
  });
  // The compiled probabilities against the float64 convnet (reference.mjs: weights(7) from frames.js's
  // generator; NHWC, TF.js 'same' padding, batchNorm ε 1e-3, relu6, mean, dense, softmax), within
  // 1e-6 absolute: float32 came within 1.5e-8 on SwiftShader. Not looser: the network's output is
  // nearly uniform (every probability ≈ 0.1) and frame 0 moves it by only ~4e-5 from a grey frame's,
  // so 1e-4 would pass a network that ignored its input; the check below keeps that margin honest.
  // Against these float32 probabilities, the reference with batchNorm ε 1e-5 for 1e-3 is off by
  // 8.4e-6, with 'same' padding's odd cell before instead of after by 1.8e-5.
  const reference = convnetProbs(pixels);
  const worst = Math.max(...reference.map((v, i) => Math.abs(v - r.probs[i])));
  assert.equal(r.probs.length, 10);
  assert.ok(worst <= 1e-6, `max |probs − float64| = ${worst}\n${r.probs}\n${reference}`);
  const grey = convnetProbs(new Float64Array(pixels.length).fill(0.5));
  assert.ok(Math.max(...grey.map((v, i) => Math.abs(v - reference[i]))) > 10 * 1e-6, 'the tolerance tells frame 0 from a grey frame');
  // secondary: eager = compiled (the same kernels: no check of either on its own)
  assert.ok(r.diff <= 1e-5, `max |compiled − eager| = ${r.diff}`);
  assert.equal(r.classes.length, 22);
  assert.equal(r.good.verdict, 'steady', r.good.summary);
  assert.equal(r.leaky.verdict, 'ownership-leak');
  assert.deepEqual(r.leaky.grown, ["program 'mobilenet' output 'probs'"]);
  assert.equal(r.bytesAtEnd, 0);
});
