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

// wgpu 30 does not ask the browser for the 'subgroups' feature; affon adds it to its own device
// request (the CPU matmul shares B loads across a subgroup) and to no one else's.
test('Session.create asks for subgroups for its own device only, and reports their size', async () => {
  const { page, errors } = await open(env, '/www/');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  const out = await page.evaluate(async () => {
    const { Session } = await import('/pkg/affon.js');
    const original = GPUAdapter.prototype.requestDevice;
    const adapter = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
    const { subgroupMinSize: min, subgroupMaxSize: max } = adapter.info;
    const offered = adapter.features.has('subgroups') && min > 0 && min === max ? min : 0;
    const s = await Session.create({ label: 'subgroups' });
    const restored = GPUAdapter.prototype.requestDevice === original;
    // a device someone else asks for gets the features it asked for, no more
    const other = await adapter.requestDevice();
    const otherHas = other.features.has('subgroups');
    other.destroy();
    // the shared form computes what the plain one does: a 64×784·784×256 product (MLP-shaped)
    const [m, k, n] = [64, 784, 256];
    const a = Float32Array.from({ length: m * k }, (_, i) => ((i * 37) % 101) / 101 - 0.5);
    const b = Float32Array.from({ length: k * n }, (_, i) => ((i * 53) % 97) / 97 - 0.5);
    const ta = s.tensor(a, [m, k]), tb = s.tensor(b, [k, n]);
    const c = ta.matmul(tb);
    const got = await c.toArray();
    let err = 0, scale = 0;
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let t = 0; t < k; t++) acc += a[i * k + t] * b[t * n + j];
      err = Math.max(err, Math.abs(acc - got[i * n + j]));
      scale = Math.max(scale, Math.abs(acc));
    }
    const size = s.adapter.subgroupSize;
    c.dispose(); ta.dispose(); tb.dispose(); s.dispose();
    return { offered, size, restored, otherHas, err, scale };
  });
  assert.equal(out.offered, 4, 'SwiftShader offers subgroups of 4 invocations');
  assert.equal(out.size, out.offered, 'session.adapter.subgroupSize');
  assert.ok(out.restored, 'GPUAdapter.prototype.requestDevice is the browser\'s again');
  assert.equal(out.otherHas, false, 'a device requested without subgroups has none');
  // f32 accumulation over k = 784 against a float64 reference: 1e-5·k·max|a|·max|b| (as the corpus)
  assert.ok(out.err <= 1e-5 * 784 * 0.25 + 1e-6, `max abs error ${out.err} (largest |c| ${out.scale})`);
  assert.deepEqual(errors, []);
});
