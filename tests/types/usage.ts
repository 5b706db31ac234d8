// The public TypeScript surface of affon, as a user writes it. Type-checked only, never run:
// scripts/test-package.sh runs `tsc --noEmit --strict -p tests/types` with `affon` installed from the
// packed tarball (so `affon` and `affon/std-telemetry` resolve through the package's `exports`).
//
// Every call here is one the README documents. `Is<typeof x, T>` pins a type exactly;
// `// @ts-expect-error` lines are usages the declarations must reject.
import init, {
  Executable,
  ExecutionState,
  Program,
  ProgramNode,
  Session,
  Tensor,
  telemetry,
  type AffonError,
  type AffonErrorCode,
  type AnyTypedArray,
  type Diagnosis,
  type Padding,
  type Pair,
  type DistributionRecord,
  type DType,
  type MemoryInfo,
  type MemoryPlan,
  type MemoryReport,
  type MetricRecord,
  type NestedArray,
  type OwnerGroup,
  type ProfileInfo,
  type ProgramJSON,
  type RunOutputs,
  type SessionOptions,
  type Verdict,
} from 'affon';
import stdTelemetry from 'affon/std-telemetry';

/** `Is<A, B>` is `true` only when A and B are the same type. */
type Is<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
/** Compiles only when its argument is `true`. */
function check<T extends true>(): T | void {}

// --- init and Session.create ------------------------------------------------------------------

await init();
await init({ module_or_path: new URL('./affon_bg.wasm', import.meta.url) });

const options: SessionOptions = {
  pool: { maxTotalBytes: 512 << 20, oversizeThresholdBytes: 64 << 20, sizeClasses: 8 },
  label: 'types',
  captureStacks: true,
  releaseOnCollect: false,
};
const session = await Session.create(options);
check<Is<typeof session, Session>>();
const plain = await Session.create(); // options are optional
await Session.create({ pool: { sizeClasses: [1024, 4096, 65536] } });
// @ts-expect-error an unknown option (misspelt `pool`)
await Session.create({ pol: {} });
// @ts-expect-error sizeClasses is a number or a list of numbers
await Session.create({ pool: { sizeClasses: 'geometric' } });

const backend: string = session.adapter.backend;
const maxBuffer: number = session.adapter.maxStorageBufferBindingSize;
const label: string = session.label;
const released: number = session.clearCache();
const held: number = session.poolUsage().bytesHeld;
const classes: string | number[] = session.poolConfig.sizeClasses;
const lost: boolean = session.deviceLost;
await session.sync();

// --- tensors of every dtype -------------------------------------------------------------------

const f = session.tensor(new Float32Array([1, 2, 3]), [3]); // float32 by default
const i = session.tensor(new Int32Array([1, -2]), [2], 'int32');
const u = session.tensor([1, 2], [2], 'uint32');
const b = session.tensor([true, false], [2], 'bool');
const scalar = session.tensor([5], []);
const z = session.zeros([2, 2]);
const o = session.ones([2], 'int32');
const filled = session.fill([2], 7, 'uint32');
const yes = session.fill([2], true, 'bool');
const seven = session.fill([3], 7);
const normal = session.randomNormal([4, 4], { mean: 0, stddev: 1, seed: 1 });
const uniform = session.randomUniform([4], { min: -1, max: 1, seed: 2 });
const unseeded = session.randomNormal([4]);
for (const dtype of ['float32', 'int32', 'uint32', 'bool'] as const satisfies readonly DType[]) {
  session.zeros([1], dtype).dispose();
}
check<Is<typeof f, Tensor>>();
// @ts-expect-error 'float64' is not a dtype
session.zeros([2], 'float64');
// @ts-expect-error a shape is an array of numbers
session.ones(3);
// @ts-expect-error data is a TypedArray or an array of numbers
session.tensor('1,2,3', [3]);

const shape: number[] = f.shape;
const dtype: DType = f.dtype;
const size: number = f.size;
const byteLength: number = f.byteLength;
const id: number = f.id;
const origin: string = f.origin;
const disposed: boolean = f.disposed;
// @ts-expect-error shape is read-only
f.shape = [4];

// --- eager ops and readback -------------------------------------------------------------------

const chained = f.add(f).sub(f).mul(f).div(f).neg().abs().square().sqrt().exp().log().relu().sigmoid().tanh();
check<Is<typeof chained, Tensor>>();
const product = normal.matmul(normal);
const total = product.sum(); // all axes: shape []
const rows = product.sum(0);
const kept2d = product.sum([0, 1], true);
const reduced = [product.mean(-1), product.max(), product.min([0]), product.max(1, false)];
const probs = product.softmax();
const probs0 = product.softmax(0);
const flat = product.reshape([16]);
const halves = product.reshape([-1, 2]);
const image = session.zeros([1, 8, 8, 3]);
const kernel = session.ones([3, 3, 3, 4]);
check<Is<typeof image.conv2d, (filter: Tensor, strides: Pair, pad: Padding, dilations?: Pair) => Tensor>>();
const conv: Tensor = image.conv2d(kernel, 1, 'same');
const strided: Tensor = image.conv2d(kernel, [2, 1], 1, 2);
const depthwise: Tensor = image.depthwiseConv2d(session.ones([3, 3, 3, 2]), 1, 'valid');
const pooled: Tensor = image.maxPool(2, 2, 'valid').avgPool([3, 3], 1, 'same');
const embedded: Tensor = session.zeros([10, 4]).gather(session.tensor([1, 3], [2], 'int32'));
const running: Tensor = f.cumsum(0, true, false);
// @ts-expect-error padding is 'same', 'valid' or a number
image.conv2d(kernel, 1, 'full');
// @ts-expect-error maxPool needs its padding
image.maxPool(2, 2);
const swapped = product.transpose();
const permuted = product.transpose([1, 0]);
const ints = product.cast('int32');
const copy = product.clone();
const plusOne: Tensor = f.add(1); // a number operand: a scalar of f's dtype
const bools: Tensor = f.greater(0).logicalNot();
const fromNested: Tensor = session.tensor([[1, 2], [3, 4]]);
const nested: Promise<NestedArray> = fromNested.array();
// @ts-expect-error a string is not an operand
f.add('1');
// @ts-expect-error matmul takes a Tensor, not a TypedArray
f.matmul(new Float32Array([1, 2, 3]));
// @ts-expect-error cast takes a dtype
f.cast('half');

const values = await f.to_array();
check<Is<typeof values, AnyTypedArray>>();
const alias: AnyTypedArray = await f.toArray();
if (values instanceof Float32Array) values[0] satisfies number;
const one: number = await total.item();

// --- using, dispose ---------------------------------------------------------------------------

{
  using t = session.ones([1024]); // released at the end of the block
  using scoped = await Session.create({ label: 'scoped' });
  const inner = scoped.zeros([8]);
  inner.dispose();
  t.disposed satisfies boolean;
}
f[Symbol.dispose]();
f.dispose(); // idempotent

// --- tidy, keep, memory, profile --------------------------------------------------------------

const tidied = session.tidy(() => normal.matmul(normal).relu().softmax());
check<Is<typeof tidied, Tensor>>();
const named = session.tidy('pair', () => ({ a: normal.square(), b: [normal.neg(), normal.abs()] }));
check<Is<typeof named, { a: Tensor; b: Tensor[] }>>();
const count: number = session.tidy(() => 3);
session.tidy(() => {
  normal.square(); // disposed when the scope ends
});
// @ts-expect-error tidy refuses an async function
session.tidy(async () => normal.square());
const keptTensor = session.keep(normal.square());
check<Is<typeof keptTensor, Tensor>>();

const memory = session.memory();
check<Is<typeof memory, MemoryInfo>>();
const numBytes: number = memory.numBytes;
const reasons: string[] = memory.reasons;

const info = await session.profile(() => {
  const y = normal.square();
  y.dispose();
  return normal.sum();
});
check<Is<typeof info, ProfileInfo<Tensor>>>();
info.result.dispose();
const asyncInfo = await session.profile(async () => 42);
check<Is<typeof asyncInfo.result, number>>();
for (const k of info.kernels) {
  const kernel: string = k.name;
  const added: number = k.bytesAdded;
  const shapes: number[][] = k.outputShapes;
}
const peak: number = info.peakBytes;

// --- Program, JSON, Executable, ExecutionState ------------------------------------------------

const p = new Program('running_mean');
const x = p.input('x', 'float32', [-1, 4]); // -1: a dynamic dimension
const acc = p.state('acc', 'float32', [4]);
const next = p.add(acc, p.sum(x, [0]));
check<Is<typeof next, ProgramNode>>();
p.assign('acc', next);
p.output('y', p.relu(next));
p.output('total', p.sum(next));
const scale = p.constant([0.5, 0.5, 0.5, 0.5], [4]);
const mask = p.constant(new Int32Array([1, 0, 1, 0]), [4], 'int32');
p.output('scaled', p.mul(next, scale));
p.output('mask', p.cast(mask, 'bool'));
p.output('t', p.transpose(p.reshape(x, [-1, 2, 2])));
p.output('sm', p.softmax(x, -1));
// training: gradients as nodes, optimizers as assignments
const tw = p.state('tw', 'float32', [4, 2]);
const tloss = p.mean(p.square(p.matmul(x, tw)));
const grads: ProgramNode[] = p.grad(tloss, [tw]);
p.adam([tw], grads, { learningRate: 1e-3, beta1: 0.9 });
const tw2 = p.state('tw2', 'float32', [2]);
p.sgd([tw2], p.grad(p.sum(p.square(tw2)), [tw2]), { learningRate: 0.1, momentum: 0.9 });
// @ts-expect-error sgd needs its learning rate
p.sgd([tw2], grads, {});
const nodeId: number = next.id;
// @ts-expect-error program nodes take ProgramNodes, not Tensors
p.add(z, z);
// @ts-expect-error not a dtype
p.input('bad', 'float16', [1]);

const json = p.toJSON();
check<Is<typeof json, ProgramJSON>>();
const format: 'affon.program/1' = json.format;
const reloaded = Program.fromJSON(json);
const fromString = Program.fromJSON(JSON.stringify(p));
check<Is<typeof reloaded, Program>>();
// @ts-expect-error the JSON form needs its format tag and nodes
Program.fromJSON({ name: 'x' });

const exe = session.compile(reloaded);
check<Is<typeof exe, Executable>>();
const exeName: string = exe.name;
const state = exe.createState(); // zero-filled
check<Is<typeof state, ExecutionState>>();
using initialised = exe.createState({ acc: session.ones([4]) });
const input = session.tensor(new Float32Array(12).fill(1), [3, 4]);
for (let n = 0; n < 100; n++) {
  const { y } = exe.run({ x: input }, state); // outputs are Tensors owned by the session
  check<Is<typeof y, Tensor>>();
  y.dispose();
}
const outputs = exe.run({ x: input }, state);
check<Is<typeof outputs, RunOutputs>>();
for (const tensor of Object.values(outputs)) tensor.dispose();
// @ts-expect-error a run input must be a Tensor
exe.run({ x: [1, 2, 3, 4] }, state);
// @ts-expect-error the state argument is an ExecutionState
exe.run({ x: input }, { acc: input });
const accValue = state.get('acc');
check<Is<typeof accValue, Tensor>>();
const stateBytes: number = state.byteLength;

const plan = exe.memoryPlan({ x: [3, 4] });
check<Is<typeof plan, MemoryPlan>>();
const planBytes: number = plan.intermediateBytes + plan.outputBytes + plan.stateBytes + plan.peakBytes;
using double = session.compile(Program.fromJSON({
  format: 'affon.program/1',
  name: 'double',
  nodes: [{ op: 'input', name: 'x', dtype: 'float32', shape: [4] }, { op: 'add', args: [0, 0] }],
  outputs: [{ name: 'y', node: 1 }],
}));
const staticPlan: MemoryPlan = double.memoryPlan(); // no dynamic dims: no shapes needed
const { y: doubled } = double.run({ x: session.ones([4]) }); // a stateless program: no state argument
doubled.dispose();
// @ts-expect-error input shapes are number[] per input
exe.memoryPlan({ x: '3x4' });
state.dispose();
exe.dispose();

// --- telemetry: metrics narrowed by kind ------------------------------------------------------

check<Is<typeof stdTelemetry, typeof telemetry>>();
const records = telemetry.metrics();
check<Is<typeof records, MetricRecord[]>>();
for (const r of records) {
  // @ts-expect-error `mean` exists only on distribution records
  r.mean;
  switch (r.kind) {
    case 'distribution': {
      const mean: number = r.mean; // narrowed
      const stats: number[] = [r.count, r.sum, r.min, r.max];
      break;
    }
    case 'gauge':
    case 'counter': {
      const value: number = r.value;
      break;
    }
    default: {
      const unreachable: never = r;
      throw new Error(`unknown kind ${JSON.stringify(unreachable)}`);
    }
  }
}
const liveBytes = records.find((m) => m.scope === 'compute.storage' && m.name === 'live_bytes')?.value ?? 0;
check<Is<typeof liveBytes, number>>();
const runTime = records.find((m): m is DistributionRecord => m.kind === 'distribution' && m.name === 'run_time');
const meanMs: number | undefined = runTime?.mean;
const sessionLabel: string | undefined = records[0]?.labels?.session;
// @ts-expect-error no such scope (misspelt)
records.filter((m) => m.scope === 'compute.stroage');
// @ts-expect-error no such kind
records.filter((m) => m.kind === 'histogram');

telemetry.resetPeak();
const owners: OwnerGroup[] = telemetry.liveTensors();
const forgottenBytes: number = telemetry.forgotten().bytes;
const iteration: number = telemetry.nextIteration();
const poolSessions: string[] = telemetry.pools().map((pool) => pool.session);

// --- diagnosis: an exhaustive switch over the verdicts ----------------------------------------

function explain(verdict: Verdict): string {
  switch (verdict) {
    case 'steady':
      return 'flat after warm-up';
    case 'ownership-leak':
      return 'something keeps tensors alive';
    case 'pool-retention':
      return 'the pool caches for reuse';
    case 'shape-growth':
      return 'later work uses larger shapes';
    case 'process-growth':
      return 'runtime memory grows, not tensors';
    default: {
      const unreachable: never = verdict; // a new verdict fails to compile here
      return unreachable;
    }
  }
}

const kept: Tensor[] = [];
const diagnosis = await telemetry.watch((iterationIndex) => {
  kept.push(normal.square());
  iterationIndex satisfies number;
}, { warmup: 5, iterations: 20 });
check<Is<typeof diagnosis, Diagnosis>>();
const defaults = await telemetry.watch(async () => {
  await session.sync();
}); // warmup 5, iterations 20
const summary: string = explain(diagnosis.verdict) + diagnosis.summary;
const grown: string[] = diagnosis.grownOrigins;
const perIteration: number | undefined = diagnosis.evidence[0]?.perIteration;
// @ts-expect-error a misspelt verdict
if (diagnosis.verdict === 'ownership_leak') throw new Error();
// @ts-expect-error not a verdict
const leak: Verdict = 'leak';

const before = telemetry.metrics();
const warm = telemetry.metrics();
const after = telemetry.metrics();
const manual = telemetry.diagnose({ before, warm, after, iterations: 20 });
check<Is<typeof manual.verdict, Verdict>>();

const report = telemetry.report({ program: 'running_mean', iterations: 20, pattern: 'leaky loop', diagnosis });
check<Is<typeof report, MemoryReport>>();
const bare = telemetry.report();
const reportVerdict: Verdict | undefined = report.diagnosis?.verdict;
const mode: 'debug' | 'release' = report.affon.buildMode;
const allocations: number = report.ownership.allocations;

// --- errors: AffonError narrowed by code ------------------------------------------------------

function isAffonError(e: unknown): e is AffonError {
  return e instanceof Error && e.name === 'AffonError';
}

function handle(e: unknown): string {
  if (!isAffonError(e)) throw e;
  const code: AffonErrorCode = e.code;
  switch (e.code) {
    case 'OUT_OF_MEMORY':
      return `needed ${e.requestedBytes} bytes; largest owner ${e.owners?.[0]?.origin}, cached ${e.pool?.bytesCached}`;
    case 'DISPOSED':
    case 'SESSION_DISPOSED':
    case 'DEVICE_LOST':
      return `gone: ${e.message}`;
    case 'SHAPE_MISMATCH':
    case 'DTYPE_MISMATCH':
    case 'INVALID_ARGUMENT':
    case 'INVALID_PROGRAM':
      return `bad input: ${e.message}`;
    case 'UNSUPPORTED':
      return 'no WebGPU adapter';
    default: {
      const unreachable: never = e.code;
      return unreachable;
    }
  }
}

try {
  session.tensor([1, 2, 3], [2, 2]);
} catch (e) {
  handle(e);
  if (isAffonError(e)) {
    // @ts-expect-error a misspelt code
    if (e.code === 'OUT_OF_MEMORYY') throw e;
  }
}

for (const t of kept) t.dispose();
plain.dispose();
session.dispose();
session[Symbol.dispose]();

export {};
