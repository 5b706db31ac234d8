// The demo: workloads from the seeds (leaky and correct) run at a chosen rate, the in-page memory
// panel (the same module the DevTools extension uses) reading __AFFON_DEVTOOLS_HOOK__ directly, and a
// manual playground with the raw figures.
import telemetry from 'std:telemetry';
import init, { Session } from '../pkg/affon.js';
import uPlot from './vendor/uPlot.esm.js';
import { MemoryPanel } from './extension/shared/memory-panel.js';
import { hookSource } from './extension/shared/sources.js';
import { WORKLOADS, byId } from './workloads.js';
import { WorkloadRunner } from './runner.js';

await init();
const $ = (id) => document.getElementById(id);
const status = (text, error = false) => { $('status').textContent = text; $('status').className = error ? 'error' : ''; };

let session;
try {
  session = await Session.create({ label: 'demo', pool: { maxTotalBytes: 512 << 20 }, captureStacks: true });
} catch (e) {
  status(`${e.name} ${e.code ?? ''}: ${e.message}`, true);
  $('adapter').textContent = `no WebGPU session: ${e.code ?? e.name}: ${e.message}`;
  throw e;
}
const a = session.adapter;
$('adapter').textContent = `adapter: ${a.backend} ${a.vendor} ${a.architecture} ${a.name} (${a.deviceType})`;

// --- the in-page memory panel ---------------------------------------------------------------
const params = new URLSearchParams(location.search);
const panel = new MemoryPanel($('memory-panel'), {
  source: hookSource(),
  uPlot,
  pollMs: Number(params.get('poll')) || 500,
  windowIterations: Number(params.get('window')) || 20,
});
panel.start();
$('toggle-panel').onclick = () => {
  const el = $('memory-panel');
  el.hidden = !el.hidden;
  if (el.hidden) panel.stop(); else panel.start();
  $('toggle-panel').textContent = el.hidden ? 'open memory panel' : 'hide memory panel';
};

// --- workloads -------------------------------------------------------------------------------
const runner = new WorkloadRunner(session, { onChange: renderLoop });
$('workload').innerHTML = WORKLOADS.map((w) => `<option value="${w.id}">${w.title}</option>`).join('');
const showWorkload = () => {
  const w = byId($('workload').value);
  $('workload-code').textContent = w.code;
  $('workload-pattern').textContent = w.pattern;
  $('workload-expect').textContent = w.expect;
};
$('workload').onchange = showWorkload;
showWorkload();
runner.setRate($('rate').value);
$('rate').oninput = () => runner.setRate($('rate').value);

async function start(id = $('workload').value) {
  const w = byId(id);
  if (!w) throw new Error(`unknown workload ${id}`);
  $('workload').value = id;
  showWorkload();
  await runner.prepare(w); // stops the previous run and releases what it retained
  session.clearCache(); // every run warms the pool from empty, so pool verdicts do not depend on earlier runs
  globalThis.__AFFON_DEVTOOLS_HOOK__.reportContext = { ...w.context, pattern: w.pattern, workload: w.id };
  await panel.reset(); // baseline now, after the workload's setup; resets the peak gauges
  runner.start();
}
$('start').onclick = () => start();
$('stop').onclick = () => runner.stop('stopped');
$('release').onclick = async () => { await runner.release(); render(); };

// the training workloads' loss, read back every 5th step: a live loss curve under the code
let lossChart = null;
function renderLoss() {
  const losses = runner.ctx?.losses;
  $('loss-curve').hidden = !losses;
  if (!losses) return;
  const data = [losses.map((p) => p[0]), losses.map((p) => p[1])];
  if (!lossChart) {
    lossChart = new uPlot({ width: 640, height: 180, title: 'loss (read back every 5th step)', scales: { x: { time: false } },
      series: [{ label: 'iteration' }, { label: 'loss', stroke: '#d62728' }] }, data, $('loss-curve'));
    window.affonDemo.lossChart = lossChart;
  } else lossChart.setData(data);
}

function renderLoop() {
  renderLoss();
  const el = $('loop-status');
  const w = runner.workload;
  $('start').textContent = runner.running ? 'restart' : 'start';
  $('start').title = runner.running ? 'start the selected workload afresh' : '';
  $('stop').disabled = !runner.running;
  if (runner.running) {
    el.className = 'running';
    el.textContent = `running ${w.id} · ${runner.iterations.toLocaleString('en-US')} iterations · ${runner.actualRate.toFixed(0)} it/s (asked ${runner.rate})`;
  } else {
    el.className = runner.error ? 'error' : '';
    el.textContent = runner.message || (w ? `${w.id}: ${runner.iterations} iterations, stopped` : 'idle');
  }
}
renderLoop();

// --- manual tensors --------------------------------------------------------------------------
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
setInterval(render, 1000);

window.affonDemo = { session, live, render, panel, runner, start, workloads: WORKLOADS };
document.body.dataset.ready = 'true';
