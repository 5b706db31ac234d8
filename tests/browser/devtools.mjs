// Talks to targets Playwright does not expose (DevTools frontends and the extension frames inside
// them) through a browser-level CDP session: attach (non-flat) and exchange messages with
// Target.sendMessageToTarget / receivedMessageFromTarget.

export function targetClient(cdp) {
  const pending = new Map();
  const sessions = new Map();
  let next = 1;
  cdp.on('Target.receivedMessageFromTarget', ({ sessionId, message }) => {
    const m = JSON.parse(message);
    const key = `${sessionId}:${m.id}`;
    const p = pending.get(key);
    if (p) { pending.delete(key); if (m.error) p.reject(new Error(m.error.message)); else p.resolve(m.result); }
  });
  async function session(targetId) {
    if (!sessions.has(targetId)) {
      const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: false });
      sessions.set(targetId, sessionId);
    }
    return sessions.get(targetId);
  }
  async function send(targetId, method, params = {}) {
    const sessionId = await session(targetId);
    const id = next++;
    const done = new Promise((resolve, reject) => pending.set(`${sessionId}:${id}`, { resolve, reject }));
    await cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) });
    return done;
  }
  return {
    async targets() { return (await cdp.send('Target.getTargets')).targetInfos; },
    send,
    /** Evaluates `expression` (awaiting a promise) in the target; returns its JSON value. */
    async evaluate(targetId, expression) {
      const r = await send(targetId, 'Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
      if (r.exceptionDetails) throw new Error(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text);
      return r.result.value;
    },
    async screenshot(targetId) {
      const r = await send(targetId, 'Page.captureScreenshot', { format: 'png' });
      return Buffer.from(r.data, 'base64');
    },
  };
}

/** Polls `fn` until it returns a truthy value (returned), or throws after `timeout` ms. */
export async function until(fn, { timeout = 30_000, interval = 250, what = 'condition' } = {}) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e; }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last?.message ?? JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, interval));
  }
}
