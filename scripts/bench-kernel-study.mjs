// The kernel studies of docs/performance.md: raw WebGPU in headless Chromium (SwiftShader here),
// no affon involved (but for `eager`, which times affon's package alone).
//   node scripts/bench-kernel-study.mjs reads [reps]     single-element operands and parameters
//                                                        (www/bench/kernel-study.html)
//   node scripts/bench-kernel-study.mjs matmul [M,K,N] [reps] [variant,…] [busy ms]
//                                                        subgroup-shared B loads in the CPU matmul; with busy,
//                                                        a worker keeps one core busy that long, then idle
//                                                        (www/bench/kernel-study-matmul.html)
//   node scripts/bench-kernel-study.mjs floor [reps] [gap] a tiny dispatch and a 16 KiB readback
//                                                        (www/bench/kernel-study-floor.html)
//   node scripts/bench-kernel-study.mjs depthwise [reps] the depthwise vec4 form's input reads
//                                                        (www/bench/kernel-study-depthwise.html)
//   node scripts/bench-kernel-study.mjs sum [reps]       a fused chain + sum's first pass
//                                                        (www/bench/kernel-study-sum.html)
//   node scripts/bench-kernel-study.mjs eager [reps]     affon's eager vs compiled chain + sum (needs
//                                                        scripts/build-pkg.sh; www/bench/kernel-study-eager.html)
//   node scripts/bench-kernel-study.mjs chain [reps]     forms of the compiled chain's kernel
//                                                        (www/bench/kernel-study-chain.html)
//   node scripts/bench-kernel-study.mjs ab [reps]        this tree's package against another commit's
//                                                        (scripts/build-pkg.sh, scripts/build-pkg-base.sh REV;
//                                                        www/bench/kernel-study-ab.html)
//   node scripts/bench-kernel-study.mjs mlp [reps]       affon's eager vs compiled MLP, whole and by stage
//                                                        (needs scripts/build-pkg.sh; kernel-study-mlp.html)
//   node scripts/bench-kernel-study.mjs products [reps] the MLP's products read back, beside the readback
//                                                        floor (needs scripts/build-pkg.sh; kernel-study-products.html)
//   node scripts/bench-kernel-study.mjs a9 [reps] [plain|affon] [kickFirst]
//                                                        the compiled chain + sum taken apart: its passes in
//                                                        raw WGSL, affon, jax-js jit (needs scripts/build-pkg.sh;
//                                                        kernel-study-a9.html)
//   node scripts/bench-kernel-study.mjs run [reps] [own|affon]
//                                                        affon's run() + item() and the WebGPU calls they make,
//                                                        beside the same calls in raw WebGPU (needs
//                                                        scripts/build-pkg.sh; kernel-study-run.html)
// Prints each variant's time (ms per dispatch) as JSON. With `--trace FILE` (pages that bracket their
// timed calls in `v:NAME`/`e:NAME` user-timing marks: a9) Chromium's trace of the run is written to
// FILE and, per variant, when the page's messages to the GPU process were sent and when that process
// handled them (medians, ms from the call's start; `heldBack`: calls whose last message waited more
// than 1 ms between the two).
import fs from 'node:fs';
import { launch } from '../tests/browser/chromium.mjs';

const args = process.argv.slice(2);
const traceAt = args.indexOf('--trace');
const tracePath = traceAt >= 0 ? args.splice(traceAt, 2)[1] : null;
const [which = 'reads', ...rest] = args;
const pages = {
  reads: () => `kernel-study.html?reps=${rest[0] ?? 15}`,
  matmul: () => `kernel-study-matmul.html?shape=${rest[0] ?? '64,784,256'}&reps=${rest[1] ?? 9}${rest[2] ? `&only=${rest[2]}` : ''}${rest[3] ? `&busy=${rest[3]}` : ''}`,
  floor: () => `kernel-study-floor.html?reps=${rest[0] ?? 40}&gap=${rest[1] ?? 0}`,
  depthwise: () => `kernel-study-depthwise.html?reps=${rest[0] ?? 9}`,
  sum: () => `kernel-study-sum.html?reps=${rest[0] ?? 15}`,
  eager: () => `kernel-study-eager.html?reps=${rest[0] ?? 25}`,
  chain: () => `kernel-study-chain.html?reps=${rest[0] ?? 15}`,
  ab: () => `kernel-study-ab.html?reps=${rest[0] ?? 25}`,
  mlp: () => `kernel-study-mlp.html?reps=${rest[0] ?? 25}`,
  products: () => `kernel-study-products.html?reps=${rest[0] ?? 25}`,
  run: () => `kernel-study-run.html?reps=${rest[0] ?? 200}&dev=${rest[1] ?? 'own'}`,
  a9: () => `kernel-study-a9.html?reps=${rest[0] ?? 25}&device=${rest[1] ?? 'plain'}${rest[2] === 'kickFirst' ? '&kickFirst=1' : ''}`,
};
if (!pages[which]) throw new Error(`unknown study '${which}': ${Object.keys(pages).join(', ')}`);
const query = pages[which]();
const env = await launch();
try {
  const page = await env.browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(new Error(m.text())); });
  if (tracePath) {
    await env.browser.startTracing(page, { path: tracePath, categories: ['blink.user_timing', 'gpu', 'disabled-by-default-gpu.dawn'] });
  }
  await page.goto(`${env.base}/www/bench/${query}`);
  // an error in the page ends the wait at once (a page that threw never marks itself done)
  const deadline = Date.now() + 15 * 60_000;
  while (!(await page.$('body[data-done]')) && !errors.length) {
    if (Date.now() > deadline) throw new Error('the study page did not finish in 15 minutes');
    await new Promise((r) => setTimeout(r, 250));
  }
  if (errors.length) throw new Error(errors.map(String).join('; '));
  const result = await page.evaluate(() => window.result);
  if (tracePath) {
    await env.browser.stopTracing();
    result.trace = summarise(JSON.parse(fs.readFileSync(tracePath, 'utf8')));
  }
  console.log(JSON.stringify(result, null, 2));
} finally {
  await env.close();
}

// Per variant: medians of when its messages to the GPU process were sent (the page's
// DawnClientSerializer::Flush) and handled (the GPU process's CommandBufferStub::OnAsyncFlush).
function summarise(trace) {
  const events = (trace.traceEvents ?? trace).filter((e) => e.ts !== undefined).sort((a, b) => a.ts - b.ts);
  const marks = events.filter((e) => e.cat === 'blink.user_timing' && /^[ve]:/.test(e.name));
  const mid = (xs) => { const v = [...xs].sort((a, b) => a - b); return v.length ? Number(v[v.length >> 1].toFixed(2)) : null; };
  const out = {};
  for (const start of marks.filter((m) => m.name.startsWith('v:'))) {
    const name = start.name.slice(2);
    const end = marks.find((m) => m.name === `e:${name}` && m.ts > start.ts);
    if (!end) continue;
    const within = events.filter((e) => e.ts >= start.ts && e.ts <= end.ts);
    const at = (e) => (e.ts - start.ts) / 1000;
    const sent = within.filter((e) => e.name === 'DawnClientSerializer::Flush').map(at);
    const handled = within.filter((e) => e.name === 'CommandBufferStub::OnAsyncFlush').map(at);
    const v = (out[name] ??= { calls: 0, firstSent: [], lastSent: [], lastHandled: [], heldBack: 0 });
    v.calls++;
    if (!sent.length || sent.length !== handled.length) continue;
    v.firstSent.push(sent[0]); v.lastSent.push(sent.at(-1)); v.lastHandled.push(handled.at(-1));
    if (handled.at(-1) - sent.at(-1) > 1) v.heldBack++;
  }
  for (const v of Object.values(out)) for (const k of ['firstSent', 'lastSent', 'lastHandled']) v[k] = mid(v[k]);
  return out;
}
