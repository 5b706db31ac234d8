// affon as an app adopts it: imported by package name (resolved through pkg/package.json's
// `exports`), bundled by Vite, the .wasm emitted as a hashed asset.
import init, { Session, telemetry as namedTelemetry } from 'affon';
// The `std:telemetry` module, through the package's "./std-telemetry" export. It initialises the
// module itself (top-level await), so `telemetry` is usable as soon as the import resolves.
import telemetry from 'affon/std-telemetry';

const out = document.querySelector('#out');
const liveBytes = () =>
  telemetry.metrics().find((m) => m.scope === 'compute.storage' && m.name === 'live_bytes' && !m.labels)?.value;

try {
  await init(); // a no-op here: std-telemetry already initialised the same instance

  const session = await Session.create({ label: 'vite-app' });
  const a = session.tensor(new Float32Array([1, 2, 3, 4]), [2, 2]);
  const b = session.tensor([10, 20], [2]);
  const sum = a.add(b); // broadcasts: [[11, 22], [13, 24]]
  const squared = sum.square(); // [[121, 484], [169, 576]]
  sum.dispose();
  const values = Array.from(await squared.to_array());
  const liveWhileHeld = liveBytes(); // a (16) + b (8) + squared (16)
  a.dispose(); b.dispose(); squared.dispose();

  window.appResult = {
    sameTelemetry: telemetry === namedTelemetry,
    backend: session.adapter.backend,
    shape: squared.shape,
    values,
    liveWhileHeld,
    liveAfterDispose: liveBytes(),
  };
  session.dispose();
  out.textContent = JSON.stringify(window.appResult, null, 2);
  document.body.dataset.result = 'ok';
} catch (e) {
  out.textContent = `${e.name}: ${e.message}`;
  window.appResult = { error: `${e.code ?? e.name}: ${e.message}` };
  document.body.dataset.result = 'error';
}
