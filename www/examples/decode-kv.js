// Transformer decoding with its KV cache in an ExecutionState (examples/decode_kv.rs in the
// browser): the compiled step with a cache against an eager path without one (the same tokens and
// the same prediction at every prompt position), then the transformers.js #1734 leak — a new cache
// per generate call, never disposed — and the fix, one cache reused, both judged by telemetry.watch.
import init, { Session, Program, telemetry } from '../../pkg/affon.js';
import { example, print } from './page.js';
import { weights, stepProgram, generate, generateEager, PROMPT } from './decoder.js';

example(async () => {
  await init();
  const session = await Session.create({ label: 'decode-kv' });
  const w = weights(42);
  const exe = session.compile(stepProgram(Program, w));
  const cache = exe.createState({});
  print('KV cache:', cache.byteLength, 'bytes (2 layers × K and V × 64 positions × 32 floats)');
  const compiled = await generate(session, exe, cache, PROMPT, 12);
  const eager = await generateEager(session, w, PROMPT, 12);
  print('compiled, KV cache:', compiled.tokens.join(' '));
  print('eager, no cache:   ', eager.tokens.join(' '));
  const same = compiled.tokens.join() === eager.tokens.join()
    && compiled.predicted.slice(0, PROMPT.length).join() === eager.overPrompt.join();
  print('same tokens and prompt predictions:', same);

  // the leak: a new cache per generate call, never disposed
  const abandoned = [];
  const leaky = await telemetry.watch(async () => {
    const c = exe.createState({});
    await generate(session, exe, c, PROMPT.slice(0, 4), 4);
    abandoned.push(c);
  }, { warmup: 1, iterations: 5, session });
  print('a new cache per generate call →', leaky.verdict, '—', leaky.summary);
  abandoned.forEach((c) => c.dispose());
  // the fix: one cache, reused; the same bytes after every generation
  const after = [];
  const fixed = await telemetry.watch(async () => {
    await generate(session, exe, cache, PROMPT.slice(0, 4), 4);
    after.push(session.memory().numBytes);
  }, { warmup: 1, iterations: 5, session });
  print('one cache reused →', fixed.verdict, '—', fixed.summary);
  print('bytes after each generation:', after.join(', '));
  const cacheBytes = cache.byteLength;
  cache.dispose(); exe.dispose();
  const bytesAtEnd = session.memory().numBytes;
  session.dispose();
  return {
    same, tokens: compiled.tokens, cacheBytes, bytesAtEnd, after,
    leaky: { verdict: leaky.verdict, grown: leaky.grownOrigins },
    fixed: { verdict: fixed.verdict, summary: fixed.summary },
  };
});
