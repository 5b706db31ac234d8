// The kernel studies of README "Performance": raw WebGPU in headless Chromium (SwiftShader here),
// no affon involved (but for `eager`, which times affon's package alone).
//   node scripts/bench-kernel-study.mjs reads [reps]     single-element operands and parameters
//                                                        (www/bench/kernel-study.html)
//   node scripts/bench-kernel-study.mjs matmul [M,K,N] [reps] [variant,…] [busy ms]
//                                                        subgroup-shared B loads in the CPU matmul; with busy,
//                                                        a worker keeps one core busy that long, then idle
//                                                        (www/bench/kernel-study-matmul.html)
//   node scripts/bench-kernel-study.mjs floor [reps] [gap] a tiny dispatch and a 16 KiB readback
//                                                        (www/bench/kernel-study-floor.html)
//   node scripts/bench-kernel-study.mjs depthwise [reps] the depthwise vec4 form's input reads
//                                                        (www/bench/kernel-study-depthwise.html)
//   node scripts/bench-kernel-study.mjs sum [reps]       a fused chain + sum's first pass
//                                                        (www/bench/kernel-study-sum.html)
//   node scripts/bench-kernel-study.mjs eager [reps]     affon's eager vs compiled chain + sum (needs
//                                                        scripts/build-pkg.sh; www/bench/kernel-study-eager.html)
//   node scripts/bench-kernel-study.mjs chain [reps]     forms of the compiled chain's kernel
//                                                        (www/bench/kernel-study-chain.html)
//   node scripts/bench-kernel-study.mjs ab [reps]        this tree's package against another commit's
//                                                        (scripts/build-pkg.sh, scripts/build-pkg-base.sh REV;
//                                                        www/bench/kernel-study-ab.html)
//   node scripts/bench-kernel-study.mjs mlp [reps]       affon's eager vs compiled MLP, whole and by stage
//                                                        (needs scripts/build-pkg.sh; kernel-study-mlp.html)
//   node scripts/bench-kernel-study.mjs products [reps] the MLP's products read back, beside the readback
//                                                        floor (needs scripts/build-pkg.sh; kernel-study-products.html)
//   node scripts/bench-kernel-study.mjs a9 [reps]        the compiled chain + sum taken apart: its passes in
//                                                        raw WGSL, affon, jax-js jit (needs scripts/build-pkg.sh;
//                                                        kernel-study-a9.html)
// Prints each variant's time (ms per dispatch) as JSON.
import { launch, open } from '../tests/browser/chromium.mjs';

const [which = 'reads', ...rest] = process.argv.slice(2);
const pages = {
  reads: () => `kernel-study.html?reps=${rest[0] ?? 15}`,
  matmul: () => `kernel-study-matmul.html?shape=${rest[0] ?? '64,784,256'}&reps=${rest[1] ?? 9}${rest[2] ? `&only=${rest[2]}` : ''}${rest[3] ? `&busy=${rest[3]}` : ''}`,
  floor: () => `kernel-study-floor.html?reps=${rest[0] ?? 40}&gap=${rest[1] ?? 0}`,
  depthwise: () => `kernel-study-depthwise.html?reps=${rest[0] ?? 9}`,
  sum: () => `kernel-study-sum.html?reps=${rest[0] ?? 15}`,
  eager: () => `kernel-study-eager.html?reps=${rest[0] ?? 25}`,
  chain: () => `kernel-study-chain.html?reps=${rest[0] ?? 15}`,
  ab: () => `kernel-study-ab.html?reps=${rest[0] ?? 25}`,
  mlp: () => `kernel-study-mlp.html?reps=${rest[0] ?? 25}`,
  products: () => `kernel-study-products.html?reps=${rest[0] ?? 25}`,
  a9: () => `kernel-study-a9.html?reps=${rest[0] ?? 25}&device=${rest[1] ?? 'plain'}`,
};
if (!pages[which]) throw new Error(`unknown study '${which}': ${Object.keys(pages).join(', ')}`);
const query = pages[which]();
const env = await launch();
try {
  const { page, errors } = await open(env, `/www/bench/${query}`);
  // an error in the page ends the wait at once (a page that threw never marks itself done)
  const deadline = Date.now() + 15 * 60_000;
  while (!(await page.$('body[data-done]')) && !errors.length) {
    if (Date.now() > deadline) throw new Error('the study page did not finish in 15 minutes');
    await new Promise((r) => setTimeout(r, 250));
  }
  if (errors.length) throw new Error(errors.map(String).join('; '));
  console.log(JSON.stringify(await page.evaluate(() => window.result), null, 2));
} finally {
  await env.close();
}
