// Formatting helpers shared by the memory panel's views, charts and exports (no DOM, no state).

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** `262144` → `256.0 KiB`; signed when `sign` is set (`+256.0 KiB`). Exact below 1 KiB. */
export function bytes(n, { sign = false } = {}) {
  if (n == null || Number.isNaN(n)) return '—';
  const s = sign && n > 0 ? '+' : n < 0 ? '−' : '';
  let a = Math.abs(n);
  let u = 0;
  while (a >= 1024 && u < UNITS.length - 1) { a /= 1024; u++; }
  return `${s}${u === 0 ? Math.round(a) : a.toFixed(1)} ${UNITS[u]}`;
}

/** Integers with thousands separators; other numbers to at most 2 decimals. */
export function num(n, { sign = false } = {}) {
  if (n == null || Number.isNaN(n)) return '—';
  const s = sign && n > 0 ? '+' : '';
  const v = Number.isInteger(n) ? n : Math.round(n * 100) / 100;
  return s + v.toLocaleString('en-US');
}

/** A metric's value formatted by its unit. */
export function byUnit(value, unit, opts) {
  return unit === 'bytes' ? bytes(value, opts) : num(value, opts);
}

export function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

/** The first frame of a captured stack (`at f (url:line:col)`), with the page origin trimmed. */
export function firstFrame(stack) {
  if (!stack) return '';
  const line = stack.split('\n').map((l) => l.trim()).find((l) => l.length > 0) ?? '';
  return trimUrls(line.replace(/^at\s+/, ''));
}

/** `http://127.0.0.1:8080/www/workloads.js:12:5` → `www/workloads.js:12:5`. */
export function trimUrls(text) {
  return String(text).replace(/\b(?:https?|chrome-extension|file):\/\/[^/\s)]*\//g, '');
}

/** Finds the process-wide record `scope/name` (no labels). */
export function metric(records, scope, name) {
  return records?.find((r) => r.scope === scope && r.name === name && !r.labels)?.value;
}

/**
 * `scope/name` of one session (its `{session}` record), or the process-wide record when `session`
 * is null. Runtime memory cannot be attributed to a session: it is always the process's.
 */
export function figure(records, scope, name, session = null) {
  if (session == null || scope === 'runtime.memory') return metric(records, scope, name);
  return records?.find((r) => r.scope === scope && r.name === name && r.labels?.session === session && r.labels.origin === undefined)?.value;
}

export function csv(rows) {
  const cell = (v) => {
    const s = v == null ? '' : String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return rows.map((r) => r.map(cell).join(',')).join('\n') + '\n';
}

/** Offers `text` as a file download (works in pages and in extension pages). */
export function download(name, text, type = 'application/json') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function stamp(date = new Date()) {
  return date.toISOString().replace(/[:.]/g, '-').replace(/Z$/, '');
}
