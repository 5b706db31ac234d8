// Training workloads shared by the example pages and the demo: data drawn here with a fixed seed,
// and the compiled training steps (forward, p.grad backward, Adam — one Executable each).

/** A small seeded generator (the same LCG as the native examples). */
export function lcg(seed) {
  let s = BigInt(seed);
  return () => {
    s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return Number(s >> 11n) / 2 ** 53;
  };
}

/** `n` points per class of two interleaved spirals: {x: Float32Array [2n·2], y (one-hot), labels}. */
export function spirals(n, seed) {
  const next = lcg(seed);
  const x = [], y = [], labels = [];
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 2; k++) {
      const t = (i + next()) / n;
      const angle = t * 3 * Math.PI + k * Math.PI;
      const r = 0.1 + 0.9 * t;
      x.push(r * Math.cos(angle) + 0.02 * (next() - 0.5), r * Math.sin(angle) + 0.02 * (next() - 0.5));
      y.push(k === 0 ? 1 : 0, k === 1 ? 1 : 0);
      labels.push(k);
    }
  }
  return { x: new Float32Array(x), y: new Float32Array(y), labels };
}

/** The MLP (2-64-64-2, relu) training step with Adam; its parameters are states w0..w2, b0..b2. */
export function mlpStep(Program, sizes = [2, 64, 64, 2], learningRate = 0.01) {
  const p = new Program('spirals_step');
  const x = p.input('x', 'float32', [-1, sizes[0]]);
  const y = p.input('y', 'float32', [-1, sizes.at(-1)]);
  let h = x;
  const params = [];
  for (let l = 0; l < sizes.length - 1; l++) {
    const w = p.state(`w${l}`, 'float32', [sizes[l], sizes[l + 1]]);
    const b = p.state(`b${l}`, 'float32', [sizes[l + 1]]);
    h = p.add(p.matmul(h, w), b);
    if (l < sizes.length - 2) h = p.relu(h);
    params.push(w, b);
  }
  p.output('logits', h);
  const loss = p.neg(p.mean(p.sum(p.mul(y, p.logSoftmax(h)), [1])));
  p.adam(params, p.grad(loss, params), { learningRate });
  p.output('loss', loss);
  return p;
}

/** He-initialised weights for the MLP's createState (biases and Adam's slots start at zero). */
export function mlpInit(session, sizes = [2, 64, 64, 2]) {
  const init = {};
  for (let l = 0; l < sizes.length - 1; l++) {
    init[`w${l}`] = session.randomNormal([sizes[l], sizes[l + 1]], { mean: 0, stddev: Math.sqrt(2 / sizes[l]), seed: 7 + l });
  }
  return init;
}

const S = 28;

/** `n` 28×28 images cycling through three classes: hollow squares, discs, crosses. */
export function shapes(n, seed) {
  const next = lcg(seed);
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  const px = new Float32Array(n * S * S);
  const y = new Float32Array(n * 3);
  const labels = [];
  for (let k = 0; k < n; k++) {
    const cls = k % 3;
    const cx = int(9, 18), cy = int(9, 18), r = int(4, 8);
    for (let yy = 0; yy < S; yy++) {
      for (let xx = 0; xx < S; xx++) {
        const dx = xx - cx, dy = yy - cy, m = Math.max(Math.abs(dx), Math.abs(dy));
        const on = cls === 0 ? (m === r || m === r - 1)
          : cls === 1 ? dx * dx + dy * dy <= r * r
            : (Math.abs(dx) <= 1 && Math.abs(dy) <= r) || (Math.abs(dy) <= 1 && Math.abs(dx) <= r);
        px[k * S * S + yy * S + xx] = (on ? 0.8 : 0) + 0.2 * next();
      }
    }
    y[k * 3 + cls] = 1;
    labels.push(cls);
  }
  return { x: px, y, labels };
}

/** The convnet training step: conv 3×3×8 → relu → maxPool → conv 3×3×16 → relu → maxPool → dense. */
export function convnetStep(Program, learningRate = 0.005) {
  const p = new Program('convnet_step');
  const x = p.input('x', 'float32', [-1, S, S, 1]);
  const y = p.input('y', 'float32', [-1, 3]);
  const k1 = p.state('k1', 'float32', [3, 3, 1, 8]), c1 = p.state('c1', 'float32', [8]);
  const k2 = p.state('k2', 'float32', [3, 3, 8, 16]), c2 = p.state('c2', 'float32', [16]);
  const w = p.state('w', 'float32', [7 * 7 * 16, 3]), b = p.state('b', 'float32', [3]);
  let h = p.maxPool(p.relu(p.add(p.conv2d(x, k1, 1, 'same'), c1)), 2, 2, 'valid');
  h = p.maxPool(p.relu(p.add(p.conv2d(h, k2, 1, 'same'), c2)), 2, 2, 'valid');
  const logits = p.add(p.matmul(p.reshape(h, [-1, 7 * 7 * 16]), w), b);
  p.output('logits', logits);
  const loss = p.neg(p.mean(p.sum(p.mul(y, p.logSoftmax(logits)), [1])));
  const params = [k1, c1, k2, c2, w, b];
  p.adam(params, p.grad(loss, params), { learningRate });
  p.output('loss', loss);
  return p;
}

export function convnetInit(session) {
  const he = (shape, fanIn, seed) => session.randomNormal(shape, { mean: 0, stddev: Math.sqrt(2 / fanIn), seed });
  return { k1: he([3, 3, 1, 8], 9, 1), k2: he([3, 3, 8, 16], 72, 2), w: he([784, 3], 784, 3) };
}

/** The fraction of rows of `logits` whose argMax is the label. */
export async function accuracy(logits, labels) {
  const am = logits.argMax(-1);
  const predicted = await am.data();
  am.dispose();
  let hits = 0;
  labels.forEach((l, i) => { if (predicted[i] === l) hits++; });
  return hits / labels.length;
}

/** The figures a training loop checks it leaves flat once settled: wasm memory, the JS heap and
 *  the bind groups affon has cached (a settled step binds only ones it made before). */
export function loopFigures(telemetry) {
  const m = telemetry.metrics();
  const get = (scope, name) => m.find((r) => r.scope === scope && r.name === name && !r.labels)?.value ?? 0;
  return {
    wasm: get('runtime.memory', 'wasm_memory_bytes'),
    heap: get('runtime.memory', 'js_heap_used_bytes'),
    bindGroups: get('compute.execution', 'bind_group_cache_entries'),
  };
}

/** Prints how the figures moved from `settled` (taken after step `at`) to `end`. */
export function printSettled(print, at, settled, end, steps) {
  print(`bind groups cached by step ${at}: ${settled.bindGroups}, new after it: ${end.bindGroups - settled.bindGroups}`);
  print(`wasm memory after step ${at}: ${end.wasm - settled.wasm >= 0 ? '+' : ''}${end.wasm - settled.wasm} B`);
  print(`JS heap after step ${at}: ${((end.heap - settled.heap) / (steps - at) / 1024).toFixed(2)} KiB a step`);
}
