// The panel's views as HTML strings: verdict banner and its findings, evidence, live tensors by
// origin (all sessions or one), pool by size class, the session filter's options, and the baseline /
// warm / steady comparison. Pure functions of the data they are given.
import { bytes, num, esc, firstFrame, trimUrls, figure, byUnit } from './format.js';

/** The panel's skeleton: header controls and the cards the views fill (`data-role`). */
export const PANEL_TEMPLATE = `
<header class="ap-header">
  <h2>affon memory</h2>
  <span class="ap-status" data-role="status">starting…</span>
  <span class="ap-spacer"></span>
  <label class="ap-field" title="judge and show one session's figures (its labelled records) instead of the process's">session
    <select data-role="session" name="ap-session"><option value="">all sessions</option></select></label>
  <label class="ap-field" title="iterations between the warm snapshot and now">window
    <input data-role="window" name="ap-window" type="number" min="2" max="10000" step="1"> it</label>
  <button data-action="pause">pause</button>
  <button data-action="reset" title="new baseline now (resets the peak gauges) and a fresh timeline">reset window</button>
  <button data-action="trace" data-role="trace" title="records a Chrome trace in the page (telemetry.startTrace); click again to stop and download it for Perfetto or chrome://tracing">record trace</button>
</header>
<div data-role="verdict"></div>
<div class="ap-grid">
  <section class="ap-card ap-span2"><h3>Timeline</h3><div data-role="charts" class="ap-charts"></div></section>
  <section class="ap-card ap-span2"><h3>Live storages over time — one band each, oldest at the bottom, coloured by origin (hover: origin, bytes, age, stack)</h3>
    <div class="ap-storage-wrap"><canvas data-role="storages" class="ap-storages" width="960" height="180"></canvas><div data-role="storage-tip" class="ap-tip" hidden></div></div><div data-role="storage-axis" class="ap-muted ap-axis"></div></section>
  <section class="ap-card ap-span2"><h3>Live tensors by origin</h3><div data-role="origins"></div></section>
  <section class="ap-card"><h3>Rolling diagnosis — evidence</h3><div data-role="evidence"></div></section>
  <section class="ap-card"><h3>Pool by size class</h3><div data-role="pools" class="ap-scroll"></div></section>
  <section class="ap-card ap-span2"><h3>Snapshots: baseline / warm / steady</h3>
    <div class="ap-buttons">
      <button data-capture="baseline" title="resets the peak gauges, then snapshots">capture baseline</button>
      <button data-capture="warm">capture warm</button>
      <button data-capture="steady">capture steady</button>
      <button data-action="clear-captures">clear</button>
      <span class="ap-spacer"></span>
      <button data-action="export-report">export report (JSON)</button>
      <button data-action="export-csv">export timeline (CSV)</button>
      <button data-action="export-json">timeline (JSON)</button>
      <button data-action="export-recording" title="the timeline, the storage bands, the captures and the diagnoses in one Chrome trace file (Perfetto opens it too), to attach to a bug report">save recording</button>
      <button data-action="import-recording" title="open a saved recording, or a trace from &quot;record trace&quot; / telemetry.stopTrace(), in this panel">open recording or trace…</button>
      <input type="file" data-role="import-file" accept=".json,application/json" hidden>
    </div>
    <div data-role="compare"></div>
    <div data-role="diff"></div>
  </section>
</div>`;

export const ADVICE = {
  'ownership-leak': 'Live tensor bytes rise every iteration: something keeps outputs, states or executables, or never disposes them. Dispose them, or wrap the loop body in session.tidy().',
  'shape-growth': 'Live bytes are flat; the peak rises because later iterations use larger shapes. Not a leak — bound the shapes or pad them to a few buckets.',
  'pool-retention': 'The pool keeps freed buffers for reuse, bounded by maxTotalBytes. Not a leak — session.clearCache() gives them back.',
  'process-growth': 'Only runtime memory (wasm memory, JS heap) rises — not tensors. Look at JS objects, the runtime or the driver.',
  steady: 'Live bytes, peak and pool are flat after warm-up.',
};

const isBytes = (m) => /bytes|^origin:|^runtime\.memory\//.test(m);
const fmtEvidence = (m, v, opts) => (isBytes(m) ? bytes(v, opts) : num(v, opts));

function evidenceFor(diag, name) {
  return diag?.evidence?.find((e) => e.metric === name);
}

/** The figure a verdict is about: live bytes for a leak, peak for shape growth, pool for retention. */
function headline(d) {
  const ev = (k) => evidenceFor(d, k);
  const rate = (e, what) => (e.perIteration != null
    ? `${bytes(e.perIteration, { sign: true })} ${what} / iteration`
    : `${bytes(e.delta, { sign: true })} ${what} in the window`);
  const live = ev('compute.storage/live_bytes');
  const pool = ev('compute.memory/pool_bytes');
  switch (d.verdict) {
    case 'ownership-leak': return live ? rate(live, 'live') : '';
    case 'shape-growth': { const e = ev('compute.storage/peak_bytes'); return e ? rate(e, 'peak') : ''; }
    case 'process-growth': { const e = ev('runtime.memory/total'); return e ? rate(e, 'runtime') : ''; }
    case 'pool-retention':
      if (!pool) return '';
      return pool.delta > 0 ? `${rate(pool, 'pool')} (still warming)`
        : `pool plateaued at ${bytes(pool.after)} (${bytes(pool.warm - pool.before, { sign: true })} in warm-up)`;
    default: return live ? `flat: ${bytes(live.after)} live, ${bytes(pool?.after ?? 0)} pool` : '';
  }
}

/**
 * The verdict banner. `w`: `{state, diagnosis, window, liveTensors, iteration}` where state is
 * 'waiting' (no hook), 'collecting' (not enough iterations yet) or 'ready'.
 */
/** What the rolling window judged, in a sentence (`w`: rolling.js's selection; `session`: the filter). */
export function windowText(w, session) {
  if (!w?.base) return '';
  const ago = (e) => `${((w.now.time - e.time) / 1000).toFixed(1)} s ago`;
  const who = session ? `session '${session}'` : 'all sessions';
  if (w.byIterations) {
    return `Rolling diagnosis of ${who} (updates every poll): baseline at iteration ${num(w.base.iteration)} (${ago(w.base)}) → warm at ${num(w.warm.iteration)} → now at ${num(w.now.iteration)}; `
      + `judged over the last ${num(w.iterations)} iterations in ${num(w.samples.length - w.warmup)} polls. Host-side accounting (exact), not synchronised.`;
  }
  return `Rolling diagnosis of ${who} by time (the page calls no telemetry.nextIteration()): baseline ${ago(w.base)} → warm ${ago(w.warm)} → now.`;
}

export function verdictView(w) {
  if (w.state === 'waiting') {
    return `<section class="ap-verdict" data-verdict="waiting"><div class="ap-verdict-head"><span class="ap-badge">waiting</span>
      <span class="ap-rate">no <code>__AFFON_DEVTOOLS_HOOK__</code> on this page yet</span></div>
      <p class="ap-advice">It appears once the page has initialised affon and created a Session.</p></section>`;
  }
  if (w.state === 'collecting' || !w.diagnosis) {
    return `<section class="ap-verdict" data-verdict="collecting"><div class="ap-verdict-head"><span class="ap-badge">collecting</span>
      <span class="ap-rate">${esc(w.progress ?? 'waiting for iterations')}</span></div>
      <p class="ap-window">${esc(w.windowText ?? '')}</p></section>`;
  }
  const d = w.diagnosis;
  const tensors = evidenceFor(d, 'compute.storage/live_tensors');
  const sub = d.verdict === 'ownership-leak' && tensors?.perIteration != null
    ? `<span class="ap-rate-sub">${num(tensors.perIteration, { sign: true })} ${Math.abs(Math.round(tensors.perIteration * 100)) === 100 ? 'tensor' : 'tensors'} / iteration</span>` : '';
  const grown = (d.grownOrigins ?? []).slice(0, 3).map((o) => {
    const e = evidenceFor(d, `origin:${o}`);
    const row = (w.liveTensors ?? []).find((g) => g.origin === o);
    const rate = e ? (e.perIteration != null ? `${bytes(e.perIteration, { sign: true })} / iteration` : `${bytes(e.delta, { sign: true })}`) : '';
    const age = row && w.iteration != null ? ` · oldest ${num(w.iteration - row.oldestIteration)} iterations old` : '';
    const where = row?.stack ? `<div class="ap-where">created at <code>${esc(firstFrame(row.stack))}</code></div>` : '';
    return `<li><b class="ap-origin">${esc(o)}</b> <span class="ap-origin-rate">${esc(rate)}</span>
      <span class="ap-muted">${row ? `${num(row.count)} live · ${bytes(row.bytes)}${age}` : ''}</span>${where}</li>`;
  }).join('');
  return `<section class="ap-verdict" data-verdict="${esc(d.verdict)}">
    <div class="ap-verdict-head"><span class="ap-badge ap-verdict-name">${esc(d.verdict)}</span>
      <span class="ap-rate">${esc(headline(d))}</span>${sub}</div>
    ${grown ? `<div class="ap-leaks"><span class="ap-label">growing:</span><ul class="ap-grown">${grown}</ul></div>` : ''}
    <p class="ap-summary">${esc(d.summary)}</p>
    ${heapNotice(d)}
    ${findingsView(d)}
    <p class="ap-advice">${esc(ADVICE[d.verdict] ?? '')}</p>
    <p class="ap-window">${esc(w.windowText ?? '')}</p>
  </section>`;
}

/** The notice of a page whose JS heap affon cannot observe (the `js-heap-unobserved` finding, which
 *  every diagnosis of such a page carries): what the verdict cannot see, and how to see it. */
export function heapNotice(d) {
  const f = (d?.findings ?? []).find((x) => x.kind === 'js-heap-unobserved');
  if (!f) return '';
  return `<p class="ap-heap-notice" data-notice="js-heap-unobserved" title="${esc(f.summary)}"><b>JS heap not observed</b> in this page:
    JS objects kept each iteration cannot be seen, so this verdict covers device, pool and wasm memory only. To see the heap,
    start Chromium with <code>--enable-precise-memory-info</code>, or serve the page cross-origin isolated (COOP/COEP), where affon
    samples <code>performance.measureUserAgentSpecificMemory()</code>.</p>`;
}

/** What moved without deciding the verdict (`diagnosis.findings`, but the heap notice's): kind and sentence, one a line. */
export function findingsView(d) {
  const items = (d?.findings ?? []).filter((f) => f.kind !== 'js-heap-unobserved').map((f) => `<li data-kind="${esc(f.kind)}"><span class="ap-tag ap-kind">${esc(f.kind)}</span> ${esc(f.summary)}</li>`);
  if (!items.length) return '';
  return `<div class="ap-findings"><span class="ap-label" title="moved, but did not decide the verdict">also seen:</span><ul>${items.join('')}</ul></div>`;
}

/** The session filter's `<option>`s: all sessions, each live session's label, and `selected` if it is gone. */
export function sessionOptions(pools, selected) {
  const labels = [...new Set((pools ?? []).map((p) => p.session))];
  if (selected && !labels.includes(selected)) labels.push(selected);
  return `<option value="">all sessions</option>${labels.map((l) => `<option value="${esc(l)}">${esc(l)}${(pools ?? []).some((p) => p.session === l) ? '' : ' (gone)'}</option>`).join('')}`;
}

/**
 * Live storage of one session by origin, from its `{session, origin}` records. Count, age,
 * forgotten handles and stack come from the process-wide group of the same origin (the page's
 * `liveTensors()`), as they are when the whole group is this session's; when other sessions hold
 * storage of that origin too (`shared`), the count and forgotten handles are unknown and the age and
 * stack are the process's oldest.
 */
export function sessionGroups(groups, records, session) {
  return (records ?? [])
    .filter((r) => r.scope === 'compute.storage' && r.name === 'live_bytes_by_origin' && r.labels?.session === session && r.value > 0)
    .map((r) => {
      const g = (groups ?? []).find((x) => x.origin === r.labels.origin);
      const own = g?.bytes === r.value;
      return { ...g, origin: r.labels.origin, bytes: r.value, count: own ? g.count : null, forgotten: own ? g.forgotten : null, shared: !own };
    })
    .sort((x, y) => y.bytes - x.bytes);
}

/** `compute.storage/live_bytes` → `live_bytes`; `origin:square` → `origin square`. */
function shortMetric(m) {
  if (m.startsWith('origin:')) return `<span class="ap-muted">origin</span> ${esc(m.slice(7))}`;
  if (m === 'runtime.memory/total') return 'runtime memory <span class="ap-muted">(total)</span>';
  return esc(m.slice(m.indexOf('/') + 1));
}

export function evidenceView(diag) {
  if (!diag) return '<p class="ap-muted">No diagnosis yet.</p>';
  const rows = diag.evidence.map((e) => `<tr data-ap-metric="${esc(e.metric)}"><td title="${esc(e.metric)}">${shortMetric(e.metric)}</td>
    <td class="num">${fmtEvidence(e.metric, e.before)}</td><td class="num">${fmtEvidence(e.metric, e.warm)}</td>
    <td class="num">${fmtEvidence(e.metric, e.after)}</td>
    <td class="num ${e.delta > 0 ? 'ap-up' : ''}">${fmtEvidence(e.metric, e.delta, { sign: true })}</td>
    <td class="num ${e.perIteration > 0 ? 'ap-up' : ''}">${e.perIteration == null ? '—' : fmtEvidence(e.metric, e.perIteration, { sign: true })}</td></tr>`).join('');
  return `<table class="ap-table ap-evidence"><thead><tr><th>metric</th><th class="num">baseline</th><th class="num">warm</th><th class="num">now</th><th class="num">Δ now−warm</th><th class="num">per it.</th></tr></thead>
    <tbody>${rows}</tbody></table>`;
}

/** Live tensors grouped by origin; `open` is the set of origins whose stack is expanded. */
export function originsView(groups, { iteration, grown = [], diag, open = new Set(), forgotten, session } = {}) {
  const total = (groups ?? []).reduce((s, g) => s + g.bytes, 0);
  const rows = (groups ?? []).slice(0, 60).map((g) => {
    const isGrown = grown.includes(g.origin);
    const e = evidenceFor(diag, `origin:${g.origin}`);
    const rate = isGrown && e ? `<span class="ap-tag ap-tag-up">${e.perIteration != null ? `${bytes(e.perIteration, { sign: true })}/it` : bytes(e.delta, { sign: true })}</span>` : '';
    const stack = g.stack
      ? `<details data-origin="${esc(g.origin)}"${open.has(g.origin) ? ' open' : ''}><summary>${esc(firstFrame(g.stack))}</summary><pre>${esc(trimUrls(g.stack))}</pre></details>`
      : '<span class="ap-muted">— (captureStacks off)</span>';
    const age = iteration == null || g.oldestIteration == null ? '—' : num(iteration - g.oldestIteration);
    const shared = g.shared ? ' <span class="ap-tag" title="other sessions hold storage of this origin too: count unknown, age and stack are the oldest of all">shared</span>' : '';
    return `<tr class="${isGrown ? 'ap-grown-row' : ''}" data-origin="${esc(g.origin)}">
      <td class="ap-origin-cell">${esc(g.origin)} ${rate}${shared}</td><td class="num">${num(g.count)}</td><td class="num">${bytes(g.bytes)}</td>
      <td class="num">${age}</td><td class="num ${g.forgotten ? 'ap-up' : ''}">${num(g.forgotten)}</td><td class="ap-stack">${stack}</td></tr>`;
  }).join('');
  const f = forgotten ?? { handles: 0, tensors: 0, bytes: 0 };
  const count = (groups ?? []).some((g) => g.count == null) ? null : (groups ?? []).reduce((s, g) => s + g.count, 0);
  return `<table class="ap-table ap-origins"><thead><tr><th>origin</th><th>count</th><th>bytes</th><th title="current iteration − oldestIteration">age (it)</th>
    <th title="handles garbage-collected without dispose()">forgotten</th><th>created at (oldest)</th></tr></thead>
    <tbody>${rows || '<tr><td colspan="6" class="ap-muted">no live tensors</td></tr>'}</tbody>
    <tfoot><tr><td>total</td><td class="num">${num(count)}</td><td class="num">${bytes(total)}</td><td></td><td></td><td></td></tr></tfoot></table>
    ${session ? `<p class="ap-note">Session '${esc(session)}' only (its <code>{session, origin}</code> records); forgotten handles are the process's.</p>` : ''}
    <p class="ap-note">Forgotten handles (collected by the JS GC without <code>dispose()</code>): <b>${num(f.handles)}</b> ever;
    <b>${num(f.tensors)}</b> storages (${bytes(f.bytes)}) still held.</p>`;
}

/** Each live session's pool: held / bound, in use vs cached, and buffers by size class (in use: requested vs rounded). */
export function poolsView(pools) {
  if (!pools?.length) return '<p class="ap-muted">No live session.</p>';
  return pools.map((p) => {
    const u = p.usage ?? {};
    const bound = p.config?.maxTotalBytes ?? 0;
    const pct = (v) => (bound > 0 ? Math.min(100, (100 * v) / bound) : 0);
    // one row per size: in use (requested → rounded) and cached
    const sizes = new Map();
    for (const [cls, n, req] of u.inUseByClass ?? []) sizes.set(cls, { cls, used: n, requested: req, cached: 0 });
    for (const [cls, n] of u.cachedByClass ?? []) sizes.set(cls, { ...(sizes.get(cls) ?? { cls, used: 0, requested: 0 }), cached: n });
    const classes = [...sizes.values()].sort((a, b) => a.cls - b.cls);
    const max = classes.reduce((m, c) => Math.max(m, c.cls * (c.used + c.cached)), 1);
    const rows = classes.map((c) => `<tr data-class="${c.cls}"><td class="num">${bytes(c.cls)}</td>
      <td class="num">${c.used ? `${num(c.used)}: ${bytes(c.requested)} → ${bytes(c.cls * c.used)}` : ''}</td>
      <td class="num">${c.cached ? `${num(c.cached)}: ${bytes(c.cls * c.cached)}` : ''}</td>
      <td class="ap-barcell"><span class="ap-bar" style="width:${((100 * c.cls * c.used) / max).toFixed(1)}%"></span><span class="ap-bar ap-bar-cached" style="width:${((100 * c.cls * c.cached) / max).toFixed(1)}%"></span></td></tr>`).join('');
    const inUse = (u.bytesHeld ?? 0) - (u.bytesCached ?? 0);
    return `<div class="ap-pool" data-session="${esc(p.session)}">
      <div class="ap-pool-head"><b>session '${esc(p.session)}'</b>${p.disposed ? ' <span class="ap-tag">disposed</span>' : ''}
        <span class="ap-muted">${esc(p.adapter?.backend ?? '')} ${esc(p.adapter?.vendor ?? '')} ${esc(p.adapter?.architecture ?? '')} · classes ${esc(p.config?.sizeClasses ?? '')}</span></div>
      <div class="ap-gauge" title="held ${bytes(u.bytesHeld)} of ${bytes(bound)}">
        <span class="ap-gauge-use" style="width:${pct(inUse).toFixed(2)}%"></span><span class="ap-gauge-cache" style="width:${pct(u.bytesCached ?? 0).toFixed(2)}%"></span></div>
      <p class="ap-note">held <b>${bytes(u.bytesHeld)}</b> of ${bytes(bound)} bound — in use ${bytes(inUse)} in ${num(u.buffersInUse)} buffers,
        cached ${bytes(u.bytesCached)} in ${num(u.buffersCached)} buffers</p>
      <table class="ap-table ap-classes"><thead><tr><th>size class</th><th>in use: requested → rounded</th><th>cached</th><th></th></tr></thead>
      <tbody>${rows || '<tr><td colspan="4" class="ap-muted">no buffers</td></tr>'}</tbody></table></div>`;
  }).join('');
}

export const COMPARE_ROWS = [
  ['compute.storage', 'live_bytes', 'bytes'],
  ['compute.storage', 'peak_bytes', 'bytes'],
  ['compute.storage', 'live_tensors', 'tensors'],
  ['compute.memory', 'pool_bytes', 'bytes'],
  ['compute.memory', 'pool_cached_bytes', 'bytes'],
  ['compute.memory', 'device_buffers', 'buffers'],
  ['compute.memory', 'staging_bytes', 'bytes'],
  ['compute.memory', 'param_bytes', 'bytes'],
  ['compute.execution', 'executable_cache_entries', 'entries'],
  ['compute.storage', 'forgotten_bytes', 'bytes'],
  ['runtime.memory', 'wasm_memory_bytes', 'bytes'],
  ['runtime.memory', 'js_heap_used_bytes', 'bytes'],
];

/** Baseline / warm / steady side by side, with the steady−warm change and its per-iteration rate. */
export function compareView(captured, diag, session = null) {
  const cols = ['baseline', 'warm', 'steady'];
  const head = cols.map((c) => {
    const s = captured[c];
    return `<th>${c}<div class="ap-muted">${s ? `${s.iteration == null ? '' : `it ${num(s.iteration)} · `}${new Date(s.time).toLocaleTimeString()}` : 'not captured'}</div></th>`;
  }).join('');
  const n = captured.warm && captured.steady && captured.warm.iteration != null && captured.steady.iteration != null
    ? captured.steady.iteration - captured.warm.iteration : null;
  const rows = COMPARE_ROWS.map(([scope, name, unit]) => {
    const v = cols.map((c) => figure(captured[c]?.metrics, scope, name, session));
    const delta = v[1] != null && v[2] != null ? v[2] - v[1] : null;
    const per = delta != null && n > 0 ? delta / n : null;
    return `<tr data-ap-metric="${scope}/${name}"><td>${scope}/<b>${name}</b></td>${v.map((x) => `<td class="num">${byUnit(x, unit)}</td>`).join('')}
      <td class="num ${delta > 0 ? 'ap-up' : ''}">${delta == null ? '—' : byUnit(delta, unit, { sign: true })}</td>
      <td class="num ${per > 0 ? 'ap-up' : ''}">${per == null ? '—' : byUnit(per, unit, { sign: true })}</td></tr>`;
  }).join('');
  const verdict = diag
    ? `<p class="ap-compare-verdict" data-verdict="${esc(diag.verdict)}"><span class="ap-badge">${esc(diag.verdict)}</span> ${esc(diag.summary)}</p>${heapNotice(diag)}${findingsView(diag)}`
    : '<p class="ap-muted">Capture all three (baseline before the workload, warm after warm-up, steady after more iterations) to diagnose them.</p>';
  return `${verdict}<table class="ap-table ap-compare"><thead><tr><th>metric</th>${head}<th>Δ steady−warm</th><th>per iteration${n ? ` (${num(n)})` : ''}</th></tr></thead>
    <tbody>${rows}</tbody></table>`;
}
