// Programs: build a graph once, compile it, run it many times. State (here a running sum) lives in
// an ExecutionState that each run updates in place; outputs are new tensors you dispose.
import init, { Session, Program, telemetry } from '../../pkg/affon.js';
import { example, print } from './page.js';

// A process-wide counter from telemetry, matched by scope and name.
const counter = (scope, name) =>
  telemetry.metrics().find((m) => m.scope === scope && m.name === name && !m.labels).value;

example(async () => {
  await init();
  const session = await Session.create({ label: 'program' });

  // The graph: acc ← acc + (column sums of x); output y = relu(acc).
  const p = new Program('running_sum');
  const x = p.input('x', 'float32', [-1, 4]); // -1: any number of rows, fixed at run time
  const acc = p.state('acc', 'float32', [4]); // lives in an ExecutionState, not in the program
  const next = p.add(acc, p.sum(x, [0]));
  p.assign('acc', next); // after each run, acc takes this value
  p.output('y', p.relu(next));

  // The JSON form round-trips exactly: save it, send it, load it with Program.fromJSON.
  const json = JSON.stringify(p);
  print('program JSON:', json);

  const compilesBefore = counter('compute.execution', 'compiles');
  const exe = session.compile(Program.fromJSON(json));
  const state = exe.createState(); // zero-filled
  const input = session.tensor(new Float32Array(12).fill(1), [3, 4]); // 3 rows of ones

  // What one run holds: intermediates, outputs, the state (bytes; computed, nothing runs).
  const plan = exe.memoryPlan({ x: [3, 4] });
  print('memory plan for x: [3, 4]:', plan);

  const bytesBefore = session.memory().numBytes; // input (48) + state (16)
  const runs = 100;
  for (let i = 0; i < runs; i++) {
    const { y } = exe.run({ x: input }, state); // outputs are tensors owned by the session...
    y.dispose(); // ...so dispose each one, or memory grows by 16 bytes per run
  }
  const bytesAfter = session.memory().numBytes;
  // One input shape → one specialisation compiled (by memoryPlan or the first run), reused 100 times.
  const compiles = counter('compute.execution', 'compiles') - compilesBefore;

  // state.get() returns a copy: read it, then dispose the copy.
  const accCopy = state.get('acc');
  const accValues = Array.from(await accCopy.to_array());
  accCopy.dispose();
  print(`acc after ${runs} runs:`, accValues);
  print('live bytes before/after the loop:', bytesBefore, bytesAfter, `(${compiles} compile)`);

  const stateBytes = state.byteLength;
  input.dispose();
  state.dispose();
  exe.dispose();
  const bytesAtEnd = session.memory().numBytes;
  session.dispose();
  return { runs, acc: accValues, plan, bytesBefore, bytesAfter, bytesAtEnd, compiles, stateBytes, json: JSON.parse(json) };
});
