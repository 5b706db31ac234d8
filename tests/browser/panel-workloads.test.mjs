// The demo's in-page memory panel (www/extension/shared/, the module the DevTools panel uses too) in
// headless Chromium on real WebGPU: each workload is driven at a high iteration rate and the test
// waits for the rolling verdict, then checks the data the panel holds and what its DOM says.
// Here: the real workloads (training, decoding, frames), steady and leaky, with the leaks' storage
// bands, hover tip and capture diff.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useChromium, site, demo, run, stop, healthy, panelData, untilOrExplain, bandsOf, hoverNewest, diffOf } from './panel-helpers.mjs';
import { greedyMismatches } from '../browser-examples/reference.mjs';

useChromium();

// spirals_step (MLP 2-32-32-2, Adam): each parameter's float32 elements; its Adam slots `<p>/m` and
// `<p>/v` have as many; `adam/t` is one float32 (API.md, Training)
const PARAM_FLOATS = { w0: 2 * 32, b0: 32, w1: 32 * 32, b1: 32, w2: 32 * 2, b2: 2 };
const STATE_NAMES = [...Object.keys(PARAM_FLOATS).flatMap((n) => [n, `${n}/m`, `${n}/v`]), 'adam/t'];
const stateBytes = (name) => (name === 'adam/t' ? 4 : 4 * PARAM_FLOATS[name.split('/')[0]]);
const stateOrigin = (name) => `state '${name}' of program 'spirals_step'`;

test('training workloads: the compiled step is steady; a recreated optimizer state and a kept loss history leak, named', async () => {
  const { page, errors } = await demo();
  await run(page, 'train-step', 10); // a training step takes ~0.1 s on SwiftShader
  await untilOrExplain(page, () => window.affonDemo.panel.diagnosis?.verdict === 'steady');
  await healthy(page);
  {
    const { diagnosis } = await panelData(page);
    assert.deepEqual(diagnosis.grownOrigins ?? [], []);
    // the parameters and Adam slots: one ExecutionState made at setup, every band alive from the first poll
    const st = await page.evaluate(() => {
      const t = window.affonDemo.panel.storageTimeline;
      const bands = t.bands.filter((b) => /^state '.*' of program 'spirals_step'$/.test(b.origin));
      return { origins: bands.map((b) => b.origin).sort(), bytes: Object.fromEntries(bands.map((b) => [b.origin, b.bytes])), fromFirst: bands.filter((b) => b.from === 0 && b.to === t.polls.length - 1).length, polls: t.polls.length, stateBytes: window.affonDemo.runner.ctx.state.byteLength };
    });
    // one band per parameter and slot (19), each of its own bytes, all alive from the first poll
    assert.deepEqual(st.origins, STATE_NAMES.map(stateOrigin).sort(), JSON.stringify(st));
    assert.deepEqual(st.bytes, Object.fromEntries(STATE_NAMES.map((n) => [stateOrigin(n), stateBytes(n)])));
    assert.ok(st.fromFirst === STATE_NAMES.length && st.polls >= 5, JSON.stringify(st));
    assert.equal(st.stateBytes, STATE_NAMES.reduce((a, n) => a + stateBytes(n), 0), 'the state holds exactly its slots');
    // the live loss curve under the workload: the loss read back every 5th step, falling
    const loss = await page.evaluate(() => {
      const l = window.affonDemo.runner.ctx.losses;
      return { n: l.length, first: l[0]?.[1], last: l.at(-1)?.[1], every5: l.every(([i]) => i % 5 === 0), drawn: window.affonDemo.lossChart?.data[1].length ?? 0, visible: !document.getElementById('loss-curve').hidden };
    });
    assert.ok(loss.n >= 4 && loss.every5 && loss.visible && loss.drawn >= 2 && loss.last < loss.first, JSON.stringify(loss));
  }
  await page.screenshot({ path: 'test-output/panel-train-step.png', fullPage: true });
  await stop(page);
  await run(page, 'train-loss-history', 10); // a training step takes ~0.1 s on SwiftShader
  await untilOrExplain(page, () => window.affonDemo.panel.diagnosis?.grownOrigins?.[0] === "program 'spirals_step' output 'loss'");
  assert.equal(await page.locator('#memory-panel .ap-verdict').getAttribute('data-verdict'), 'ownership-leak');
  {
    // the panel's bands: one per kept loss, all still alive, started at different polls (a staircase)
    // hover the newest one: the tip names its origin, its age and the line that created it
    const h = await hoverNewest(page, "program 'spirals_step' output 'loss'");
    assert.equal(h.hovered?.origin, "program 'spirals_step' output 'loss'", h.tip);
    assert.ok(h.tip.startsWith("program 'spirals_step' output 'loss' · storage #") && /iterations ago/.test(h.tip), h.tip);
    assert.ok(h.tip.includes(site('ctx.kept.push(out.loss)')), `the creating line: ${h.tip}`);
    const b = await bandsOf(page, "program 'spirals_step' output 'loss'");
    assert.ok(b.bands >= 5 && b.alive === b.bands && b.starts >= 3, JSON.stringify(b));
    const d = await diffOf(page, "program 'spirals_step' output 'loss'");
    assert.ok(d && d.added > 0 && d.removed === 0 && d.addedBytes === 4 * d.added, JSON.stringify(d));
  }
  await stop(page);
  await run(page, 'train-state-recreated', 10); // a training step takes ~0.1 s on SwiftShader
  await untilOrExplain(page, () => (window.affonDemo.panel.diagnosis?.grownOrigins ?? []).some((o) => /^state '.*' of program 'spirals_step'$/.test(o)));
  assert.equal(await page.locator('#memory-panel .ap-verdict').getAttribute('data-verdict'), 'ownership-leak');
  {
    // a state slot's bands: a staircase, every one alive; the hovered newest was made by createState in
    // trainingState, called from the loop; the diff shows the slot's bytes appearing, none going
    const slot = (await panelData(page)).diagnosis.grownOrigins.find((o) => /^state '.*' of program 'spirals_step'$/.test(o));
    const h = await hoverNewest(page, slot);
    assert.match(h.hovered?.origin ?? '', /^state '.*' of program 'spirals_step'$/, h.tip);
    assert.ok(/iterations ago/.test(h.tip) && h.tip.includes(site('const state = ctx.exe.createState(init)')) && h.tip.includes(site('ctx.state = trainingState(ctx); ctx.kept.push')), `the creating lines: ${h.tip}`);
    const b = await bandsOf(page, slot);
    assert.ok(b.bands >= 3 && b.alive === b.bands && b.starts >= 3, JSON.stringify(b));
    const d = await diffOf(page, slot);
    const name = /^state '(.*)' of program 'spirals_step'$/.exec(slot)[1];
    assert.ok(d && d.added > 0 && d.removed === 0 && d.addedBytes === stateBytes(name) * d.added, `${slot}: ${JSON.stringify(d)}`);
  }
  await stop(page);
  assert.deepEqual(errors, []);
});

test('decoding workloads: one reused KV cache is steady; a new cache per generate call leaks, named', async () => {
  const { page, errors } = await demo();
  await run(page, 'decode-cache-reused', 5); // a greedy generate call (7 steps, each token read back) an iteration
  await untilOrExplain(page, () => window.affonDemo.panel.diagnosis?.verdict === 'steady');
  await healthy(page);
  {
    const { diagnosis } = await panelData(page);
    assert.deepEqual(diagnosis.grownOrigins ?? [], []);
  }
  {
    // the reused cache: four state bands of 8 KiB ([64, 32] float32), alive from the first poll to the last
    const c = await page.evaluate(() => {
      const t = window.affonDemo.panel.storageTimeline;
      const bands = t.bands.filter((b) => /^state '[kv][01]' of program 'decode'$/.test(b.origin));
      return { bands: bands.length, bytes: [...new Set(bands.map((b) => b.bytes))], fromFirst: bands.filter((b) => b.from === 0 && b.to === t.polls.length - 1).length, polls: t.polls.length };
    });
    assert.deepEqual({ bands: c.bands, bytes: c.bytes, fromFirst: c.fromFirst }, { bands: 4, bytes: [8192], fromFirst: 4 }, JSON.stringify(c));
  }
  await page.click('#stop');
  // the demo's greedy tokens (compiled step, reused cache, after many calls): the float64 decoder's
  const decoded = await page.evaluate(async () => {
    const d = await import('./examples/decoder.js');
    const { tokens, calls } = window.affonDemo.runner.ctx;
    const eager = await d.generateEager(window.affonDemo.session, d.weights(42), d.PROMPT.slice(0, 4), 4);
    return { tokens, calls, eager: eager.tokens };
  });
  assert.ok(decoded.calls >= 5, `${decoded.calls} generate calls`);
  assert.equal(decoded.tokens.length, 8);
  assert.deepEqual(decoded.tokens.slice(0, 4), [3, 14, 15, 9], 'the prompt');
  // the generated tokens against the float64 decoder (the eager path runs the same kernels, so it
  // is a consistency check only)
  const g = greedyMismatches(decoded.tokens, 4);
  assert.deepEqual(g.mismatches, [], JSON.stringify(g));
  assert.deepEqual(decoded.tokens, decoded.eager);
  await page.click('#release');
  await run(page, 'decode-new-cache', 5);
  await untilOrExplain(page, () => (window.affonDemo.panel.diagnosis?.grownOrigins ?? []).includes("state 'k0' of program 'decode'"));
  assert.equal(await page.locator('#memory-panel .ap-verdict').getAttribute('data-verdict'), 'ownership-leak');
  {
    // hover the newest one: the tip names its origin, its age and the line that created it
    // (a cache state's band is under a pixel by now: the pointer lands on k0 or a neighbouring v0/k1/v1 of the same call)
    const h = await hoverNewest(page, "state 'k0' of program 'decode'");
    assert.match(h.hovered?.origin ?? '', /^state '[kv][01]' of program 'decode'$/, h.tip);
    assert.ok(/^state '[kv][01]' of program 'decode' · storage #/.test(h.tip) && /iterations ago/.test(h.tip), h.tip);
    assert.ok(h.tip.includes(site('const cache = ctx.exe.createState({}); ctx.kept.push(cache)')), `the creating line: ${h.tip}`);
    const b = await bandsOf(page, "state 'k0' of program 'decode'");
    assert.ok(b.bands >= 3 && b.alive === b.bands && b.starts >= 3, JSON.stringify(b));
    const d = await diffOf(page, "state 'k0' of program 'decode'");
    assert.ok(d && d.added > 0 && d.removed === 0 && d.addedBytes === 8192 * d.added, JSON.stringify(d));
  }
  await page.screenshot({ path: 'test-output/panel-decode-new-cache.png', fullPage: true });
  await stop(page);
  assert.deepEqual(errors, []);
});

test('frame workloads: a convnet over frames is steady with outputs disposed; kept outputs leak, named', async () => {
  const { page, errors } = await demo();
  await run(page, 'frames-convnet', 10);
  await untilOrExplain(page, () => window.affonDemo.panel.diagnosis?.verdict === 'steady');
  await healthy(page);
  {
    // outputs are disposed every frame: none is alive in the newest poll, and the constants' bands
    // (created once) are all alive from the first poll
    const out = await bandsOf(page, "program 'mobilenet' output 'probs'");
    assert.equal(out.alive, 0, JSON.stringify(out));
    const consts = await bandsOf(page, "constant of program 'mobilenet'");
    // one per constant node of the compiled program (its weights, and each batchNorm's epsilon and
    // relu6's bounds), counted in the program's JSON
    const nodes = await page.evaluate(async () => {
      const f = await import('./examples/frames.js');
      const { Program } = await import('../pkg/affon.js');
      const json = f.program(Program, f.weights(0)).toJSON();
      return { constants: json.nodes.filter((n) => n.op === 'constant').length, weights: Object.keys(f.weights(0)).length };
    });
    assert.ok(nodes.constants > nodes.weights && consts.bands === nodes.constants && consts.alive === consts.bands && consts.starts === 1, JSON.stringify({ ...nodes, ...consts }));
  }
  await stop(page);
  await run(page, 'frames-history', 10);
  await untilOrExplain(page, () => window.affonDemo.panel.diagnosis?.grownOrigins?.[0] === "program 'mobilenet' output 'probs'");
  assert.equal(await page.locator('#memory-panel .ap-verdict').getAttribute('data-verdict'), 'ownership-leak');
  {
    // hover the newest one: the tip names its origin, its age and the line that created it
    const h = await hoverNewest(page, "program 'mobilenet' output 'probs'");
    assert.equal(h.hovered?.origin, "program 'mobilenet' output 'probs'", h.tip);
    assert.ok(h.tip.startsWith("program 'mobilenet' output 'probs' · storage #") && /iterations ago/.test(h.tip), h.tip);
    // made by the run in classify(), called from the loop line that pushes it to the history
    assert.ok(h.tip.includes(site('const probs = ctx.exe.run({ frame: f }).probs')) && h.tip.includes(site('ctx.kept.push(classify(ctx, i))')), `the creating lines: ${h.tip}`);
    const b = await bandsOf(page, "program 'mobilenet' output 'probs'");
    assert.ok(b.bands >= 5 && b.alive === b.bands && b.starts >= 3, JSON.stringify(b));
    const d = await diffOf(page, "program 'mobilenet' output 'probs'");
    assert.ok(d && d.added > 0 && d.removed === 0 && d.addedBytes === 40 * d.added, JSON.stringify(d));
    // the pool by size class: each 40 B output takes a 256 B buffer — requested below rounded
    const inUse = await page.locator('#memory-panel tr[data-class="256"] td').nth(1).textContent();
    const m = inUse.match(/^([\d,]+): ([\d.]+) (B|KiB|MiB) → ([\d.]+) (B|KiB|MiB)$/);
    const b2 = (v, u) => Number(v) * { B: 1, KiB: 1024, MiB: 1024 ** 2 }[u];
    const n = Number(m?.[1].replaceAll(',', ''));
    assert.ok(m && b2(m[2], m[3]) < b2(m[4], m[5]) && Math.abs(b2(m[4], m[5]) - 256 * n) <= 0.0005 * b2(m[4], m[5]) + 52, `in use: ${inUse}`);
  }
  await page.screenshot({ path: 'test-output/panel-frames-history.png', fullPage: true });
  await stop(page);
  assert.deepEqual(errors, []);
});
