// Transformer decoding with a KV cache in an ExecutionState — the model of examples/decode_kv.rs,
// shared by the decode-kv page and the demo. A decoder-only model (vocabulary 48, width 32, two
// heads, two layers; weights from a fixed seed): embedding via gather, layerNorm, causal attention
// masked with where, a gelu MLP, greedy argMax. One compiled step per token writes that position's
// keys and values into per-layer caches of fixed capacity (in place: where(row == pos, new, cache)).

export const VOCAB = 48, D = 32, HEADS = 2, DH = D / HEADS, LAYERS = 2, HIDDEN = 64, CAPACITY = 64;

/** The weights, from the same generator and in the same order as the native example. */
export function weights(seed) {
  let s = BigInt(seed);
  const draw = (n, scale) => {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
      out[i] = (Number(s >> 33n) / 2 ** 31 - 0.5) * 2 * scale;
    }
    return out;
  };
  const emb = draw(VOCAB * D, 1);
  const unemb = draw(D * VOCAB, 3);
  const sc = 2 / Math.sqrt(D);
  const layers = [];
  for (let l = 0; l < LAYERS; l++) {
    layers.push([draw(D * D, sc), draw(D * D, sc), draw(D * D, sc), draw(D * D, sc), draw(D * HIDDEN, sc), draw(HIDDEN * D, 1 / Math.sqrt(HIDDEN))]);
  }
  return { emb, unemb, layers };
}

/** One decoding step: inputs token (int32 [1]) and pos (int32 []); states k0, v0, k1, v1 ([64, 32]). */
export function stepProgram(Program, w) {
  const p = new Program('decode');
  const token = p.input('token', 'int32', [1]);
  const pos = p.cast(p.input('pos', 'int32', []), 'float32');
  const emb = p.constant(w.emb, [VOCAB, D]);
  const ones = p.constant(new Float32Array(D).fill(1), [D]);
  const zeros = p.constant(new Float32Array(D), [D]);
  const iota = p.constant(Float32Array.from({ length: CAPACITY }, (_, i) => i), [CAPACITY]);
  const here = p.reshape(p.equal(iota, pos), [CAPACITY, 1]); // the row this step writes
  const mask = p.where(p.constant(0, []), p.lessEqual(iota, pos), -1e9); // 0 where seen, −1e9 after
  const heads = (t, n) => p.transpose(p.reshape(t, [n, HEADS, DH]), [1, 0, 2]); // [H, n, DH]
  let x = p.gather(emb, token); // [1, D]
  w.layers.forEach((lw, l) => {
    const [wq, wk, wv, wo] = [0, 1, 2, 3].map((i) => p.constant(lw[i], [D, D]));
    const w1 = p.constant(lw[4], [D, HIDDEN]), w2 = p.constant(lw[5], [HIDDEN, D]);
    const h = p.layerNorm(x, ones, zeros);
    const caches = [[`k${l}`, p.matmul(h, wk)], [`v${l}`, p.matmul(h, wv)]].map(([name, fresh]) => {
      const updated = p.where(fresh, here, p.state(name, 'float32', [CAPACITY, D]));
      p.assign(name, updated);
      return updated;
    });
    const scores = p.add(p.mul(p.matmul(heads(p.matmul(h, wq), 1), heads(caches[0], CAPACITY), false, true), p.constant(1 / Math.sqrt(DH), [])), mask);
    const o = p.reshape(p.transpose(p.matmul(p.softmax(scores), heads(caches[1], CAPACITY)), [1, 0, 2]), [1, D]);
    x = p.add(x, p.matmul(o, wo));
    x = p.add(x, p.matmul(p.gelu(p.matmul(p.layerNorm(x, ones, zeros), w1)), w2));
  });
  p.output('next', p.argMax(p.matmul(p.layerNorm(x, ones, zeros), p.constant(w.unemb, [D, VOCAB]))));
  return p;
}

/** Greedy decoding with the compiled step and a cache: the tokens, and the prediction at every position. */
export async function generate(session, exe, cache, prompt, steps) {
  const tokens = [...prompt];
  const predicted = [];
  for (let pos = 0; pos < prompt.length + steps - 1; pos++) {
    if (pos >= prompt.length) tokens.push(predicted[pos - 1]);
    const t = session.tensor([tokens[pos]], [1], 'int32');
    const at = session.tensor([pos], [], 'int32');
    const out = exe.run({ token: t, pos: at }, cache);
    predicted.push(Number(await out.next.item()));
    out.next.dispose(); t.dispose(); at.dispose();
  }
  tokens.push(predicted.at(-1));
  return { tokens, predicted };
}

/** The same model eagerly with no cache (attention over the whole prefix each step), in tidy scopes. */
export async function generateEager(session, w, prompt, steps) {
  const emb = session.tensor(w.emb, [VOCAB, D]);
  const unemb = session.tensor(w.unemb, [D, VOCAB]);
  const ones = session.ones([D]), zeros = session.zeros([D]);
  const lws = w.layers.map((lw) => lw.map((a, i) => session.tensor(a, i === 4 ? [D, HIDDEN] : i === 5 ? [HIDDEN, D] : [D, D])));
  const tokens = [...prompt];
  let overPrompt = [];
  while (tokens.length < prompt.length + steps) {
    const n = tokens.length;
    const next = session.tidy(() => {
      const causal = new Float32Array(n * n).map((_, i) => (i % n <= Math.floor(i / n) ? 0 : -1e9));
      const mask = session.tensor(causal, [n, n]);
      const heads = (t) => t.reshape([n, HEADS, DH]).transpose([1, 0, 2]);
      let x = emb.gather(session.tensor(tokens, [n], 'int32'));
      for (const [wq, wk, wv, wo, w1, w2] of lws) {
        const h = x.layerNorm(ones, zeros);
        const scores = heads(h.matmul(wq)).matmul(heads(h.matmul(wk)), false, true).mul(1 / Math.sqrt(DH)).add(mask);
        const o = scores.softmax().matmul(heads(h.matmul(wv))).transpose([1, 0, 2]).reshape([n, D]);
        x = x.add(o.matmul(wo));
        x = x.add(x.layerNorm(ones, zeros).matmul(w1).gelu().matmul(w2));
      }
      return x.layerNorm(ones, zeros).matmul(unemb).argMax();
    });
    const all = Array.from(await next.toArray());
    next.dispose();
    if (n === prompt.length) overPrompt = all;
    tokens.push(all[n - 1]);
  }
  for (const t of [emb, unemb, ones, zeros, ...lws.flat()]) t.dispose();
  return { tokens, overPrompt };
}

export const PROMPT = [3, 14, 15, 9, 26, 5, 35, 8, 47, 40, 2, 11, 7, 19, 33, 28, 21, 44, 1, 30];
