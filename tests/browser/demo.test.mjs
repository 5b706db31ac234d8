// The demo page and the built package (pkg/, std:telemetry) in headless Chromium on real WebGPU.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launch, open } from './chromium.mjs';

let env;
before(async () => { env = await launch(); });
after(async () => { await env?.close(); });

const metric = (page, name) =>
  page.locator(`tr[data-metric="${name}"] td.num`).textContent().then(Number);

test('demo page shows exact live figures as tensors are made and disposed', async () => {
  const { page, errors } = await open(env, '/www/');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  assert.match(await page.textContent('#adapter'), /webgpu/);
  await page.fill('#elements', '1000');
  await page.click('#make');
  await page.evaluate(() => window.affonDemo.render());
  assert.equal(await metric(page, 'compute.storage/live_bytes'), 40_000);
  assert.equal(await metric(page, 'compute.storage/live_tensors'), 10);
  assert.equal(await metric(page, 'compute.memory/pool_bytes'), 40_960); // 10 × class 4096
  await page.click('#dispose-all');
  assert.equal(await metric(page, 'compute.storage/live_bytes'), 0);
  assert.equal(await metric(page, 'compute.memory/pool_cached_bytes'), 40_960);
  await page.click('#clear-cache');
  assert.equal(await metric(page, 'compute.memory/pool_bytes'), 0);
  fs.mkdirSync('test-output', { recursive: true });
  await page.screenshot({ path: 'test-output/demo.png', fullPage: true });
  assert.deepEqual(errors, []);
});

test('the seed snippet runs unchanged through the std:telemetry import map', async () => {
  const { page, errors } = await open(env, '/www/');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  // the demo's session holds 10 float32[1000] first (40,000 B), so the process-wide record and the
  // snippet session's own one differ
  await page.fill('#elements', '1000');
  await page.selectOption('#dtype', 'float32');
  await page.click('#make');
  const out = await page.evaluate(async () => {
    const { default: telemetry } = await import('std:telemetry');
    const { Session } = await import('../pkg/affon.js');
    const session = await Session.create();
    const t = session.zeros([256]);
    const snapshot = telemetry.metrics();
    const liveTensorBytes = snapshot.find(
      (metric) => metric.scope === 'compute.storage' && metric.name === 'live_bytes',
    )?.value ?? 0;
    const mine = snapshot.find((m) => m.name === 'live_bytes' && m.labels?.session === session.label)?.value;
    t[Symbol.dispose]();
    const afterDispose = session.memory().numBytes;
    session.dispose();
    return { liveTensorBytes, mine, afterDispose, disposed: t.disposed };
  });
  assert.equal(out.liveTensorBytes, 40_000 + 1024, 'process-wide: the demo\'s tensors and the snippet\'s');
  assert.equal(out.mine, 1024);
  assert.equal(out.afterDispose, 0);
  assert.equal(out.disposed, true);
  assert.deepEqual(errors, []);
});

test('session.memory() and metrics() from the built package: exact figures, the documented shape, a fresh object per call', async () => {
  const { page, errors } = await open(env, '/www/');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  const out = await page.evaluate(async () => {
    const { Session, telemetry } = await import('../pkg/affon.js');
    const s = await Session.create({ label: 'memory-shape' });
    const empty = s.memory();
    const a = s.zeros([1000]); // 4,000 B
    const b = s.ones([3, 5], 'int32'); // 60 B
    const two = s.memory();
    a.dispose();
    const one = s.memory();
    const again = s.memory();
    const fresh = one !== again && one.reasons !== again.reasons;
    one.reasons.push('changed by the caller');
    const after = s.memory();
    const mine = telemetry.metrics().filter((r) => r.labels?.session === 'memory-shape' && r.scope === 'compute.storage' && !r.labels.origin);
    const rec = mine.find((r) => r.name === 'live_bytes');
    const result = {
      empty: JSON.stringify(empty), two: JSON.stringify(two), one: JSON.stringify(again), fresh, after: after.reasons.length,
      rec: JSON.stringify(rec), frozen: Object.isFrozen(rec.labels),
      peak: mine.find((r) => r.name === 'peak_bytes').value, tensors: mine.find((r) => r.name === 'live_tensors').value,
    };
    b.dispose();
    s.dispose();
    return result;
  });
  assert.equal(out.empty, '{"numTensors":0,"numBytes":0,"numDataBuffers":0,"peakBytes":0,"unreliable":false,"reasons":[]}');
  assert.equal(out.two, '{"numTensors":2,"numBytes":4060,"numDataBuffers":2,"peakBytes":4060,"unreliable":false,"reasons":[]}');
  assert.equal(out.one, '{"numTensors":1,"numBytes":60,"numDataBuffers":1,"peakBytes":4060,"unreliable":false,"reasons":[]}');
  assert.ok(out.fresh, 'each call returns its own object and reasons array');
  assert.equal(out.after, 0, 'a caller changing one result does not change the next');
  assert.equal(out.rec, '{"scope":"compute.storage","name":"live_bytes","kind":"gauge","unit":"bytes","value":60,"labels":{"session":"memory-shape"}}');
  assert.ok(out.frozen, 'a record’s labels are frozen (shared by every call’s records)');
  assert.deepEqual([out.peak, out.tensors], [4060, 1]);
  assert.deepEqual(errors, []);
});
