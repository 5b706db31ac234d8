import { launch, open } from './chromium.mjs';
const env = await launch();
for (const id of ['square-tidy', 'distinct-sizes', 'square-tidy']) {
const { page, errors } = await open(env, '/www/');
await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
await page.evaluate((id) => { document.querySelector('#rate').value = '200'; window.affonDemo.runner.setRate(200); return window.affonDemo.start(id); }, id);
await page.waitForTimeout(Number(process.env.SECS ?? 60) * 1000);
const out = await page.evaluate(async () => {
  const { telemetry } = await import('../pkg/affon.js');
  const { forSession, evenly } = await import('./extension/shared/rolling.js');
  const p = window.affonDemo.panel;
  const H = p.rolling.history;
  const base = p.rolling.baseline;
  const polls = [base]; for (const h of H) if (h.time > base.time && h.iteration > polls.at(-1).iteration) polls.push(h);
  const heap = (e) => e.metrics.find((r) => r.name === 'js_heap_used_bytes' && !r.labels)?.value;
  const lw = (e) => { const span = H.filter((h) => h.time >= Math.max(e.time - 10000, base.time) && h.time <= e.time); const v = Math.min(...span.map(heap)); return e.metrics.map((r) => r.name === 'js_heap_used_bytes' && !r.labels ? { ...r, value: v } : r); };
  const res = { raw: {}, low: {}, Xheaps: polls.map(heap).map((v) => Math.round(v / 1e5) / 10), Xwasm: polls.map((e) => e.metrics.find((r) => r.name === 'wasm_memory_bytes').value / 1048576) , n: polls.length, rawF: {}, lowF: {}};
  for (const W of [8, 10, 12]) for (let end = 20; end <= polls.length; end++) {
    const win = polls.slice(end - W, end);
    const samples = [polls[0], ...win];
    for (const [k, f] of [['raw', (e) => e.metrics], ['low', lw]]) {
      const d = telemetry.diagnose({ samples: samples.map(f), warmup: 1 });
      res[k][W + d.verdict] = (res[k][W + d.verdict] ?? 0) + 1;
      if (d.verdict === 'process-growth') (res[k + 'at'] ??= []).push(W + '@' + end + ':' + d.summary.slice(0, 140));

    }
  }
  return res;
});
delete out.Xheaps; delete out.Xwasm; console.log(id, JSON.stringify(out, null, 1));
await page.close();
}
await env.close();
