// The memory panel's rolling window: which of the recorded polls go to the page's
// `telemetry.diagnose({samples, warmup, session})`, and how the answer's figures, which the library
// counts per sample, become per iteration. No DOM, no source: the panel (memory-panel.js) records
// entries `{time, iteration, metrics}` here and diagnoses what `select()` returns.
//
// The samples are: the baseline (the last poll before the run's first iterations), the polls of the
// warm-up (everything between the baseline and the warm sample: only its ends count, the rest is
// evenly thinned), and the window — the polls of the last `windowIterations` iterations, but at
// least `windowSamples` of them, so that the library's sustained-rise rule (the window in thirds)
// has something to split. At most `maxSamples` in all.
import { bytes, num } from './format.js';

/** What the panel keeps of a metrics() snapshot: what diagnose and the timeline read, every session. */
const KEPT = {
  'compute.storage': new Set(['live_bytes', 'peak_bytes', 'live_tensors', 'live_bytes_by_origin']),
  'compute.memory': new Set(['pool_bytes', 'pool_cached_bytes']),
  'runtime.memory': null, // all of them
};

export function keptRecords(records) {
  return (records ?? []).filter((r) => r.scope in KEPT && (KEPT[r.scope] === null || KEPT[r.scope].has(r.name)));
}

/**
 * `records` as diagnose is given them: the process-wide and per-origin records, plus, for `session`,
 * that session's labelled ones (diagnose reads only those then; the process-wide ones stay so that a
 * report's figures are whole). Other sessions' records are dropped: they are never read.
 */
export function forSession(records, session = null) {
  return records.filter((r) => r.labels?.session === undefined || (session != null && r.labels.session === session));
}

/** `n` items of `list` spread evenly, first and last included (all of them when there are fewer). */
export function evenly(list, n) {
  if (list.length <= n) return list;
  if (n <= 1) return list.slice(-n);
  return Array.from({ length: n }, (_, i) => list[Math.round((i * (list.length - 1)) / (n - 1))]);
}

// `diagnose` writes a rate as fmt_bytes(x) + ' per iteration' (src/telemetry/diagnose.rs).
const RATE = /-?\d+(?:\.\d+)? (?:B|KiB|MiB|GiB) per iteration/;

/**
 * A diagnosis of the samples `w.samples` restated per iteration. `diagnose({samples})` takes one
 * sample per iteration; the panel's samples are polls, each `k` iterations apart, so each
 * evidence's `perIteration` becomes `delta / iterations` (the real iterations between the warm
 * sample and now), the summary's rate is restated from it (the deciding figure is evidence[0]), and
 * `snapshots.warmup` / `iterations` count iterations, as reports expect. Without iterations (a page
 * that reports none) the rates become totals over the window.
 */
export function perIteration(d, w) {
  const n = w.byIterations && w.iterations > 0 ? w.iterations : null;
  const evidence = d.evidence.map(({ perIteration: _, ...e }) => (n ? { ...e, perIteration: e.delta / n } : e));
  const lead = evidence[0];
  const rate = n ? `${bytes(lead.perIteration)} per iteration` : `${bytes(lead.delta)} in the window`;
  const snapshots = { ...d.snapshots, warmup: n ? w.warmupIterations : undefined, iterations: n ?? undefined };
  return { ...d, evidence, summary: lead ? d.summary.replace(RATE, rate) : d.summary, snapshots };
}

export class RollingWindow {
  /**
   * @param {object} o `windowIterations` (20), `warmupIterations` (5), `windowSamples` (12),
   *   `windowSeconds` (5: the window when the page reports no iterations), `maxSamples` (200),
   *   `maxHistory` (3600 entries), `idleRebaseMs` (10000: after this long without iterations, the
   *   next iterations start a new window).
   */
  constructor(o = {}) {
    this.windowIterations = o.windowIterations ?? 20;
    this.warmupIterations = o.warmupIterations ?? 5;
    this.windowSamples = o.windowSamples ?? 12;
    this.windowSeconds = o.windowSeconds ?? 5;
    this.maxSamples = o.maxSamples ?? 200;
    this.maxHistory = o.maxHistory ?? 3600;
    this.idleRebaseMs = o.idleRebaseMs ?? 10_000;
    this.clear();
  }

  clear() {
    this.history = [];
    this.baseline = null;
    this.lastAdvance = null;
  }

  /** Adds one poll `{time, iteration, metrics}`; moves the baseline when a run starts. */
  record(entry) {
    const prev = this.history.at(-1);
    if (!this.baseline) this.baseline = entry;
    if (prev && entry.iteration != null && prev.iteration != null && entry.iteration !== prev.iteration) {
      // The first iterations seen, or iterations resuming after an idle spell: a new run, judged
      // from the last snapshot before it.
      if (this.lastAdvance == null || entry.time - this.lastAdvance > this.idleRebaseMs) this.baseline = prev;
      this.lastAdvance = entry.time;
    }
    this.history.push(entry);
    if (this.history.length > this.maxHistory) this.history.splice(0, this.history.length - this.maxHistory);
  }

  /**
   * The window to diagnose now: `{samples, warmup, base, warm, now, iterations, warmupIterations,
   * byIterations}` (`samples` are entries; `warmup` is the warm sample's index), or `{progress}`
   * while there is not enough to judge.
   */
  select() {
    const base = this.baseline;
    const last = this.history.at(-1);
    if (!base || !last) return { progress: 'waiting for a first snapshot' };
    if (last.iteration == null || base.iteration == null) return this.#byTime(base, last);
    const need = this.warmupIterations + this.windowIterations;
    const since = last.iteration - base.iteration;
    if (since < need) {
      return { progress: `${num(since)} of ${num(need)} iterations since the baseline (warm-up ${this.warmupIterations} + window ${this.windowIterations})` };
    }
    // One sample per iteration value (the first poll that saw it), as diagnose counts them: polls
    // of an idle page add nothing, so its last verdict stands until it iterates again.
    const polls = [base];
    for (const h of this.history) if (h.time > base.time && h.iteration > polls.at(-1).iteration) polls.push(h);
    const now = polls.at(-1);
    const earliest = polls.findIndex((h) => h.iteration >= base.iteration + this.warmupIterations);
    let warm = 0;
    for (let i = polls.length - 1; i >= 0; i--) if (polls[i].iteration <= now.iteration - this.windowIterations) { warm = i; break; }
    // Polls sparser than the window's iterations: the earliest after warm-up.
    warm = Math.min(Math.max(warm, earliest), polls.length - this.windowSamples);
    if (warm < earliest) {
      return { progress: `${num(polls.length - earliest)} of ${num(this.windowSamples)} snapshots after warm-up (one per poll that saw new iterations)` };
    }
    return {
      ...this.#samples(polls, warm),
      base, warm: polls[warm], now,
      iterations: now.iteration - polls[warm].iteration,
      warmupIterations: polls[warm].iteration - base.iteration,
      byIterations: true,
    };
  }

  /** The page reports no iterations: the window is the last `windowSeconds` (and `windowSamples` polls). */
  #byTime(base, now) {
    const polls = this.history.filter((h) => h.time >= base.time);
    let warm = -1;
    for (let i = polls.length - 1; i >= 0; i--) if (polls[i].time <= now.time - this.windowSeconds * 1000) { warm = i; break; }
    warm = Math.min(warm, polls.length - this.windowSamples);
    if (warm < 0) return { progress: `collecting ${this.windowSeconds} s of snapshots (the page reports no iterations)` };
    return { ...this.#samples(polls, warm), base, warm: polls[warm], now, iterations: 0, warmupIterations: 0, byIterations: false };
  }

  /** `polls[0]` (the baseline), the warm-up thinned, and `polls[warm..]` thinned to fit `maxSamples`. */
  #samples(polls, warm) {
    const head = warm > 0 ? [polls[0], ...evenly(polls.slice(1, warm), Math.min(40, this.maxSamples >> 2))] : [];
    const samples = [...head, ...evenly(polls.slice(warm), this.maxSamples - head.length)];
    return { samples, warmup: head.length };
  }
}
