// The demo's in-page memory panel (www/extension/shared/, the module the DevTools panel uses too) in
// headless Chromium on real WebGPU: each workload is driven at a high iteration rate and the test
// waits for the rolling verdict, then checks the data the panel holds and what its DOM says.
// Here: the captured baseline / warm / steady comparison with its report and timeline export, the
// session filter, and the trace export.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { useChromium, KIB256, demo, run, verdict, stop } from './panel-helpers.mjs';

useChromium();

test('captured baseline / warm / steady: comparison, verdict, report and timeline export', async () => {
  const { page, errors } = await demo();
  await run(page, 'square-leak', 100);
  const iteration = () => page.evaluate(() => window.affonDemo.panel.last?.iteration ?? 0);
  const capture = async (which) => {
    await page.click(`#memory-panel button[data-capture="${which}"]`);
    await page.waitForFunction((w) => window.affonDemo.panel.captured[w], which);
  };
  await capture('baseline');
  const i0 = await iteration();
  await page.waitForFunction((i) => window.affonDemo.panel.last.iteration > i + 20, i0);
  await capture('warm');
  const i1 = await iteration();
  await page.waitForFunction((i) => window.affonDemo.panel.last.iteration > i + 40, i1);
  await capture('steady');
  await page.waitForSelector('#memory-panel .ap-compare-verdict[data-verdict="ownership-leak"]');
  const row = await page.locator('#memory-panel .ap-compare tr[data-ap-metric="compute.storage/live_bytes"] td').allTextContents();
  assert.equal(row.length, 6);
  assert.equal(row[5].trim(), '+256.0 KiB', `per iteration: ${row}`);
  const captured = await page.evaluate(() => window.affonDemo.panel.capturedDiagnosis);
  assert.equal(captured.verdict, 'ownership-leak');
  assert.deepEqual(captured.grownOrigins, ['square']);

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.click('#memory-panel button[data-action="export-report"]'),
  ]);
  assert.match(download.suggestedFilename(), /^affon-report-.*\.json$/);
  const report = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
  assert.equal(report.diagnosis.verdict, 'ownership-leak');
  assert.deepEqual(report.diagnosis.grownOrigins, ['square']);
  assert.equal(report.program, 'eager square');
  assert.deepEqual(report.inputs, [{ name: 'a', shape: [64, 1024], dtype: 'float32' }]);
  assert.equal(report.context.panel.diagnosisSource, 'captured baseline/warm/steady');
  assert.match(report.context.pattern, /square/);
  // the leak's tensors are whole [64, 1024] float32s, more at each capture
  const live = ['baseline', 'warm', 'steady'].map((k) => report.snapshots[k].figures.liveBytes);
  assert.ok(live.every((b) => Number.isInteger(b) && b % KIB256 === 0) && live[0] < live[1] && live[1] < live[2], `${live}`);
  assert.equal(report.snapshots.steady.figures.liveBytes - report.snapshots.warm.figures.liveBytes,
    report.snapshots.steadyIterations * KIB256);
  assert.ok(report.ownership.owners.some((o) => o.origin === 'square'));
  fs.writeFileSync('test-output/panel-report.json', JSON.stringify(report, null, 2));

  const [csv] = await Promise.all([
    page.waitForEvent('download'),
    page.click('#memory-panel button[data-action="export-csv"]'),
  ]);
  assert.match(csv.suggestedFilename(), /^affon-timeline-.*\.csv$/);
  const lines = fs.readFileSync(await csv.path(), 'utf8').trim().split('\n');
  assert.equal(lines[0], 'time_ms,elapsed_s,iteration,compute.storage/live_bytes,compute.storage/peak_bytes,' +
    'compute.memory/pool_bytes,compute.memory/pool_cached_bytes,compute.storage/live_tensors,' +
    'runtime.memory/wasm_memory_bytes,runtime.memory/js_heap_used_bytes');
  assert.ok(lines.length >= 4, `${lines.length} lines`);
  // every row: ten fields, the first eight finite numbers; under the leak, live bytes are whole
  // tensors, never fall, and rose
  const rows = lines.slice(1).map((l) => l.split(','));
  for (const r of rows) {
    assert.equal(r.length, 10, r.join(','));
    assert.ok(r.slice(0, 8).every((v) => v !== '' && Number.isFinite(Number(v))), r.join(','));
  }
  const liveCol = rows.map((r) => Number(r[3]));
  assert.ok(liveCol.every((b, i) => b % KIB256 === 0 && (i === 0 || b >= liveCol[i - 1])), `${liveCol}`);
  assert.ok(liveCol.at(-1) > liveCol[0], `${liveCol}`);
  await page.screenshot({ path: 'test-output/panel-captured.png', fullPage: true });
  await stop(page);
  assert.deepEqual(errors, []);
});

test('session filter: lists the sessions; one session leaking does not change the verdict on the other', async () => {
  const { page, errors } = await demo();
  await run(page, 'square-tidy');
  await verdict(page, 'steady');
  await page.evaluate(async () => {
    const { Session } = await import('../pkg/affon.js');
    const side = await Session.create({ label: 'side' });
    const kept = [];
    window.sideLeak = { side, kept, timer: setInterval(() => kept.push(side.zeros([16, 1024])), 20) };
  });
  await verdict(page, 'ownership-leak'); // all sessions: the side session's leak decides
  const select = '#memory-panel select[data-role="session"]';
  const options = await page.locator(`${select} option`).evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
  assert.deepEqual(options, [['', 'all sessions'], ['demo', 'demo'], ['side', 'side']]);

  const judged = (label, v) => page.waitForFunction(([l, want]) => {
    const p = window.affonDemo.panel;
    return p.diagnosis?.session === l && p.diagnosis.verdict === want && p.root.dataset.verdict === want;
  }, [label, v], { timeout: 15_000 });
  await page.selectOption(select, 'demo');
  await judged('demo', 'steady');
  const demoView = await page.evaluate(() => ({
    origins: [...document.querySelectorAll('#memory-panel .ap-origins tbody tr[data-origin]')].map((r) => r.dataset.origin),
    pools: [...document.querySelectorAll('#memory-panel .ap-pool')].map((p) => p.dataset.session),
    live: window.affonDemo.panel.timeline.live.slice(-3),
  }));
  assert.deepEqual(demoView.origins, ['randomNormal'], 'only the demo session\'s storage');
  assert.deepEqual(demoView.pools, ['demo']);
  assert.deepEqual(demoView.live, [KIB256, KIB256, KIB256], 'the timeline is the demo session\'s');
  await page.screenshot({ path: 'test-output/panel-session-filter.png', fullPage: true });

  await page.selectOption(select, 'side');
  await judged('side', 'ownership-leak');
  const side = await page.evaluate(() => window.affonDemo.panel.diagnosis);
  assert.deepEqual(side.grownOrigins, ['zeros']);
  assert.equal(await page.locator('#memory-panel tr.ap-grown-row[data-origin="zeros"]').count(), 1);

  await page.selectOption(select, '');
  await judged(undefined, 'ownership-leak');
  await page.evaluate(() => {
    const { side: s, kept, timer } = window.sideLeak;
    clearInterval(timer);
    for (const t of kept) t.dispose();
    s.dispose();
  });
  await stop(page);
  assert.deepEqual(errors, []);
});

test('export trace: records in the page and downloads Chrome Trace Event JSON', async () => {
  const { page, errors } = await demo();
  await run(page, 'square-tidy', 100);
  const button = page.locator('#memory-panel button[data-action="trace"]');
  assert.equal(await button.textContent(), 'record trace');
  await button.click();
  await page.waitForFunction(() => window.affonDemo.panel.tracing);
  assert.equal(await button.textContent(), 'stop & export trace');
  await page.waitForTimeout(1000);
  const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
  assert.match(download.suggestedFilename(), /^affon-trace-.*\.json$/);
  const trace = JSON.parse(fs.readFileSync(await download.path(), 'utf8'));
  assert.ok(Array.isArray(trace.traceEvents), 'traceEvents is an array');
  assert.ok(trace.traceEvents.length > 10, `${trace.traceEvents.length} events`);
  for (const e of trace.traceEvents) {
    assert.ok(e && typeof e === 'object' && !Array.isArray(e), JSON.stringify(e));
    assert.equal(typeof e.name, 'string');
    assert.equal(typeof e.ph, 'string');
    for (const k of ['ts', 'pid', 'tid']) assert.equal(typeof e[k], 'number', `${k} of ${JSON.stringify(e)}`);
  }
  const counters = trace.traceEvents.filter((e) => e.ph === 'C' && e.args?.live_bytes !== undefined);
  assert.ok(counters.length > 0, 'live-bytes counter events');
  // square inside tidy: `a` alone between iterations, `a` and its square inside one, so the live
  // bytes alternate between one and two [64, 1024] float32s, ending between iterations
  const values = counters.map((e) => e.args.live_bytes);
  assert.ok(values.every((v) => v === KIB256 || v === 2 * KIB256), `${[...new Set(values)]}`);
  assert.ok(values.includes(2 * KIB256) && values.at(-1) === KIB256, `${values.slice(-4)}`);
  assert.equal(await button.textContent(), 'record trace');
  assert.equal(await page.evaluate(() => window.affonDemo.panel.tracing), false);
  fs.writeFileSync('test-output/panel-trace.json', JSON.stringify(trace));
  await stop(page);
  assert.deepEqual(errors, []);
});
