// affon vs TensorFlow.js 4.22 (WebGPU backend), ONNX Runtime Web 1.30 (WebGPU EP) and jax-js
// 0.1.25 (WebGPU) in one headless Chromium page (www/bench/), on the same WebGPU adapter
// (SwiftShader here). Prints the results as Markdown and writes test-output/bench-browser.json.
// Usage: scripts/build-pkg.sh && node scripts/bench-browser.mjs [--quick] [--large]
// --large adds matmul 2048 (row b2048: one warm-up and one timed round per library; several minutes).
// The peers come from www/bench/node_modules, installed here on first use (its own package.json),
// and again whenever an installed version differs from the one package.json pins.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, open } from '../tests/browser/chromium.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quick = process.argv.includes('--quick');
const large = process.argv.includes('--large');
const TIMEOUT_MS = (large ? 25 : 10) * 60_000;

if (!fs.existsSync(path.join(root, 'pkg/affon.js'))) {
  console.error('pkg/affon.js is missing: run scripts/build-pkg.sh first');
  process.exit(2);
}
const benchDir = path.join(root, 'www/bench');
const pinned = JSON.parse(fs.readFileSync(path.join(benchDir, 'package.json'), 'utf8')).dependencies;
// The files the page loads, per package.
const entries = {
  '@tensorflow/tfjs': ['dist/tf.fesm.js'],
  '@tensorflow/tfjs-backend-webgpu': ['dist/tf-backend-webgpu.fesm.js'],
  'onnxruntime-web': ['dist/ort.webgpu.min.mjs', 'dist/ort-wasm-simd-threaded.asyncify.mjs', 'dist/ort-wasm-simd-threaded.asyncify.wasm'],
  '@jax-js/jax': ['dist/index.js'],
};
const installedVersion = (name) => {
  try { return JSON.parse(fs.readFileSync(path.join(benchDir, 'node_modules', name, 'package.json'), 'utf8')).version; } catch { return null; }
};
const missing = Object.entries(pinned).filter(([name, version]) => installedVersion(name) !== version
  || (entries[name] ?? []).some((f) => !fs.existsSync(path.join(benchDir, 'node_modules', name, f))));
if (missing.length) {
  console.error(`installing www/bench dependencies (${missing.map(([n, v]) => `${n}@${v}`).join(', ')})…`);
  execFileSync('npm', ['install', '--prefix', 'www/bench', '--no-audit', '--no-fund'], { cwd: root, stdio: ['ignore', process.stderr, 'inherit'] });
}

const env = await launch();
let code = 0;
try {
  const query = [quick && 'quick=1', large && 'large=1'].filter(Boolean).join('&');
  const { page, errors } = await open(env, `/www/bench/${query ? `?${query}` : ''}`);
  page.on('console', (m) => { if (m.text().startsWith('[bench]')) console.error(m.text()); });
  await page.waitForSelector('body[data-done]', { state: 'attached', timeout: TIMEOUT_MS });
  const failed = await page.evaluate(() => window.benchError ?? null);
  if (failed) throw new Error(`benchmark page failed: ${failed}`);
  if (errors.length) throw new Error(`page errors: ${errors.map(String).join('; ')}`);
  const results = await page.evaluate(() => window.benchResults);
  fs.mkdirSync(path.join(root, 'test-output'), { recursive: true });
  const out = path.join(root, 'test-output/bench-browser.json');
  fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(results.markdown);
  console.error(`wrote ${path.relative(root, out)}`);
} catch (e) {
  console.error(e);
  code = 1;
} finally {
  await env.close();
}
process.exit(code);
