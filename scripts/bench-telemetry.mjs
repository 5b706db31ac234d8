// Browser cost of telemetry reads (median of 7 runs, µs per call) in headless Chromium on WebGPU.
// Usage: scripts/build-pkg.sh && node scripts/bench-telemetry.mjs
import { launch, open } from '../tests/browser/chromium.mjs';

const env = await launch();
try {
  const { page } = await open(env, '/tests/browser/fixtures/bench-telemetry.html');
  await page.waitForSelector('body[data-done="true"]', { state: 'attached', timeout: 300_000 });
  const r = await page.evaluate(() => window.benchResult);
  console.log(`metrics():      ${r.metricsMicros.toFixed(1)} µs per call (${r.records} records)`);
  console.log(`memory():       ${r.memoryMicros.toFixed(2)} µs per call`);
  console.log(`liveTensors():  ${r.liveTensorsMicros.toFixed(1)} µs per call`);
  const overhead = (r.watchedIterationMs / r.mlpIterationMs - 1) * 100;
  console.log(`MLP loop:       ${r.mlpIterationMs.toFixed(2)} ms per iteration; inside watch() ${r.watchedIterationMs.toFixed(2)} ms (sampling overhead ${overhead.toFixed(1)} %, median of 5 runs of 30)`);
} finally {
  await env.close();
}
