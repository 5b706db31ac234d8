// The panel's files. Saving writes one Chrome Trace Event file a user can attach to a bug report:
// Perfetto and chrome://tracing open it (counter tracks of the panel's timeline, an instant at each
// iteration), and the panel opens it back whole — the timeline, the per-storage bands, the captured
// snapshots and the diagnoses travel under `affonRecording`. Opening also takes a plain trace from
// `telemetry.stopTrace()` (the panel's "record trace"): its per-session memory counters become the
// timeline and its iteration marks the iterations; a trace holds no metric records or storages, so
// it shows no verdict and no bands.

export const FORMAT = 'affon.panel-recording/2';
const OLD_FORMAT = 'affon.panel-recording/1';
const MiB = 1 << 20;

/** The recording of `panel` as a Chrome trace (`JSON.stringify` it to save). */
export function recording(panel, series) {
  const rec = {
    format: FORMAT,
    savedAt: new Date().toISOString(),
    affon: panel.last?.version ?? null,
    session: panel.session,
    series: Object.fromEntries(series.map(([k, s, n]) => [k, `${s}/${n}`])),
    timeline: panel.timeline,
    storages: { maxPolls: panel.storageTimeline.maxPolls, polls: panel.storageTimeline.polls, info: [...panel.storageTimeline.info.values()] },
    captured: panel.captured,
    diagnosis: panel.diagnosis,
    capturedDiagnosis: panel.capturedDiagnosis,
    context: panel.last?.context ?? null,
  };
  return {
    traceEvents: timelineEvents(panel.timeline, panel.session),
    displayTimeUnit: 'ms',
    otherData: { producer: `affon memory panel (affon ${rec.affon ?? '?'})`, format: FORMAT },
    affonRecording: rec,
  };
}

/** The timeline as trace events: a counter track per figure (MiB), an instant per new iteration. */
function timelineEvents(tl, session) {
  const who = session ? `session ${session}` : 'all sessions';
  const events = [
    { name: 'process_name', ph: 'M', ts: 0, pid: 1, tid: 0, args: { name: `affon memory panel (${who})` } },
  ];
  const t0 = tl.time[0] ?? 0;
  let lastIteration = null;
  tl.time.forEach((time, i) => {
    const ts = Math.max(0, (time - t0) * 1000);
    const mib = (k) => (tl[k][i] == null ? null : tl[k][i] / MiB);
    const counter = (name, args) => {
      const kept = Object.fromEntries(Object.entries(args).filter(([, v]) => v != null));
      if (Object.keys(kept).length) events.push({ name, cat: 'affon.panel', ph: 'C', ts, pid: 1, tid: 0, args: kept });
    };
    counter('device MiB', { live: mib('live'), peak: mib('peak'), pool: mib('pool'), cached: mib('cached') });
    counter('live tensors', { tensors: tl.tensors[i] });
    counter('runtime MiB', { wasm: mib('wasm'), jsHeap: mib('jsHeap') });
    const it = tl.iteration[i];
    if (it != null && it !== lastIteration) {
      events.push({ name: 'iteration', cat: 'affon.iteration', ph: 'i', s: 'p', ts, pid: 1, tid: 0, args: { iteration: it } });
      lastIteration = it;
    }
  });
  return events;
}

/**
 * Reads a saved file: a panel recording (this format or the first one) or a Chrome trace from
 * `telemetry.stopTrace()`. Returns the recording (a trace's with `trace` describing it); throws a
 * readable error for anything else.
 */
export function parseRecording(text, { session = null, maxPoints = 3600 } = {}) {
  let r;
  try {
    r = JSON.parse(text);
  } catch (e) {
    throw new Error(`not a panel recording or a trace: ${e.message}`);
  }
  const rec = r?.affonRecording ?? r;
  if (rec?.format === FORMAT || rec?.format === OLD_FORMAT) {
    for (const k of ['timeline', 'storages', 'captured']) if (!rec[k]) throw new Error(`panel recording without '${k}'`);
    return rec;
  }
  const events = Array.isArray(r) ? r : r?.traceEvents;
  if (!Array.isArray(events)) throw new Error(`not a panel recording or a trace (format ${JSON.stringify(rec?.format)}, no traceEvents)`);
  return fromTrace(events, r?.otherData?.producer ?? null, session, maxPoints);
}

/** A trace's memory counters (`memory <session>` tracks) as a recording's timeline. */
function fromTrace(events, producer, session, maxPoints) {
  const counters = events
    .filter((e) => e?.ph === 'C' && e.cat === 'affon.memory' && typeof e.name === 'string' && e.name.startsWith('memory ') && Number.isFinite(e.ts))
    .sort((a, b) => a.ts - b.ts);
  if (!counters.length) throw new Error('a trace without affon memory counters (record it with telemetry.startTrace() while the page runs)');
  const marks = events.filter((e) => e?.ph === 'i' && e.name === 'iteration' && Number.isFinite(e.args?.iteration)).sort((a, b) => a.ts - b.ts);
  const sessions = [...new Set(counters.map((e) => e.name.slice(7)))];
  const mine = session && sessions.includes(session) ? counters.filter((e) => e.name.slice(7) === session) : counters;
  // the process's figures after each event: every session's latest counter (by track: labels
  // need not be unique), summed
  const latest = new Map();
  let m = 0, peak = 0;
  const points = mine.map((e) => {
    latest.set(`${e.pid}/${e.tid}`, e.args ?? {});
    while (m < marks.length && marks[m].ts <= e.ts) m++;
    const sum = (k) => [...latest.values()].reduce((a, v) => a + (Number(v[k]) || 0), 0);
    const live = sum('live_bytes');
    peak = Math.max(peak, live);
    return { ts: e.ts, iteration: m ? marks[m - 1].args.iteration : null, live, peak, pool: sum('pool_bytes'), cached: sum('cached_bytes') };
  });
  const kept = thin(points, maxPoints);
  const t0 = kept[0].ts;
  const col = (f) => kept.map(f);
  const spans = {};
  for (const e of events) if (e?.ph === 'X' && typeof e.name === 'string') spans[e.name] = (spans[e.name] ?? 0) + 1;
  return {
    format: FORMAT,
    savedAt: null,
    affon: producer,
    session: mine === counters ? null : session,
    timeline: {
      t: col((p) => (p.ts - t0) / 1e6), time: col((p) => p.ts / 1000), iteration: col((p) => p.iteration),
      live: col((p) => p.live), peak: col((p) => p.peak), pool: col((p) => p.pool), cached: col((p) => p.cached),
      tensors: col(() => null), wasm: col(() => null), jsHeap: col(() => null),
    },
    storages: { polls: [], info: [] },
    captured: {},
    diagnosis: null,
    capturedDiagnosis: null,
    trace: { sessions, counters: counters.length, points: kept.length, iterations: marks.length, spans, seconds: (points.at(-1).ts - points[0].ts) / 1e6 },
  };
}

/** At most `n` points, in order: each group of neighbours keeps its highest live figure (peaks survive). */
function thin(points, n) {
  if (points.length <= n) return points;
  const size = Math.ceil(points.length / n);
  const out = [];
  for (let i = 0; i < points.length; i += size) {
    const group = points.slice(i, i + size);
    out.push(group.reduce((a, p) => (p.live > a.live ? p : a)));
  }
  return out;
}

/** The status line for an opened file. */
export function importedText(imp) {
  if (!imp.trace) return `showing ${imp.name} (saved ${imp.savedAt}, affon ${imp.affon ?? '?'}) · resume to go back to the live page`;
  const t = imp.trace;
  const spans = Object.entries(t.spans).map(([k, v]) => `${v} ${k}`).join(', ') || 'no spans';
  return `showing trace ${imp.name}: ${t.counters} memory counters over ${t.seconds.toFixed(1)} s in ${t.sessions.length} session(s) (${t.sessions.join(', ')}), `
    + `${t.iterations} iteration marks, ${spans} · a trace holds no metric records or storages: no verdict, no bands · resume to go back to the live page`;
}

/** The timeline as CSV rows (a header, then one row per poll). */
export function timelineRows(tl, series) {
  const keys = ['time', 't', 'iteration', ...series.map(([k]) => k)];
  const head = ['time_ms', 'elapsed_s', 'iteration', ...series.map(([, s, n]) => `${s}/${n}`)];
  return [head, ...tl.t.map((_, i) => keys.map((k) => tl[k][i]))];
}

/** The timeline as JSON text: the series' record names, the session and the columns. */
export function timelineJson(tl, series, session) {
  return JSON.stringify({ series: Object.fromEntries(series.map(([k, s, n]) => [k, `${s}/${n}`])), session, ...tl }, null, 1);
}
