// jax-js 0.1.25 (WebGPU backend) as a benchmark peer: eager (one kernel per primitive) and `jit`
// (traced once per input shape, elementwise work fused into kernels).
//
// jax-js's memory model is reference counting with ownership: every function consumes its array
// arguments, so inputs that live across calls are passed as `x.ref`. Operations are lazy: an
// op records a pending kernel, which is submitted when a result is realised (`data()`,
// `blockUntilReady()`); `data()` also disposes the array. A queue drain here is
// `blockUntilReady()` (submits the pending kernels and waits for a zero-byte read) followed by
// `queue.onSubmittedWorkDone()` on jax-js's GPUDevice.
import { init, defaultDevice, getWebGPUDevice, jit, blockUntilReady, numpy as np, nn, lax } from '@jax-js/jax';

let device = null;

/** Starts jax-js's WebGPU backend and makes it the default device; returns what it reports. */
export async function setup() {
  const devices = await init('webgpu');
  if (!devices.includes('webgpu')) throw new Error(`jax-js init('webgpu') returned [${devices}]`);
  defaultDevice('webgpu');
  device = getWebGPUDevice();
  const probe = await nn.relu(np.array(new Float32Array([-1, 0, 1, 2]))).data();
  if (String(probe) !== '0,0,1,2') throw new Error(`jax-js probe returned ${probe}`);
  const info = device?.adapterInfo;
  return {
    version: '0.1.25', device: defaultDevice(),
    adapterInfo: info ? { vendor: info.vendor, architecture: info.architecture, device: info.device, description: info.description } : null,
  };
}

/** Waits until `arrays` are computed and jax-js's device queue is empty (arrays are kept). */
export async function drain(arrays) {
  await blockUntilReady(arrays);
  await device.queue.onSubmittedWorkDone();
}

const chainFn = (x, c1, c2) => np.abs(np.negative(np.exp(np.sqrt(np.square(nn.relu(x.mul(c1).add(c2)))))));

/**
 * `read()` resolves to the output's data, `drain()` computes it and waits for the queue; the
 * `jit` variant fuses the chain. Both take the same device array `x` (passed as `x.ref`).
 */
function unaryWorkload(x, eagerFn, jitted) {
  const variant = (f) => ({
    read: () => f(x.ref).data(),
    async drain() { const y = f(x.ref); await drain(y); y.dispose(); },
  });
  return { eager: variant(eagerFn), jit: variant(jitted), dispose() { jitted.dispose(); x.dispose(); } };
}

/** The 8-op chain (mul → add → relu → square → sqrt → exp → neg → abs); constants are JS numbers. */
export function chain(xHost, c1 = 0.5, c2 = 0.1) {
  const f = (x) => chainFn(x, c1, c2);
  return unaryWorkload(np.array(xHost), f, jit(f));
}

/** The chain followed by a full `np.sum`: `read()` resolves to [sum]. */
export function chainSum(xHost, c1 = 0.5, c2 = 0.1) {
  const f = (x) => np.sum(chainFn(x, c1, c2));
  return unaryWorkload(np.array(xHost), f, jit(f));
}

/**
 * `run(k)`: k products A·B, then the last one's data. jax-js drops a pending kernel whose result
 * is disposed before it is realised, so the k results are kept and realised together
 * (`blockUntilReady`) — the device does all k products, as affon/TF.js do.
 */
export function matmul(aHost, bHost, n) {
  const A = np.array(aHost, { shape: [n, n] }); const B = np.array(bHost, { shape: [n, n] });
  const jm = jit((a, b) => np.matmul(a, b));
  const variant = (f) => ({
    async run(k) {
      const cs = [];
      for (let i = 0; i < k; i++) cs.push(f(A.ref, B.ref));
      if (k > 1) await blockUntilReady(cs);
      const last = cs.pop();
      cs.forEach((c) => c.dispose());
      return last.data();
    },
  });
  return { eager: variant((a, b) => np.matmul(a, b)), jit: variant(jm), dispose() { jm.dispose(); A.dispose(); B.dispose(); } };
}

/** MLP softmax(relu(x·w1 + b1)·w2 + b2): `read()` → the 64×10 output (eager, and `jit`). */
export function mlp(host, [batch, inDim, hid, outDim]) {
  const p = { x: np.array(host.x, { shape: [batch, inDim] }), w1: np.array(host.w1, { shape: [inDim, hid] }),
    b1: np.array(host.b1), w2: np.array(host.w2, { shape: [hid, outDim] }), b2: np.array(host.b2) };
  const f = (x, w1, b1, w2, b2) => nn.softmax(np.matmul(nn.relu(np.matmul(x, w1).add(b1)), w2).add(b2), -1);
  const jf = jit(f);
  const args = () => [p.x.ref, p.w1.ref, p.b1.ref, p.w2.ref, p.b2.ref];
  return {
    eager: { read: () => f(...args()).data() },
    jit: { read: () => jf(...args()).data() },
    dispose() { jf.dispose(); Object.values(p).forEach((a) => a.dispose()); },
  };
}

/**
 * m: the MobileNet-style block, NCHW (jax-js's convolution layout): `lax.convGeneralDilated` with
 * featureGroupCount = C (depthwise 3×3, 'SAME') → batch norm → clip(0, 6) → `lax.conv` 1×1 to
 * `cOut` channels → batch norm → clip(0, 6). Batch norm is (x − mean) / sqrt(var + eps) · scale +
 * offset on [1, C, 1, 1] arrays. Same NCHW host data as ORT; `read()` → the [1, cOut, H, W] output.
 */
export function mobileBlock(h, { c, cOut, height, width, eps }) {
  const bnArrays = (b, ch) => Object.fromEntries(['mean', 'variance', 'offset', 'scale'].map((k) => [k, np.array(b[k], { shape: [1, ch, 1, 1] })]));
  const p = { x: np.array(h.x, { shape: [1, c, height, width] }), dw: np.array(h.dw, { shape: [c, 1, 3, 3] }),
    pw: np.array(h.pw, { shape: [cOut, c, 1, 1] }) };
  const b1 = bnArrays(h.bn1, c), b2 = bnArrays(h.bn2, cOut);
  const bn = (x, mean, variance, offset, scale) => x.sub(mean).div(np.sqrt(variance.add(eps))).mul(scale).add(offset);
  const f = (x, dw, m1, v1, o1, s1, pw, m2, v2, o2, s2) => {
    const t = np.clip(bn(lax.convGeneralDilated(x, dw, [1, 1], 'SAME', { featureGroupCount: c }), m1, v1, o1, s1), 0, 6);
    return np.clip(bn(lax.conv(t, pw, [1, 1], 'SAME'), m2, v2, o2, s2), 0, 6);
  };
  const jf = jit(f);
  const args = () => [p.x.ref, p.dw.ref, b1.mean.ref, b1.variance.ref, b1.offset.ref, b1.scale.ref,
    p.pw.ref, b2.mean.ref, b2.variance.ref, b2.offset.ref, b2.scale.ref];
  return {
    eager: { read: () => f(...args()).data() },
    jit: { read: () => jf(...args()).data() },
    dispose() { jf.dispose(); [...Object.values(p), ...Object.values(b1), ...Object.values(b2)].forEach((a) => a.dispose()); },
  };
}

/** c3: an array from the host Float32Array (uploaded to the device), square, data(). */
export const fromHostSquare = (host) => np.square(np.array(host)).data();

/**
 * h: `count` × square of a [3] array. `plain`: the results are kept and realised together
 * (blockUntilReady, then queue drain), then disposed after the clock stops (`release()`).
 * `disposeEach`: each result disposed right away — jax-js then never dispatches it (lazy), so
 * this measures building and discarding the pending ops, not device work.
 */
export function tiny(host3) {
  const x = np.array(host3);
  let kept = [];
  return {
    async plain(count) {
      for (let i = 0; i < count; i++) kept.push(np.square(x.ref));
      await drain(kept);
    },
    release() { kept.forEach((a) => a.dispose()); kept = []; },
    async disposeEach(count) {
      for (let i = 0; i < count; i++) np.square(x.ref).dispose();
      await drain([]);
    },
    check: () => np.square(x.ref).data(),
    dispose() { this.release(); x.dispose(); },
  };
}
