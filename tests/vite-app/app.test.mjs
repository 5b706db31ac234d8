// The built Vite app (dist/, made by `vite build` in scripts/test-package.sh), served by `vite preview`
// and opened in headless Chromium on WebGPU: affon was imported by package name from the packed
// tarball, `affon/std-telemetry` resolved through the package's `exports`, a Session ran a tensor op
// and read back the right values, and telemetry reported compute.storage/live_bytes. Then the same
// app through the Vite dev server (dependency pre-bundling included).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, preview } from 'vite';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../browser/chromium.mjs';

const root = path.dirname(fileURLToPath(import.meta.url));
let server, browser, base;

before(async () => {
  assert.ok(fs.existsSync(path.join(root, 'dist/index.html')), 'dist/ missing: run scripts/test-package.sh');
  server = await preview({ root, logLevel: 'warn', preview: { port: 0 } });
  base = server.resolvedUrls.local[0];
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** What main.js reports when affon works. */
function assertAppResult(r) {
  assert.equal(r.error, undefined, `the app failed: ${r.error}`);
  // One module instance: the std-telemetry export is the package's own `telemetry`.
  assert.equal(r.sameTelemetry, true);
  assert.equal(r.backend, 'webgpu');
  assert.deepEqual(r.shape, [2, 2]);
  assert.deepEqual(r.values, [121, 484, 169, 576]); // ([[1, 2], [3, 4]] + [10, 20])²
  assert.equal(r.liveWhileHeld, 16 + 8 + 16); // compute.storage/live_bytes: a, b, squared
  assert.equal(r.liveAfterDispose, 0);
}

test('the affon package works in a Vite production build', async () => {
  const page = await browser.newPage();
  const errors = [];
  const requests = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(m.text()); });
  page.on('response', (r) => requests.push({ path: new URL(r.url()).pathname, type: r.headers()['content-type'] }));
  await page.goto(base);
  await page.waitForSelector('body[data-result]', { state: 'attached', timeout: 60_000 });
  const r = await page.evaluate(() => window.appResult);
  assertAppResult(r);
  assert.equal(await page.evaluate(() => document.body.dataset.result), 'ok');

  // The bundle came from the package: Vite emitted affon's wasm as a hashed asset, served as wasm
  // (so instantiateStreaming is used, with no fallback warning).
  const wasm = requests.filter((q) => /^\/assets\/affon_bg-[\w-]+\.wasm$/.test(q.path));
  assert.equal(wasm.length, 1, `wasm requests: ${JSON.stringify(requests)}`);
  assert.equal(wasm[0].type, 'application/wasm');
  // ... and it is the current build: the same bytes as pkg/affon_bg.wasm.
  const emitted = fs.readFileSync(path.join(root, 'dist', wasm[0].path));
  assert.ok(emitted.equals(fs.readFileSync(path.join(root, '../../pkg/affon_bg.wasm'))), 'dist wasm differs from pkg/');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the same app through the Vite dev server', async () => {
  const dev = await createServer({ root, logLevel: 'warn', server: { port: 0 }, optimizeDeps: { force: true } });
  try {
    await dev.listen();
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(dev.resolvedUrls.local[0]);
    await page.waitForSelector('body[data-result]', { state: 'attached', timeout: 60_000 });
    assertAppResult(await page.evaluate(() => window.appResult));
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await dev.close();
  }
});
