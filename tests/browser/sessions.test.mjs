// Many sessions in one page: a disposed session with nothing left alive releases its GPU device at
// once (and a session whose last handle goes, when it goes). Before, each device stayed in the GPU
// process until the JS garbage collector took its session handle; this loop then killed the GPU
// process ("requestDevice: A valid external Instance reference no longer exists"), and a page
// making ~4 sessions per iteration lost a device after ~400 ("Error occurred when trying to async
// map a buffer").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open } from './chromium.mjs';

let env;
before(async () => { env = await launch(); });
after(async () => { await env?.close(); });

test('1800 sessions made and disposed (600 used, 1200 idle) in one page (no GC in between): every readback succeeds, no device is lost', async () => {
  const { page, errors } = await open(env, '/www/');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  const out = await page.evaluate(async () => {
    const { Session, telemetry } = await import('/pkg/affon.js');
    const sums = [];
    for (let i = 0; i < 600; i++) {
      const s = await Session.create({ label: `many-${i}` });
      const t = s.tensor(new Float32Array([i, 1, 2]), [3]);
      const y = t.sum();
      sums.push(await y.item());
      y.dispose(); t.dispose();
      s.dispose();
      // and two that never read anything back: one allocates, one does nothing
      const idle = await Session.create({ label: `idle-${i}`, pool: { cacheLimitBytes: 1024 } });
      idle.zeros([256]).dispose();
      idle.dispose();
      (await Session.create({ label: `empty-${i}` })).dispose();
    }
    const lost = telemetry.metrics().find((r) => r.name === 'devices_lost' && !r.labels);
    return { sums, lost: lost ? lost.value : null };
  });
  assert.deepEqual(out.sums, Array.from({ length: 600 }, (_, i) => i + 3));
  assert.equal(out.lost, 0, 'compute.execution/devices_lost');
  assert.deepEqual(errors, []);
});
