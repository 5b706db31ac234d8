// Regenerates the screenshots in docs/panel.md of the memory panel: the demo in headless Chromium (WebGPU
// on SwiftShader), each of the three real workloads in its correct and its leaky form run until the
// panel shows the expected verdict, then the panel photographed into docs/screenshots/<id>.png.
// Usage: scripts/build-pkg.sh && node scripts/screenshots.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, open } from '../tests/browser/chromium.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'docs/screenshots');
fs.mkdirSync(out, { recursive: true });

// [workload, iterations per second (SwiftShader: a training step takes ~0.1 s), expected verdict]
const SHOTS = [
  ['train-step', 10, 'steady'],
  ['train-state-recreated', 10, 'ownership-leak'],
  ['frames-convnet', 10, 'steady'],
  ['frames-history', 10, 'ownership-leak'],
  ['decode-cache-reused', 5, 'steady'],
  ['decode-new-cache', 5, 'ownership-leak'],
];

const env = await launch();
let code = 0;
try {
  const { page, errors } = await open(env, '/www/');
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60_000 });
  for (const [id, rate, verdict] of SHOTS) {
    await page.selectOption('#workload', id);
    await page.fill('#rate', String(rate));
    await page.click('#start');
    await page.waitForFunction((v) => window.affonDemo.panel.diagnosis?.verdict === v, verdict, { timeout: 300_000 });
    await page.waitForTimeout(1000);
    const file = path.join(out, `${id}.png`);
    // the panel's top: verdict, series, the per-storage bands and live tensors by origin
    const box = await page.locator('#memory-panel').boundingBox();
    await page.screenshot({ path: file, fullPage: true, clip: { x: box.x, y: box.y, width: box.width, height: Math.min(box.height, 1250) } });
    console.error(`${id}: ${verdict} → ${path.relative(root, file)}`);
    await page.click('#stop');
    await page.click('#release');
  }
  if (errors.length) throw new Error(`page errors: ${errors.map(String).join('; ')}`);
} catch (e) {
  console.error(e);
  code = 1;
} finally {
  await env.close();
}
process.exit(code);
