// The tutorials' code (docs/tutorials/*.md), run as written in headless Chromium on WebGPU: the fenced
// js blocks are read from the markdown, their imports of 'affon' and './decoder.js' pointed at the built
// package and www/examples/, and what the prose supplies (the training data, the session) defined; the
// results the tutorials state must come out. Run: scripts/build-pkg.sh && node --test tests/browser-examples/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launch, open } from '../browser/chromium.mjs';
import { greedyMismatches } from './reference.mjs';

let env;
before(async () => { env = await launch(); });
after(async () => { await env?.close(); });

/** The fenced js blocks of a tutorial, in order. */
function blocks(name) {
  const md = fs.readFileSync(new URL(`../../docs/tutorials/${name}.md`, import.meta.url), 'utf8');
  return [...md.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/** Runs `parts` (code, in order) as one module in a page: imports hoisted, the rest in an async body;
 *  `result` is an expression evaluated at the end. Returns its value. */
async function runModule(parts, result) {
  const code = parts.join('\n')
    .replaceAll("from 'affon'", "from '/pkg/affon.js'")
    .replaceAll("from './decoder.js'", "from '/www/examples/decoder.js'");
  const lines = code.split('\n');
  const imports = lines.filter((l) => l.startsWith('import '));
  const body = lines.filter((l) => !l.startsWith('import '));
  const module = `${imports.join('\n')}
try {
${body.join('\n')}
  window.__tutorial = { ok: true, value: ${result} };
} catch (e) {
  window.__tutorial = { ok: false, error: String(e?.code ?? '') + ' ' + String(e?.message ?? e) };
}`;
  const { page, errors } = await open(env, '/www/examples/index.html');
  await page.addScriptTag({ type: 'module', content: module });
  await page.waitForFunction(() => window.__tutorial, null, { timeout: 240_000 });
  const r = await page.evaluate(() => window.__tutorial);
  await page.close();
  assert.deepEqual(errors.map(String), [], 'page errors');
  assert.ok(r.ok, r.error);
  return r.value;
}

test('"Port a TF.js training loop": the Program step and the watched loop, as written — steady, the loss falls', async () => {
  const [, program, loop] = blocks('port-a-tfjs-training-loop');
  const data = `import { spirals } from '/www/examples/training.js';
const data = spirals(200, 1);
const xs = session.tensor(data.x, [data.labels.length, 2]), ys = session.tensor(data.y, [data.labels.length, 2]);`;
  const r = await runModule([program, data, loop],
    '{ verdict: d.verdict, losses, stateBytes: state.byteLength, grown: d.grownOrigins }');
  assert.equal(r.verdict, 'steady');
  assert.deepEqual(r.grown ?? [], []);
  assert.equal(r.losses.length, 8, 'a loss every 50 of 400 steps');
  assert.ok(r.losses.at(-1) < r.losses[0] * 0.5, `the loss falls: ${r.losses}`);
  // parameters (2·64 + 64 + 64·2 + 2 floats) and Adam's m and v, 4 bytes each, plus adam/t
  assert.equal(r.stateBytes, 3 * 4 * (2 * 64 + 64 + 64 * 2 + 2) + 4);
});

test('"Find the KV-cache leak": the leaking generate, as written — ownership-leak naming the four cache states', async () => {
  const [leak, watch] = blocks('find-the-kv-cache-leak');
  const setup = `import init, { Session, telemetry } from '/pkg/affon.js';
await init();
const session = await Session.create({ label: 'kv-tutorial' });`;
  const r = await runModule([setup, leak, watch], '{ verdict: d.verdict, grown: d.grownOrigins, tokens: await generate(PROMPT.slice(0, 4), 4) }');
  assert.equal(r.verdict, 'ownership-leak');
  assert.deepEqual([...r.grown].sort(), ['k0', 'k1', 'v0', 'v1'].map((n) => `state '${n}' of program 'decode'`));
  assert.equal(r.tokens.length, 8);
  assert.deepEqual(r.tokens.slice(0, 4), [3, 14, 15, 9]);
  // the 4 generated tokens against the float64 decoder (reference.mjs): the reference's argMax
  // wherever its top-2 margin exceeds 1e-3 of the logit scale
  const { mismatches, ties } = greedyMismatches(r.tokens, 4);
  assert.deepEqual(mismatches, [], `generated ${r.tokens.slice(4)} (${ties} near-ties)`);
});
