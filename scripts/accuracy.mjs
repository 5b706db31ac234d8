// The browser half of docs/accuracy.md: runs www/bench/accuracy.html in headless Chromium (WebGPU; here
// SwiftShader) against the built package and prints its markdown rows. The native half:
// `cargo run --release --example accuracy`. Run: scripts/build-pkg.sh && node scripts/accuracy.mjs
import { launch } from '../tests/browser/chromium.mjs';

const env = await launch();
try {
  const page = await env.browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await page.goto(`${env.base}/www/bench/accuracy.html`);
  const deadline = Date.now() + 10 * 60_000;
  while (!(await page.$('body[data-done]')) && !errors.length) {
    if (Date.now() > deadline) throw new Error('the accuracy page did not finish in 10 minutes');
    await new Promise((r) => setTimeout(r, 250));
  }
  if (errors.length) throw new Error(errors.map(String).join('; '));
  const result = await page.evaluate(() => window.result);
  if (result.error) throw new Error(result.error);
  console.log(`Adapter: ${result.adapter}.\n`);
  console.log('| op | range | max abs error | max rel error | criterion | ±∞, NaN |');
  console.log('|---|---|---:|---:|---:|---|');
  for (const r of result.rows) console.log(r);
} finally {
  await env.close();
}
