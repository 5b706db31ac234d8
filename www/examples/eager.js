// Eager ops: create tensors, run ops on the GPU, read the values back, dispose.
import init, { Session } from '../../pkg/affon.js';
import { example, print } from './page.js';

example(async () => {
  // Load the WebAssembly module (once per page).
  await init();

  // A Session owns a WebGPU device, a buffer pool and every tensor made on it.
  const session = await Session.create({ label: 'eager' });
  print('adapter:', session.adapter);

  // A tensor is data + shape (+ dtype, float32 by default). `shape` is a plain number[].
  const a = session.tensor([1, 2, 3, 4, 5, 6], [2, 3]);
  const b = session.tensor([10, 20, 30], [3]);

  // Each op runs immediately and returns a new tensor. Binary ops broadcast like NumPy:
  // b (shape [3]) is added to each row of a (shape [2, 3]).
  const sum = a.add(b);
  const rowTotals = a.sum(1); // reduce axis 1: one total per row
  const aT = a.transpose(); // [3, 2]
  const gram = a.matmul(aT); // [2, 3] × [3, 2] → [2, 2]
  const logits = session.zeros([4]);
  const probs = logits.softmax(); // equal logits: 0.25 each

  // Other dtypes: 'int32', 'uint32', 'bool'. Integer division truncates toward zero;
  // casting float → int truncates as well.
  const sevens = session.tensor([7, -7], [2], 'int32');
  const twos = session.fill([2], 2, 'int32');
  const quotient = sevens.div(twos);
  const fractions = session.tensor([1.9, -1.9], [2]);
  const truncated = fractions.cast('int32');

  // Reading back waits for the GPU: to_array() resolves to a TypedArray matching the dtype,
  // item() to the single number of a one-element tensor.
  const result = {
    sum: Array.from(await sum.to_array()),
    sumShape: sum.shape,
    rowTotals: Array.from(await rowTotals.to_array()),
    gram: Array.from(await gram.to_array()),
    gramShape: gram.shape,
    probs: Array.from(await probs.to_array()),
    quotient: Array.from(await quotient.to_array()),
    quotientType: (await quotient.to_array()).constructor.name,
    truncated: Array.from(await truncated.to_array()),
  };
  // `using` disposes at the end of the block (the handle stays readable: disposed === true).
  {
    using mean = a.mean(); // all axes: a scalar, shape []
    result.mean = await mean.item();
  }
  for (const [name, value] of Object.entries(result)) print(`${name}:`, value);

  // Every tensor holds GPU memory until dispose(), inputs and intermediates alike (a chain like
  // a.matmul(a.transpose()) would leave the transpose behind: see tidy.html for the easy way).
  result.bytesBeforeDispose = session.memory().numBytes;
  const all = [a, b, sum, rowTotals, aT, gram, logits, probs, sevens, twos, quotient, fractions, truncated];
  for (const t of all) t.dispose();
  result.bytesAfterDispose = session.memory().numBytes;
  print('bytes held by live tensors:', result.bytesBeforeDispose, '→', result.bytesAfterDispose, 'after dispose()');

  session.dispose();
  return result;
});
