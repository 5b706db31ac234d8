// A page that made `__AFFON_DEVTOOLS_HOOK__` unusable before affon first ran (a throwing getter, a
// throwing setter, a read-only value) gets no hook, and affon works. Before, the hook was read and
// written with no try: `new Program()` threw the page's value, and inside `Session.create()` the
// throw left the promise unsettled. Each case needs a page where affon has not installed its hook
// yet, so these run here, one fresh page each, not in the wasm-bindgen tests (one page for all).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open } from './chromium.mjs';

let env;
before(async () => { env = await launch(); });
after(async () => { await env?.close(); });

for (const how of ['a throwing getter', 'a throwing setter', 'a read-only value']) {
  for (const first of ['Program', 'Session']) {
    test(`__AFFON_DEVTOOLS_HOOK__ with ${how}, ${first} first: no hook, affon works`, async () => {
      const { page, errors } = await open(env, '/tests/browser/fixtures/blank.html');
      const out = await page.evaluate(async ([how, first]) => {
        const descriptor = {
          'a throwing getter': { get() { throw 1; }, configurable: true },
          'a throwing setter': { get() { return undefined; }, set() { throw 2; }, configurable: true },
          'a read-only value': { value: 0, writable: false, configurable: true },
        }[how];
        Object.defineProperty(globalThis, '__AFFON_DEVTOOLS_HOOK__', descriptor);
        const { default: init, Program, Session } = await import('/pkg/affon.js');
        await init();
        const program = () => { try { return new Program('p').name; } catch (e) { return `threw ${e?.name ?? e}`; } };
        const session = () => Promise.race([
          Session.create({ label: 's' }).then((s) => { const l = s.label; s.dispose(); return l; },
            (e) => `rejected ${e?.name ?? e}`),
          new Promise((ok) => setTimeout(() => ok('never settled'), 10_000)),
        ]);
        const r = {};
        if (first === 'Program') { r.program = program(); r.session = await session(); }
        else { r.session = await session(); r.program = program(); }
        const d = Object.getOwnPropertyDescriptor(globalThis, '__AFFON_DEVTOOLS_HOOK__');
        r.untouched = d.get === descriptor.get && d.set === descriptor.set && d.value === descriptor.value;
        return r;
      }, [how, first]);
      assert.deepEqual(out, { program: 'p', session: 's', untouched: true });
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
}

test('on a page that left the global alone, the hook is installed', async () => {
  const { page, errors } = await open(env, '/tests/browser/fixtures/blank.html');
  const out = await page.evaluate(async () => {
    const { default: init, Program } = await import('/pkg/affon.js');
    await init();
    new Program('p').free();
    const hook = globalThis.__AFFON_DEVTOOLS_HOOK__;
    return { version: typeof hook?.version, snapshot: Array.isArray(hook?.snapshot().metrics) };
  });
  assert.deepEqual(out, { version: 'string', snapshot: true });
  assert.deepEqual(errors, []);
  await page.close();
});

// The classes are patched when the module is instantiated (wasm-bindgen's start function), so a
// method called on something that is not a handle before the first Session or Program is an
// AffonError too; before, it was wasm-bindgen's plain Error until Session.create or new Program ran.
test('before any Session or Program, a method on something not a handle is an AffonError', async () => {
  const { page, errors } = await open(env, '/tests/browser/fixtures/blank.html');
  const out = await page.evaluate(async () => {
    const { default: init, Tensor, Session, Executable, ProgramNode, telemetry } = await import('/pkg/affon.js');
    await init();
    // every compute.storage / compute.memory record, as the wasm tests' ledger() reads it
    const ledger = () => JSON.stringify(telemetry.metrics()
      .filter((r) => r.scope === 'compute.storage' || r.scope === 'compute.memory')
      .map((r) => [r.scope, r.name, JSON.stringify(r.labels ?? {}), r.value]).sort());
    const moved = [];
    const code = (f) => {
      const l0 = ledger();
      try { f(); return 'no error'; } catch (e) { return `${e?.name} ${e?.code}`; }
      finally { if (ledger() !== l0) moved.push(String(f)); }
    };
    return {
      moved,
      square: code(() => Tensor.prototype.square.call({})),
      shape: code(() => Object.getOwnPropertyDescriptor(Tensor.prototype, 'shape').get.call({})),
      memory: code(() => Session.prototype.memory.call(Object.create(Session.prototype))),
      run: code(() => Executable.prototype.run.call(5, {})),
      free: code(() => ProgramNode.prototype.free.call({})),
      hook: typeof globalThis.__AFFON_DEVTOOLS_HOOK__?.snapshot,
    };
  });
  const refused = 'AffonError INVALID_ARGUMENT';
  assert.deepEqual(out, { moved: [], square: refused, shape: refused, memory: refused, run: refused, free: refused,
    hook: 'function' });
  assert.deepEqual(errors, []);
  await page.close();
});
