// What the memory panel's tests (panel-*.test.mjs) share: a headless Chromium per test file, the demo
// page (www/) opened in it, its workload controls, the panel's verdict and data, and the per-storage
// timeline's bands, hover tip and capture diff.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launch, open } from './chromium.mjs';

let env;
/** Launches Chromium (serving the repository) before the calling file's tests and closes it after them. */
export function useChromium() {
  before(async () => { env = await launch(); fs.mkdirSync('test-output', { recursive: true }); });
  after(async () => { await env?.close(); });
}

export const KIB256 = 64 * 1024 * 4; // one [64, 1024] float32 tensor
const WORKLOADS = fs.readFileSync(new URL('../../www/workloads.js', import.meta.url), 'utf8').split('\n');
/** `workloads.js:<line>:` of the first line of www/workloads.js holding `needle` (a creating call site). */
export function site(needle) {
  const i = WORKLOADS.findIndex((l) => l.includes(needle));
  assert.ok(i >= 0, `no line of workloads.js holds ${needle}`);
  return `workloads.js:${i + 1}:`;
}
export const COLS_BYTES = 1024 * 4; // one row of 1024 float32

export async function demo() {
  const { page, errors } = await open(env, '/www/');
  await page.setViewportSize({ width: 1280, height: 1000 });
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  return { page, errors };
}

/** Starts a workload from the controls, as a person would. Returns the time it was started. */
export async function run(page, id, rate = 200) {
  await page.selectOption('#workload', id);
  await page.fill('#rate', String(rate));
  await page.click('#start');
  await page.waitForSelector('#loop-status.running');
  return Date.now();
}

/** The workload loop and the panel are healthy: neither caught an error, and the loop is running and
 *  still iterating — so a verdict (`steady` above all) is about a live loop, not one that died. */
export async function healthy(page) {
  const s = await page.evaluate(() => ({
    runner: String(window.affonDemo.runner.error ?? ''),
    panel: String(window.affonDemo.panel.error ?? ''),
    running: document.querySelector('#loop-status')?.classList.contains('running') ?? false,
    iterations: window.affonDemo.runner.iterations,
  }));
  assert.equal(s.runner, '', 'the workload loop caught no error');
  assert.equal(s.panel, '', 'the panel caught no error');
  assert.equal(s.running, true, 'the loop is running');
  await page.waitForFunction((i) => window.affonDemo.runner.iterations > i, s.iterations, { timeout: 10_000 });
}

/** Waits for the panel's verdict `v`, then checks the loop behind it is alive ([`healthy`]). */
export async function verdict(page, v, timeout = 30_000) {
  await page.waitForSelector(`#memory-panel .ap-verdict[data-verdict="${v}"]`, { timeout });
  await healthy(page);
}

export const panelData = (page) => page.evaluate(() => {
  const p = window.affonDemo.panel;
  return { timeline: p.timeline, diagnosis: p.diagnosis, window: p.window && { base: p.window.base.iteration, warm: p.window.warm.iteration, now: p.window.now.iteration } };
});

export async function stop(page) {
  await page.click('#stop');
  await page.click('#release');
}

/** Waits for `predicate` in the page; on timeout, fails with what the panel and the loop show. */
export async function untilOrExplain(page, predicate, timeout = 240_000) {
  try {
    await page.waitForFunction(predicate, null, { timeout });
  } catch (e) {
    const shown = await page.evaluate(() => {
      const d = window.affonDemo.panel.diagnosis;
      const r = window.affonDemo.runner;
      return JSON.stringify({ iterations: r.iterations, rate: r.actualRate, verdict: d?.verdict, summary: d?.summary, grown: d?.grownOrigins });
    });
    throw new Error(`${e.message}; the panel shows ${shown}`);
  }
}

/** What the panel's per-storage timeline holds for `origin`: bands, how many are still alive in the
 *  newest poll, how many distinct start polls (a staircase has many), and the diff row of two captures. */
export async function bandsOf(page, origin) {
  return page.evaluate((o) => {
    const t = window.affonDemo.panel.storageTimeline;
    const bands = t.bands.filter((b) => b.origin === o);
    const last = t.polls.length - 1;
    return { bands: bands.length, alive: bands.filter((b) => b.to === last).length, starts: new Set(bands.map((b) => b.from)).size };
  }, origin);
}

/** Hovers the storage timeline over the newest storage of `origin` (its own band, or when that is under
 *  two pixels the run of same-origin bands around it) and returns what the tip says and what it hovered. */
export async function hoverNewest(page, origin) {
  await page.click('#memory-panel [data-action="pause"]'); // the bands hold still while we point
  await page.evaluate(() => window.affonDemo.panel.polling);
  await page.locator('#memory-panel [data-role="storages"]').scrollIntoViewIfNeeded();
  const at = await page.evaluate((o) => {
    const t = window.affonDemo.panel.storageTimeline;
    const c = t.canvas, r = c.getBoundingClientRect();
    const items = t.polls.at(-1).items;
    const max = Math.max(...t.polls.map((p) => p.items.reduce((a, i) => a + i.bytes, 0)));
    const yPer = (c.height - 1) / max;
    const spans = []; // [from, to] in bytes from the bottom
    let acc = 0;
    for (const it of items) { spans.push([acc, acc + it.bytes]); acc += it.bytes; }
    let k = items.map((it) => it.origin).lastIndexOf(o);
    let [lo, hi] = spans[k];
    for (let j = k - 1; (hi - lo) * yPer < 2 && j >= 0 && items[j].origin === o; j--) lo = spans[j][0];
    const y = c.height - ((lo + hi) / 2) * yPer;
    const [x0, x1] = t.columns().at(-1); // the newest poll's column (the axis is iterations)
    const x = (x0 + x1) / 2;
    return { x: r.left + (x * r.width) / c.width, y: r.top + (y * r.height) / c.height };
  }, origin);
  await page.mouse.move(at.x, at.y);
  const hovered = await page.evaluate(() => window.affonDemo.panel.storageTimeline.hovered);
  const tip = await page.locator('#memory-panel [data-role="storage-tip"]').textContent();
  await page.click('#memory-panel [data-action="pause"]'); // resume
  return { hovered, tip };
}

/** Clears the captures, captures 'warm', waits until the panel has polled the loop `iterations`
 *  iterations past the warm capture's own iteration (a condition, not a fixed time: a slow machine only
 *  takes longer), then captures 'steady' and waits for it: the diff then compares exactly those two. */
export async function captureWarmSteady(page, iterations = 3) {
  await page.click('#memory-panel [data-action="clear-captures"]');
  await page.click('[data-capture="warm"]');
  // (the capture's iteration in an array: a capture at iteration 0 is there too)
  const [warm] = await (await page.waitForFunction(() => window.affonDemo.panel.captured.warm && [window.affonDemo.panel.captured.warm.iteration])).jsonValue();
  await page.waitForFunction(
    (at) => (window.affonDemo.panel.storageTimeline.polls.at(-1)?.iteration ?? -1) >= at,
    warm + iterations, { timeout: 120_000 });
  await page.click('[data-capture="steady"]');
  await page.waitForFunction(() => window.affonDemo.panel.captured.steady);
}

/** Captures warm, then steady a few iterations later; returns the diff row for `origin` (null if none). */
export async function diffOf(page, origin) {
  await captureWarmSteady(page);
  return page.evaluate((o) => window.affonDemo.panel.storageDiff()?.find((r) => r.origin === o) ?? null, origin);
}
