// A MobileNet-style convnet over a stream of frames — the model of examples/convnet_frames.rs,
// shared by the convnet-frames page and the demo: a 3×3 stride-2 convolution, two depthwise
// separable blocks (depthwise 3×3 + batchNorm + relu6, pointwise 1×1 + batchNorm + relu6),
// global average pooling, dense + softmax; weights from a fixed seed; 64×64 RGB frames drawn on an
// OffscreenCanvas (a disc moving across a gradient).

export const SIZE = 64;
const CLASSES = 10;

function layout() {
  const v = [['stem', [3, 3, 3, 16]]];
  const bn = (name, c) => { for (const s of ['mean', 'var', 'offset', 'scale']) v.push([`${name}_${s}`, [c]]); };
  bn('bn0', 16);
  [[16, 32], [32, 64]].forEach(([cin, cout], b) => {
    v.push([`dw${b}`, [3, 3, cin, 1]]); bn(`bn${b}a`, cin);
    v.push([`pw${b}`, [1, 1, cin, cout]]); bn(`bn${b}b`, cout);
  });
  v.push(['dense', [64, CLASSES]]);
  return v;
}

/** `{name: {shape, data}}` from the same generator, in the same order, as the native example. */
export function weights(seed) {
  let s = BigInt(seed);
  const next = () => {
    s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return Number(s >> 33n) / 2 ** 31;
  };
  const out = {};
  for (const [name, shape] of layout()) {
    const n = shape.reduce((a, b) => a * b, 1);
    const fanIn = Math.max(1, shape.slice(0, -1).reduce((a, b) => a * b, 1));
    const kind = name.split('_').at(-1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const r = next();
      data[i] = kind === 'var' || kind === 'scale' ? 0.5 + r
        : kind === 'mean' || kind === 'offset' ? (r - 0.5) * 0.2
        : (r - 0.5) * 2 * Math.sqrt(3 / fanIn);
    }
    out[name] = { shape, data };
  }
  return out;
}

/** The network: input `frame` [1, 64, 64, 3], output `probs` [1, 10]. */
export function program(Program, w) {
  const p = new Program('mobilenet');
  const x = p.input('frame', 'float32', [1, SIZE, SIZE, 3]);
  const c = Object.fromEntries(Object.entries(w).map(([k, v]) => [k, p.constant(v.data, v.shape)]));
  const bnRelu6 = (v, bn) => p.clipByValue(p.batchNorm(v, c[`${bn}_mean`], c[`${bn}_var`], c[`${bn}_offset`], c[`${bn}_scale`], 1e-3), 0, 6);
  let h = bnRelu6(p.conv2d(x, c.stem, 2, 'same'), 'bn0');
  [2, 1].forEach((stride, b) => {
    const d = bnRelu6(p.depthwiseConv2d(h, c[`dw${b}`], stride, 'same'), `bn${b}a`);
    h = bnRelu6(p.conv2d(d, c[`pw${b}`], 1, 'same'), `bn${b}b`);
  });
  p.output('probs', p.softmax(p.matmul(p.mean(h, [1, 2]), c.dense)));
  return p;
}

/** Draws frame `i` on `canvas` (an OffscreenCanvas of 64×64) and returns its RGB in [0, 1], in
 *  `rgb` when given (a frame loop reuses one buffer: no 48 KiB of garbage per frame). */
export function frame(canvas, i, rgb = new Float32Array(SIZE * SIZE * 3)) {
  const g = canvas.getContext('2d', { willReadFrequently: true });
  const grad = g.createLinearGradient(0, 0, SIZE, SIZE);
  grad.addColorStop(0, `hsl(${(i * 7) % 360}, 70%, 40%)`);
  grad.addColorStop(1, `hsl(${(i * 7 + 180) % 360}, 70%, 60%)`);
  g.fillStyle = grad;
  g.fillRect(0, 0, SIZE, SIZE);
  g.fillStyle = '#f33';
  g.beginPath();
  g.arc(8 + ((i * 3) % 48), 20 + (i % 24), 10, 0, 2 * Math.PI);
  g.fill();
  const rgba = g.getImageData(0, 0, SIZE, SIZE).data;
  for (let p = 0; p < SIZE * SIZE; p++) for (let k = 0; k < 3; k++) rgb[p * 3 + k] = rgba[p * 4 + k] / 255;
  return rgb;
}
