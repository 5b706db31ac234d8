// The benchmark page's harness (bench.js and workloads/*.js share it): the run's settings, the status
// line, the timing loop (`bench`, `pair`), the peers' per-row bookkeeping (`RowPeers`,
// `peerWorkload`), deterministic host data, the correctness check, affon's metrics, TF.js's queue
// drain, and the result rows (`rows`, `memory`, `row`).
import { telemetry } from '../../pkg/affon.js';
import * as tf from '@tensorflow/tfjs-core';

export const QUICK = new URLSearchParams(location.search).has('quick');
export const LARGE = new URLSearchParams(location.search).has('large');
// 11 rounds: on SwiftShader single samples of one library vary up to 3× (bimodal in places), and 7 left
// medians that moved by a third between runs
export const REPS = QUICK ? 3 : 11;
export const WARMUP = QUICK ? 1 : 2;

const $status = document.getElementById('status');
export const status = (text) => { $status.textContent = text; console.log(`[bench] ${text}`); };
export const now = () => performance.now();
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
export const summary = (samples) => ({ ms: median(samples), min: Math.min(...samples), max: Math.max(...samples), samples });

// The peer columns, in table order. 'jax' is jax-js eager, 'jaxJit' jax-js `jit`.
export const PEERS = ['tfjs', 'ort', 'jax', 'jaxJit'];
export const LABEL = { affon: 'affon', tfjs: 'TF.js', ort: 'ORT-Web', jax: 'jax-js (eager)', jaxJit: 'jax-js (jit)' };
export const SHORT = { tfjs: 'TF.js', ort: 'ORT', jax: 'jax', jaxJit: 'jax jit' };

/**
 * Times `sides` ({ affon, tfjs, ort?, jax?, jaxJit? }: async functions, or { run, after } where
 * `after` runs untimed after each call): `warmup` untimed calls of each, then `reps` rounds in
 * which every side runs once, in turn. `peerReps` caps a slow peer's timed rounds. A peer that
 * throws is dropped, its error kept in `failed`; affon and TF.js errors propagate.
 */
export async function bench(sides, { warmup = WARMUP, reps = REPS, peerReps = {}, slow = null } = {}) {
  const active = Object.keys(sides).filter((k) => sides[k]);
  const failed = {};
  const samples = Object.fromEntries(active.map((k) => [k, []]));
  const lastWarm = {};
  const call = async (k, timed) => {
    const side = typeof sides[k] === 'function' ? { run: sides[k] } : sides[k];
    try {
      const t0 = now(); await side.run(); const ms = now() - t0;
      if (timed) samples[k].push(ms); else lastWarm[k] = ms;
      await side.after?.();
    } catch (e) {
      if (k === 'affon' || k === 'tfjs') throw e;
      failed[k] = `failed while timed: ${e?.message ?? e}`;
      active.splice(active.indexOf(k), 1);
    }
  };
  for (let i = 0; i < warmup; i++) for (const k of [...active]) await call(k, false);
  // `slow: { ms, reps }`: a peer whose last warm-up call took over `ms` gets at most `reps` timed rounds.
  peerReps = { ...peerReps };
  if (slow) for (const k of active) if (!['affon', 'tfjs'].includes(k) && lastWarm[k] > slow.ms) peerReps[k] = Math.min(peerReps[k] ?? reps, slow.reps);
  for (let i = 0; i < reps; i++) {
    for (const k of [...active]) if (i < (peerReps[k] ?? reps)) await call(k, true);
  }
  const out = { failed, reps: Object.fromEntries(active.map((k) => [k, samples[k].length])) };
  for (const k of active) out[k] = summary(samples[k]);
  return out;
}

/** Runs `fa` (affon) and `ft` (TF.js) `warmup` times each, then `reps` alternating timed rounds. */
export const pair = (fa, ft, opts) => bench({ affon: fa, tfjs: ft }, opts);

// Peer state after setup: { ort: { ok, reason?, version?, adapterInfo? }, jax: { ... } }.
export const peerState = {};
export const peerOf = (key) => (key === 'jaxJit' ? 'jax' : key);

/**
 * The peers of one row: `add(key, run, verify, expected)` first checks `verify()` (async → the
 * peer's result) against affon's `expected` result (max rel diff, kept in `checks`), then keeps
 * `run` as the side to time; a peer that is not set up, fails, or disagrees gets a reason instead
 * (its cell is then `—`). `skip(key, reason)` records why a peer has no figure on this row.
 */
export class RowPeers {
  constructor() { this.sides = {}; this.checks = {}; this.reasons = {}; }
  async add(key, run, verify, expected) {
    const st = peerState[peerOf(key)];
    if (!st?.ok) { this.reasons[key] = st?.reason ?? 'not set up'; return; }
    try {
      const got = await verify();
      const d = maxRelDiff(Array.from(got), Array.from(expected));
      if (!(d < 1e-3)) { this.reasons[key] = `disagrees with affon: max rel diff ${d.toExponential(1)}`; return; }
      this.checks[key] = d;
      this.sides[key] = run;
    } catch (e) {
      this.reasons[key] = `${e?.message ?? e}`.split('\n')[0].slice(0, 200);
    }
  }
  skip(key, reason) { this.reasons[key] = reason; }
}

/** Builds a peer's workload object; on failure records the reason for each of `keys` and returns null. */
export async function peerWorkload(rp, keys, make) {
  const st = peerState[peerOf(keys[0])];
  if (!st?.ok) { for (const k of keys) rp.skip(k, st?.reason ?? 'not set up'); return null; }
  try { return await make(); } catch (e) {
    for (const k of keys) rp.skip(k, `${e?.message ?? e}`.split('\n')[0].slice(0, 200));
    return null;
  }
}

/** Deterministic host data (mulberry32) so both libraries get identical inputs. */
export function hostData(n, seed, lo = -1, hi = 1) {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let r = Math.imul(s ^ (s >>> 15), 1 | s);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    out[i] = lo + (hi - lo) * (((r ^ (r >>> 14)) >>> 0) / 4294967296);
  }
  return out;
}

/** `data` of row-major `shape` with its axes permuted (`perm[i]`: the source axis of result axis i). */
export function permute(data, shape, perm) {
  const outShape = perm.map((a) => shape[a]);
  const srcStride = shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
  const stride = perm.map((a) => srcStride[a]);   // source stride of each result axis
  const out = new Float32Array(data.length);
  const idx = new Array(outShape.length).fill(0);
  for (let o = 0, src = 0; o < out.length; o++) {
    out[o] = data[src];
    for (let d = outShape.length - 1; d >= 0; d--) {
      src += stride[d];
      if (++idx[d] < outShape[d]) break;
      src -= stride[d] * outShape[d]; idx[d] = 0;
    }
  }
  return out;
}

/** Largest |a - b| relative to max(1, |b|): a correctness check between the two libraries. */
export function maxRelDiff(a, b) {
  if (a.length !== b.length) throw new Error(`length mismatch ${a.length} vs ${b.length}`);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i])));
  return d;
}

/** One affon metric value; `session` selects the per-session record (labels.session). */
export function metric(scope, name, session) {
  const r = telemetry.metrics().find((m) => m.scope === scope && m.name === name
    && (session === undefined ? !m.labels : m.labels?.session === session));
  if (!r) throw new Error(`affon metric ${scope}/${name}${session ? ` (session ${session})` : ''} not found`);
  return r.value;
}

/** One affon call read back: `make()`, then `to_array()` of its result, then dispose. */
export const readA = async (make) => { const y = make(); await y.to_array(); y.dispose(); };

/** Drains TF.js's queue: submit its pending encoder, then wait for the device queue. */
export async function tfQueueSync() {
  const b = tf.backend();
  if (b.commandEncoder) { b.endComputePassEncoder(); b.submitQueue(); }
  await b.device.queue.onSubmittedWorkDone();
}

export const pickInfo = (info) => (info ? {
  vendor: info.vendor, architecture: info.architecture, device: info.device, description: info.description,
} : null);

export const rows = [];      // timing rows
export const memory = [];    // memory rows
/**
 * One timing row. `extra.peers` (a RowPeers) marks a row in the peers' scope: its ORT-Web and
 * jax-js cells are a figure, or `—` with the reason in the notes; `extra.blank` lists peer columns
 * that are not this row's form (left empty). Rows without `peers` compare affon and TF.js only.
 */
export function row(id, workload, r, extra = {}) {
  const { peers: rp, blank = [], ...rest } = extra;
  const ms = Object.fromEntries(PEERS.map((k) => [k, r[k]?.ms ?? null]));
  const reasons = { ...(rp?.reasons ?? {}), ...(r.failed ?? {}) };
  for (const k of PEERS) if (ms[k] === null && !reasons[k] && rp && !blank.includes(k)) reasons[k] = 'not run';
  const best = PEERS.filter((k) => ms[k] !== null).reduce((b, k) => (b === null || ms[k] < ms[b] ? k : b), null);
  rows.push({ id, workload, affonMs: r.affon.ms, tfjsMs: r.tfjs.ms, ratio: r.affon.ms / r.tfjs.ms,
    ortMs: ms.ort, jaxMs: ms.jax, jaxJitMs: ms.jaxJit, bestPeer: best, bestMs: ms[best], bestRatio: r.affon.ms / ms[best],
    peerScope: Boolean(rp), blank, peerChecks: rp?.checks ?? {}, peerReasons: reasons,
    affonSamples: r.affon.samples, tfjsSamples: r.tfjs.samples,
    ortSamples: r.ort?.samples, jaxSamples: r.jax?.samples, jaxJitSamples: r.jaxJit?.samples, ...rest });
}
