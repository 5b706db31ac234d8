// The per-storage active-memory timeline (what PyTorch's memory_viz shows, live): every live storage
// is a band over the iterations it was alive in (sampled at the panel's polls), stacked in creation
// order (oldest at the bottom, so a leak is a staircase climbing on top and a steady loop a flat
// block), coloured by origin. The x axis is iterations when the page calls
// `telemetry.nextIteration()` (each poll's column spans the iterations up to the next poll), else
// polls. Hovering a band shows its origin, bytes, age in iterations and creating stack. And the
// diff of two captured storage lists: what appeared and what went, by origin.
import { bytes, num, esc } from './format.js';

/** A stable colour per origin. */
export function originColour(origin) {
  let h = 0;
  for (let i = 0; i < origin.length; i++) h = (h * 31 + origin.charCodeAt(i)) >>> 0;
  return `hsl(${h % 360}, 65%, 55%)`;
}

export class StorageTimeline {
  /** @param {HTMLCanvasElement} canvas  @param {HTMLElement} tip  @param {{maxPolls?: number}} o */
  constructor(canvas, tip, o = {}) {
    this.canvas = canvas;
    this.tip = tip;
    this.axis = o.axis ?? null;
    this.maxPolls = o.maxPolls ?? 120;
    this.clear();
    canvas.addEventListener('mousemove', (e) => this.#hover(e));
    canvas.addEventListener('mouseleave', () => { this.tip.hidden = true; this.hovered = null; });
  }

  clear() {
    /** One entry per poll: `{iteration, items: [{id, bytes, origin}]}` in creation order. */
    this.polls = [];
    /** The latest details of every storage seen, by id. */
    this.info = new Map();
    this.hovered = null;
  }

  /**
   * Records a poll's storage list (`telemetry.storages(limit)`, filtered to a session when given);
   * `total` is the live storage count the ledger reports, so a list the hook cut to its limit (the
   * largest kept) is said to be partial.
   */
  push(storages, iteration, session = null, total = null) {
    const sent = (storages ?? []).length;
    const list = (storages ?? []).filter((s) => !session || s.session === session);
    for (const s of list) this.info.set(s.id, s);
    this.polls.push({ iteration, total, sent, items: list.map((s) => ({ id: s.id, bytes: s.bytes, origin: s.origin })) });
    if (this.polls.length > this.maxPolls) this.polls.shift();
    const alive = new Set(this.polls.flatMap((p) => p.items.map((i) => i.id)));
    for (const id of this.info.keys()) if (!alive.has(id)) this.info.delete(id);
  }

  /** Each storage's band: first and last poll index it was alive in, its bytes and origin. */
  get bands() {
    const bands = new Map();
    this.polls.forEach((p, k) => {
      for (const it of p.items) {
        const b = bands.get(it.id) ?? { id: it.id, origin: it.origin, bytes: it.bytes, from: k, to: k };
        b.to = k;
        bands.set(it.id, b);
      }
    });
    return [...bands.values()];
  }

  /** Whether the x axis is iterations (every poll has one) rather than polls. */
  get byIterations() {
    return this.polls.length > 0 && this.polls.every((p) => p.iteration != null);
  }

  /**
   * Each poll's column `[x0, x1)` in canvas pixels. By iterations: poll k spans the iterations from
   * its own to the next poll's (the newest one the average step), and the axis holds `maxPolls`
   * average steps until the polls fill it, so a run grows from the left at a steady scale. By polls:
   * equal columns.
   */
  columns() {
    const w = this.canvas.width, n = this.polls.length;
    if (!this.byIterations) return this.polls.map((_, k) => [(k * w) / this.maxPolls, ((k + 1) * w) / this.maxPolls]);
    const it = this.polls.map((p) => p.iteration);
    const step = n > 1 ? Math.max(1, (it[n - 1] - it[0]) / (n - 1)) : 1;
    const span = Math.max(it[n - 1] - it[0] + step, step * this.maxPolls);
    const x = (i) => ((i - it[0]) * w) / span;
    return it.map((i, k) => [x(i), x(k + 1 < n ? it[k + 1] : i + step)]);
  }

  #scale() {
    const max = Math.max(1, ...this.polls.map((p) => p.items.reduce((a, i) => a + i.bytes, 0)));
    return { cols: this.columns(), yPer: (this.canvas.height - 1) / max, max };
  }

  draw() {
    const c = this.canvas.getContext('2d');
    const { width: w, height: h } = this.canvas;
    c.clearRect(0, 0, w, h);
    const { cols, yPer } = this.#scale();
    this.polls.forEach((p, k) => {
      const [x0, x1] = cols[k];
      if (x1 - x0 <= 0) return; // a poll at the same iteration as the next: the next one shows it
      const x = Math.floor(x0), cw = Math.max(1, Math.ceil(x1) - x);
      let y = h;
      let run = null; // storages under a pixel high merge with neighbours of the same origin
      const flush = () => { if (run) { c.fillStyle = originColour(run.origin); c.fillRect(x, y - run.px, cw, run.px); y -= run.px; run = null; } };
      for (const it of p.items) {
        const px = it.bytes * yPer;
        if (px >= 1) {
          flush();
          c.fillStyle = originColour(it.origin);
          c.fillRect(x, y - px, cw, px);
          if (px >= 3) { c.fillStyle = 'rgba(0,0,0,0.25)'; c.fillRect(x, y - px, cw, 1); }
          y -= px;
        } else if (run && run.origin === it.origin) {
          run.px += px;
        } else {
          flush();
          run = { origin: it.origin, px };
        }
      }
      flush();
    });
    if (this.axis) this.axis.textContent = this.#axisText();
  }

  #axisText() {
    const n = this.polls.length;
    if (!n) return '';
    const last = this.polls[n - 1];
    const partial = last.total != null && last.total > last.items.length
      ? ` · ${num(last.items.length)} of ${num(last.total)} live storages drawn (the page sends its ${num(last.sent)} largest)`
      : '';
    if (!this.byIterations) return `${n} polls (the page calls no telemetry.nextIteration(), so the axis is polls)${partial}`;
    return `iterations ${num(this.polls[0].iteration)} → ${num(last.iteration)} (${num(n)} polls)${partial}`;
  }

  /** The storage drawn at canvas pixel (x, y), with its age, or null. */
  storageAt(x, y) {
    const { cols, yPer } = this.#scale();
    // the last drawn column under x (columns overlap by their rounding; a later one paints over)
    const k = cols.findLastIndex(([x0, x1]) => x1 > x0 && x >= Math.floor(x0) && x < Math.max(Math.ceil(x1), Math.floor(x0) + 1));
    const p = this.polls[k];
    if (!p) return null;
    let top = this.canvas.height;
    for (const it of p.items) {
      const px = it.bytes * yPer;
      if (y <= top && y >= top - Math.max(px, 0.5)) {
        const s = this.info.get(it.id) ?? it;
        const now = this.polls.at(-1).iteration;
        return { ...s, age: now != null && s.iteration != null ? now - s.iteration : null };
      }
      top -= px;
    }
    return null;
  }

  #hover(e) {
    const r = this.canvas.getBoundingClientRect();
    const x = ((e.clientX - r.left) * this.canvas.width) / r.width;
    const y = ((e.clientY - r.top) * this.canvas.height) / r.height;
    const s = this.storageAt(x, y);
    this.hovered = s;
    if (!s) { this.tip.hidden = true; return; }
    this.tip.hidden = false;
    this.tip.innerHTML = `<b>${esc(s.origin)}</b> · storage #${s.id} · ${bytes(s.bytes)} · created at iteration ${num(s.iteration)}`
      + `${s.age != null ? ` (${num(s.age)} iterations ago)` : ''}${s.forgotten ? ' · forgotten' : ''}`
      + (s.stack ? `<pre class="ap-stack">${esc(s.stack)}</pre>` : '<div class="ap-muted">no stack (create the session with captureStacks: true)</div>');
  }
}

/** What changed between two storage lists: by origin, storages (and bytes) that appeared and went. */
export function storageDiff(a, b) {
  const before = new Map((a ?? []).map((s) => [s.id, s]));
  const after = new Map((b ?? []).map((s) => [s.id, s]));
  const rows = new Map();
  const row = (origin) => rows.get(origin) ?? rows.set(origin, { origin, added: 0, addedBytes: 0, removed: 0, removedBytes: 0 }).get(origin);
  for (const [id, s] of after) if (!before.has(id)) { const r = row(s.origin); r.added++; r.addedBytes += s.bytes; }
  for (const [id, s] of before) if (!after.has(id)) { const r = row(s.origin); r.removed++; r.removedBytes += s.bytes; }
  return [...rows.values()].sort((x, y) => (y.addedBytes - y.removedBytes) - (x.addedBytes - x.removedBytes));
}

/** The diff as a table (`from` and `to` name the two snapshots). */
export function diffView(diff, from, to) {
  if (!diff) return '<p class="ap-muted">Capture two snapshots to compare their live storages.</p>';
  if (!diff.length) return `<p>No storage appeared or went between ${esc(from)} and ${esc(to)}.</p>`;
  const body = diff.map((r) => `<tr data-origin="${esc(r.origin)}"><td><span class="ap-swatch" style="background:${originColour(r.origin)}"></span>${esc(r.origin)}</td>`
    + `<td>+${num(r.added)} (${bytes(r.addedBytes)})</td><td>−${num(r.removed)} (${bytes(r.removedBytes)})</td><td>${bytes(r.addedBytes - r.removedBytes)}</td></tr>`).join('');
  return `<p>Live storages, ${esc(from)} → ${esc(to)}:</p><table class="ap-table ap-diff"><thead><tr><th>origin</th><th>appeared</th><th>went</th><th>net</th></tr></thead><tbody>${body}</tbody></table>`;
}
