// Property test of the JS contract (../../../shared/API.md: Session, Tensor, Program, telemetry,
// Counting rules, Errors): at least 10,000 seeded pseudo-random calls, good and bad, against two
// Sessions with an 8 MiB pool bound each, in Chromium on WebGPU (SwiftShader). The driver is the page
// tests/browser/fixtures/property.html; after every call it checks that
//   1. anything thrown is an Error with name 'AffonError' and a code listed in API.md (a WebAssembly
//      RuntimeError, a wasm-bindgen "expected instance of …" or a TypeError fails), and
//   2. compute.storage/live_bytes (the process-wide record, the one without labels) equals the bytes of
//      the tensors, ExecutionStates and Executable constants the driver holds and has not disposed, and
//   3. a call that threw (an async call that rejected) moved no compute.storage / compute.memory
//      record, labelled ones (per session, per origin) included (API.md, Errors: "changes no
//      accounting" is literal), and a tidy whose fn threw left live storage as it was, and
//   4. a call the driver knows to be valid did not throw (OUT_OF_MEMORY aside where the pool bound may
//      be passed), and a known misuse threw, with a code API.md/README give for it (a misuse in a
//      Program node may instead be refused when the program is compiled);
// besides, results have the shapes/dtypes/values the call implies where that is unambiguous, tidy
// disposes exactly the tensors it should, and session.memory().numBytes matches per session;
// and at the end, after disposing everything, that live_bytes and live_tensors are 0 and that, after
// clearCache(), pool_bytes and pool_cached_bytes are back to their baseline. The run must also stay
// a useful mix: at least MIN_GOOD_SHARE of its calls succeed, and every method had a successful call
// (see MIN_CALLS_FOR_GOOD).
//
// Run: node --test tests/browser/property.test.mjs        (needs pkg/: scripts/build-pkg.sh)
//   AFFON_PROPERTY_SEED=<uint32>   replays a run (the seed is printed; default: a random one)
//   AFFON_PROPERTY_CALLS=<n>       number of calls (default and required minimum: 10,000)
// A failure names the seed, the page segment, the call index and the call. If the wasm instance aborts,
// the page is reloaded and the run continues with fresh sessions from the next call index (segment k+1
// draws from a stream derived from the seed, so a seed still replays the whole run).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { launch, open } from './chromium.mjs';

const MIN_CALLS = 10_000;
const READBACKS = 300;       // toArray()/item() calls in the whole run, at most
const MAX_SEGMENTS = 150;    // page reloads after aborts, at most
const BUDGET_MS = 300_000;   // the pages stop drawing calls after this (the run then fails: too few calls)
const STALL_MS = 60_000;     // no new call for this long: the page is hung
// Successful calls: about 83 % of a run (20 seeds of 10,000 calls: 82.4–84.0 %; seed 99 with 50,000:
// 83.2 %); the floor is half of that.
const MIN_GOOD_SHARE = 0.42;
// Every method must have had a successful call where the generator can make one: where the driver
// made a call it knew to be valid (that call's failure is reported besides), or where the method was
// called at least MIN_CALLS_FOR_GOOD times. The rarest good calls are tensor.item's (a tensor of one
// element: about 8 % of its calls): 0.92^150 < 1e-5. Every method of the driver has a valid form, so
// none is exempt (NO_GOOD_CALL).
const MIN_CALLS_FOR_GOOD = 150;
const NO_GOOD_CALL = new Set([]);

function envInt(name) {
  const v = process.env[name];
  if (v === undefined || v.trim() === '') return undefined;
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(Number(v))) {
    throw new Error(`${name} must be a non-negative integer, got '${v}'`);
  }
  return Number(v);
}
const SEED = (envInt('AFFON_PROPERTY_SEED') ?? crypto.randomInt(0, 2 ** 32)) >>> 0;
const CALLS = envInt('AFFON_PROPERTY_CALLS') ?? MIN_CALLS;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const say = (line) => console.log(line);

let env;
before(async () => { env = await launch(); });
after(async () => { await env?.close(); });

// Polls the page until its driver is done, or until no new call starts for STALL_MS.
async function waitDone(page, deadline) {
  let lastIndex = -1; let lastChange = Date.now(); let lastCur = null;
  let crashed = false;
  page.on('crash', () => { crashed = true; });
  for (;;) {
    if (crashed) return { hung: lastCur, why: 'the page crashed' };
    const s = await Promise.race([
      page.evaluate(() => ({ done: document.body.dataset.done === 'true', cur: window.__propertyCurrent ?? null }))
        .catch((e) => ({ error: String(e) })),
      sleep(5000).then(() => ({ unresponsive: true })),
    ]);
    if (s.done) return { done: true };
    if (s.error) return { hung: lastCur, why: s.error };
    if (s.cur && s.cur.index !== lastIndex) { lastIndex = s.cur.index; lastChange = Date.now(); lastCur = s.cur; }
    if (Date.now() - lastChange > STALL_MS) return { hung: lastCur, why: `no new call for ${STALL_MS / 1000} s` };
    if (Date.now() > deadline + STALL_MS) return { hung: lastCur, why: 'over the time budget' };
    await sleep(250);
  }
}

function mergeFailure(failures, f) {
  const g = failures.get(f.signature);
  if (!g) { failures.set(f.signature, { ...f, methods: { ...f.methods }, examples: [...f.examples] }); return; }
  g.count += f.count;
  for (const [m, n] of Object.entries(f.methods)) g.methods[m] = (g.methods[m] ?? 0) + n;
  const have = new Set(g.examples.map((e) => e.method));
  for (const e of f.examples) if (g.examples.length < 4 && !have.has(e.method)) { g.examples.push(e); have.add(e.method); }
}

function describeFailure(f, i) {
  const methods = Object.entries(f.methods).sort((a, b) => b[1] - a[1]).map(([m, n]) => `${m} ${n}`).join(', ');
  const lines = [`${i + 1}. [${f.kind}] ${f.cause}`, `   ${f.count}× in ${methods}`];
  for (const e of f.examples) {
    lines.push(`   - seed ${e.seed}, segment ${e.segment}, call ${e.index}: ${e.call}`);
    lines.push(`       → ${e.detail}`);
    for (const s of e.stack ?? []) lines.push(`         ${s}`);
  }
  return lines.join('\n');
}

test(`property: ${CALLS} seeded calls (good and bad) against two sessions keep errors typed and accounting exact`,
  { timeout: BUDGET_MS + 4 * STALL_MS }, async () => {
    say(`affon property test: seed ${SEED} (AFFON_PROPERTY_SEED=${SEED} replays it), ${CALLS} calls`);
    const t0 = Date.now();
    const deadline = t0 + BUDGET_MS;
    const totals = { calls: 0, good: 0, codes: {}, nonAffon: 0, methods: {}, expected: { valid: 0, invalid: 0, open: 0, none: 0 }, ledgerChecks: 0, tidyLedgerChecks: 0 };
    const failures = new Map();
    const consoleErrors = new Map();
    const problems = [];
    let start = 0; let readbacks = READBACKS; let last = null; let segment = 0;
    for (; segment < MAX_SEGMENTS; segment++) {
      const qs = new URLSearchParams({ seed: SEED, calls: CALLS, start, segment, readbacks, deadline });
      const { page, errors } = await open(env, `/tests/browser/fixtures/property.html?${qs}`);
      page.on('console', (m) => { if (m.type() === 'log' && m.text().startsWith('[property]')) say(m.text()); });
      const w = await waitDone(page, deadline);
      let r;
      if (w.done) {
        r = await page.evaluate(() => window.propertyResult);
      } else {
        // Counts of a hung page are lost; its failure is the call it was in.
        const at = w.hung?.index ?? start;
        r = {
          segment, start, end: at + 1, calls: Math.max(0, at + 1 - start), good: 0, codes: {}, nonAffon: 0,
          readbacksLeft: 0, finished: false,
          fatal: { index: at, desc: w.hung?.desc ?? '?', error: w.why },
          failures: [{
            signature: `hang | ${w.hung?.method ?? '?'}`, kind: 'page hung', cause: w.why, count: 1,
            methods: { [w.hung?.method ?? '?']: 1 },
            examples: [{ seed: SEED, segment, index: at, method: w.hung?.method ?? '?', call: w.hung?.desc ?? '?', detail: w.why }],
          }],
        };
      }
      for (const e of errors) {
        const text = String(e?.message ?? e).split('\n').slice(0, 6).join('\n');
        consoleErrors.set(text, (consoleErrors.get(text) ?? 0) + 1);
      }
      await page.close().catch(() => {});
      totals.calls += r.calls; totals.good += r.good; totals.nonAffon += r.nonAffon ?? 0;
      for (const [k, v] of Object.entries(r.codes ?? {})) totals.codes[k] = (totals.codes[k] ?? 0) + v;
      for (const [k, m] of Object.entries(r.methods ?? {})) {
        const t = (totals.methods[k] ??= [0, 0, 0, 0]);
        m.forEach((v, i) => { t[i] += v; });
      }
      for (const [k, v] of Object.entries(r.expected ?? {})) totals.expected[k] += v;
      totals.ledgerChecks += r.ledgerChecks ?? 0;
      totals.tidyLedgerChecks += r.tidyLedgerChecks ?? 0;
      for (const f of r.failures ?? []) mergeFailure(failures, f);
      if (r.driverError) problems.push(`the test driver itself failed in segment ${segment} (a bug in the test):\n${r.driverError}`);
      if (r.stoppedByDeadline) problems.push(`the run stopped at its ${BUDGET_MS / 1000} s budget at call ${r.end}`);
      readbacks = r.readbacksLeft ?? readbacks;
      last = r;
      if (!r.fatal || r.driverError) break;
      say(`segment ${segment} ended at call ${r.fatal.index} (${r.fatal.error}); reloading the page and continuing from call ${r.fatal.index + 1}`);
      start = r.fatal.index + 1;
    }
    const wall = ((Date.now() - t0) / 1000).toFixed(1);
    const codes = Object.entries(totals.codes).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ');
    say(`seed ${SEED}: ${totals.calls} calls ran, ${totals.good} good, ${totals.calls - totals.good} threw, in ${wall} s over ${segment + 1} page(s)`);
    say(`thrown AffonError codes: ${codes || 'none'}; thrown values that are not an AffonError: ${totals.nonAffon}`);
    const share = totals.calls ? totals.good / totals.calls : 0;
    say(`good share ${(100 * share).toFixed(1)} % (floor ${100 * MIN_GOOD_SHARE} %); expectations: ${totals.expected.valid} known valid, ${totals.expected.invalid} known misuses, ${totals.expected.open} open, ${totals.expected.none} unstated; ${totals.ledgerChecks} ledger comparisons around failed calls, ${totals.tidyLedgerChecks} around tidies whose fn threw`);
    say(`calls (good/all, known valid, known misuse) by method: ${Object.entries(totals.methods).sort().map(([k, [n, g, v, b]]) => `${k} ${g}/${n} (${v}, ${b})`).join(', ')}`);
    if (last?.final) {
      const f = last.final; const b = last.baseline ?? {};
      say(`final: live_bytes ${f.liveBytes}, live_tensors ${f.liveTensors}; after clearCache pool_bytes ${f.poolBytes} (baseline ${b.poolBytes}), pool_cached_bytes ${f.poolCachedBytes} (baseline ${b.poolCachedBytes})`);
    }
    const list = [...failures.values()].sort((a, b) => b.count - a.count);
    if (list.length) say(`${list.length} distinct failure(s):\n${list.map(describeFailure).join('\n')}`);
    if (consoleErrors.size) say(`page errors / console errors:\n${[...consoleErrors].map(([t, n]) => `${n}× ${t}`).join('\n')}`);

    if (segment === MAX_SEGMENTS) problems.push(`the instance aborted in ${MAX_SEGMENTS} page segments; the run was not completed`);
    if (!last?.finished) problems.push('the final checks did not run (the last page did not finish)');
    if (totals.calls < MIN_CALLS) problems.push(`only ${totals.calls} calls ran; at least ${MIN_CALLS} are required`);
    if (share < MIN_GOOD_SHARE) problems.push(`only ${(100 * share).toFixed(1)} % of the calls succeeded (${totals.good} of ${totals.calls}); the floor is ${100 * MIN_GOOD_SHARE} %`);
    const noGood = Object.entries(totals.methods).filter(([k, [n, g, v]]) => g === 0 && (n >= MIN_CALLS_FOR_GOOD || v > 0) && !NO_GOOD_CALL.has(k));
    if (noGood.length) problems.push(`no successful call of ${noGood.map(([k, [n]]) => `${k} (${n} calls)`).join(', ')}`);
    if (list.length) {
      problems.push(`${list.length} distinct failure(s) (seed ${SEED}):\n${list.map(describeFailure).join('\n')}`);
    }
    if (consoleErrors.size) {
      problems.push(`${consoleErrors.size} distinct page/console error(s):\n${[...consoleErrors].map(([t, n]) => `${n}× ${t}`).join('\n')}`);
    }
    assert.ok(problems.length === 0, `AFFON_PROPERTY_SEED=${SEED}\n${problems.join('\n\n')}`);
  });
