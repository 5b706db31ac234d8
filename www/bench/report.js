// The results of the benchmark page (`window.benchResults`): checked (every time a positive finite
// figure, every check in agreement, every memory value finite), with the Markdown that
// scripts/bench-browser.mjs prints (`results.markdown`), and the same tables shown in the page.
import * as tf from '@tensorflow/tfjs-core';
import { QUICK, REPS, WARMUP, now, PEERS, LABEL, SHORT, peerState, rows, memory } from './harness.js';

/** The results of the run begun at `started`: built, checked (throws on a bad figure), rendered in the page. */
export function finish({ adapters, growDetail, started }) {
  const results = {
    adapters, quick: QUICK, reps: REPS, warmup: WARMUP, userAgent: navigator.userAgent,
    tfjsVersion: tf.version_core, ortVersion: peerState.ort.version ?? null, jaxVersion: peerState.jax.version ?? null,
    peers: Object.fromEntries(['ort', 'jax'].map((k) => [k, { ok: peerState[k].ok, reason: peerState[k].reason ?? null }])),
    rows, memory, growDetail, totalSeconds: (now() - started) / 1000,
  };
  for (const r of rows) {
    for (const k of ['affonMs', 'tfjsMs', 'ratio', 'bestMs', 'bestRatio']) {
      if (!Number.isFinite(r[k]) || r[k] <= 0) throw new Error(`row ${r.id}: ${k} = ${r[k]}`);
    }
    for (const k of ['ortMs', 'jaxMs', 'jaxJitMs']) {
      if (r[k] !== null && (!Number.isFinite(r[k]) || r[k] <= 0)) throw new Error(`row ${r.id}: ${k} = ${r[k]}`);
    }
    if (r.check !== undefined && !(r.check < 1e-3)) throw new Error(`row ${r.id}: affon and TF.js disagree (max rel diff ${r.check})`);
    for (const [k, d] of Object.entries(r.peerChecks)) if (!(d < 1e-3)) throw new Error(`row ${r.id}: affon and ${LABEL[k]} disagree (max rel diff ${d})`);
  }
  for (const m of memory) {
    for (const k of ['affonValue', 'affonEager', 'affonProgram', 'tfjsValue']) {
      if (k in m && !Number.isFinite(m[k])) throw new Error(`memory ${m.id}: ${k} = ${m[k]}`);
    }
  }
  results.markdown = markdown(results);
  render(results);
  return results;
}

export function fmtTime(ms) {
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  if (ms >= 0.01) return `${(ms * 1000).toFixed(1)} µs`;
  return `${(ms * 1000).toFixed(2)} µs`;
}

const msOf = (x, k) => (k === 'tfjs' ? x.tfjsMs : x[`${k}Ms`]);
/** A peer's cell: its median, `—` (could not run: reason in the notes), or empty (not this row's form / scope). */
function peerCell(x, k) {
  const v = msOf(x, k);
  if (v !== null) return fmtTime(v);
  return !x.peerScope || x.blank.includes(k) ? '' : '—';
}
/** The row's note, then affon-vs-peer max rel diffs, then why each `—` peer has no figure. */
function rowNote(x) {
  let s = x.note ?? '';
  const diffs = [];
  if (x.check !== undefined) diffs.push(`${x.peerScope ? 'TF.js ' : ''}${x.check.toExponential(1)}`);
  for (const k of ['ort', 'jax', 'jaxJit']) if (x.peerChecks[k] !== undefined && msOf(x, k) !== null) diffs.push(`${SHORT[k]} ${x.peerChecks[k].toExponential(1)}`);
  if (diffs.length) s += ` (max rel diff${x.peerScope ? ' vs affon' : ''}${x.peerScope ? ':' : ''} ${diffs.join(', ')})`;
  const why = Object.entries(x.peerReasons).filter(([k]) => msOf(x, k) === null && !x.blank.includes(k)).map(([k, v]) => `${LABEL[k]} —: ${v}`);
  if (why.length) s += `. ${why.join('; ')}`;
  return s;
}

function adapterLine(r) {
  const a = r.adapters;
  const info = (i) => (i ? `${i.vendor}/${i.architecture}` : 'not exposed');
  const peer = (k, name, ver) => (r.peers[k].ok || peerState[k].adapterInfo
    ? `${name} ${ver}: ${info(a[k].adapterInfo)} (${a[k].from})`
    : `${name}: not run (${r.peers[k].reason})`);
  return `Adapters — affon: ${a.affon.vendor}/${a.affon.architecture} (${a.affon.backend}, ${a.affon.deviceType}); `
    + `TF.js ${r.tfjsVersion}: ${a.tfjs.deviceAdapterInfo ? `${a.tfjs.deviceAdapterInfo.vendor}/${a.tfjs.deviceAdapterInfo.architecture} (device.adapterInfo)` : `${a.tfjs.backendAdapterInfo.vendor}/${a.tfjs.backendAdapterInfo.architecture}`}; `
    + `${peer('ort', 'ORT-Web', r.ortVersion)}; ${peer('jax', 'jax-js', r.jaxVersion)}; `
    + `same adapter as affon: TF.js ${a.sameAdapter}, ORT-Web ${a.peersSameAdapter.ort ?? 'unknown'}, jax-js ${a.peersSameAdapter.jax ?? 'unknown'} `
    + '(each library on its own GPUDevice).';
}

function markdown(r) {
  const lines = [
    adapterLine(r),
    `${r.reps} reps after ${r.warmup} warm-up (median); times: lower is better; best peer: the fastest figure on the row, whatever its form (eager, ONNX graph, jit); affon / best < 1 means affon is faster than it, `
      + 'affon/TF.js < 1 that it is faster than TF.js. — : the peer could not run the workload (reason in the notes); empty: not that row\'s form, or not in the peers\' scope (rows compared with TF.js only).',
    '',
    `| workload | affon | ${PEERS.map((k) => LABEL[k]).join(' | ')} | best peer | affon / best | affon/TF.js | notes |`,
    `|---|---:|${PEERS.map(() => '---:').join('|')}|---|---:|---:|---|`,
    ...r.rows.map((x) => `| ${x.id}. ${x.workload} | ${fmtTime(x.affonMs)} | ${PEERS.map((k) => peerCell(x, k)).join(' | ')} | ${LABEL[x.bestPeer]} | ${x.bestRatio.toFixed(2)} | ${x.ratio.toFixed(2)} | ${rowNote(x)} |`),
    '',
    '| memory | affon | TF.js | notes |',
    '|---|---|---|---|',
    ...r.memory.map((m) => `| ${m.id}. ${m.what} | ${m.affon} | ${m.tfjs} | ${m.note} |`),
    '',
    `Total benchmark time in the page: ${r.totalSeconds.toFixed(1)} s.`,
  ];
  return lines.join('\n');
}

function render(r) {
  const esc = (s) => String(s).replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' }[c]));
  const a = r.adapters;
  const html = [
    `<h2>Adapters</h2><p>${esc(adapterLine(r))}</p><pre>${esc(JSON.stringify(a, null, 2))}</pre>`,
    `<h2>Time (median; lower is better)</h2><table><tr><th>workload</th><th>affon</th>${PEERS.map((k) => `<th>${esc(LABEL[k])}</th>`).join('')}<th>best peer</th><th>affon / best</th><th>affon/TF.js</th><th>notes</th></tr>`,
    ...r.rows.map((x) => `<tr><td>${esc(`${x.id}. ${x.workload}`)}</td><td>${fmtTime(x.affonMs)}</td>${PEERS.map((k) => `<td>${peerCell(x, k)}</td>`).join('')}`
      + `<td>${esc(LABEL[x.bestPeer])}</td><td>${x.bestRatio.toFixed(2)}</td><td>${x.ratio.toFixed(2)}</td><td class="note">${esc(rowNote(x))}</td></tr>`),
    '</table><h2>Memory</h2><table><tr><th>figure</th><th>affon</th><th>TF.js</th><th>notes</th></tr>',
    ...r.memory.map((m) => `<tr><td>${esc(`${m.id}. ${m.what}`)}</td><td class="note">${esc(m.affon)}</td><td class="note">${esc(m.tfjs)}</td><td class="note">${esc(m.note)}</td></tr>`),
    '</table>',
  ];
  document.getElementById('out').innerHTML = html.join('\n');
}
