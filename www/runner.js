// Runs one workload at a chosen rate: each iteration calls telemetry.nextIteration() and then the
// workload's iterate() (awaited when it returns a promise: a decoding loop reads each token back);
// after each batch it waits for the device (session.sync()) so queued GPU work stays bounded. Stops
// itself on the first error (e.g. OUT_OF_MEMORY once a leak fills the pool). Releasing waits for an
// iteration under way, so a workload's objects are never disposed under it.
import telemetry from 'std:telemetry';

/** The most iterations recorded between two waits for the device: a fifth of a second's worth. */
const batchCap = (rate) => Math.max(1, Math.ceil(rate / 5));

export class WorkloadRunner {
  constructor(session, { onChange = () => {} } = {}) {
    this.session = session;
    this.onChange = onChange;
    this.running = false;
    this.workload = null;
    this.ctx = null;
    this.iterations = 0;
    this.rate = 30;
    this.actualRate = 0;
    this.error = null;
  }

  /** Sets up `workload` (releasing what a previous run retained) without starting it. */
  async prepare(workload) {
    do await this.release(); while (this.ctx); // another prepare may have set up while we waited
    this.workload = workload;
    this.ctx = workload.setup(this.session);
    this.iterations = 0;
    this.error = null;
    this.message = '';
  }

  start() {
    if (this.running || !this.ctx) return;
    this.running = true;
    this.#rebase();
    this.samples = [[performance.now(), this.iterations]];
    this.onChange();
    this.loop = this.#loop();
  }

  stop(message = '') {
    this.running = false;
    if (message) this.message = message;
    this.onChange();
  }

  setRate(r) {
    this.rate = Math.max(0.1, Number(r) || 1);
    this.#rebase();
  }

  /** Disposes what the current run retained; returns a sentence saying what. */
  async release() {
    this.stop();
    await this.loop; // an iteration under way finishes first
    if (!this.ctx) return 'nothing to release';
    const w = this.workload;
    const ctx = this.ctx;
    this.ctx = null;
    this.message = `${w.id}: ${w.release(ctx)}`;
    this.onChange();
    return this.message;
  }

  #rebase() {
    this.t0 = performance.now();
    this.done = 0;
  }

  async #loop() {
    while (this.running) {
      const due = Math.floor(((performance.now() - this.t0) * this.rate) / 1000) - this.done;
      const cap = batchCap(this.rate);
      const n = Math.min(Math.max(due, 0), cap);
      try {
        for (let k = 0; k < n && this.running; k++) {
          telemetry.nextIteration();
          const pending = this.workload.iterate(this.ctx, this.iterations);
          if (pending?.then) await pending;
          this.iterations++;
          this.done++;
        }
        if (n > 0) await this.session.sync();
      } catch (e) {
        this.error = e;
        this.stop(`stopped at iteration ${this.iterations}: ${e.code ?? e.name}: ${e.message}`);
        break;
      }
      // the device cannot keep up: run at its pace instead of piling up a backlog (a backlog made
      // ever larger batches, each one a longer wait: the loop stalled for seconds, then burst)
      if (due > cap) this.#rebase();
      const now = performance.now();
      this.samples.push([now, this.iterations]);
      while (this.samples.length > 2 && now - this.samples[0][0] > 1500) this.samples.shift();
      const [t, i] = this.samples[0];
      this.actualRate = now > t ? ((this.iterations - i) * 1000) / (now - t) : 0;
      this.onChange();
      await new Promise((r) => setTimeout(r, n > 0 ? 4 : Math.min(50, 1000 / this.rate / 2)));
    }
  }
}
