// The minimal demo: a session, tensors made and disposed by hand, and the live figures.
import telemetry from 'std:telemetry';
import init, { Session } from '../pkg/affon.js';

await init();
const $ = (id) => document.getElementById(id);
const status = (text, error = false) => { $('status').textContent = text; $('status').className = error ? 'error' : ''; };

let session;
try {
  session = await Session.create({ label: 'demo', pool: { maxTotalBytes: 256 << 20 } });
} catch (e) {
  status(`${e.name} ${e.code ?? ''}: ${e.message}`, true);
  throw e;
}
const a = session.adapter;
$('adapter').textContent = `adapter: ${a.backend} ${a.vendor} ${a.architecture} ${a.name} (${a.deviceType})`;

const live = [];
$('make').onclick = () => {
  const n = Number($('elements').value);
  const dtype = $('dtype').value;
  try {
    for (let i = 0; i < 10; i++) live.push(session.fill([n], i % 2, dtype));
    status(`made 10 × ${dtype}[${n}]`);
  } catch (e) { status(`${e.code}: ${e.message}`, true); }
  render();
};
$('dispose-one').onclick = () => { live.shift()?.dispose(); render(); };
$('dispose-all').onclick = () => { while (live.length) live.pop().dispose(); render(); };
$('clear-cache').onclick = () => { status(`released ${session.clearCache()} cached bytes`); render(); };

function render() {
  const m = session.memory();
  $('memory').tBodies[0].innerHTML = Object.entries(m)
    .map(([k, v]) => `<tr><td>${k}</td><td class="num">${Array.isArray(v) ? v.join(', ') : v}</td></tr>`).join('');
  $('metrics').tBodies[0].innerHTML = telemetry.metrics().filter((r) => !r.labels)
    .map((r) => `<tr data-metric="${r.scope}/${r.name}"><td>${r.scope}</td><td>${r.name}</td><td>${r.kind}</td>` +
      `<td class="num">${r.value}</td><td>${r.unit}</td></tr>`).join('');
}
render();
setInterval(render, 500);
window.affonDemo = { session, live, render };
document.body.dataset.ready = 'true';
