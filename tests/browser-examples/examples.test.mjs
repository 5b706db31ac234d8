// The JS examples in www/examples/, opened in headless Chromium (WebGPU) through scripts/serve.mjs:
// each page must finish with body[data-result="ok"], no page errors, and the exact figures it
// documents in `window.exampleResult`. Run: scripts/build-pkg.sh && node --test tests/browser-examples/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open } from '../browser/chromium.mjs';

let env;
before(async () => { env = await launch(); }); // Chromium with WebGPU + scripts/serve.mjs on a free port
after(async () => { await env?.close(); });

/** Opens an example page and returns its `window.exampleResult` once it has finished. */
async function runExample(name, timeout = 60_000) {
  const { page, errors } = await open(env, `/www/examples/${name}.html`);
  await page.waitForSelector('body[data-result]', { state: 'attached', timeout });
  const status = await page.evaluate(() => document.body.dataset.result);
  const result = await page.evaluate(() => window.exampleResult);
  const text = await page.textContent('#out');
  await page.close();
  assert.equal(status, 'ok', `${name}: ${status}\n${text}`);
  assert.deepEqual(errors.map(String), [], `${name}: page errors`);
  assert.ok(text.trim().length > 0, `${name}: nothing printed`);
  return { result, text };
}

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
  assert.equal(r.runs, 100);
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
  assert.ok(r.peakBytes >= x + w + 4 * out + 12, `peakBytes ${r.peakBytes}`);
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
  assert.equal(r.flat, true, 'live bytes identical after every step');
  assert.ok(r.lastLoss < r.firstLoss / 10, `loss ${r.firstLoss} → ${r.lastLoss}`);
  // parameters (2·64 + 64 + 64·64 + 64 + 64·2 + 2 floats) × 3 (Adam's m and v) + adam/t
  assert.equal(r.stateBytes, (128 + 64 + 4096 + 64 + 128 + 2) * 4 * 3 + 4);
  assert.equal(r.bytesAtEnd, 0);
  assert.equal(r.curvePoints, 40, 'the live loss curve: a point every 10 steps');
});

test('train-convnet.html: shapes to ≥ 90 % held-out, a steady loop, flat live bytes', async () => {
  const { result: r } = await runExample('train-convnet', 600_000); // SwiftShader: minutes
  assert.ok(r.accuracy >= 0.9, `accuracy ${r.accuracy}`);
  steadyAndSettled(r);
  assert.equal(r.flat, true, 'live bytes identical after every step');
  assert.ok(r.lastLoss < r.firstLoss / 5, `loss ${r.firstLoss} → ${r.lastLoss}`);
  assert.equal(r.bytesAtEnd, 0);
});

test('decode-kv.html: the cached and the uncached paths agree; a new cache per call leaks, named; one cache is steady', async () => {
  const { result: r } = await runExample('decode-kv', 300_000);
  assert.equal(r.same, true, 'compiled (KV cache) and eager (no cache) give the same tokens and prompt predictions');
  assert.equal(r.tokens.length, 32);
  assert.equal(r.cacheBytes, 2 * 2 * 64 * 32 * 4);
  assert.equal(r.leaky.verdict, 'ownership-leak');
  assert.deepEqual([...r.leaky.grown].sort(), ["state 'k0' of program 'decode'", "state 'k1' of program 'decode'", "state 'v0' of program 'decode'", "state 'v1' of program 'decode'"]);
  assert.equal(r.fixed.verdict, 'steady', r.fixed.summary);
  assert.ok(r.after.every((b) => b === r.after[0]), `bytes after each generation: ${r.after}`);
  assert.equal(r.bytesAtEnd, 0);
});

test('convnet-frames.html: compiled = eager; outputs disposed is steady, outputs kept leaks, named', async () => {
  const { result: r } = await runExample('convnet-frames', 300_000);
  assert.ok(r.diff <= 1e-5, `max |compiled − eager| = ${r.diff}`);
  assert.equal(r.classes.length, 22);
  assert.equal(r.good.verdict, 'steady', r.good.summary);
  assert.equal(r.leaky.verdict, 'ownership-leak');
  assert.deepEqual(r.leaky.grown, ["program 'mobilenet' output 'probs'"]);
  assert.equal(r.bytesAtEnd, 0);
});
