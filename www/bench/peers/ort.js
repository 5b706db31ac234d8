// ONNX Runtime Web 1.30 (WebGPU execution provider) as a benchmark peer.
//
// ORT runs static ONNX graphs only: every workload here is a small ONNX model whose bytes are
// built in this file (a minimal protobuf encoder for ModelProto and the messages it contains), run
// with `InferenceSession.create(bytes, { executionProviders: ['webgpu'] })`. Inputs that the
// affon/TF.js side holds on the device are GPU buffers on ORT's own GPUDevice
// (`Tensor.fromGpuBuffer`), so a timed call uploads nothing. Outputs go to the CPU
// (`preferredOutputLocation: 'cpu'`: `run()` resolves once they are downloaded) for rows with a
// readback, or stay in a GPU buffer ('gpu-buffer') for queue-drain rows, which then wait for
// `device.queue.onSubmittedWorkDone()` on ORT's device.
import * as ort from 'onnxruntime-web/webgpu';

// ---- minimal protobuf / ONNX encoder -----------------------------------------------------------
// Field numbers from onnx/onnx.proto (IR version 8).
const utf8 = new TextEncoder();
const FLOAT = 1;                     // TensorProto.DataType.FLOAT
const ATTR = { FLOAT: 1, INT: 2, FLOATS: 6, INTS: 7 };   // AttributeProto.AttributeType

/** An attribute value to be encoded as FLOAT even when it is a whole number (e.g. `epsilon: f32(1)`). */
export const f32 = (v) => ({ float: v });

function varint(n) {
  let v = BigInt.asUintN(64, BigInt(n)); // int64 two's complement for negative values
  const out = [];
  while (v >= 0x80n) { out.push(Number(v & 0x7fn) | 0x80); v >>= 7n; }
  out.push(Number(v));
  return out;
}

class Pb {
  constructor() { this.parts = []; }
  #key(field, wire) { this.parts.push(Uint8Array.from(varint((field << 3) | wire))); }
  int(field, v) { this.#key(field, 0); this.parts.push(Uint8Array.from(varint(v))); return this; }
  float(field, v) {
    this.#key(field, 5);
    const b = new Uint8Array(4); new DataView(b.buffer).setFloat32(0, v, true);
    this.parts.push(b); return this;
  }
  bytes(field, b) { this.#key(field, 2); this.parts.push(Uint8Array.from(varint(b.length)), b); return this; }
  str(field, s) { return this.bytes(field, utf8.encode(s)); }
  msg(field, m) { return this.bytes(field, m.finish()); }
  finish() {
    const out = new Uint8Array(this.parts.reduce((n, p) => n + p.length, 0));
    let o = 0;
    for (const p of this.parts) { out.set(p, o); o += p.length; }
    return out;
  }
}

/** ValueInfoProto { name = 1, type = 2 { tensor_type = 1 { elem_type = 1, shape = 2 { dim = 1 { dim_value = 1 } } } } } */
function valueInfo(name, dims) {
  const shape = new Pb();
  for (const d of dims) shape.msg(1, new Pb().int(1, d));
  return new Pb().str(1, name).msg(2, new Pb().msg(1, new Pb().int(1, FLOAT).msg(2, shape)));
}

/** TensorProto { dims = 1, data_type = 2, name = 8, raw_data = 9 } (float32, little-endian). */
function tensorProto(name, dims, data) {
  const t = new Pb();
  for (const d of dims) t.int(1, d);
  t.int(2, FLOAT).str(8, name);
  return t.bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
}

/**
 * AttributeProto { name = 1, f = 2, i = 3, floats = 7, ints = 8, type = 20 }. `v`: an integer →
 * INT, another number → FLOAT, `f32(x)` → FLOAT, an array of integers → INTS, `{ floats: [...] }`
 * → FLOATS (repeated fields unpacked, as proto2 `onnx.proto` declares them).
 */
function attrProto(name, v) {
  const a = new Pb().str(1, name);
  if (Array.isArray(v)) {
    if (!v.every(Number.isInteger)) throw new Error(`attribute ${name}: INTS must be integers`);
    for (const x of v) a.int(8, x);
    return a.int(20, ATTR.INTS);
  }
  if (v && typeof v === 'object' && 'floats' in v) { for (const x of v.floats) a.float(7, x); return a.int(20, ATTR.FLOATS); }
  if (v && typeof v === 'object' && 'float' in v) return a.float(2, v.float).int(20, ATTR.FLOAT);
  if (Number.isInteger(v)) return a.int(3, v).int(20, ATTR.INT);
  if (typeof v === 'number') return a.float(2, v).int(20, ATTR.FLOAT);
  throw new Error(`attribute ${name}: unsupported value ${v}`);
}

/** NodeProto { input = 1, output = 2, name = 3, op_type = 4, attribute = 5 } */
function nodeProto({ op, inputs, outputs, attrs = {} }, index) {
  const n = new Pb();
  for (const i of inputs) n.str(1, i);
  for (const o of outputs) n.str(2, o);
  n.str(3, `${op.toLowerCase()}_${index}`).str(4, op);
  for (const [name, v] of Object.entries(attrs)) n.msg(5, attrProto(name, v));
  return n;
}

/**
 * ModelProto bytes: { ir_version = 1, producer_name = 2, graph = 7, opset_import = 8 { domain = 1, version = 2 } }
 * with GraphProto { node = 1, name = 2, initializer = 5, input = 11, output = 12 }.
 */
export function onnxModel({ name, inputs, outputs, nodes, initializers = [], opset = 17 }) {
  const g = new Pb();
  nodes.forEach((n, i) => g.msg(1, nodeProto(n, i)));
  g.str(2, name);
  for (const t of initializers) g.msg(5, tensorProto(t.name, t.dims, t.data));
  for (const v of inputs) g.msg(11, valueInfo(v.name, v.dims));
  for (const v of outputs) g.msg(12, valueInfo(v.name, v.dims));
  return new Pb().int(1, 8).str(2, 'affon-bench').msg(7, g).msg(8, new Pb().int(2, opset)).finish();
}

// ---- runtime ----------------------------------------------------------------------------------
let device = null;
let keepAlive = null; // ORT's WebGPU context (and its GPUDevice) lives while a session does
const scalar = (name, v) => ({ name, dims: [], data: new Float32Array([v]) });

/** Initialises ORT's WebGPU backend (one tiny session) and returns what it reports. */
export async function setup() {
  ort.env.wasm.numThreads = 1;      // the page is not cross-origin isolated: no wasm threads
  ort.env.logLevel = 'error';
  const probe = await session(onnxModel({ name: 'probe', inputs: [{ name: 'x', dims: [4] }],
    outputs: [{ name: 'y', dims: [4] }], nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['y'] }] }), 'cpu');
  const out = await probe.run({ x: new ort.Tensor('float32', new Float32Array([-1, 0, 1, 2]), [4]) });
  if (String(out.y.data) !== '0,0,1,2') throw new Error(`ORT probe returned ${out.y.data}`);
  // Releasing the last session would destroy ORT's device (the next session makes a new one, and
  // GPU buffers made on the old one become invalid): the probe session stays open.
  keepAlive = probe;
  device = await ort.env.webgpu.device;
  const info = device?.adapterInfo;
  return {
    version: ort.env.versions.web ?? ort.env.versions.common,
    adapterInfo: info ? { vendor: info.vendor, architecture: info.architecture, device: info.device, description: info.description } : null,
  };
}

async function session(bytes, outputLocation) {
  const s = await ort.InferenceSession.create(bytes, {
    executionProviders: ['webgpu'], preferredOutputLocation: outputLocation, graphOptimizationLevel: 'all',
  });
  if (device && (await ort.env.webgpu.device) !== device) throw new Error('ORT created a second GPUDevice');
  return s;
}

/** A float32 GPU buffer on ORT's device holding `data`, wrapped as an ORT tensor. */
function gpuTensor(data, dims) {
  const buffer = device.createBuffer({ size: Math.ceil(data.byteLength / 16) * 16,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  device.queue.writeBuffer(buffer, 0, data);
  return ort.Tensor.fromGpuBuffer(buffer, { dataType: 'float32', dims, dispose: () => buffer.destroy() });
}

const drainQueue = () => device.queue.onSubmittedWorkDone();

/**
 * A workload on one graph: `read()` runs it and resolves to the output's data (downloaded by
 * ORT), `drain()` runs it with the output left on the device and waits for ORT's queue.
 */
async function graphWorkload(bytes, feeds, { drain = true } = {}) {
  const toCpu = await session(bytes, 'cpu');
  const onGpu = drain ? await session(bytes, 'gpu-buffer') : null;
  const outName = toCpu.outputNames[0];
  return {
    async read() { const out = await toCpu.run(feeds); return out[outName].data; },
    async drain() { const out = await onGpu.run(feeds); await drainQueue(); out[outName].dispose(); },
    /** The GPU-output session's result, downloaded (to check what `drain()` computes). */
    async readDevice() { const out = await onGpu.run(feeds); const d = await out[outName].getData(true); out[outName].dispose(); return d; },
    async dispose() {
      await toCpu.release(); await onGpu?.release();
      for (const t of Object.values(feeds)) t.dispose();
    },
  };
}

// mul → add → relu → square (x·x) → sqrt → exp → neg → abs, the constants as initializers.
const chainNodes = [
  { op: 'Mul', inputs: ['x', 'c1'], outputs: ['t0'] }, { op: 'Add', inputs: ['t0', 'c2'], outputs: ['t1'] },
  { op: 'Relu', inputs: ['t1'], outputs: ['t2'] }, { op: 'Mul', inputs: ['t2', 't2'], outputs: ['t3'] },
  { op: 'Sqrt', inputs: ['t3'], outputs: ['t4'] }, { op: 'Exp', inputs: ['t4'], outputs: ['t5'] },
  { op: 'Neg', inputs: ['t5'], outputs: ['t6'] }, { op: 'Abs', inputs: ['t6'], outputs: ['y'] },
];

/** The 8-op elementwise chain on `x` (a device buffer): `read()` / `drain()`. */
export function chain(xHost, c1 = 0.5, c2 = 0.1) {
  const n = xHost.length;
  return graphWorkload(onnxModel({ name: 'chain8', inputs: [{ name: 'x', dims: [n] }], outputs: [{ name: 'y', dims: [n] }],
    nodes: chainNodes, initializers: [scalar('c1', c1), scalar('c2', c2)] }), { x: gpuTensor(xHost, [n]) });
}

/** The chain followed by a full ReduceSum (keepdims 0, no axes: every axis): `read()` → [sum]. */
export function chainSum(xHost, c1 = 0.5, c2 = 0.1) {
  const n = xHost.length;
  const nodes = chainNodes.map((nd) => (nd.outputs[0] === 'y' ? { ...nd, outputs: ['t7'] } : nd));
  nodes.push({ op: 'ReduceSum', inputs: ['t7'], outputs: ['y'], attrs: { keepdims: 0 } });
  return graphWorkload(onnxModel({ name: 'chain8_sum', inputs: [{ name: 'x', dims: [n] }], outputs: [{ name: 'y', dims: [] }],
    nodes, initializers: [scalar('c1', c1), scalar('c2', c2)] }), { x: gpuTensor(xHost, [n]) }, { drain: false });
}

/** One MatMul node on two device buffers: `run(k)` does k products, then downloads the last. */
export async function matmul(aHost, bHost, n) {
  const s = await session(onnxModel({ name: 'matmul', inputs: [{ name: 'A', dims: [n, n] }, { name: 'B', dims: [n, n] }],
    outputs: [{ name: 'C', dims: [n, n] }], nodes: [{ op: 'MatMul', inputs: ['A', 'B'], outputs: ['C'] }] }), 'gpu-buffer');
  const feeds = { A: gpuTensor(aHost, [n, n]), B: gpuTensor(bHost, [n, n]) };
  return {
    async run(k) {
      let c = null;
      for (let i = 0; i < k; i++) { c?.dispose(); c = (await s.run(feeds)).C; }
      const data = await c.getData(true);
      c.dispose();
      return data;
    },
    async dispose() { await s.release(); Object.values(feeds).forEach((t) => t.dispose()); },
  };
}

/** MLP x·w1 + b1 → relu → ·w2 + b2 → softmax (axis 1); weights are initializers, x a device buffer. */
export function mlp({ x, w1, b1, w2, b2 }, [batch, inDim, hid, outDim]) {
  return graphWorkload(onnxModel({
    name: 'mlp', inputs: [{ name: 'x', dims: [batch, inDim] }], outputs: [{ name: 'y', dims: [batch, outDim] }],
    nodes: [
      { op: 'MatMul', inputs: ['x', 'w1'], outputs: ['h0'] }, { op: 'Add', inputs: ['h0', 'b1'], outputs: ['h1'] },
      { op: 'Relu', inputs: ['h1'], outputs: ['h2'] }, { op: 'MatMul', inputs: ['h2', 'w2'], outputs: ['h3'] },
      { op: 'Add', inputs: ['h3', 'b2'], outputs: ['h4'] }, { op: 'Softmax', inputs: ['h4'], outputs: ['y'], attrs: { axis: 1 } },
    ],
    initializers: [{ name: 'w1', dims: [inDim, hid], data: w1 }, { name: 'b1', dims: [hid], data: b1 },
      { name: 'w2', dims: [hid, outDim], data: w2 }, { name: 'b2', dims: [outDim], data: b2 }],
  }), { x: gpuTensor(x, [batch, inDim]) }, { drain: false });
}

/**
 * m: a MobileNet-style block, NCHW: Conv 3×3 group = C (depthwise, pads 1: 'same') →
 * BatchNormalization → Clip(0, 6) → Conv 1×1 to `cOut` channels → BatchNormalization → Clip(0, 6).
 * `h` holds the NCHW input and the ONNX-layout weights (`dw` [C, 1, 3, 3], `pw` [cOut, C, 1, 1])
 * and the batch-norm vectors (`bn1`/`bn2`: { mean, variance, offset, scale }); the weights and
 * statistics are initializers, x a device buffer. `read()` → the [1, cOut, H, W] output.
 */
export function mobileBlock(h, { c, cOut, height, width, eps }) {
  const bn = (k, { mean, variance, offset, scale }, dims) => [
    { name: `${k}_scale`, dims, data: scale }, { name: `${k}_offset`, dims, data: offset },
    { name: `${k}_mean`, dims, data: mean }, { name: `${k}_var`, dims, data: variance }];
  const bnNode = (k, x, y) => ({ op: 'BatchNormalization', inputs: [x, `${k}_scale`, `${k}_offset`, `${k}_mean`, `${k}_var`], outputs: [y], attrs: { epsilon: f32(eps) } });
  return graphWorkload(onnxModel({
    name: 'mobilenet_block', inputs: [{ name: 'x', dims: [1, c, height, width] }], outputs: [{ name: 'y', dims: [1, cOut, height, width] }],
    nodes: [
      { op: 'Conv', inputs: ['x', 'dw'], outputs: ['t0'], attrs: { group: c, kernel_shape: [3, 3], pads: [1, 1, 1, 1], strides: [1, 1], dilations: [1, 1] } },
      bnNode('bn1', 't0', 't1'), { op: 'Clip', inputs: ['t1', 'lo', 'hi'], outputs: ['t2'] },
      { op: 'Conv', inputs: ['t2', 'pw'], outputs: ['t3'], attrs: { group: 1, kernel_shape: [1, 1], pads: [0, 0, 0, 0], strides: [1, 1], dilations: [1, 1] } },
      bnNode('bn2', 't3', 't4'), { op: 'Clip', inputs: ['t4', 'lo', 'hi'], outputs: ['y'] },
    ],
    initializers: [{ name: 'dw', dims: [c, 1, 3, 3], data: h.dw }, ...bn('bn1', h.bn1, [c]),
      { name: 'pw', dims: [cOut, c, 1, 1], data: h.pw }, ...bn('bn2', h.bn2, [cOut]), scalar('lo', 0), scalar('hi', 6)],
  }), { x: gpuTensor(h.x, [1, c, height, width]) }, { drain: false });
}

/**
 * c3: a CPU `ort.Tensor` over the host Float32Array (no copy) fed to a one-node graph
 * (Mul(x, x) = square): ORT uploads it, runs, downloads the output. `run()` → the result.
 */
export async function fromHostSquare(n) {
  const s = await session(onnxModel({ name: 'square', inputs: [{ name: 'x', dims: [n] }], outputs: [{ name: 'y', dims: [n] }],
    nodes: [{ op: 'Mul', inputs: ['x', 'x'], outputs: ['y'] }] }), 'cpu');
  return {
    async run(host) { const out = await s.run({ x: new ort.Tensor('float32', host, [n]) }); return out.y.data; },
    async dispose() { await s.release(); },
  };
}
