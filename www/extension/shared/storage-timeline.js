// The per-storage active-memory timeline (what PyTorch's memory_viz shows, live): every live storage
// is a band over the polls it was alive in, stacked in creation order (oldest at the bottom, so a
// leak is a staircase climbing on top and a steady loop a flat block), coloured by origin. Hovering
// a band shows its origin, bytes, age in iterations and creating stack. And the diff of two
// captured storage lists: what appeared and what went, by origin.
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

  /** Records a poll's storage list (`telemetry.storages()`, filtered to a session when given). */
  push(storages, iteration, session = null) {
    const list = (storages ?? []).filter((s) => !session || s.session === session);
    for (const s of list) this.info.set(s.id, s);
    this.polls.push({ iteration, items: list.map((s) => ({ id: s.id, bytes: s.bytes, origin: s.origin })) });
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

  #scale() {
    const max = Math.max(1, ...this.polls.map((p) => p.items.reduce((a, i) => a + i.bytes, 0)));
    return { colW: this.canvas.width / this.maxPolls, yPer: (this.canvas.height - 1) / max, max };
  }

  draw() {
    const c = this.canvas.getContext('2d');
    const { width: w, height: h } = this.canvas;
    c.clearRect(0, 0, w, h);
    const { colW, yPer } = this.#scale();
    this.polls.forEach((p, k) => {
      let y = h;
      let run = null; // storages under a pixel high merge with neighbours of the same origin
      const flush = () => { if (run) { c.fillStyle = originColour(run.origin); c.fillRect(k * colW, y - run.px, Math.ceil(colW), run.px); y -= run.px; run = null; } };
      for (const it of p.items) {
        const px = it.bytes * yPer;
        if (px >= 1) {
          flush();
          c.fillStyle = originColour(it.origin);
          c.fillRect(k * colW, y - px, Math.ceil(colW), px);
          if (px >= 3) { c.fillStyle = 'rgba(0,0,0,0.25)'; c.fillRect(k * colW, y - px, Math.ceil(colW), 1); }
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
  }

  /** The storage drawn at canvas pixel (x, y), with its age, or null. */
  storageAt(x, y) {
    const { colW, yPer } = this.#scale();
    const k = Math.floor(x / colW);
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
