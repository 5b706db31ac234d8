// Readbacks start at the call: `item()`, `toArray()` / `to_array()` / `data()`, `array()` and
// `session.sync()` submit the pending batch (with the readback's copy) and request the map before
// they return their promise. Before, the wasm-bindgen async methods started in a later microtask,
// after the flush the calls before them had scheduled: a compiled run followed by `item()` took two
// submissions, the run's dispatches and then the copy (`bench-kernel-study a9`, `counts`).
// A result nobody reads yet is submitted when the calling task yields (the device never idles
// waiting for a readback). What a user relies on: one submission per run-and-read, the values, a
// promise (never a throw) for an error, and a read started before `dispose()` still resolving to
// the values. A rejected read moves
// no compute.storage / compute.memory record, labelled ones included (API.md, Errors: "A failed call
// changes no accounting"): each error case is compared before the call and after its rejection.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open } from './chromium.mjs';

let env;
before(async () => { env = await launch(); });
after(async () => { await env?.close(); });

test('a run or an eager chain read back right after the call is one submission; errors are rejections', async () => {
  const { page, errors } = await open(env, '/www/');
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  const out = await page.evaluate(async () => {
    const { Session, Program, telemetry } = await import('/pkg/affon.js');
    let submits = 0;
    const submit = GPUQueue.prototype.submit;
    GPUQueue.prototype.submit = function (...a) { submits++; return submit.apply(this, a); };
    const counted = async (f) => { const s0 = submits; const v = await f(); return { v, submits: submits - s0 }; };
    const s = await Session.create({ label: 'readback' });
    const n = 70_000; // a split sum: a first pass and a combining pass
    const host = new Float32Array(n).map((_, i) => ((i % 11) - 5) * 0.25);
    const x = s.tensor(host, [n]);
    const p = new Program('chain_sum');
    const px = p.input('x', 'float32', [n]);
    p.output('y', p.sum(p.exp(p.neg(p.abs(px)))));
    p.output('z', p.abs(px));
    const exe = s.compile(p);
    const out = {};
    await s.sync();
    // the run's two dispatches and the copy: one submission
    out.run = await counted(() => { const { y, z } = exe.run({ x }, undefined); z.dispose(); const r = y.item(); y.dispose(); return r; });
    out.eager = await counted(() => s.tidy(() => x.abs().neg()).toArray().then((a) => Array.from(a.slice(0, 4))));
    out.nested = await counted(() => s.tensor(new Float32Array([1, 2, 3, 4]), [2, 2]).mul(s.tensor(new Float32Array([2]), [])).array());
    out.sync = await counted(() => { const t = x.square(); const w = s.sync(); t.dispose(); return w.then(() => 'synced'); });
    // no readback at all: a kept result is computed and submitted once the calling task yields
    // (the device does not wait for a read to start), in one submission; reading it later adds the copy's
    {
      const s0 = submits;
      const t = x.square(); // an elementwise op: deferred, nothing recorded yet
      const sameTask = submits - s0;
      await new Promise((r) => setTimeout(r, 0));
      const afterYield = submits - s0;
      const v = Array.from((await t.data()).slice(0, 3));
      out.yielded = { sameTask, afterYield, total: submits - s0, v };
      t.dispose();
    }
    // a read started before dispose() still resolves to the values; the storage is released at once
    const t = s.tensor(new Float32Array([5, 6, 7]), [3]).add(s.fill([], 1));
    const live1 = s.memory().numBytes;
    const started = t.data();
    t.dispose();
    out.freedAtDispose = live1 - s.memory().numBytes;
    out.readAfterDispose = Array.from(await started);
    // errors: a promise that rejects with an AffonError, not a throw, and moves no accounting record
    const errorOf = (f) => { let p; try { p = f(); } catch (e) { return Promise.resolve(`threw ${e.name}:${e.code}`); } return p.then(() => 'resolved', (e) => `rejected ${e.name}:${e.code}`); };
    // every compute.storage / compute.memory record, keyed by scope, name and labels (keys sorted)
    const ledger = () => {
      const o = {};
      for (const m of telemetry.metrics()) {
        if (m.scope !== 'compute.storage' && m.scope !== 'compute.memory') continue;
        const labels = m.labels ? ` ${JSON.stringify(Object.fromEntries(Object.keys(m.labels).sort().map((k) => [k, m.labels[k]])))}` : '';
        o[`${m.scope}/${m.name}${labels}`] = m.value;
      }
      return o;
    };
    // The earlier work settled first (a task boundary), so that only the call itself runs between the
    // two snapshots: the snapshot is taken right before it, the second once its promise has settled.
    const unmoved = async (f) => {
      await new Promise((r) => setTimeout(r, 0));
      const before = ledger();
      const result = await errorOf(f);
      const after = ledger();
      const moved = Object.keys({ ...before, ...after }).filter((k) => before[k] !== after[k]).map((k) => `${k}: ${before[k]} → ${after[k]}`);
      return { result, moved };
    };
    out.disposedItem = await unmoved(() => t.item());
    out.disposedArray = await unmoved(() => t.array());
    out.multiItem = await unmoved(() => x.item());
    const gone = await Session.create({ label: 'gone' });
    gone.dispose();
    out.disposedSync = await unmoved(() => gone.sync());
    GPUQueue.prototype.submit = submit;
    exe.dispose(); x.dispose(); s.dispose();
    return out;
  });
  // f64 reference: sum of exp(-|v|) over the repeating pattern
  let want = 0;
  for (let i = 0; i < 70_000; i++) want += Math.exp(-Math.abs(((i % 11) - 5) * 0.25));
  assert.ok(Math.abs(out.run.v - want) / want < 1e-5, `sum ${out.run.v} vs ${want}`);
  assert.equal(out.run.submits, 1, 'run + item(): one submission');
  assert.deepEqual(out.eager.v, [-1.25, -1, -0.75, -0.5]);
  assert.equal(out.eager.submits, 1, 'eager chain + toArray(): one submission');
  assert.deepEqual(out.nested.v, [[2, 4], [6, 8]]);
  assert.equal(out.nested.submits, 1, 'upload, op, array(): one submission');
  assert.equal(out.sync.v, 'synced');
  assert.equal(out.sync.submits, 1, 'an op then sync(): one submission');
  assert.deepEqual(out.yielded, { sameTask: 0, afterYield: 1, total: 2, v: [1.5625, 1, 0.5625] },
    'an op left pending: submitted when the task yields (0 submissions before, 1 after), the later read adds 1');
  assert.equal(out.freedAtDispose, 12, 'dispose() releases the storage while the read is in flight');
  assert.deepEqual(out.readAfterDispose, [6, 7, 8]);
  assert.equal(out.disposedItem.result, 'rejected AffonError:DISPOSED');
  assert.equal(out.disposedArray.result, 'rejected AffonError:DISPOSED');
  assert.equal(out.multiItem.result, 'rejected AffonError:SHAPE_MISMATCH');
  assert.equal(out.disposedSync.result, 'rejected AffonError:SESSION_DISPOSED');
  for (const k of ['disposedItem', 'disposedArray', 'multiItem', 'disposedSync']) {
    assert.deepEqual(out[k].moved, [], `${k}: a rejected read moved accounting records`);
  }
  assert.deepEqual(errors, []);
});
