// What the kernel-study pages share (raw WebGPU, no affon): compiling each variant's WGSL into a
// pipeline and bind group, timing the variants in alternating rounds, and reporting medians.

/**
 * `variants`: { name: wgsl }; `entries(name, code)`: the bind group entries of that variant.
 * Throws on a compilation error, naming the variant.
 */
export async function pipelines(device, variants, entries) {
  const out = {};
  for (const [name, code] of Object.entries(variants)) {
    const module = device.createShaderModule({ code });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === 'error');
    if (errors.length) throw new Error(`${name}: ${errors.map((m) => m.message).join('\n')}`);
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    out[name] = { pipeline, bg: device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: entries(name, code) }) };
  }
  return out;
}

/**
 * `reps` rounds, each timing `run(name)` (async, ms per call = elapsed / `per`) for every name in turn;
 * a `run` that returns a number has timed itself (ms, e.g. to leave an untimed wait out).
 */
export async function alternate(names, reps, per, run) {
  const samples = Object.fromEntries(names.map((k) => [k, []]));
  for (let r = 0; r < reps; r++) {
    for (const k of names) {
      const t0 = performance.now();
      const own = await run(k);
      samples[k].push((typeof own === 'number' ? own : performance.now() - t0) / per);
    }
  }
  return samples;
}

export const median = (xs) => { const s = [...xs].sort((p, q) => p - q); return s[s.length >> 1]; };

/** Shows `result` in the page, exposes it as `window.result`, and marks the page done. */
export function report(result) {
  window.result = result;
  document.getElementById('out').textContent = JSON.stringify(result, null, 2);
  document.body.dataset.done = '1';
}
