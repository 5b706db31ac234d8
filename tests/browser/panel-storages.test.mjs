// The demo's in-page memory panel (www/extension/shared/, the module the DevTools panel uses too) in
// headless Chromium on real WebGPU: each workload is driven at a high iteration rate and the test
// waits for the rolling verdict, then checks the data the panel holds and what its DOM says.
// Here: panel v2, the per-storage timeline (bands, hover, diff of two captures) and a recording or trace
// saved from one page and opened in another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { useChromium, KIB256, site, demo, run, stop, captureWarmSteady } from './panel-helpers.mjs';

useChromium();

test('panel v2: per-storage bands (a staircase for a leak), the hovered band’s origin, age and stack, and the diff of two captures', async () => {
  const { page, errors } = await demo();
  await run(page, 'square-leak', 20);
  // warm, then steady 80 iterations later (at 20 a second, about eight of the panel's polls)
  await captureWarmSteady(page, 80);
  await page.click('#stop');
  // pause the panel before reading it: a poll landing between the geometry read and the hover
  // below would move the newest band from under the pointer
  await page.click('#memory-panel [data-action="pause"]');
  await page.evaluate(() => window.affonDemo.panel.polling); // a poll under way finishes first
  // the bands: one per kept square result, each alive from its creation to now (nothing leaves)
  const { bands, polls } = await page.evaluate(() => {
    const t = window.affonDemo.panel.storageTimeline;
    return { bands: t.bands.filter((b) => b.origin === 'square'), polls: t.polls.length };
  });
  assert.ok(bands.length >= 20, `${bands.length} square bands`);
  assert.ok(bands.every((b) => b.to === polls - 1 && b.bytes === KIB256), 'every kept result is still alive, 256 KiB');
  const starts = bands.map((b) => b.from);
  assert.ok(starts.at(-1) > starts[0], 'later results start later: a staircase');
  // the x axis is iterations: each poll's column is as wide as the iterations up to the next poll
  const axis = await page.locator('#memory-panel [data-role="storage-axis"]').textContent();
  assert.match(axis, /^iterations [\d,]+ → [\d,]+ \(\d+ polls\)$/);
  const geo = await page.evaluate(() => ({ cols: window.affonDemo.panel.storageTimeline.columns(), its: window.affonDemo.panel.storageTimeline.polls.map((p) => p.iteration) }));
  const perIteration = geo.cols.slice(0, -1).map(([x0, x1], k) => [x1 - x0, geo.its[k + 1] - geo.its[k]]).filter(([, d]) => d > 0).map(([w, d]) => w / d);
  assert.ok(perIteration.length >= 5 && perIteration.every((r) => Math.abs(r - perIteration[0]) < 1e-9), `pixels per iteration: ${perIteration}`);
  assert.ok(geo.cols.every(([x0], k) => k === 0 || x0 >= geo.cols[k - 1][0]), 'columns in iteration order');
  // hover the newest band at the top of the last column: the tip names it, with its stack
  const at = await page.evaluate(() => {
    const t = window.affonDemo.panel.storageTimeline;
    const c = t.canvas, r = c.getBoundingClientRect();
    const last = t.polls.at(-1);
    const total = last.items.reduce((a, i) => a + i.bytes, 0);
    const max = Math.max(...t.polls.map((p) => p.items.reduce((a, i) => a + i.bytes, 0)));
    const yPer = (c.height - 1) / max;
    const [x0, x1] = t.columns().at(-1); // the newest poll's column (the axis is iterations)
    const x = (x0 + x1) / 2;
    const y = c.height - total * yPer + (last.items.at(-1).bytes * yPer) / 2;
    return { x: r.left + (x * r.width) / c.width, y: r.top + (y * r.height) / c.height, id: last.items.at(-1).id };
  });
  await page.mouse.move(at.x, at.y);
  const hovered = await page.evaluate(() => window.affonDemo.panel.storageTimeline.hovered);
  assert.equal(hovered?.id, at.id, 'the band under the pointer is the newest storage');
  const tip = await page.locator('#memory-panel [data-role="storage-tip"]').textContent();
  assert.match(tip, /^square · storage #\d+ · 256\.0 KiB · created at iteration \d+ \(\d+ iterations ago\)/);
  assert.ok(tip.includes(site('const b = ctx.a.square(); // never disposed')), `the creating line: ${tip}`);
  // the diff of warm → steady: square storages appeared, none went
  const row = page.locator('#memory-panel [data-role="diff"] tr[data-origin="square"]');
  const cells = await row.locator('td').allTextContents();
  assert.match(cells[1], /^\+\d+ \(/);
  assert.equal(cells[2], '−0 (0 B)');
  const diff = await page.evaluate(() => window.affonDemo.panel.storageDiff());
  const sq = diff.find((r) => r.origin === 'square');
  assert.ok(sq.added >= 10 && sq.addedBytes === sq.added * KIB256, JSON.stringify(sq));
  // the pool by size class: the 256 KiB class in use, requested → rounded (exact here)
  const inUse = await page.locator('#memory-panel tr[data-class="262144"] td').nth(1).textContent();
  const m = inUse.match(/^(\d+): ([\d.]+) MiB → ([\d.]+) MiB$/);
  assert.ok(m && m[2] === m[3] && Number(m[1]) >= 20, `in use: ${inUse}`);
  await page.screenshot({ path: 'test-output/panel-v2-storages.png', fullPage: true });
  // save the recording (the panel is paused above); another page opens it: the same bands,
  // captures and diff, paused
  assert.equal(await page.evaluate(() => window.affonDemo.panel.running), false);
  const savedBands = await page.evaluate(() => window.affonDemo.panel.storageTimeline.bands.filter((b) => b.origin === 'square').length);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#memory-panel [data-action="export-recording"]')]);
  assert.match(download.suggestedFilename(), /^affon-recording-.*\.json$/);
  const saved = fs.readFileSync(await download.path(), 'utf8');
  // the saved file is a Chrome trace (Perfetto opens it): the timeline as counter tracks, the
  // iterations as instants, the recording itself under affonRecording
  const savedTrace = JSON.parse(saved);
  assert.equal(savedTrace.displayTimeUnit, 'ms');
  const ev = savedTrace.traceEvents;
  assert.ok(ev.every((e) => typeof e.name === 'string' && typeof e.ph === 'string' && Number.isFinite(e.ts) && e.ts >= 0 && Number.isInteger(e.pid) && Number.isInteger(e.tid)));
  const devicePoints = ev.filter((e) => e.ph === 'C' && e.name === 'device MiB');
  const tl = await page.evaluate(() => window.affonDemo.panel.timeline);
  assert.equal(devicePoints.length, tl.live.length, 'one counter event per poll');
  assert.ok(Math.abs(devicePoints.at(-1).args.live * 2 ** 20 - tl.live.at(-1)) < 1, 'the counters are the timeline, in MiB');
  const marks = ev.filter((e) => e.ph === 'i' && e.name === 'iteration').map((e) => e.args.iteration);
  assert.ok(marks.length >= 2 && marks.every((m, i) => i === 0 || m > marks[i - 1]), 'iteration marks, increasing');
  assert.equal(savedTrace.affonRecording.format, 'affon.panel-recording/2');
  await page.click('#release');
  const { page: other, errors: otherErrors } = await demo();
  await other.setInputFiles('#memory-panel [data-role="import-file"]', { name: 'bug-report.json', mimeType: 'application/json', buffer: Buffer.from(saved) });
  await other.waitForFunction(() => window.affonDemo.panel.imported?.name === 'bug-report.json');
  const reopened = await other.evaluate(() => ({
    bands: window.affonDemo.panel.storageTimeline.bands.filter((b) => b.origin === 'square').length,
    diff: window.affonDemo.panel.storageDiff()?.find((r) => r.origin === 'square')?.added,
    running: window.affonDemo.panel.running,
  }));
  assert.deepEqual(reopened, { bands: savedBands, diff: sq.added, running: false });
  assert.match(await other.locator('#memory-panel .ap-status').textContent(), /^showing bug-report\.json/);
  assert.equal(await other.locator('#memory-panel [data-role="diff"] tr[data-origin="square"]').count(), 1);
  // a file that is neither is refused, with the reason
  await other.setInputFiles('#memory-panel [data-role="import-file"]', { name: 'x.json', mimeType: 'application/json', buffer: Buffer.from('{"format": "x"}') });
  await other.waitForFunction(() => /not a panel recording or a trace/.test(window.affonDemo.panel.error?.message ?? ''));
  await other.setInputFiles('#memory-panel [data-role="import-file"]', { name: 'y.json', mimeType: 'application/json', buffer: Buffer.from('{"traceEvents": []}') });
  await other.waitForFunction(() => /a trace without affon memory counters/.test(window.affonDemo.panel.error?.message ?? ''));
  // a trace recorded with "record trace" (telemetry.stopTrace()) opens too: its memory counters
  // become the timeline, its iteration marks the iterations
  await other.click('#memory-panel [data-action="pause"]'); // back to the live page
  await run(other, 'square-leak', 40);
  await other.click('#memory-panel [data-action="trace"]');
  await other.waitForTimeout(2000);
  const [traceFile] = await Promise.all([other.waitForEvent('download'), other.click('#memory-panel [data-action="trace"]')]);
  await stop(other);
  const traceText = fs.readFileSync(await traceFile.path(), 'utf8');
  const traced = JSON.parse(traceText).traceEvents;
  const counted = traced.filter((e) => e.ph === 'C' && e.cat === 'affon.memory');
  const lastLive = counted.reduce((a, e) => { a[e.name] = e.args.live_bytes; return a; }, {});
  await other.setInputFiles('#memory-panel [data-role="import-file"]', { name: 'page.trace.json', mimeType: 'application/json', buffer: Buffer.from(traceText) });
  await other.waitForFunction(() => window.affonDemo.panel.imported?.name === 'page.trace.json');
  const fromTrace = await other.evaluate(() => ({ imp: window.affonDemo.panel.imported, tl: window.affonDemo.panel.timeline, diagnosis: window.affonDemo.panel.diagnosis }));
  assert.equal(fromTrace.imp.trace.counters, counted.length);
  assert.ok(fromTrace.imp.trace.iterations >= 20, `${fromTrace.imp.trace.iterations} iteration marks`);
  assert.equal(fromTrace.tl.live.at(-1), Object.values(lastLive).reduce((a, b) => a + b, 0), 'the timeline ends at the sessions’ last live bytes, summed');
  const its = fromTrace.tl.iteration.filter((i) => i != null);
  assert.ok(its.length > 0 && its.every((m, i) => i === 0 || m >= its[i - 1]), 'iterations from the marks, never decreasing');
  assert.ok(Math.max(...fromTrace.tl.live) > fromTrace.tl.live[0], 'the leak climbs in the trace');
  assert.equal(fromTrace.diagnosis, null, 'a trace holds no records: no verdict');
  assert.match(await other.locator('#memory-panel .ap-status').textContent(), /^showing trace page\.trace\.json: \d+ memory counters over [\d.]+ s in \d+ session\(s\)/);
  // a storage list the page cut to its limit is said to be partial (the ledger's count is larger)
  const partial = await other.evaluate(async () => {
    const { StorageTimeline } = await import('/www/extension/shared/storage-timeline.js');
    const canvas = document.createElement('canvas'), tip = document.createElement('div'), axis = document.createElement('div');
    const t = new StorageTimeline(canvas, tip, { axis });
    const list = [{ id: 1, bytes: 64, origin: 'x' }, { id: 2, bytes: 32, origin: 'x' }];
    t.push(list, 1, null, 2); t.draw();
    const whole = axis.textContent;
    t.push(list, 2, null, 5); t.draw();
    return { whole, partial: axis.textContent };
  });
  assert.deepEqual(partial, { whole: 'iterations 1 → 1 (1 polls)', partial: 'iterations 1 → 2 (2 polls) · 2 of 5 live storages drawn (the page sends its 2 largest)' });
  assert.deepEqual(errors, []);
  assert.deepEqual(otherErrors, []);
});
