//! The JavaScript affon runs inside its own calls, taken at load (intrinsics, error objects, typed
//! array slots, the handle guard): one inline module, whose functions the `js` layer calls.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
// Taken at load, before a page could replace them: what affon builds for its callers is made with
// these, so no setter or getter a page put on Object.prototype, Error.prototype or a caller's own
// object runs (or throws) in the middle of an affon call.
const NativeError = Error, define = Object.defineProperty, getProto = Object.getPrototypeOf,
  describe = Object.getOwnPropertyDescriptor, ownKeys = Object.keys, isArray = Array.isArray,
  create = Object.create, apply = Reflect.apply, keysOf = Reflect.ownKeys;
const own = (o, k, value) => define(o, k, { value, writable: true, enumerable: true, configurable: true });
export function affon_own(o, k, v) { own(o, k, v); }
const messageOf = (e) => {
  // a thrown value's message without running its getters (a Proxy, a throwing getter, a null prototype)
  try {
    const d = e !== null && typeof e === 'object' ? describe(e, 'message') : undefined;
    if (d && typeof d.value === 'string') return d.value;
    return typeof e === 'string' ? e : 'an exception was thrown';
  } catch (x) { return 'an exception was thrown'; }
};

export function affon_error(message, code, oom, requested, live, pool, bound, owners, poolState) {
  // An AffonError: its fields defined, as an assignment would make them, but without running setters
  const err = new NativeError(message);
  own(err, 'name', 'AffonError');
  own(err, 'code', code);
  if (oom) {
    own(err, 'requestedBytes', requested); own(err, 'liveBytes', live);
    own(err, 'poolBytes', pool); own(err, 'boundBytes', bound);
  }
  if (owners !== undefined) own(err, 'owners', owners);
  if (poolState !== undefined) own(err, 'pool', poolState);
  return err;
}

// TypedArrays are read through the engine's slots and written with its own set(): neither the
// caller's own fields nor a page's change to %TypedArray%.prototype is consulted
const TypedArrayProto = getProto(Int8Array.prototype), intrinsic = (k) => describe(TypedArrayProto, k).get;
const taBuffer = intrinsic('buffer'), taOffset = intrinsic('byteOffset'), taLength = intrinsic('length'),
  taName = intrinsic(Symbol.toStringTag), taSet = TypedArrayProto.set,
  memBuffer = describe(WebAssembly.Memory.prototype, 'buffer').get;
const U32 = Uint32Array, F64 = Float64Array, I64 = BigInt64Array, U64 = BigUint64Array;
const viewCtors = new Map();
for (const n of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array',
  'Uint32Array', 'Float16Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array']) {
  if (typeof globalThis[n] === 'function') viewCtors.set(n, globalThis[n]);
}
const ctorOf = (v) => viewCtors.get(apply(taName, v, []));
const objectTag = Object.prototype.toString;
export function affon_is_async(f) {
  // whether f is an async function, by its tag, before anything calls it
  try { return apply(objectTag, f, []) === '[object AsyncFunction]'; } catch (e) { return false; }
}
export function affon_typed_tag(v) {
  // 'Float32Array' and so on for a TypedArray (read from its slot), null for anything else
  try { return apply(taName, v, []) ?? null; } catch (e) { return null; }
}
export function affon_typed_view(v) {
  // A fresh view of the same type over a TypedArray's memory; null for a detached buffer
  try {
    const C = ctorOf(v);
    return C ? new C(apply(taBuffer, v, []), apply(taOffset, v, []), apply(taLength, v, [])) : null;
  } catch (e) { return null; }
}
export function affon_typed_length(v) {
  try { return apply(taLength, v, []); } catch (e) { return 0; }
}
export function affon_copy_typed(v, memory, ptr, count, kind) {
  // v's first `count` elements into wasm memory at byte `ptr`: kind 0 its 32-bit words as they are,
  // 1 converted to f64, 2 BigInt64, 3 BigUint64; false when they cannot be (the buffer detached)
  try {
    const C = ctorOf(v), b = apply(taBuffer, v, []), o = apply(taOffset, v, []);
    const src = kind === 0 ? new U32(b, o, count) : new C(b, o, count);
    const D = kind === 0 ? U32 : kind === 1 ? F64 : kind === 2 ? I64 : U64;
    apply(taSet, new D(apply(memBuffer, memory, []), ptr, count), [src]);
    return true;
  } catch (e) { return false; }
}

const copy = (x, depth) => {
  // own enumerable data of objects (into objects with no prototype: nothing is inherited when they
  // are read) and the elements of arrays; depth ≤ 8, at most 2^20 elements an array
  if (x === null || typeof x !== 'object') return x;
  if (depth > 8) throw new NativeError('nested more than 8 deep');
  if (isArray(x)) {
    const n = x.length;
    if (!(n <= 1048576)) throw new NativeError(`more than 2^20 elements (${n})`);
    const out = [];
    for (let i = 0; i < n; i++) own(out, i, copy(x[i], depth + 1));
    return out;
  }
  const out = create(null), keys = ownKeys(x);
  for (let i = 0; i < keys.length; i++) own(out, keys[i], copy(x[keys[i]], depth + 1));
  return out;
};
export function affon_plain(v) {
  // A caller's value as plain data, read once inside one try: [true, copy] or [false, message].
  // Snapshots are parsed from the copy.
  try { return [true, copy(v, 0)]; } catch (e) { return [false, messageOf(e)]; }
}
export function affon_pick(v, names, nestedName, nestedNames) {
  // The named fields of a caller's options, read by name once (inherited ones and getters included,
  // as a by-name read sees them) into an object with no prototype; `nestedName`'s object likewise
  // with `nestedNames`; other values copied as plain data. [true, picked, the nested object's own
  // keys (to refuse unknown ones)] or [false, message].
  let nestedKeys = [];
  const pick = (o, keys, depth) => {
    const out = create(null);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i], x = o[k];
      if (x === undefined) continue;
      const nested = k === nestedName && depth === 0 && x !== null && typeof x === 'object' && !isArray(x);
      if (nested) nestedKeys = ownKeys(x);
      own(out, k, nested ? pick(x, nestedNames, 1) : copy(x, 1));
    }
    return out;
  };
  try { return [true, pick(v, names, 0), nestedKeys]; } catch (e) { return [false, messageOf(e)]; }
}

export function affon_patch_dispose(obj) {
  // wasm-bindgen's default [Symbol.dispose] is free(), which would make the handle unreadable;
  // affon's [Symbol.dispose]() does exactly what dispose() does.
  const proto = Object.getPrototypeOf(obj);
  if (typeof Symbol.dispose === 'symbol') {
    Object.defineProperty(proto, Symbol.dispose, {
      value: function () { this.dispose(); },
      configurable: true,
      writable: true,
    });
  }
  obj.free();
  return proto;
}

export function affon_proto(obj) {
  // The class prototype handles are recognised by; the placeholder instance is freed.
  const proto = Object.getPrototypeOf(obj);
  obj.free();
  return proto;
}

export function affon_nest(flat, shape) {
  // flat values → nested arrays of `shape`, innermost dimension first: no recursion, whatever the rank
  let level = Array.from(flat);
  for (let k = shape.length - 1; k >= 0; k--) {
    const d = shape[k], next = new Array(level.length / d);
    for (let i = 0; i < next.length; i++) next[i] = level.slice(i * d, (i + 1) * d);
    level = next;
  }
  return level[0];
}

export function affon_install_hook(telemetry, version) {
  // The page-side hook the DevTools panel reads (chrome.devtools.inspectedWindow.eval). A page
  // that made the global unusable (a throwing getter or setter, a read-only value) gets no hook.
  try {
    if (globalThis.__AFFON_DEVTOOLS_HOOK__) return;
    globalThis.__AFFON_DEVTOOLS_HOOK__ = {
      version,
      telemetry,
      snapshot() {
        return {
          time: Date.now(),
          iteration: telemetry.iteration(),
          metrics: telemetry.metrics(),
          liveTensors: telemetry.liveTensors(),
          pools: telemetry.pools(),
          forgotten: telemetry.forgotten(),
          storages: telemetry.storages(2000),
        };
      },
    };
  } catch (e) { /* no hook */ }
}

const NativePromise = Promise, THEN = NativePromise.prototype.then;
const isPrototypeOf = Object.prototype.isPrototypeOf;
export function affon_settle(v) {
  // null when v is not a promise (it is not waited for, a thenable included); otherwise a fresh
  // promise that settles as v does, adopting it through the `then` taken at load: a `then` the page
  // put on v or on Promise.prototype never runs. It fulfils with { value } (no prototype: a value
  // that became a thenable is not adopted); its own `then` and `constructor` are the intrinsic
  // ones, so awaiting it from Rust (JsFuture calls its `then`) runs no page code either.
  let promise = false;
  try { promise = apply(isPrototypeOf, NativePromise.prototype, [v]); } catch (e) { /* a Proxy's trap */ }
  if (!promise) return null;
  const fresh = new NativePromise((ok, no) => {
    const box = (value) => { const b = create(null); own(b, 'value', value); ok(b); };
    try { apply(THEN, v, [box, no]); } catch (e) { no(e); }
  });
  define(fresh, 'then', { value: THEN });
  define(fresh, 'constructor', { value: undefined });
  return fresh;
}

const OWNERSHIP = 'attempted to take ownership of Rust value while it was borrowed';
// A handle's mark: a private field stamped on the object wasm-bindgen made for a pointer (by its
// `__wrap`, or by Program's constructor), holding that pointer. A private field is not copied by a
// clone, cannot be seen or added by page code, and costs about what a property does, so an object
// is the handle for its `__wbg_ptr` exactly when its mark holds that pointer.
const Identity = function (o) { return o; };
class Mark extends Identity {
  #ptr;
  constructor(o, p) { super(o); this.#ptr = p; }
  static of(o) { return #ptr in o ? o.#ptr : undefined; }
}
let constructing = false; // set by a constructor's Rust side as it returns: the next pointer is a handle's
export function affon_constructing() { constructing = true; }
// prototype → (an object of that prototype) => whether it is a handle affon made, or a freed one:
// the guard checks every argument of every call with it
const handleChecks = new Map();
const argumentOk = (a) => {
  if (a === null || (typeof a !== 'object' && typeof a !== 'function')) return true;
  try { const check = handleChecks.get(getProto(a)); return check === undefined || check(a); }
  catch (e) { return false; } // a Proxy whose trap throws: wasm-bindgen's instanceof would throw it
};
export function affon_guard(proto, cls, constructed) {
  // Puts every method, getter and free() of an exported class behind a check of `this` and of
  // its arguments. wasm-bindgen's own code threw a plain Error ('null pointer passed to rust') for
  // a freed handle and ran a Tensor method on a Session's pointer; it took any object of the
  // class's prototype with a `__wbg_ptr` for the handle, so a copy (a deep clone copies own
  // properties onto an object of the same prototype) ran as the handle, and its free() freed what
  // the handle still pointed at. A freed handle is DISPOSED (free() on it does nothing); anything
  // else that is not a handle (its mark, above, holding its pointer) is INVALID_ARGUMENT.
  // what `self` is to this class: 'live' (the handle its mark names), 'freed' (pointer 0), 'copy'
  // (another object given a pointer) or 'other' (not of this class, or unreadable)
  const kind = (self) => {
    try {
      if (getProto(self) !== proto) return 'other';
      const p = self.__wbg_ptr;
      if (p === 0) return 'freed';
      if (typeof p !== 'number') return 'other';
      return Mark.of(self) === p ? 'live' : 'copy';
    } catch (e) { return 'other'; }
  };
  const refuse = (self, what) => {
    const k = kind(self);
    return k === 'freed'
      ? affon_error(`${what}: this ${cls} handle has been freed (free()): it can no longer be used`, 'DISPOSED')
      : k === 'copy'
        ? affon_error(`${what}: called on a copy of a ${cls} handle (an object given its pointer, as a deep ` +
          `clone makes), not on the handle: use the handle itself`, 'INVALID_ARGUMENT')
        : affon_error(`${what}: called on something that is not a ${cls}`, 'INVALID_ARGUMENT');
  };
  // named `__wbg_checked add` and so on: a stack captured for a tensor's origin leaves the frame
  // out with wasm-bindgen's own (platform::capture_stack)
  const named = (g, f) => {
    define(g, 'name', { value: `__wbg_checked ${f.name}`, configurable: true });
    define(g, 'length', { value: f.length, configurable: true });
    return g;
  };
  const guard = (what, f) => named(function (...args) {
    if (kind(this) !== 'live') throw refuse(this, what);
    for (let i = 0; i < args.length; i++) {
      if (!argumentOk(args[i])) {
        throw affon_error(`${what}: argument ${i + 1} is a copy of a handle (an object given a handle's ` +
          `pointer, as a deep clone makes) or cannot be inspected, not a handle affon made`, 'INVALID_ARGUMENT');
      }
    }
    return apply(f, this, args);
  }, f);
  const free = describe(proto, 'free').value;
  const guardedFree = named(function () {
    const k = kind(this);
    if (k === 'freed') return;
    if (k !== 'live') throw refuse(this, `${cls}.free()`);
    try { apply(free, this, []); } catch (e) {
      if (messageOf(e) !== OWNERSHIP) throw e;
      throw affon_error(`${cls}.free(): the handle is in use by a call that has not returned (free() inside ` +
        `that call's callback); it is freed, and its object released, when that call returns`, 'INVALID_ARGUMENT');
    }
  }, free);
  for (const key of keysOf(proto)) {
    const d = describe(proto, key);
    if (key === 'constructor' || key === '__destroy_into_raw' || !d.configurable) continue;
    const what = typeof key === 'symbol' ? `${cls}[${key.description}]` : `${cls}.${key}`;
    if (d.value === free) d.value = guardedFree;
    else if (typeof d.value === 'function') d.value = guard(what, d.value);
    if (d.get) d.get = guard(what, d.get);
    if (d.set) d.set = guard(what, d.set);
    define(proto, key, d);
  }
  // the objects wasm-bindgen makes: `Class.__wrap(ptr)` for a pointer from Rust...
  const ctor = describe(proto, 'constructor')?.value, wrap = ctor && describe(ctor, '__wrap');
  if (wrap && typeof wrap.value === 'function' && wrap.configurable) {
    define(ctor, '__wrap', {
      configurable: false,
      writable: false,
      value: function (p) {
        constructing = false; // (a Rust-side `new` wrapped here, not by the constructor's glue)
        const o = apply(wrap.value, this, [p]);
        new Mark(o, p);
        return o;
      },
    });
  }
  // ...and a constructor's `this.__wbg_ptr = ptr`, stamped only right after its Rust side returned
  if (constructed) {
    define(proto, '__wbg_ptr', {
      configurable: false,
      get() { return undefined; },
      set(p) {
        if (this === proto || this === null || typeof this !== 'object') return;
        define(this, '__wbg_ptr', { value: p, writable: true, enumerable: true, configurable: true });
        if (constructing && typeof p === 'number' && p !== 0) { constructing = false; new Mark(this, p); }
      },
    });
  }
  handleChecks.set(proto, (a) => { const k = kind(a); return k === 'live' || k === 'freed'; });
}
"#)]
extern "C" {
    pub(crate) fn affon_patch_dispose(obj: JsValue) -> JsValue;
    pub(crate) fn affon_proto(obj: JsValue) -> JsValue;
    /// Nested arrays of `shape` (no zero dims) over `flat`; the value itself for a scalar.
    pub(crate) fn affon_nest(flat: &JsValue, shape: &[f64]) -> JsValue;
    pub(crate) fn affon_install_hook(telemetry: JsValue, version: &str);
    pub(crate) fn affon_guard(proto: &JsValue, class: &str, constructed: bool);
    /// Marks the next pointer a constructor's glue assigns as a handle's (see `affon_guard`).
    pub(crate) fn affon_constructing();
    /// A fresh promise settling as `v` does, or null: see `safe::settle`.
    pub(crate) fn affon_settle(v: &JsValue) -> JsValue;
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn affon_error(
        message: &str,
        code: &str,
        oom: bool,
        requested: f64,
        live: f64,
        pool: f64,
        bound: f64,
        owners: JsValue,
        pool_state: JsValue,
    ) -> JsValue;
    /// Defines `o[k] = v` as an own data property (no setter runs).
    pub(crate) fn affon_own(o: &JsValue, k: &str, v: &JsValue);
    /// Whether `f` is an async function (by its tag; false where reading it throws).
    pub(crate) fn affon_is_async(f: &JsValue) -> bool;
    /// A TypedArray's type name, read from its slot, or null.
    pub(crate) fn affon_typed_tag(v: &JsValue) -> Option<String>;
    /// A fresh view over a TypedArray's memory, read from its slots, or null.
    pub(crate) fn affon_typed_view(v: &JsValue) -> JsValue;
    /// A TypedArray's length, read from its slot.
    pub(crate) fn affon_typed_length(v: &JsValue) -> f64;
    /// Copies a TypedArray's first `count` elements into wasm memory (see `args::data`).
    pub(crate) fn affon_copy_typed(v: &JsValue, memory: &JsValue, ptr: u32, count: u32, kind: u32) -> bool;
    /// `[true, copy]` or `[false, message]`: see `safe::plain`.
    pub(crate) fn affon_plain(v: &JsValue) -> js_sys::Array;
    /// `[true, picked]` or `[false, message]`: see `safe::pick`.
    pub(crate) fn affon_pick(
        v: &JsValue,
        names: Vec<String>,
        nested_name: &str,
        nested_names: Vec<String>,
    ) -> js_sys::Array;
}
