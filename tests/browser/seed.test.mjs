// The seed document's snippets run unchanged through the `std:telemetry` import map.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open } from './chromium.mjs';

let env;
before(async () => { env = await launch(); });
after(async () => { await env?.close(); });

test('seed snippets: std:telemetry import, before/warm/after, and a diagnosis of the result', async () => {
  const { page, errors } = await open(env, '/tests/browser/fixtures/seed.html');
  await page.waitForSelector('body[data-done="true"]', { state: 'attached', timeout: 30_000 });
  const r = await page.evaluate(() => window.seedResult);
  assert.equal(r.liveTensorBytes, 4000 + 8, 'process-wide: x = ones([1000]) and the other session\'s [2]');
  assert.equal(r.logged, 1);
  assert.equal(r.verdict, 'ownership-leak');
  assert.deepEqual(r.grown, ['square']);
  assert.equal(r.perIteration, 4000);
  assert.deepEqual(errors, []);
});
