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
  assert.ok(out.liveTensorBytes >= 1024, `process live bytes ${out.liveTensorBytes}`);
  assert.equal(out.mine, 1024);
  assert.equal(out.afterDispose, 0);
  assert.equal(out.disposed, true);
  assert.deepEqual(errors, []);
});
