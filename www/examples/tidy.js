// tidy() and keep(): scopes that dispose intermediates for you, checked with Session.memory()
// (TensorFlow.js's tf.memory() for one session).
import init, { Session } from '../../pkg/affon.js';
import { example, print } from './page.js';

example(async () => {
  await init();
  const session = await Session.create({ label: 'tidy' });
  const mem = () => {
    const { numTensors, numBytes } = session.memory();
    return { numTensors, numBytes };
  };

  // Seeded random tensors: the same seed gives the same values everywhere.
  const x = session.randomNormal([64, 784], { seed: 1 }); // 64 × 784 × 4 = 200,704 bytes
  const w = session.randomUniform([784, 10], { min: -0.1, max: 0.1, seed: 2 }); // 31,360 bytes
  const start = mem();
  print('inputs:', start);

  // Without tidy, every intermediate of a chain stays alive: matmul, relu and softmax make three
  // [64, 10] tensors (2,560 bytes each) and only the last is the one we wanted.
  const untidy = x.matmul(w).relu().softmax();
  const withoutTidy = mem();
  print('chain without tidy:', withoutTidy, '(two leaked intermediates)');
  untidy.dispose(); // disposing the result does not free the intermediates...
  const leftover = mem();
  print('after disposing the result:', leftover, '(still leaked)');

  // tidy(fn) disposes every tensor created inside fn except what fn returns.
  // (The two intermediates above have no handle left to dispose: they stay until the page goes.)
  const probs = session.tidy(() => x.matmul(w).relu().softmax());
  const afterTidy = mem();
  print('chain inside tidy:', afterTidy, '(only the result, +2,560 bytes)');

  // keep(t) exempts a tensor from the enclosing tidy even though it is not returned.
  let hidden;
  const total = session.tidy('with keep', () => {
    const h = x.matmul(w);
    hidden = session.keep(h.relu()); // survives
    return h.sum(); // survives: returned (a scalar, 4 bytes)
  }); // h is disposed here
  const afterKeep = mem();
  print('tidy with keep:', afterKeep, '(+ kept relu 2,560 bytes + scalar 4 bytes)');

  // Returned arrays and objects of tensors survive too; everything else in the scope is disposed.
  const { mean, max } = session.tidy(() => ({ mean: probs.mean(), max: probs.max() }));
  const afterObject = mem();
  print('tidy returning an object:', afterObject);

  const rowSums = probs.sum(1); // softmax rows sum to 1
  const rowsSumToOne = Array.from(await rowSums.to_array()).every((v) => Math.abs(v - 1) < 1e-5);
  for (const t of [rowSums, probs, total, hidden, mean, max, x, w]) t.dispose();
  const end = mem();
  print('after disposing everything we hold:', end, '(the two intermediates leaked by the untidy chain)');
  // peakBytes: the most this session held at once (the untidy chain's three [64, 10] tensors included).
  const { peakBytes } = session.memory();
  session.dispose();
  return {
    start, withoutTidy, leftover, afterTidy, afterKeep, afterObject, end, rowsSumToOne,
    peakBytes,
  };
});
