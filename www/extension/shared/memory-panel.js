// The affon memory panel: one module behind both ways in (the demo's in-page panel and the Chrome
// DevTools panel). It polls a source (see sources.js) for snapshots of the same shape, keeps a
// timeline, diagnoses a rolling window (rolling.js) with the page's own `telemetry.diagnose`, and
// renders: verdict + findings + evidence, live time series (uPlot), per-storage bands, live tensors
// by origin, the pool by size class, captured snapshots side by side and their diff; exports a
// report, the timeline, a trace and a recording, and opens a recording or a trace (panel-file.js).
// A session filter judges and shows one session's labelled figures.
//   const panel = new MemoryPanel(element, { source: hookSource(), uPlot });
//   panel.start();
//
// Everything the views show is also on the instance for tests: `timeline`, `last`, `diagnosis`,
// `captured`, `capturedDiagnosis`, `state`, `session`, `tracing`.
import { createCharts } from './charts.js';
import { bytes, num, figure, csv, download, stamp } from './format.js';
import { RollingWindow, keptRecords, forSession, perIteration } from './rolling.js';
import { StorageTimeline, storageDiff, diffView } from './storage-timeline.js';
import { recording, parseRecording, importedText, timelineRows, timelineJson } from './panel-file.js';
import { PANEL_TEMPLATE, windowText, verdictView, evidenceView, originsView, sessionGroups, poolsView, compareView, sessionOptions } from './views.js';

const SERIES = [
  ['live', 'compute.storage', 'live_bytes'],
  ['peak', 'compute.storage', 'peak_bytes'],
  ['pool', 'compute.memory', 'pool_bytes'],
  ['cached', 'compute.memory', 'pool_cached_bytes'],
  ['tensors', 'compute.storage', 'live_tensors'],
  ['wasm', 'runtime.memory', 'wasm_memory_bytes'],
  ['jsHeap', 'runtime.memory', 'js_heap_used_bytes'],
];

export class MemoryPanel {
  /**
   * @param {object} o `source` (sources.js), `uPlot` (the constructor), `pollMs` (500),
   *   `maxPoints` (3600), `dark`, `session` (null: the process), and the rolling window's options
   *   (rolling.js): `windowIterations` (20: warm is at least this many iterations before now),
   *   `warmupIterations` (5: the first iterations after the baseline are not judged),
   *   `windowSamples` (12: polls in the window at the least), `windowSeconds` (5: the window when the
   *   page reports no iterations), `maxSamples` (200), `idleRebaseMs` (10000).
   */
  constructor(root, o) {
    this.root = root;
    this.source = o.source;
    this.pollMs = o.pollMs ?? 500;
    this.maxPoints = o.maxPoints ?? 3600;
    this.rolling = new RollingWindow({ ...o, maxHistory: this.maxPoints });
    this.session = o.session ?? null;
    this.state = 'waiting';
    this.captured = {};
    this.capturedDiagnosis = null;
    this.openStacks = new Set();
    this.running = false;
    this.tracing = false;
    this.#clear();

    root.classList.add('ap-root');
    if (o.dark) root.classList.add('ap-dark');
    root.innerHTML = PANEL_TEMPLATE;
    this.$ = (role) => root.querySelector(`[data-role="${role}"]`);
    this.$('window').value = this.rolling.windowIterations;
    this.$('window').addEventListener('change', (e) => {
      const v = Math.round(Number(e.target.value));
      if (v >= 2) { this.rolling.windowIterations = v; this.poll(); }
    });
    this.$('session').addEventListener('change', (e) => this.setSession(e.target.value || null));
    this.$('import-file').addEventListener('change', async (e) => {
      const f = e.target.files?.[0];
      if (!f) return;
      try { await this.importRecording(await f.text(), f.name); } catch (err) { this.error = err; this.#renderStatus(); }
      e.target.value = '';
    });
    this.charts = createCharts(o.uPlot, this.$('charts'), { dark: o.dark });
    this.storageTimeline = new StorageTimeline(this.$('storages'), this.$('storage-tip'), { maxPolls: 120, axis: this.$('storage-axis') });
    root.addEventListener('click', (e) => this.#onClick(e));
    // <details> toggles do not bubble; keep which stacks are expanded across re-renders.
    root.addEventListener('toggle', (e) => {
      const o = e.target?.dataset?.origin;
      if (o === undefined) return;
      if (e.target.open) this.openStacks.add(o); else this.openStacks.delete(o);
    }, true);
  }

  get windowIterations() { return this.rolling.windowIterations; }
  #clear() {
    this.rolling.clear();
    this.#clearTimeline();
    this.diagnosis = null;
    this.window = null;
  }

  #clearTimeline() {
    this.storageTimeline?.clear();
    this.timeline = Object.fromEntries([['t', []], ['time', []], ['iteration', []], ...SERIES.map(([k]) => [k, []])]);
    this.t0 = null;
  }

  start() {
    if (this.running) return;
    if (this.imported) { this.imported = null; this.#clear(); } // back to the live page
    this.running = true;
    const tick = async () => {
      if (!this.running) return;
      const t0 = Date.now();
      await this.poll();
      // Every pollMs, however long the poll took (the window counts polls).
      if (this.running) this.timer = setTimeout(tick, Math.max(50, this.pollMs - (Date.now() - t0)));
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

  /**
   * Judges and shows one session (its label; null: the whole process): the rolling and captured
   * diagnoses, the timeline (rebuilt from the recorded polls), origins and pools.
   */
  async setSession(label) {
    if (this.polling) await this.polling; // a poll under way judges the previous choice
    this.session = label || null;
    this.$('session').value = this.session ?? '';
    this.#clearTimeline();
    for (const e of this.rolling.history) this.#push(e);
    await this.#diagnoseCaptured();
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
    if (this.last && snap.hookId !== this.last.hookId) { this.#clear(); this.tracing = false; } // the page reloaded
    this.last = snap;
    const entry = { time: snap.time, iteration: snap.iteration ?? null, metrics: keptRecords(snap.metrics) };
    this.rolling.record(entry);
    this.#push(entry);
    this.storageTimeline.push(snap.storages, snap.iteration ?? null, this.session, figure(entry.metrics, 'compute.storage', 'live_tensors', this.session) ?? null);
    await this.#diagnose();
    this.#render();
  }

  /** Appends `entry` to the timeline, as the selected session's figures. */
  #push(entry) {
    const tl = this.timeline;
    if (this.t0 == null) this.t0 = entry.time;
    tl.t.push((entry.time - this.t0) / 1000);
    tl.time.push(entry.time);
    tl.iteration.push(entry.iteration);
    for (const [k, scope, name] of SERIES) tl[k].push(figure(entry.metrics, scope, name, this.session) ?? null);
    if (tl.t.length > this.maxPoints) for (const k of Object.keys(tl)) tl[k].shift();
  }

  /** Diagnoses the rolling window's samples in the page (or says what it is still collecting). */
  async #diagnose() {
    const w = this.rolling.select();
    if (w.progress) {
      this.state = 'collecting';
      this.window = { progress: w.progress };
      this.diagnosis = null;
      return;
    }
    // The JS heap goes to diagnose as it was polled. The panel used to replace it by its low-water
    // mark over 10 s, because it rises between collections; diagnose's own rule now discounts that
    // (a runtime growth counts only when sustained through the window's thirds, ≥ 1 MiB and 2 %,
    // and larger than the figure's largest drop inside the window), given a window long enough to
    // hold a collection. Measured on the demo's steady and pool-retention loops (60–150 s, judged at
    // every poll): with 12 polls (6 s) none of ~1,100 windows was called process-growth; with 8 polls
    // about 1 in 100 was, and with the low-water mark about 1 in 200, early in a run, as the
    // pre-run minimum left its span. So the mark is gone and the window is at least 12 polls.
    this.diagnosis = await this.#diagnoseSamples(w.samples.map((e) => e.metrics), w);
    this.state = 'ready';
    this.window = w;
  }

  /** `diagnose({samples, warmup, session})` with its rates restated per iteration (rolling.js). */
  async #diagnoseSamples(records, w) {
    const input = { samples: records.map((m) => forSession(m, this.session)), warmup: w.warmup, synchronized: false };
    if (this.session) input.session = this.session;
    return perIteration(await this.source.diagnose(input), w);
  }

  /** Captures 'baseline' (resets peaks first), 'warm' or 'steady'; diagnoses once all three exist. */
  async capture(which) {
    if (which === 'baseline') await this.source.resetPeak();
    const s = await this.source.snapshot();
    if (!s || s.missing) throw new Error('no __AFFON_DEVTOOLS_HOOK__ in the page');
    this.captured[which] = { time: s.time, iteration: s.iteration ?? null, metrics: s.metrics, storages: s.storages ?? [] };
    await this.#diagnoseCaptured();
    this.#render();
    return this.captured[which];
  }

  /** The captured three as samples (warm-up: baseline → warm), for the selected session. */
  async #diagnoseCaptured() {
    const { baseline: b, warm: w, steady: a } = this.captured;
    this.capturedDiagnosis = null;
    if (!(b && w && a && b.time <= w.time && w.time <= a.time)) return;
    const byIterations = [b, w, a].every((x) => x.iteration != null);
    const win = { warmup: 1, byIterations, iterations: a.iteration - w.iteration, warmupIterations: w.iteration - b.iteration };
    this.capturedDiagnosis = await this.#diagnoseSamples([b.metrics, w.metrics, a.metrics], win);
  }

  /** The two latest captures compared by live storage (the session's, when one is selected). */
  storageDiff() {
    const [a, b] = this.#diffNames().map((n) => this.captured[n]);
    if (!a || !b) return null;
    const mine = (list) => (this.session ? list.filter((s) => s.session === this.session) : list);
    return storageDiff(mine(a.storages), mine(b.storages));
  }

  #diffNames() {
    const have = ['baseline', 'warm', 'steady'].filter((n) => this.captured[n]);
    return have.length >= 2 ? have.slice(-2) : ['', ''];
  }

  /** Starts a trace in the page, or stops it and downloads it (`affon-trace-<stamp>.json`); returns the trace. */
  async toggleTrace() {
    if (!this.tracing) {
      await this.source.startTrace();
      this.tracing = true;
      this.#renderTrace();
      return null;
    }
    this.tracing = false;
    this.#renderTrace();
    const trace = await this.source.stopTrace();
    download(`affon-trace-${stamp()}.json`, JSON.stringify(trace));
    return trace;
  }

  /** `telemetry.report` with the captured snapshots' diagnosis (or the rolling one when not captured). */
  async buildReport() {
    const diagnosis = this.capturedDiagnosis ?? this.diagnosis;
    const ctx = { ...(this.last?.context ?? {}) };
    ctx.panel = {
      diagnosisSource: this.capturedDiagnosis ? 'captured baseline/warm/steady' : this.diagnosis ? 'rolling window' : 'none',
      source: this.source.kind,
      windowIterations: this.windowIterations,
      session: this.session,
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

  timelineRows() { return timelineRows(this.timeline, SERIES); }
  exportTimeline(format = 'csv') {
    const text = format === 'csv' ? csv(this.timelineRows()) : timelineJson(this.timeline, SERIES, this.session);
    download(`affon-timeline-${stamp()}.${format}`, text, format === 'csv' ? 'text/csv' : 'application/json');
    return text;
  }

  /**
   * Saves the recording (timeline, storages, captures, diagnoses) as `affon-recording-<stamp>.json`:
   * a Chrome trace (Perfetto opens it) that this panel opens back whole (panel-file.js).
   */
  exportRecording() {
    const text = JSON.stringify(recording(this, SERIES));
    download(`affon-recording-${stamp()}.json`, text);
    return text;
  }

  /**
   * Shows a saved recording, or a trace from `telemetry.stopTrace()`, instead of the live page
   * (polling stops; "resume" goes back to live).
   */
  async importRecording(text, name = 'recording') {
    const r = parseRecording(text, { session: this.session, maxPoints: this.maxPoints });
    this.stop();
    this.#clear();
    this.timeline = r.timeline;
    this.storageTimeline.maxPolls = r.storages.maxPolls ?? this.storageTimeline.maxPolls;
    this.storageTimeline.polls = r.storages.polls ?? [];
    this.storageTimeline.info = new Map((r.storages.info ?? []).map((s) => [s.id, s]));
    this.captured = r.captured ?? {};
    this.diagnosis = r.diagnosis ?? null;
    this.capturedDiagnosis = r.capturedDiagnosis ?? null;
    this.state = this.diagnosis ? 'ready' : 'waiting';
    this.imported = { name, savedAt: r.savedAt, affon: r.affon, trace: r.trace ?? null };
    this.#render();
    return r;
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
      else if (a === 'export-recording') this.exportRecording();
      else if (a === 'import-recording') this.$('import-file').click();
      else if (a === 'trace') await this.toggleTrace();
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
    const fig = (scope, name) => figure(s.metrics, scope, name, this.session);
    const who = this.session ? ` (session '${this.session}')` : '';
    el.className = 'ap-status';
    if (this.imported && !this.running) {
      el.textContent = importedText(this.imported);
      return;
    }
    el.textContent = !s
      ? `${this.source.kind} · waiting for __AFFON_DEVTOOLS_HOOK__`
      : `${this.source.kind} · affon ${s.version ?? ''} · iteration ${s.iteration == null ? '—' : num(s.iteration)} · live ${bytes(fig('compute.storage', 'live_bytes'))} in ${num(fig('compute.storage', 'live_tensors'))} tensors${who} · ${this.running ? `polling every ${this.pollMs} ms` : 'paused'}`;
  }

  #renderTrace() {
    const b = this.$('trace');
    b.textContent = this.tracing ? 'stop & export trace' : 'record trace';
    b.classList.toggle('ap-recording', this.tracing);
  }

  #render() {
    this.#renderStatus();
    this.#renderTrace();
    const s = this.last;
    const options = sessionOptions(s?.pools, this.session);
    if (options !== this.sessionOptions) { // only when the list changes: an open <select> stays open
      this.sessionOptions = options;
      this.$('session').innerHTML = options;
      this.$('session').value = this.session ?? '';
    }
    const groups = this.session ? sessionGroups(s?.liveTensors, s?.metrics, this.session) : s?.liveTensors;
    this.$('verdict').innerHTML = verdictView({
      state: this.state,
      diagnosis: this.diagnosis,
      progress: this.window?.progress,
      windowText: this.state === 'ready' ? windowText(this.window, this.session) : '',
      liveTensors: groups,
      iteration: s?.iteration,
    });
    this.$('evidence').innerHTML = evidenceView(this.diagnosis);
    this.$('origins').innerHTML = s
      ? originsView(groups, { iteration: s.iteration, grown: this.diagnosis?.grownOrigins ?? [], diag: this.diagnosis, open: this.openStacks, forgotten: s.forgotten, session: this.session })
      : '';
    this.$('pools').innerHTML = s ? poolsView(this.session ? s.pools?.filter((p) => p.session === this.session) : s.pools) : '';
    this.$('compare').innerHTML = compareView(this.captured, this.capturedDiagnosis, this.session);
    this.$('diff').innerHTML = diffView(this.storageDiff(), ...this.#diffNames());
    this.storageTimeline.draw();
    this.charts.update(this.timeline);
    this.root.dataset.verdict = this.state === 'ready' ? this.diagnosis.verdict : this.state;
  }

  destroy() {
    this.stop();
    this.charts.destroy();
    this.root.innerHTML = '';
  }
}

