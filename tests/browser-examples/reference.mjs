// Float64 references, in plain JS run by Node, for the example models of www/examples/: the decoder of
// decoder.js (decode-kv page, KV-cache tutorial) and the MobileNet-style convnet of frames.js
// (convnet-frames page). Nothing here calls affon: the weights come from the pages' own seeded
// generators (plain JS, imported as they are), and every op — layerNorm, exact gelu, causal attention,
// conv2d / depthwiseConv2d with TF.js 'same' padding, batchNorm, clip, mean, dense, softmax — is
// written out below in float64, so a wrong kernel in the library cannot also be wrong here.
import { VOCAB, D, HEADS, DH, LAYERS, HIDDEN, weights as decoderWeights } from '../../www/examples/decoder.js';
import { SIZE, weights as convnetWeights } from '../../www/examples/frames.js';

/** erf(x) to about 1e-15 relative: the series erf(x) = 2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (2n+1)!!, whose
 *  terms are all positive (no cancellation, unlike the alternating Taylor series; not a fitted
 *  approximation like Abramowitz–Stegun 7.1.26, good only to 1.5e-7). Past |x| = 6, 1 − erf < 3e-17. */
export function erf(x) {
  if (Number.isNaN(x)) return NaN;
  const a = Math.abs(x);
  if (a >= 6) return Math.sign(x);
  let term = a, sum = a;
  for (let n = 1; term > sum * 1e-17; n++) {
    term *= (2 * a * a) / (2 * n + 1);
    sum += term;
  }
  return Math.sign(x) * Math.min(1, (2 / Math.sqrt(Math.PI)) * Math.exp(-a * a) * sum);
}

/** The exact gelu, x · Φ(x) = x/2 · (1 + erf(x/√2)). */
export const gelu = (x) => 0.5 * x * (1 + erf(x / Math.SQRT2));

/** layerNorm over a vector with γ = 1, β = 0 and the biased variance (the library's default ε 1e-5). */
export function layerNorm(x, eps = 1e-5) {
  const n = x.length;
  const mean = x.reduce((a, b) => a + b, 0) / n;
  const v = x.reduce((a, b) => a + (b - mean) ** 2, 0) / n;
  const inv = 1 / Math.sqrt(v + eps);
  return x.map((t) => (t - mean) * inv);
}

/** `x` (a vector of length n) times the row-major matrix `w` [n, m]. */
export function vecMat(x, w, n, m) {
  const out = new Array(m).fill(0);
  for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) out[j] += x[i] * w[i * m + j];
  return out;
}

export function softmax(x) {
  const max = Math.max(...x);
  const e = x.map((t) => Math.exp(t - max));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((t) => t / s);
}

/** The decoder of decoder.js (weights(seed)) in float64 over `tokens`: the logits [VOCAB] at every
 *  position, each from that position's query against the keys and values of positions 0…pos — what
 *  the compiled step computes from its KV cache (rows past `pos` masked with −1e9, whose exp is 0 in
 *  float32, so stale rows of a reused cache add nothing) and the eager path from the whole prefix. */
export function decoderLogits(tokens, seed = 42) {
  const w = decoderWeights(seed);
  const keys = Array.from({ length: LAYERS }, () => []), values = Array.from({ length: LAYERS }, () => []);
  const all = [];
  for (let pos = 0; pos < tokens.length; pos++) {
    let x = Array.from(w.emb.subarray(tokens[pos] * D, (tokens[pos] + 1) * D));
    w.layers.forEach(([wq, wk, wv, wo, w1, w2], l) => {
      const h = layerNorm(x);
      const q = vecMat(h, wq, D, D);
      keys[l].push(vecMat(h, wk, D, D));
      values[l].push(vecMat(h, wv, D, D));
      const o = new Array(D).fill(0);
      for (let hd = 0; hd < HEADS; hd++) { // head hd: dims hd·DH … hd·DH + DH − 1 (reshape [n, HEADS, DH])
        const scores = keys[l].map((k) => {
          let s = 0;
          for (let j = 0; j < DH; j++) s += q[hd * DH + j] * k[hd * DH + j];
          return s / Math.sqrt(DH);
        });
        const p = softmax(scores);
        p.forEach((pi, s) => { for (let j = 0; j < DH; j++) o[hd * DH + j] += pi * values[l][s][hd * DH + j]; });
      }
      const attn = vecMat(o, wo, D, D);
      x = x.map((t, j) => t + attn[j]);
      const mlp = vecMat(vecMat(layerNorm(x), w1, D, HIDDEN).map(gelu), w2, HIDDEN, D);
      x = x.map((t, j) => t + mlp[j]);
    });
    all.push(vecMat(layerNorm(x), w.unemb, D, VOCAB));
  }
  return all;
}

/** The largest and second-largest entries of `v` and the index of the largest. */
export function top2(v) {
  let best = 0;
  v.forEach((t, i) => { if (t > v[best]) best = i; });
  const second = Math.max(...v.filter((_, i) => i !== best));
  return { index: best, margin: v[best] - second, scale: Math.max(...v.map(Math.abs)) };
}

/** How close two logits may be before float32 may order them differently from float64, relative to
 *  the position's logit scale (its largest |logit|, about 20-30 here): 1e-3 of it, about 0.02-0.03,
 *  some 100× the float32 logits' worst error seen against this reference (1.3e-5 absolute, 7e-7 of
 *  the scale, SwiftShader). Positions whose top two differ by more must pick the same token. */
export const MARGIN = 1e-3;

/** Greedy decoding checked against the float64 decoder, teacher-forced on `tokens` (the prompt, its
 *  first `promptLength`, then what was generated): at every generated position the token must be the
 *  reference's argMax where its top-2 margin exceeds MARGIN · scale, and otherwise within that of
 *  the maximum (a near-tie float32 may break either way; the next step then goes on from the token
 *  actually chosen). Returns the disagreements (empty when none) and how many positions were ties. */
export function greedyMismatches(tokens, promptLength, seed = 42) {
  const logits = decoderLogits(tokens.slice(0, -1), seed);
  const mismatches = [];
  let ties = 0;
  for (let pos = promptLength - 1; pos < tokens.length - 1; pos++) {
    const l = logits[pos], t = top2(l), tol = MARGIN * t.scale, got = tokens[pos + 1];
    if (t.margin <= tol) ties++;
    const ok = t.margin > tol ? got === t.index : l[got] >= l[t.index] - tol;
    if (!ok) mismatches.push({ position: pos + 1, got, reference: t.index, margin: t.margin, logitOfGot: l[got], max: l[t.index] });
  }
  return { mismatches, ties };
}

// ---- the convnet of frames.js -------------------------------------------------------------------

/** TF.js 'same': output ⌈in / stride⌉, the padding split with the extra cell after. */
function same(input, filter, stride) {
  const out = Math.ceil(input / stride);
  const total = Math.max((out - 1) * stride + filter - input, 0);
  return { out, before: Math.floor(total / 2) };
}

/** NHWC conv2d of one image `x` [h, w, cin] (flat) with filter [fh, fw, cin, cout], or depthwise
 *  (filter [fh, fw, cin, 1], output channel c from input channel c), 'same' padding. */
function conv(x, h, wd, cin, filter, [fh, fw, , cout], stride, depthwise) {
  const oh = same(h, fh, stride), ow = same(wd, fw, stride);
  const co = depthwise ? cin : cout;
  const y = new Float64Array(oh.out * ow.out * co);
  for (let i = 0; i < oh.out; i++) {
    for (let j = 0; j < ow.out; j++) {
      for (let u = 0; u < fh; u++) {
        const r = i * stride + u - oh.before;
        if (r < 0 || r >= h) continue;
        for (let v = 0; v < fw; v++) {
          const c = j * stride + v - ow.before;
          if (c < 0 || c >= wd) continue;
          const px = (r * wd + c) * cin, base = (i * ow.out + j) * co;
          for (let k = 0; k < cin; k++) {
            if (depthwise) y[base + k] += x[px + k] * filter[(u * fw + v) * cin + k];
            else for (let o = 0; o < cout; o++) y[base + o] += x[px + k] * filter[((u * fw + v) * cin + k) * cout + o];
          }
        }
      }
    }
  }
  return { y, h: oh.out, w: ow.out, c: co };
}

/** The convnet of frames.js (weights(seed)) in float64 on one frame's RGB [SIZE, SIZE, 3] in [0, 1]:
 *  its class probabilities [10]. batchNorm (x − μ)/√(σ² + 1e-3) · scale + offset, then clip to [0, 6]. */
export function convnetProbs(rgb, seed = 7) {
  const w = convnetWeights(seed);
  const bnRelu6 = (t, bn) => {
    const m = w[`${bn}_mean`].data, v = w[`${bn}_var`].data, o = w[`${bn}_offset`].data, s = w[`${bn}_scale`].data;
    t.y = t.y.map((val, i) => {
      const k = i % t.c;
      return Math.min(Math.max((val - m[k]) / Math.sqrt(v[k] + 1e-3) * s[k] + o[k], 0), 6);
    });
    return t;
  };
  const layer = (t, name, stride, depthwise) => conv(t.y, t.h, t.w, t.c, w[name].data, w[name].shape, stride, depthwise);
  let t = bnRelu6(layer({ y: Float64Array.from(rgb), h: SIZE, w: SIZE, c: 3 }, 'stem', 2, false), 'bn0');
  [2, 1].forEach((stride, b) => {
    t = bnRelu6(layer(t, `dw${b}`, stride, true), `bn${b}a`);
    t = bnRelu6(layer(t, `pw${b}`, 1, false), `bn${b}b`);
  });
  const pooled = new Array(t.c).fill(0);
  t.y.forEach((val, i) => { pooled[i % t.c] += val / (t.h * t.w); });
  const [, classes] = w.dense.shape;
  return softmax(vecMat(pooled, w.dense.data, t.c, classes));
}
