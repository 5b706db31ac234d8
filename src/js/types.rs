//! The TypeScript surface: types for everything that crosses the boundary as a plain JS value, so
//! `pkg/affon.d.ts` has no `any` in public signatures. Methods point at these with
//! `unchecked_param_type` / `unchecked_return_type`.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** Element types. Every dtype is stored as one 32-bit word per element. */
export type DType = 'float32' | 'int32' | 'uint32' | 'bool';
/** Dimensions; `[]` is a scalar. Every dimension is a positive integer. */
export type Shape = number[];
/** Dimensions of a program input; `-1` is a dynamic dimension. */
export type InputShape = number[];
/** How `Program.fromONNX` imports a model (API.md "Models from ONNX"): a name, fixed symbolic dims per
 *  input, inputs frozen to values. */
export interface ONNXOptions {
  name?: string;
  inputShapes?: Record<string, number[]>;
  inputValues?: Record<string, number | ReadonlyArray<number> | Float32Array | Int32Array | Uint32Array>;
}
/** What `to_array()` resolves to, by dtype. */
export type TypedArrayOf<D extends DType> = D extends 'float32' ? Float32Array : D extends 'int32' ? Int32Array
  : D extends 'uint32' ? Uint32Array : Uint8Array;
export type AnyTypedArray = Float32Array | Int32Array | Uint32Array | Uint8Array;
/** Tensor data: a TypedArray, or an array of numbers (booleans for `bool`). */
export type TensorData = Float32Array | Float64Array | Int32Array | Uint32Array | Int16Array | Uint16Array
  | Int8Array | Uint8Array | Uint8ClampedArray | ReadonlyArray<number | boolean>;
/** Nested arrays of numbers (or booleans), as TF.js accepts them. */
export type NestedData = number | boolean | NestedData[];
/** What `array()` resolves to: nested `number[]` of the tensor's shape, a number for a scalar. */
export type NestedArray = number | NestedArray[];
/** Axes of a reduction: one axis or several (negative counts from the end); all when omitted. */
export type Axes = number | number[];
/** A (height, width) pair of positive integers — strides, dilations, pool sizes; one number means both. */
export type Pair = number | [number, number];
/** Convolution and pooling padding (TF.js): `'same'`, `'valid'`, or cells on every side. */
export type Padding = 'same' | 'valid' | number;

export interface PoolOptions {
  /** Bound on the bytes the pool holds, in use + cached (default 2 GiB). */
  maxTotalBytes?: number;
  /** Bound on the cached (free) bytes: releasing above it destroys the least recently released buffers (MLX's cache limit; default: none beyond `maxTotalBytes`). */
  cacheLimitBytes?: number;
  /** Requests above this are exact-size and not cached (default 64 MiB). */
  oversizeThresholdBytes?: number;
  /** After this many milliseconds without an op, a tensor created or disposed, a readback or a `sync()`, the cached buffers and kept readback buffers go back to the device (default 10000; 0: never). */
  idleTrimMs?: number;
  /** Steps per power of two (1, 2, 4, …, 64; default 4) or an ascending list of class sizes. */
  sizeClasses?: number | number[];
}
export interface SessionOptions {
  pool?: PoolOptions;
  label?: string;
  /** Record the creating JS stack of each tensor (shown by `telemetry.liveTensors()`). */
  captureStacks?: boolean;
  /** Release the storage of tensors whose handle is garbage-collected without `dispose()`. */
  releaseOnCollect?: boolean;
}
export interface RandomNormalOptions { mean?: number; stddev?: number; seed?: number }
export interface RandomUniformOptions { min?: number; max?: number; seed?: number }

/** `Session.memory()`: TensorFlow.js's `tf.memory()` for one session. */
export interface MemoryInfo {
  numTensors: number; numBytes: number; numDataBuffers: number; peakBytes: number;
  unreliable: boolean; reasons: string[];
}
export interface KernelProfile {
  name: string; bytesAdded: number; totalBytesSnapshot: number; tensorsAdded: number;
  totalTensorsSnapshot: number; inputShapes: Shape[]; outputShapes: Shape[];
}
export interface ProfileInfo<T = unknown> {
  newBytes: number; newTensors: number; peakBytes: number; kernels: KernelProfile[]; result: T;
}
export interface AdapterIdentity {
  backend: string; name: string; vendor: string; architecture: string; deviceType: string; driver: string;
  maxBufferSize: number; maxStorageBufferBindingSize: number;
  /** Invocations per subgroup when the device has subgroup operations (one size), else 0. */
  subgroupSize: number;
}
export interface PoolConfig { maxTotalBytes: number; cacheLimitBytes: number | null; oversizeThresholdBytes: number; sizeClasses: string | number[]; idleTrimMs: number }
/** One live storage (`telemetry.storages()`): the memory panel's per-storage timeline draws these. */
export interface StorageInfo {
  id: number; session: string; origin: string; bytes: number; iteration: number; forgotten: boolean; stack?: string;
}
export interface PoolUsage {
  bytesHeld: number; bytesCached: number; buffersInUse: number; buffersCached: number;
  /** `[class bytes, cached buffers, cached bytes]`, ascending. */
  cachedByClass: [number, number, number][];
  /** Buffers in use by size: `[size, buffers, requested bytes]` (size · buffers − requested is the rounding). */
  inUseByClass: [number, number, number][];
}
export interface PoolSnapshot {
  session: string; adapter: AdapterIdentity; config: PoolConfig; usage: PoolUsage; disposed: boolean;
}
/** A tidy result: the tensors in it survive the scope. */
export type TidyResult = Tensor | TidyResult[] | { [key: string]: TidyResult } | number | string | boolean
  | null | undefined | void;
/** `memoryPlan()`: what one run holds, in bytes. */
export interface MemoryPlan { intermediateBytes: number; outputBytes: number; stateBytes: number; peakBytes: number }

export type MetricScope = 'compute.storage' | 'compute.memory' | 'compute.execution' | 'runtime.memory';
interface MetricBase {
  scope: MetricScope; name: string; unit: string; value: number;
  /** `{session}` on per-session records, `{origin}` on `live_bytes_by_origin`; absent process-wide. */
  labels?: Record<string, string>;
}
export interface GaugeRecord extends MetricBase { kind: 'gauge' }
export interface CounterRecord extends MetricBase { kind: 'counter' }
export interface DistributionRecord extends MetricBase {
  kind: 'distribution'; count: number; sum: number; min: number; max: number; mean: number;
}
export type MetricRecord = GaugeRecord | CounterRecord | DistributionRecord;

export interface OwnerGroup {
  origin: string; count: number; bytes: number; oldestIteration: number; forgotten: number; stack?: string;
}
export interface Forgotten { handles: number; tensors: number; bytes: number }
/** One Chrome Trace Event (`C` counter, `X` complete span, `M` metadata). */
export interface TraceEvent {
  name: string; cat?: string; ph: 'C' | 'X' | 'M'; ts: number; dur?: number; pid: number; tid: number;
  args: Record<string, unknown>;
}
/** `telemetry.stopTrace()`: opens in Perfetto and `chrome://tracing`. */
export interface TraceJSON {
  traceEvents: TraceEvent[]; displayTimeUnit: 'ms'; otherData: { producer: string; droppedEvents: number };
}
/** `telemetry.releaseForgotten()`: what was released. */
export interface ReleasedForgotten { handles: number; bytes: number }
export type Verdict = 'steady' | 'ownership-leak' | 'pool-retention' | 'shape-growth' | 'process-growth';
export interface Evidence { metric: string; before: number; warm: number; after: number; delta: number; perIteration?: number }
export interface Snapshots {
  before: MetricRecord[]; warm: MetricRecord[]; after: MetricRecord[];
  warmup?: number; iterations?: number; synchronized: boolean;
}
/** Something that moved but did not decide the verdict. */
export interface Finding {
  kind: 'bounded-growth' | 'larger-input' | 'pool-warm-up' | 'pool-growth' | 'runtime-growth' | 'shape-growth' | 'tensor-growth';
  summary: string;
}
/** Per-iteration figures: before the first iteration, then after each. */
export interface Series { liveBytes: number[]; poolBytes: number[]; peakBytes: number[]; runtimeBytes: number[] }
export interface Diagnosis {
  verdict: Verdict; summary: string; evidence: Evidence[]; grownOrigins: string[]; snapshots: Snapshots;
  findings: Finding[]; series?: Series; session?: string;
}
export type DiagnoseInput = {
  before: MetricRecord[]; warm: MetricRecord[]; after: MetricRecord[];
  iterations?: number; warmup?: number; synchronized?: boolean;
} | { samples: MetricRecord[][]; warmup?: number; session?: Session | string; synchronized?: boolean };
export interface WatchOptions { warmup?: number; iterations?: number; session?: Session | string }
export interface ReportContext {
  program?: string; inputs?: { name: string; shape: Shape; dtype: DType }[]; iterations?: number;
  pattern?: string; diagnosis?: Diagnosis; [key: string]: unknown;
}
export interface MemoryReport {
  affon: { version: string; revision: string; buildMode: 'debug' | 'release' };
  platform: { target: 'web' | 'native'; userAgent?: string; os?: string; arch?: string };
  sessions: { label: string; adapter: AdapterIdentity; pool: PoolConfig; captureStacks: boolean; releaseOnCollect: boolean }[];
  environment: Record<string, string>;
  program: unknown; inputs: unknown; iterations: unknown; context: ReportContext | null;
  snapshots: Record<string, unknown>;
  diagnosis: { verdict: Verdict; summary: string; evidence: Evidence[]; grownOrigins: string[] } | null;
  ownership: {
    allocations: number; deallocations: number; liveTensors: number; forgottenHandles: number;
    forgottenLive: number; forgottenBytes: number; executions: number; compiles: number;
    executableCacheEntries: number; owners: OwnerGroup[];
  };
}
export interface DevtoolsSnapshot {
  time: number; metrics: MetricRecord[]; liveTensors: OwnerGroup[]; pools: PoolSnapshot[]; forgotten: Forgotten; storages: StorageInfo[];
}

export type AffonErrorCode = 'DISPOSED' | 'SESSION_DISPOSED' | 'SHAPE_MISMATCH' | 'DTYPE_MISMATCH'
  | 'INVALID_PROGRAM' | 'INVALID_ARGUMENT' | 'OUT_OF_MEMORY' | 'DEVICE_LOST' | 'UNSUPPORTED';
/** Every failure is thrown as an `Error` of this shape. */
export interface AffonError extends Error {
  name: 'AffonError';
  code: AffonErrorCode;
  /** OUT_OF_MEMORY only. */
  requestedBytes?: number; liveBytes?: number; poolBytes?: number; boundBytes?: number;
  owners?: OwnerGroup[]; pool?: PoolUsage;
}

/** The JSON form of a program (see docs/programs.md). */
export interface ProgramJSON {
  format: 'affon.program/1';
  name: string;
  nodes: ProgramNodeJSON[];
  outputs?: { name: string; node: number }[];
  assign?: { state: string; node: number }[];
}
export interface ProgramNodeJSON {
  op: string; name?: string; dtype?: DType; shape?: number[]; data?: (number | 'NaN' | 'Infinity' | '-Infinity')[];
  args?: number[]; axes?: number[]; keepDims?: boolean; axis?: number; perm?: number[];
}
export type RunInputs = Record<string, Tensor>;

/** Generic overloads merged into the generated class declarations. */
export interface Session {
  tidy<T extends TidyResult>(fn: () => T): T;
  tidy<T extends TidyResult>(name: string, fn: () => T): T;
  keep<T extends Tensor>(tensor: T): T;
  profile<T>(fn: () => T | Promise<T>): Promise<ProfileInfo<Awaited<T>>>;
  [Symbol.dispose](): void;
}
export interface Tensor { [Symbol.dispose](): void }
declare const programNodeBrand: unique symbol;
/** Branded, so a Tensor is not accepted where a program node is expected. */
export interface ProgramNode { readonly [programNodeBrand]: true }
export interface Executable { [Symbol.dispose](): void }
export interface ExecutionState { [Symbol.dispose](): void }
export type RunOutputs = Record<string, Tensor>;
"#;
