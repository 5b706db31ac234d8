// The JS heap, honestly: in Chromium's default mode `performance.memory` is one fixed bucket, so affon
// leaves `js_heap_used_bytes` out and every diagnosis says the heap is unobserved (the demo's panel
// shows the notice); with --enable-precise-memory-info the figure is there and a loop that keeps
// 1 MiB of JS arrays an iteration is process growth; in a cross-origin-isolated page affon samples
// performance.measureUserAgentSpecificMemory() instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launch, open } from './chromium.mjs';

/** In the page: the JS heap record (or null), then a watch of a loop keeping `mib` MiB of JS arrays
 *  an iteration (each iteration `pause` ms long). */
async function keepArrays(page, { mib = 1, pause = 0, iterations = 20 } = {}) {
  return page.evaluate(async ({ mib, pause, iterations }) => {
    const { default: init, Session, telemetry } = await import('/pkg/affon.js');
    await init();
    const session = await Session.create({ label: 'js-heap' });
    const x = session.ones([256]);
    const runtime = (name) => telemetry.metrics().find((r) => r.scope === 'runtime.memory' && r.name === name && !r.labels)?.value ?? null;
    // a sampled figure arrives when its first measurement resolves
    let heap = runtime('js_heap_used_bytes');
    for (let i = 0; heap === null && i < 100 && globalThis.crossOriginIsolated; i++) {
      await new Promise((r) => setTimeout(r, 200));
      heap = runtime('js_heap_used_bytes');
    }
    const kept = [];
    const d = await telemetry.watch(async () => {
      kept.push(new Array(131072 * mib).fill(kept.length + 0.5)); // 1 MiB of doubles per MiB asked
      session.tidy(() => { x.square().sum(); });
      if (pause) await new Promise((r) => setTimeout(r, pause));
    }, { warmup: 2, iterations });
    const out = {
      isolated: globalThis.crossOriginIsolated, heap, wasm: runtime('wasm_memory_bytes'), kept: kept.length,
      verdict: d.verdict, findings: d.findings.map((f) => f.kind),
      unobserved: d.findings.find((f) => f.kind === 'js-heap-unobserved')?.summary ?? null,
    };
    session.dispose();
    return out;
  }, { mib, pause, iterations });
}

test('default Chromium: the bucketed heap is left out, and the diagnosis says it is unobserved', async () => {
  const env = await launch({ preciseMemory: false });
  try {
    const { page, errors } = await open(env, '/tests/browser/fixtures/blank.html');
    const bucket = await page.evaluate(() => performance.memory.usedJSHeapSize);
    const out = await keepArrays(page);
    assert.equal(out.isolated, false);
    assert.equal(out.heap, null, `no js_heap_used_bytes record (Chromium answers ${bucket}, one bucket)`);
    assert.ok(out.wasm > 0);
    assert.equal(out.kept, 22);
    assert.equal(out.verdict, 'steady', 'device and wasm memory are flat: the JS arrays are not seen');
    assert.ok(out.unobserved, `findings: ${out.findings}`);
    assert.match(out.unobserved, /--enable-precise-memory-info/);
    assert.match(out.unobserved, /measureUserAgentSpecificMemory/);
    assert.deepEqual(errors, []);
  } finally { await env.close(); }
});

test('--enable-precise-memory-info: the heap is observed, and 1 MiB kept an iteration is process growth', async () => {
  const env = await launch();
  try {
    const { page, errors } = await open(env, '/tests/browser/fixtures/blank.html');
    const out = await keepArrays(page);
    assert.ok(out.heap > 0, `js_heap_used_bytes ${out.heap}`);
    assert.equal(out.unobserved, null, `findings: ${out.findings}`);
    assert.equal(out.verdict, 'process-growth');
    assert.deepEqual(errors, []);
  } finally { await env.close(); }
});

test('a cross-origin-isolated page: the heap is sampled with measureUserAgentSpecificMemory', async (t) => {
  // without precise memory info; measurements resolve at once rather than at the next collection
  const env = await launch({ preciseMemory: false, isolated: true, args: ['--enable-blink-features=ForceEagerMeasureMemory'] });
  try {
    const { page, errors } = await open(env, '/tests/browser/fixtures/blank.html');
    const out = await keepArrays(page, { mib: 4, pause: 250, iterations: 16 });
    t.diagnostic(JSON.stringify(out));
    assert.equal(out.isolated, true);
    assert.ok(out.heap > 0, `js_heap_used_bytes ${out.heap}`);
    assert.equal(out.unobserved, null, `findings: ${out.findings}`);
    assert.equal(out.verdict, 'process-growth', '4 MiB kept an iteration, sampled once a second');
    assert.deepEqual(errors, []);
  } finally { await env.close(); }
});

test('the demo panel shows the notice in default Chromium, and not with precise memory info', async () => {
  for (const preciseMemory of [false, true]) {
    const env = await launch({ preciseMemory });
    try {
      const { page, errors } = await open(env, '/www/');
      await page.setViewportSize({ width: 1280, height: 1000 });
      await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
      await page.selectOption('#workload', 'square-tidy');
      await page.fill('#rate', '200');
      await page.click('#start');
      await page.waitForSelector('#memory-panel .ap-verdict[data-verdict="steady"]', { timeout: 30_000 });
      const notice = page.locator('#memory-panel .ap-verdict .ap-heap-notice');
      if (preciseMemory) {
        assert.equal(await notice.count(), 0, 'no notice where the heap is observed');
      } else {
        assert.equal(await notice.count(), 1);
        assert.match(await notice.textContent(), /JS heap not observed/);
        assert.match(await notice.textContent(), /--enable-precise-memory-info/);
        fs.mkdirSync('test-output', { recursive: true });
        await page.screenshot({ path: 'test-output/panel-js-heap-unobserved.png', fullPage: true });
      }
      await page.click('#stop');
      assert.deepEqual(errors, []);
    } finally { await env.close(); }
  }
});
