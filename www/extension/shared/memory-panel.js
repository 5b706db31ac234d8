// The affon memory panel: one module behind both ways in (the demo's in-page panel and the Chrome
// DevTools panel). It polls a source (see sources.js) for snapshots of the same shape, keeps a
// timeline, diagnoses a rolling window with the page's own `telemetry.diagnose`, and renders:
// verdict + evidence, live time series (uPlot), live tensors by origin, the pool by size class, and
// captured baseline / warm / steady snapshots side by side, with report and timeline export.
//
//   const panel = new MemoryPanel(element, { source: hookSource(), uPlot });
//   panel.start();
//
// Everything the views show is also on the instance for tests: `timeline`, `last`, `diagnosis`,
// `captured`, `capturedDiagnosis`, `state`.
import { createCharts } from './charts.js';
import { bytes, num, metric, processRecords, csv, download, stamp } from './format.js';
import { verdictView, evidenceView, originsView, poolsView, compareView } from './views.js';

const SERIES = [
  ['live', 'compute.storage', 'live_bytes'],
  ['peak', 'compute.storage', 'peak_bytes'],
  ['pool', 'compute.memory', 'pool_bytes'],
  ['cached', 'compute.memory', 'pool_cached_bytes'],
  ['tensors', 'compute.storage', 'live_tensors'],
  ['wasm', 'runtime.memory', 'wasm_memory_bytes'],
  ['jsHeap', 'runtime.memory', 'js_heap_used_bytes'],
];

const TEMPLATE = `
<header class="ap-header">
  <h2>affon memory</h2>
  <span class="ap-status" data-role="status">starting…</span>
  <span class="ap-spacer"></span>
  <label class="ap-field" title="iterations between the warm snapshot and now">window
    <input data-role="window" name="ap-window" type="number" min="2" max="10000" step="1"> it</label>
  <button data-action="pause">pause</button>
  <button data-action="reset" title="new baseline now (resets the peak gauges) and a fresh timeline">reset window</button>
</header>
<div data-role="verdict"></div>
<div class="ap-grid">
  <section class="ap-card ap-span2"><h3>Timeline</h3><div data-role="charts" class="ap-charts"></div></section>
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
    </div>
    <div data-role="compare"></div>
  </section>
</div>`;

export class MemoryPanel {
  /**
   * @param {HTMLElement} root where the panel renders
   * @param {object} o `source` (sources.js), `uPlot` (the constructor), `pollMs` (500),
   *   `windowIterations` (20: warm is this many iterations before now), `warmupIterations` (5: the
   *   first iterations after the baseline are not judged), `windowSeconds` (5: the window when the
   *   page reports no iterations), `maxPoints` (3600), `dark`, `idleRebaseMs` (3000: after this long
   *   without iterations, the next iterations start a new window), `runtimeSpanMs` (10000: the JS
   *   heap is judged by its low-water mark over this span).
   */
  constructor(root, o) {
    this.root = root;
    this.source = o.source;
    this.pollMs = o.pollMs ?? 500;
    this.windowIterations = o.windowIterations ?? 20;
    this.warmupIterations = o.warmupIterations ?? 5;
    this.windowSeconds = o.windowSeconds ?? 5;
    this.maxPoints = o.maxPoints ?? 3600;
    this.idleRebaseMs = o.idleRebaseMs ?? 3000;
    this.runtimeSpanMs = o.runtimeSpanMs ?? 10_000;
    this.state = 'waiting';
    this.captured = {};
    this.capturedDiagnosis = null;
    this.openStacks = new Set();
    this.running = false;
    this.#clear();

    root.classList.add('ap-root');
    if (o.dark) root.classList.add('ap-dark');
    root.innerHTML = TEMPLATE;
    this.$ = (role) => root.querySelector(`[data-role="${role}"]`);
    this.$('window').value = this.windowIterations;
    this.$('window').addEventListener('change', (e) => {
      const v = Math.round(Number(e.target.value));
      if (v >= 2) { this.windowIterations = v; this.poll(); }
    });
    this.charts = createCharts(o.uPlot, this.$('charts'), { dark: o.dark });
    root.addEventListener('click', (e) => this.#onClick(e));
    // <details> toggles do not bubble; keep which stacks are expanded across re-renders.
    root.addEventListener('toggle', (e) => {
      const o = e.target?.dataset?.origin;
      if (o === undefined) return;
      if (e.target.open) this.openStacks.add(o); else this.openStacks.delete(o);
    }, true);
  }

  #clear() {
    this.timeline = Object.fromEntries([['t', []], ['time', []], ['iteration', []], ...SERIES.map(([k]) => [k, []])]);
    this.history = [];
    this.baseline = null;
    this.diagnosis = null;
    this.window = null;
    this.t0 = null;
    this.lastAdvance = null;
  }

  start() {
    if (this.running) return;
    this.running = true;
    const tick = async () => {
      if (!this.running) return;
      await this.poll();
      if (this.running) this.timer = setTimeout(tick, this.pollMs);
    };
    tick();
    this.#renderStatus();
  }

  stop() {
    this.running = false;
    clearTimeout(this.timer);
    this.#renderStatus();
  }

  /** A fresh timeline and a new baseline taken now (after resetting the peak gauges). */
  async reset({ resetPeak = true } = {}) {
    if (this.polling) await this.polling; // a snapshot taken before the reset must not become the baseline
    this.#clear();
    if (resetPeak) await this.source.resetPeak().catch(() => {});
    await this.poll();
  }

  /** One poll: snapshot, timeline, rolling diagnosis, render. Never throws; errors show in the header. */
  async poll() {
    if (this.polling) return this.polling;
    this.polling = this.#poll().catch((e) => { this.error = e; this.#renderStatus(); }).finally(() => { this.polling = null; });
    return this.polling;
  }

  async #poll() {
    const snap = await this.source.snapshot();
    this.error = null;
    if (!snap || snap.missing) {
      this.state = 'waiting';
      this.last = null;
      this.#render();
      return;
    }
    if (this.last && snap.hookId !== this.last.hookId) this.#clear(); // the page reloaded
    this.last = snap;
    const entry = { time: snap.time, iteration: snap.iteration ?? null, metrics: processRecords(snap.metrics) };
    this.#record(entry);
    await this.#diagnose(entry);
    this.#render();
  }

  #record(entry) {
    const tl = this.timeline;
    if (this.t0 == null) this.t0 = entry.time;
    tl.t.push((entry.time - this.t0) / 1000);
    tl.time.push(entry.time);
    tl.iteration.push(entry.iteration);
    for (const [k, scope, name] of SERIES) tl[k].push(metric(entry.metrics, scope, name) ?? null);
    if (tl.t.length > this.maxPoints) for (const k of Object.keys(tl)) tl[k].shift();

    const prev = this.history.at(-1);
    if (!this.baseline) this.baseline = entry;
    if (prev && entry.iteration != null && prev.iteration != null && entry.iteration !== prev.iteration) {
      // The first iterations seen, or iterations resuming after an idle spell: a new run, judged
      // from the last snapshot before it.
      if (this.lastAdvance == null || entry.time - this.lastAdvance > this.idleRebaseMs) this.baseline = prev;
      this.lastAdvance = entry.time;
    }
    this.history.push(entry);
    if (this.history.length > 1200) this.history.splice(0, this.history.length - 1200);
  }

  /** Chooses before / warm / after for the rolling window and diagnoses them in the page. */
  async #diagnose(now) {
    const base = this.baseline;
    const byIterations = now.iteration != null && base.iteration != null;
    let warm = null;
    if (byIterations) {
      const since = now.iteration - base.iteration;
      const need = this.warmupIterations + this.windowIterations;
      if (since < need) {
        this.state = 'collecting';
        this.window = { progress: `${num(since)} of ${num(need)} iterations since the baseline (warm-up ${this.warmupIterations} + window ${this.windowIterations})` };
        this.diagnosis = null;
        return;
      }
      const target = now.iteration - this.windowIterations;
      for (let i = this.history.length - 1; i >= 0; i--) {
        const h = this.history[i];
        if (h.iteration <= target && h.iteration >= base.iteration + this.warmupIterations && h.time >= base.time) { warm = h; break; }
      }
      if (!warm) {
        // Polls are sparser than iterations: take the earliest post-warm-up snapshot.
        warm = this.history.find((h) => h.time >= base.time && h.iteration >= base.iteration + this.warmupIterations && h.iteration < now.iteration);
      }
    } else {
      const target = now.time - this.windowSeconds * 1000;
      for (let i = this.history.length - 1; i >= 0; i--) {
        const h = this.history[i];
        if (h.time <= target && h.time >= base.time) { warm = h; break; }
      }
    }
    if (!warm || warm === now) {
      this.state = 'collecting';
      this.window = { progress: byIterations ? 'waiting for a snapshot between baseline and now' : `collecting ${this.windowSeconds} s of snapshots (the page reports no iterations)` };
      this.diagnosis = null;
      return;
    }
    const iterations = byIterations ? now.iteration - warm.iteration : 0;
    const input = { before: base.metrics, warm: this.#lowWater(warm), after: this.#lowWater(now), iterations, synchronized: false };
    if (byIterations) input.warmup = warm.iteration - base.iteration;
    this.diagnosis = await this.source.diagnose(input);
    this.state = 'ready';
    this.window = { base, warm, now, iterations, byIterations };
  }

  /**
   * `entry`'s records with `runtime.memory/js_heap_used_bytes` replaced by its lowest value over the
   * preceding `runtimeSpanMs` (not before the baseline). The JS heap rises between garbage
   * collections by more than diagnose's 1 MiB threshold; its low-water mark is what the page really
   * retains. (wasm memory never shrinks and is used as it is.)
   */
  #lowWater(entry) {
    const from = Math.max(entry.time - this.runtimeSpanMs, this.baseline.time);
    const span = this.history.filter((h) => h.time >= from && h.time <= entry.time);
    return entry.metrics.map((r) => {
      if (r.scope !== 'runtime.memory' || r.name !== 'js_heap_used_bytes' || r.labels) return r;
      let v = r.value;
      for (const h of span) v = Math.min(v, metric(h.metrics, r.scope, r.name) ?? v);
      return v === r.value ? r : { ...r, value: v };
    });
  }

  #windowText() {
    const w = this.window;
    if (!w?.base) return '';
    const ago = (e) => `${((w.now.time - e.time) / 1000).toFixed(1)} s ago`;
    if (w.byIterations) {
      return `Rolling diagnosis (updates every poll): baseline at iteration ${num(w.base.iteration)} (${ago(w.base)}) → warm at ${num(w.warm.iteration)} → now at ${num(w.now.iteration)}; ` +
        `judged over the last ${num(w.iterations)} iterations. Host-side accounting (exact), not synchronised; ` +
        `JS heap as its low-water mark over ${this.runtimeSpanMs / 1000} s (it rises between GCs).`;
    }
    return `Rolling diagnosis by time (the page calls no telemetry.nextIteration()): baseline ${ago(w.base)} → warm ${ago(w.warm)} → now.`;
  }

  /** Captures 'baseline' (resets peaks first), 'warm' or 'steady'; diagnoses once all three exist. */
  async capture(which) {
    if (which === 'baseline') await this.source.resetPeak();
    const s = await this.source.snapshot();
    if (!s || s.missing) throw new Error('no __AFFON_DEVTOOLS_HOOK__ in the page');
    this.captured[which] = { time: s.time, iteration: s.iteration ?? null, metrics: processRecords(s.metrics) };
    const { baseline: b, warm: w, steady: a } = this.captured;
    this.capturedDiagnosis = null;
    if (b && w && a && b.time <= w.time && w.time <= a.time) {
      const known = [b, w, a].every((x) => x.iteration != null);
      const input = { before: b.metrics, warm: w.metrics, after: a.metrics, synchronized: false };
      if (known) Object.assign(input, { iterations: a.iteration - w.iteration, warmup: w.iteration - b.iteration });
      this.capturedDiagnosis = await this.source.diagnose(input);
    }
    this.#render();
    return this.captured[which];
  }

  /** `telemetry.report` with the captured snapshots' diagnosis (or the rolling one when not captured). */
  async buildReport() {
    const diagnosis = this.capturedDiagnosis ?? this.diagnosis;
    const ctx = { ...(this.last?.context ?? {}) };
    ctx.panel = {
      diagnosisSource: this.capturedDiagnosis ? 'captured baseline/warm/steady' : this.diagnosis ? 'rolling window' : 'none',
      source: this.source.kind,
      windowIterations: this.windowIterations,
    };
    if (diagnosis) {
      ctx.diagnosis = diagnosis;
      if (ctx.iterations == null && diagnosis.snapshots?.iterations != null) ctx.iterations = diagnosis.snapshots.iterations;
    }
    return this.source.report(ctx);
  }

  async exportReport() {
    const r = await this.buildReport();
    download(`affon-report-${stamp()}.json`, JSON.stringify(r, null, 2));
    return r;
  }

  timelineRows() {
    const tl = this.timeline;
    const keys = ['time', 't', 'iteration', ...SERIES.map(([k]) => k)];
    const head = ['time_ms', 'elapsed_s', 'iteration', ...SERIES.map(([, s, n]) => `${s}/${n}`)];
    return [head, ...tl.t.map((_, i) => keys.map((k) => tl[k][i]))];
  }

  exportTimeline(format = 'csv') {
    if (format === 'csv') {
      const text = csv(this.timelineRows());
      download(`affon-timeline-${stamp()}.csv`, text, 'text/csv');
      return text;
    }
    const text = JSON.stringify({ series: Object.fromEntries(SERIES.map(([k, s, n]) => [k, `${s}/${n}`])), ...this.timeline }, null, 1);
    download(`affon-timeline-${stamp()}.json`, text);
    return text;
  }

  async #onClick(e) {
    const b = e.target.closest('button');
    if (!b || !this.root.contains(b)) return;
    try {
      if (b.dataset.capture) await this.capture(b.dataset.capture);
      const a = b.dataset.action;
      if (a === 'pause') { if (this.running) this.stop(); else this.start(); }
      else if (a === 'reset') await this.reset();
      else if (a === 'clear-captures') { this.captured = {}; this.capturedDiagnosis = null; this.#render(); }
      else if (a === 'export-report') await this.exportReport();
      else if (a === 'export-csv') this.exportTimeline('csv');
      else if (a === 'export-json') this.exportTimeline('json');
    } catch (err) {
      this.error = err;
      this.#renderStatus();
    }
  }

  #renderStatus() {
    const el = this.$('status');
    const pause = this.root.querySelector('[data-action="pause"]');
    if (pause) pause.textContent = this.running ? 'pause' : 'resume';
    if (this.error) {
      el.textContent = `error: ${this.error.message ?? this.error}`;
      el.className = 'ap-status ap-error';
      return;
    }
    const s = this.last;
    el.className = 'ap-status';
    el.textContent = !s
      ? `${this.source.kind} · waiting for __AFFON_DEVTOOLS_HOOK__`
      : `${this.source.kind} · affon ${s.version ?? ''} · iteration ${s.iteration == null ? '—' : num(s.iteration)} · live ${bytes(metric(s.metrics, 'compute.storage', 'live_bytes'))} in ${num(metric(s.metrics, 'compute.storage', 'live_tensors'))} tensors · ${this.running ? `polling every ${this.pollMs} ms` : 'paused'}`;
  }

  #render() {
    this.#renderStatus();
    const s = this.last;
    this.$('verdict').innerHTML = verdictView({
      state: this.state,
      diagnosis: this.diagnosis,
      progress: this.window?.progress,
      windowText: this.state === 'ready' ? this.#windowText() : '',
      liveTensors: s?.liveTensors,
      iteration: s?.iteration,
    });
    this.$('evidence').innerHTML = evidenceView(this.diagnosis);
    this.$('origins').innerHTML = s
      ? originsView(s.liveTensors, { iteration: s.iteration, grown: this.diagnosis?.grownOrigins ?? [], diag: this.diagnosis, open: this.openStacks, forgotten: s.forgotten })
      : '';
    this.$('pools').innerHTML = s ? poolsView(s.pools) : '';
    this.$('compare').innerHTML = compareView(this.captured, this.capturedDiagnosis);
    this.charts.update(this.timeline);
    this.root.dataset.verdict = this.state === 'ready' ? this.diagnosis.verdict : this.state;
  }

  destroy() {
    this.stop();
    this.charts.destroy();
    this.root.innerHTML = '';
  }
}

