//! The op table for the elementwise families: each op is declared **once** here — its Rust method
//! name, enum variant, JS/JSON name, dtype rule, doc and WGSL body — and every surface is generated
//! from the list: the `UnaryOp`/`BinaryOp` enums and their names (`ops/mod.rs`), shape/dtype
//! inference (`ops/infer.rs`), the kernels and fused kernels (`kernels/elementwise.rs`,
//! `kernels/fused.rs`), the eager `Tensor` methods (`tensor_ops.rs`), the `Program` node methods
//! (`program/mod.rs`), the JSON form (`program/json.rs`, by name), the JS bindings and so the
//! TypeScript declarations (`js/tensor.rs`, `js/program.rs`). Adding an elementwise op is one line
//! here and its test (CONTRIBUTING.md).
//!
//! Each list is handed to a callback macro (`$then!`), so one declaration feeds every surface.
//!
//! Unary entries: `(method, Variant, "jsName", rule, "doc", "WGSL body of fn f(x: T) -> T")`.
//! Rules: `any` (every numeric dtype), `signed` (float32, int32), `float` (float32), `bool`.
//! An optional last column `vector = same` (the body reads the same over `V = vec4<f32>`) or
//! `vector = "…"` (its own body) gives the op a vector form in fused float32 chains
//! (`kernels/vector.rs`); an op without it runs lane by lane there. Binary entries take it too.
//! Binary entries: `(method, Variant, "jsName", rule, "doc", "WGSL expression of x and y")`.
//! Rules: `numeric` (same dtype in and out), `float`, `compare` (any same dtypes → bool),
//! `logical` (bool, bool → bool). Comparison and logical bodies yield `bool`.

/// The unary elementwise ops.
#[macro_export]
#[doc(hidden)]
macro_rules! unary_table {
    ($then:ident) => {
        $then! {
            (neg, Neg, "neg", signed, "`-x`", "return -x;",
             (|v, x, y, g| v.neg(g)),
             vector = same),
            (abs, Abs, "abs", any, "`|x|`", "return abs(x);",
             (|v, x, y, g| { let s = v.p.sign(x)?; v.mul(g, s) }),
             vector = same),
            (square, Square, "square", any, "`x²`", "return x * x;",
             (|v, x, y, g| { let t = v.scale(x, 2.0)?; v.mul(g, t) }),
             vector = same),
            (sqrt, Sqrt, "sqrt", float, "`√x`", "return sqrt(x);",
             (|v, x, y, g| { let t = v.scale(y, 2.0)?; v.div(g, t) }),
             vector = same),
            // NaN in is NaN out, tested on the bits: SwiftShader's exp(NaN) is +∞, its log(NaN) 89.1 and log(0) −88.0.
            // exp is the built-in, 3.7e-6 relative off near ±88 (within 6.1e-7 up to ±10): a reduction by ln 2
            // and a polynomial gave 1.1e-7 but made the 8-op chain 2.0-3.4× slower on SwiftShader, on every
            // lane or only past |x| = 10 (`bench-kernel-study ab`; docs/accuracy.md)
            (exp, Exp, "exp", float, "`eˣ`", "return select(exp(x), x, (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u);",
             (|v, x, y, g| v.mul(g, y)),
             vector = "return select(exp(x), x, ((bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u)));"),
            (log, Log, "log", float, "`ln x` (NaN below 0)",
             "return select(select(select(log(x), -bitcast<f32>(0x7f800000u | (bitcast<u32>(x) & 0u)), x == 0.0), bitcast<f32>(0x7fc00000u | (bitcast<u32>(x) & 0u)), x < 0.0), x, (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u);",
             (|v, x, y, g| v.div(g, x)),
             vector = "return select(select(select(log(x), -bitcast<V>(vec4<u32>(0x7f800000u) | (bitcast<vec4<u32>>(x) & vec4<u32>(0u))), x == V(0.0)), bitcast<V>(vec4<u32>(0x7fc00000u) | (bitcast<vec4<u32>>(x) & vec4<u32>(0u))), x < V(0.0)), x, ((bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u)));"),
            // select, not max: NaN must propagate; f32 relu is special-cased in the kernel (below)
            (relu, Relu, "relu", any, "`max(x, 0)` (NaN propagates)", "return select(x, T(0), x < T(0));",
             (|v, x, y, g| { let m = v.positive(x)?; v.mask(g, m) }),
             vector = "return select(select(x, V(0.0), x < V(0.0)), x, ((bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u)));"),
            (sigmoid, Sigmoid, "sigmoid", float, "`1 / (1 + e⁻ˣ)`", "return select(1.0 / (1.0 + exp(-x)), x, (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u);",
             (|v, x, y, g| { let t = v.one_minus(y)?; let t = v.mul(y, t)?; v.mul(g, t) }),
             vector = "return select(V(1.0) / (V(1.0) + exp(-x)), x, ((bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u)));"),
            // tanh via exp(-2|x|), which never overflows
            (tanh, Tanh, "tanh", float, "`tanh x`", "let e = exp(-2.0 * abs(x)); return sign(x) * (1.0 - e) / (1.0 + e);",
             (|v, x, y, g| { let t = v.mul(y, y)?; let t = v.one_minus(t)?; v.mul(g, t) }),
             vector = same),
            (floor, Floor, "floor", float, "largest integer ≤ x", "return floor(x);",
             (),
             vector = same),
            (ceil, Ceil, "ceil", float, "smallest integer ≥ x", "return ceil(x);",
             (),
             vector = same),
            (round, Round, "round", float, "nearest integer, halves to even", "return round(x);",
             (),
             vector = same),
            (sign, Sign, "sign", signed, "-1, 0 or 1", "return sign(x);",
             (),
             vector = same),
            (reciprocal, Reciprocal, "reciprocal", float, "`1 / x`", "return 1.0 / x;",
             (|v, x, y, g| { let t = v.mul(y, y)?; let t = v.mul(g, t)?; v.neg(t) }),
             vector = same),
            (rsqrt, Rsqrt, "rsqrt", float, "`1 / √x`", "return inverseSqrt(x);",
             (|v, x, y, g| { let t = v.mul(y, y)?; let t = v.mul(t, y)?; let t = v.scale(t, -0.5)?; v.mul(g, t) }),
             vector = same),
            // log(1 + x) accurate near 0 (the log(u) · x / (u − 1) correction). Bodies that choose between
            // formulas do it with `select` (both computed, no control flow: on a SIMD CPU adapter every lane
            // pays for a branch), the first test the outermost; +∞ is its own log1p (inf·inf/inf would be NaN)
            (log1p, Log1p, "log1p", float, "`ln(1 + x)`, accurate near 0",
             "let u = 1.0 + x; return select(select(select(select(log(u) * x / (u - 1.0), x, u == 1.0), -bitcast<f32>(0x7f800000u | (bitcast<u32>(x) & 0u)), u == 0.0), bitcast<f32>(0x7fc00000u | (bitcast<u32>(x) & 0u)), x < -1.0), x, bitcast<u32>(x) == 0x7f800000u || (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u);",
             (|v, x, y, g| { let t = v.add_scalar(x, 1.0)?; v.div(g, t) })),
            (expm1, Expm1, "expm1", float, "`eˣ − 1`, accurate near 0",
             "let u = exp(x); let m = u - 1.0; return select(select(select(m * x / log(u), m, abs(x) > 1.0), -1.0, m == -1.0), x, u == 1.0);",
             (|v, x, y, g| { let t = v.add_scalar(y, 1.0)?; v.mul(g, t) })),
            // sin and cos reduce x exactly by π/2 (Cody–Waite: π/2 in parts of 8, 8, 8 and 24 bits, so each
            // k·part is exact for |k| < 2^16, |x| ≤ 1e5), then minimax polynomials on [−π/4, π/4] (Cephes'
            // sinf/cosf); the WGSL built-ins promise 2⁻¹¹ only inside [−π, π]
            (sin, Sin, "sin", float, "`sin x`, accurate to 1e-6 for |x| ≤ 1e5",
             "let k = round(x * 0.63661975); let r = (((x - k * 1.5703125) - k * 4.825592e-4) - k * 1.2665987e-6) - k * 9.920936e-10; let z = r * r; let s = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4)); let c = 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5)); let q = i32(k) & 3; let v = select(s, c, (q & 1) == 1); return select(v, -v, q >= 2);",
             (|v, x, y, g| { let t = v.p.cos(x)?; v.mul(g, t) })),
            (cos, Cos, "cos", float, "`cos x`, accurate to 1e-6 for |x| ≤ 1e5",
             "let k = round(x * 0.63661975); let r = (((x - k * 1.5703125) - k * 4.825592e-4) - k * 1.2665987e-6) - k * 9.920936e-10; let z = r * r; let s = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4)); let c = 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5)); let q = (i32(k) + 1) & 3; let v = select(s, c, (q & 1) == 1); return select(v, -v, q >= 2);",
             (|v, x, y, g| { let t = v.p.sin(x)?; let t = v.mul(g, t)?; v.neg(t) })),
            // Abramowitz–Stegun 7.1.26 (|error| < 1.5e-7)
            (erf, Erf, "erf", float, "the error function",
             "let t = 1.0 / (1.0 + 0.3275911 * abs(x)); let y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-x * x); return sign(x) * y;",
             (|v, x, y, g| { let t = v.mul(x, x)?; let t = v.scale(t, -1.0)?; let t = v.p.exp(t)?; let t = v.scale(t, std::f64::consts::FRAC_2_SQRT_PI)?; v.mul(g, t) }),
             vector = same),
            (gelu, Gelu, "gelu", float, "`x · Φ(x)`, the exact (erf) form",
             "let z = abs(x) * 0.7071067811865476; let t = 1.0 / (1.0 + 0.3275911 * z); let e = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-z * z); return 0.5 * x * (1.0 + sign(x) * e);",
             (|v, x, y, g| { let e = v.scale(x, std::f64::consts::FRAC_1_SQRT_2)?; let e = v.p.erf(e)?; let e = v.add_scalar(e, 1.0)?; let cdf = v.scale(e, 0.5)?; let q = v.mul(x, x)?; let q = v.scale(q, -0.5)?; let q = v.p.exp(q)?; let q = v.scale(q, 0.3989422804014327)?; let q = v.mul(x, q)?; let t = v.add(cdf, q)?; v.mul(g, t) }),
             vector = same),
            (silu, Silu, "silu", float, "`x · sigmoid(x)`", "return x / (1.0 + exp(-x));",
             (|v, x, y, g| { let s = v.p.sigmoid(x)?; let t = v.one_minus(s)?; let t = v.mul(x, t)?; let t = v.add_scalar(t, 1.0)?; let t = v.mul(s, t)?; v.mul(g, t) }),
             vector = same),
            // max(x, 0) + log1p(e^-|x|): finite at ±100
            (softplus, Softplus, "softplus", float, "`ln(1 + eˣ)`, computed stably",
             "let e = exp(-abs(x)); let u = 1.0 + e; return select(max(x, 0.0) + select(e, log(u) * e / (u - 1.0), u != 1.0), x, (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u);",
             (|v, x, y, g| { let s = v.p.sigmoid(x)?; v.mul(g, s) })),
            (elu, Elu, "elu", float, "`x` if x > 0, else `eˣ − 1`",
             "let u = exp(x); let m = u - 1.0; return select(select(select(m * x / log(u), m, x < -1.0), x, u == 1.0), x, x > 0.0);",
             (|v, x, y, g| { let t = v.add_scalar(y, 1.0)?; let pos = v.positive(x)?; let one = v.c(1.0)?; let d = v.select(one, pos, t)?; v.mul(g, d) })),
            // the outer selects give the saturated ends exactly (±inf included); NaN falls through both
            (hard_swish, HardSwish, "hardSwish", float, "`x · min(max(x/6 + 1/2, 0), 1)` (MobileNetV3's, ONNX `HardSwish`)",
             "return select(select(x * (x / 6.0 + 0.5), x, x >= 3.0), 0.0, x <= -3.0);",
             (|v, x, y, g| { let mid = v.scale(x, 1.0 / 3.0)?; let mid = v.add_scalar(mid, 0.5)?; let hi = v.p.binary_scalar($crate::ops::BinaryOp::Greater, x, 3.0)?; let lo = v.p.binary_scalar($crate::ops::BinaryOp::Less, x, -3.0)?; let one = v.c(1.0)?; let d = v.select(one, hi, mid)?; let d = v.mask_not(d, lo)?; v.mul(g, d) })),
            (logical_not, LogicalNot, "logicalNot", bool, "`!x` (bool)", "return 1u - x;",
             ()),
        }
    };
}

/// The binary elementwise ops (NumPy broadcasting).
#[macro_export]
#[doc(hidden)]
macro_rules! binary_table {
    ($then:ident) => {
        $then! {
            (add, Add, "add", numeric, "`a + b`", "x + y",
             (|v, a, b, y, g| Ok([Some(g), Some(g)])),
             vector = same),
            (sub, Sub, "sub", numeric, "`a - b`", "x - y",
             (|v, a, b, y, g| Ok([Some(g), Some(v.neg(g)?)])),
             vector = same),
            (mul, Mul, "mul", numeric, "`a * b`", "x * y",
             (|v, a, b, y, g| Ok([Some(v.mul(g, b)?), Some(v.mul(g, a)?)])),
             vector = same),
            (div, Div, "div", numeric, "`a / b` (integers truncate; by zero gives the dividend, as WGSL defines)", "x / y",
             (|v, a, b, y, g| { let ga = v.div(g, b)?; let t = v.div(y, b)?; let t = v.mul(g, t)?; Ok([Some(ga), Some(v.neg(t)?)]) }),
             vector = same),
            (pow, Pow, "pow", float, "`aᵇ` (a negative base with an integer exponent keeps its sign rule)", "affon_pow(x, y)",
             (|v, a, b, y, g| { let bm1 = v.add_scalar(b, -1.0)?; let t = v.p.pow(a, bm1)?; let t = v.mul(t, b)?; let ga = v.mul(g, t)?; let pos = v.positive(a)?; let la = v.p.log(a)?; let la = v.mask(la, pos)?; let t = v.mul(y, la)?; Ok([Some(ga), Some(v.mul(g, t)?)]) })),
            (maximum, Maximum, "maximum", numeric, "the larger (NaN propagates)", "affon_max(x, y)",
             (|v, a, b, y, g| { let m = v.p.greater_equal(a, b)?; Ok([Some(v.mask(g, m)?), Some(v.mask_not(g, m)?)]) }),
             vector = "select(select(max(x, y), y, ((bitcast<vec4<u32>>(y) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u))), x, ((bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u)))"),
            (minimum, Minimum, "minimum", numeric, "the smaller (NaN propagates)", "affon_min(x, y)",
             (|v, a, b, y, g| { let m = v.p.less_equal(a, b)?; Ok([Some(v.mask(g, m)?), Some(v.mask_not(g, m)?)]) }),
             vector = "select(select(min(x, y), y, ((bitcast<vec4<u32>>(y) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u))), x, ((bitcast<vec4<u32>>(x) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u)))"),
            (modulo, Mod, "mod", numeric, "`a mod b` with the sign of `b` (floored, as TF.js)", "affon_mod(x, y)",
             (|v, a, b, y, g| { let q = v.div(a, b)?; let q = v.p.floor(q)?; let t = v.mul(g, q)?; Ok([Some(g), Some(v.neg(t)?)]) })),
            (squared_difference, SquaredDifference, "squaredDifference", numeric, "`(a - b)²`", "(x - y) * (x - y)",
             (|v, a, b, y, g| { let d = v.sub(a, b)?; let d = v.scale(d, 2.0)?; let ga = v.mul(g, d)?; Ok([Some(ga), Some(v.neg(ga)?)]) }),
             vector = same),
            (equal, Equal, "equal", compare, "`a == b` (bool)", "x == y",
             ()),
            (not_equal, NotEqual, "notEqual", compare, "`a != b` (bool)", "x != y",
             ()),
            (greater, Greater, "greater", compare, "`a > b` (bool)", "x > y",
             ()),
            (greater_equal, GreaterEqual, "greaterEqual", compare, "`a >= b` (bool)", "x >= y",
             ()),
            (less, Less, "less", compare, "`a < b` (bool)", "x < y",
             ()),
            (less_equal, LessEqual, "lessEqual", compare, "`a <= b` (bool)", "x <= y",
             ()),
            (logical_and, LogicalAnd, "logicalAnd", logical, "`a && b` (bool)", "(x & y) != 0u",
             ()),
            (logical_or, LogicalOr, "logicalOr", logical, "`a || b` (bool)", "(x | y) != 0u",
             ()),
        }
    };
}

/// The reductions over a set of axes (`axes`: one or several, all when omitted; `keepDims`).
/// Entries: `(method, Variant, "jsName", rule, "doc", "WGSL combine of x and y")`; rules as the
/// unary ops' (`numeric`: every numeric dtype, `float`: float32).
#[macro_export]
#[doc(hidden)]
macro_rules! reduce_table {
    ($then:ident) => {
        $then! {
            (sum, Sum, "sum", numeric, "The sum.", "x + y",
             (|v, x, y, g, axes, keep| v.sum_grad(x, g, axes, keep, false))),
            (mean, Mean, "mean", float, "The arithmetic mean (float32).", "x + y",
             (|v, x, y, g, axes, keep| v.sum_grad(x, g, axes, keep, true))),
            (max, Max, "max", numeric, "The maximum.", "max(x, y)",
             (|v, x, y, g, axes, keep| v.extreme_grad(x, y, g, axes, keep))),
            (min, Min, "min", numeric, "The minimum.", "min(x, y)",
             (|v, x, y, g, axes, keep| v.extreme_grad(x, y, g, axes, keep))),
            (prod, Prod, "prod", numeric, "The product.", "x * y",
             (|v, x, y, g, axes, keep| v.prod_grad(x, y, g, axes, keep))),
        }
    };
}

/// The ops with attributes or kernels of their own. Each entry:
/// `(method, Variant, "jsName", "doc", kernel, [tensor args], [required attrs], [optional attrs],
/// gradient [, scratch = (|input, output| words)] [, epilogue = (|ctx, enc, inputs, out, epi| …)])`,
/// an attribute written `field "jsonAndJsName": Type => "TypeScript type"` and an optional one
/// `field "name": Type = default => "TypeScript type"`. `kernel` is the recording function in
/// `crate::kernels` (called with the operands, the output and each attribute); the shape and dtype
/// rule is `ops::rules::<method>` (called with the argument types and each attribute). From the
/// entry come: the `Op` variant (`ops/mod.rs`), its name and arity, inference (`ops/infer.rs`), the
/// kernel dispatch (`kernels/mod.rs`), the JSON fields (`program/json.rs`), the eager method
/// (`tensor_ops.rs`), the program node (`program/mod.rs`), the JS methods and TypeScript types
/// (`js/tensor.rs`, `js/program.rs`) and the op reference (docs/ops.md) (`ops/reference.rs`).
/// The optional columns, last and in this order: `scratch`, the words of scratch its kernel needs
/// for an input shape and an output element count (`ops/scratch.rs`; `Op::scratch_words`), and
/// `epilogue`, the recording of a producer that runs a fused elementwise chain in its store
/// (`kernels::record_group`; `Op::takes_epilogue`). Every generator matches the columns it reads
/// and takes the rest as `$($rest:tt)*`: a new last column touches this table and its reader only.
///
/// `surfaced` ops get every surface; `internal` ones (reached through composites such as `slice`
/// or overloads such as `where`'s number operand) get all but the eager, program and JS methods.
#[macro_export]
#[doc(hidden)]
macro_rules! kernel_table {
    ($then:ident) => {
        $then! {
            surfaced: [
                (cast, Cast, "cast", "Converts to `dtype` (float→int truncates toward zero; to bool is `x != 0`).",
                 elementwise::cast, [a], [dtype "dtype": $crate::dtype::DType => "DType"], [],
             (|v, y, g| Ok(vec![Some(v.cast_grad(a, g)?)]))),
                (softmax, Softmax, "softmax", "Softmax along `axis` (negative counts from the end).",
                 lines::softmax, [a], [], [axis "axis": i64 = -1 => "number"],
             (|v, y, g| Ok(vec![Some(v.softmax_grad(y, g, *axis)?)])),
             scratch = (|input, _| $crate::ops::scratch::lines(input, *axis, 2))),
                (reshape, Reshape, "reshape", "Same elements in a new shape (one entry may be -1).",
                 layout::reshape, [a], [shape "shape": Vec<i64> => "number[]"], [],
             (|v, y, g| Ok(vec![Some(v.reshape_like(g, a)?)]))),
                (transpose, Transpose, "transpose", "Permutes the axes (absent: reverses them).",
                 layout::transpose, [a], [], [perm "perm": Option<Vec<i64>> = None => "number[]"],
             (|v, y, g| Ok(vec![Some(v.transpose_grad(a, g, perm)?)]))),
                (copy, Clone, "clone", "A copy with its own storage.",
                 layout::copy, [a], [], [],
             (|v, y, g| Ok(vec![Some(g)]))),
                (cumsum, Cumsum, "cumsum", "Running sums along `axis`; `exclusive` leaves each element out, `reverse` sums from the end.",
                 lines::cumsum, [a], [],
                 [axis "axis": i64 = 0 => "number", exclusive "exclusive": bool = false => "boolean",
                  reverse "reverse": bool = false => "boolean"],
             (|v, y, g| Ok(vec![Some(v.p.cumsum(g, *axis, *exclusive, !*reverse)?)])),
             scratch = (|input, _| $crate::ops::scratch::lines(input, *axis, 1))),
                (gather, Gather, "gather", "Slices of `a` along `axis` at int32 `indices` (output shape: a's dims before axis, indices' dims, a's dims after); an index outside the axis reads 0 and is reported by the session's next readback or `sync()` (checked on the device; constant indices when the program is built).",
                 layout::gather, [a, indices], [], [axis "axis": i64 = 0 => "number"],
             (|v, y, g| Ok(vec![Some(v.gather_grad(a, indices, g, *axis)?), None]))),
                (conv2d, Conv2d, "conv2d", "2-D convolution, NHWC input `[n, h, w, inC]` (rank 3: one image), filter `[fh, fw, inC, outC]`.",
                 conv::conv2d, [x, filter],
                 [strides "strides": $crate::ops::Pair => "Pair", pad "pad": $crate::ops::Pad => "Padding"],
                 [dilations "dilations": $crate::ops::Pair = $crate::ops::Pair::ONE => "Pair"],
             (|v, y, g| v.conv_grads(false, x, filter, g, strides, pad, dilations)),
             epilogue = (|ctx, enc, inputs, out, epi| conv::conv2d_with(ctx, enc, inputs, out, (strides, pad, dilations), Some(epi)))),
                (depthwise_conv2d, DepthwiseConv2d, "depthwiseConv2d", "Depthwise 2-D convolution, NHWC, filter `[fh, fw, inC, mult]` → `inC · mult` channels.",
                 conv::depthwise_conv2d, [x, filter],
                 [strides "strides": $crate::ops::Pair => "Pair", pad "pad": $crate::ops::Pad => "Padding"],
                 [dilations "dilations": $crate::ops::Pair = $crate::ops::Pair::ONE => "Pair"],
             (|v, y, g| v.conv_grads(true, x, filter, g, strides, pad, dilations)),
             epilogue = (|ctx, enc, inputs, out, epi| conv::depthwise_with(ctx, enc, inputs, out, (strides, pad, dilations), Some(epi)))),
                (max_pool, MaxPool, "maxPool", "Max over each window (NHWC; padding cells never win).",
                 pool::max_pool, [x],
                 [filter_size "filterSize": $crate::ops::Pair => "Pair", strides "strides": $crate::ops::Pair => "Pair",
                  pad "pad": $crate::ops::Pad => "Padding"], [],
             (|v, y, g| Ok(vec![Some(v.pool_grad(true, x, g, filter_size, strides, pad)?)]))),
                (avg_pool, AvgPool, "avgPool", "Mean over each window (NHWC; only cells inside the input count).",
                 pool::avg_pool, [x],
                 [filter_size "filterSize": $crate::ops::Pair => "Pair", strides "strides": $crate::ops::Pair => "Pair",
                  pad "pad": $crate::ops::Pad => "Padding"], [],
             (|v, y, g| Ok(vec![Some(v.pool_grad(false, x, g, filter_size, strides, pad)?)]))),
                (matmul_t, MatMul, "matmul", "`[..., M, K] × [..., K, N] → [..., M, N]`; leading (batch) dims broadcast; `transposeA`/`transposeB` read that operand's last two axes swapped (in the kernel: no copy).",
                 matmul::matmul, [a, b], [],
                 [transpose_a "transposeA": bool = false => "boolean", transpose_b "transposeB": bool = false => "boolean"],
             (|v, y, g| v.matmul_grads(a, b, g, *transpose_a, *transpose_b)),
             epilogue = (|ctx, enc, inputs, out, epi| matmul::matmul_with(ctx, enc, inputs, out, (*transpose_a, *transpose_b), Some(epi)))),
            ],
            internal: [
                (conv_input_grad, ConvInputGrad, "convInputGrad", "The gradient of `conv2d` (or, `depthwise`, of `depthwiseConv2d`) with respect to its input `x` (its shape) for the upstream gradient `g` (what `p.grad` adds).",
                 conv::input_grad, [x, filter, g],
                 [strides "strides": $crate::ops::Pair => "Pair", pad "pad": $crate::ops::Pad => "Padding",
                  dilations "dilations": $crate::ops::Pair => "Pair", depthwise "depthwise": bool => "boolean"], [], ()),
                (conv_filter_grad, ConvFilterGrad, "convFilterGrad", "The gradient of `conv2d` (or, `depthwise`, of `depthwiseConv2d`) with respect to its filter (its shape) for the upstream gradient `g`.",
                 conv::filter_grad, [x, filter, g],
                 [strides "strides": $crate::ops::Pair => "Pair", pad "pad": $crate::ops::Pad => "Padding",
                  dilations "dilations": $crate::ops::Pair => "Pair", depthwise "depthwise": bool => "boolean"], [], ()),
                (pool_grad, PoolGrad, "poolGrad", "The gradient of `maxPool` (`max`: to each window's first maximum) or `avgPool` (shared by the cells inside) with respect to `x`.",
                 pool::pool_grad, [x, g],
                 [max "max": bool => "boolean", filter_size "filterSize": $crate::ops::Pair => "Pair",
                  strides "strides": $crate::ops::Pair => "Pair", pad "pad": $crate::ops::Pad => "Padding"], [], (),
             scratch = (|input, _| $crate::ops::scratch::pool_grad(input, *max, filter_size, strides, *pad))),
                (select, Where, "where", "Elements of `a` where the bool `cond` holds, else of `b`; all three broadcast.",
                 layout::select, [a, cond, b], [], [],
             (|v, y, g| Ok(vec![Some(v.mask(g, cond)?), None, Some(v.mask_not(g, cond)?)]))),
                (window, Window, "window", "Output coordinate `c` reads input coordinate `c + start` (modulo the input's size with `tile`), or `value` outside it: `slice`, `pad`, `tile`.",
                 layout::window, [a],
                 [start "start": Vec<i64> => "number[]", size "size": Vec<usize> => "number[]",
                  tile "tile": bool => "boolean", value "value": $crate::ops::Fill => "number"], [],
             (|v, y, g| Ok(vec![Some(v.window_grad(a, g, start, size, *tile)?)]))),
            ],
        }
    };
}

/// Composites: ops made of other ops (`ops/compose.rs`), checked whole before their first kernel
/// (eager: inferred dry and admitted at once; in a program: a rejected call adds no node). Each
/// entry: `(method, "jsName", "doc", tensors, [required attrs], [optional attrs] [-> many], |g| call)`,
/// attributes written as in `kernel_table!`. `tensors` is `[a, b, …]` (the first the receiver:
/// `a.op(b, …)`), then optionally `or_number [c, …]` (a tensor or a JS number: `OrNumber`) and
/// `optional [d, …]` (`Option`s), in that order of arguments; or `list [xs]` (a session method
/// over a list of tensors, `session.op(xs, …)`; a program's takes a list of nodes). `-> many`:
/// several results (`Vec`, JS an array). `call` builds the composite on the graph `g` from the
/// tensor args and attributes (by those names): a tensor is a `&V`, an optional one `&Option<V>`,
/// an `or_number` one `&OrNumber<V>`, a list `&Vec<V>`. From the entry come the eager method
/// (`tensor_ops.rs`), the program node (`program/mod.rs`), the JS methods and TypeScript types
/// (`js/tensor.rs`, `js/program.rs`) and the op reference (docs/ops.md). Composites have no JSON name:
/// a program's JSON holds the primitives they expand to.
#[macro_export]
#[doc(hidden)]
macro_rules! composite_table {
    ($then:ident) => {
        $then! {
            (leaky_relu, "leakyRelu", "`x` where `x > 0`, else `alpha · x` (float32).", [a], [],
             [alpha "alpha": f64 = 0.2 => "number"],
             |g| $crate::ops::compose::leaky_relu(g, a, alpha)),
            (clip_by_value, "clipByValue", "Clamps every element to `[min, max]`.", [a],
             [min "min": f64 => "number", max "max": f64 => "number"], [],
             |g| $crate::ops::compose::clip_by_value(g, a, min, max)),
            (hard_sigmoid, "hardSigmoid", "`min(max(alpha · x + beta, 0), 1)` (float32; ONNX `HardSigmoid`).", [a], [],
             [alpha "alpha": f64 = 0.2 => "number", beta "beta": f64 = 0.5 => "number"],
             |g| $crate::ops::compose::hard_sigmoid(g, a, alpha, beta)),
            (log_sum_exp, "logSumExp", "`log Σ exp(x)` over `axes` (all when omitted), computed stably.", [a], [],
             [axes "axes": $crate::ops::Axes = $crate::ops::Axes::ALL => "Axes",
              keep_dims "keepDims": bool = false => "boolean"],
             |g| $crate::ops::compose::log_sum_exp(g, a, &axes, keep_dims)),
            (log_softmax, "logSoftmax", "`x − logSumExp(x)` along `axis`, computed stably.", [a], [],
             [axis "axis": i64 = -1 => "number"],
             |g| $crate::ops::compose::log_softmax(g, a, axis)),
            (expand_dims, "expandDims", "A new axis of size 1 at `axis`.", [a], [],
             [axis "axis": i64 = 0 => "number"],
             |g| $crate::ops::compose::expand_dims(g, a, axis)),
            (squeeze, "squeeze", "Removes `axes` (each of size 1), or every axis of size 1 when omitted.", [a], [],
             [axes "axes": $crate::ops::Axes = $crate::ops::Axes::ALL => "Axes"],
             |g| $crate::ops::compose::squeeze(g, a, Some(&axes))),
            (all, "all", "Whether every element of a bool tensor over `axes` is true.", [a], [],
             [axes "axes": $crate::ops::Axes = $crate::ops::Axes::ALL => "Axes",
              keep_dims "keepDims": bool = false => "boolean"],
             |g| $crate::ops::compose::all_any(g, a, false, &axes, keep_dims)),
            (any, "any", "Whether any element of a bool tensor over `axes` is true.", [a], [],
             [axes "axes": $crate::ops::Axes = $crate::ops::Axes::ALL => "Axes",
              keep_dims "keepDims": bool = false => "boolean"],
             |g| $crate::ops::compose::all_any(g, a, true, &axes, keep_dims)),
            (layer_norm, "layerNorm", "`(x − mean) / √(var + ε) · gamma + beta` over the last axis.", [a, gamma, beta], [],
             [epsilon "epsilon": f64 = 1e-5 => "number"],
             |g| $crate::ops::compose::layer_norm(g, a, gamma, beta, epsilon)),
            (arg_max, "argMax", "The first index of the maximum along `axis` (int32).", [a], [],
             [axis "axis": i64 = -1 => "number"],
             |g| $crate::ops::compose::arg_extreme(g, a, true, axis)),
            (arg_min, "argMin", "The first index of the minimum along `axis` (int32).", [a], [],
             [axis "axis": i64 = -1 => "number"],
             |g| $crate::ops::compose::arg_extreme(g, a, false, axis)),
            (one_hot, "oneHot", "float32 one-hot rows of `depth` (below 2^31) for int32 indices.", [a],
             [depth "depth": i64 => "number"], [],
             |g| $crate::ops::compose::one_hot(g, a, depth)),
            (select, "where", "Elements of `a` where the bool `cond` holds, else of `b` — a tensor, or a number (a scalar of `a`'s dtype, made for the op); all three broadcast (TF.js `where(cond, a, b)`).",
             [a, cond] or_number [b], [], [],
             |g| $crate::ops::compose::select(g, a, cond, b.as_ref())),
            (batch_norm, "batchNorm", "`(x − mean) / √(variance + ε) · scale + offset`, parameters broadcast (per channel in NHWC); float32.",
             [a, mean, variance] optional [offset, scale], [],
             [epsilon "varianceEpsilon": f64 = 1e-3 => "number"],
             |g| $crate::ops::compose::batch_norm(g, a, mean, variance, offset.as_ref(), scale.as_ref(), epsilon)),
            (split_by, "split", "Equal parts (a number), or slices of the given sizes along `axis` — one size may be `-1`, what the others leave (as in TF.js; two `-1`s, or nothing left for it, `INVALID_ARGUMENT`).",
             [a], [num_or_sizes "numOrSizes": $crate::ops::SplitSizes => "number | number[]"],
             [axis "axis": i64 = 0 => "number"] -> many,
             |g| $crate::ops::compose::split_by(g, a, &num_or_sizes, axis)),
            (concat, "concat", "Joins the tensors along an existing `axis` (all of one session, one dtype, the same shape but along `axis`).",
             list [tensors], [], [axis "axis": i64 = 0 => "number"],
             |g| $crate::ops::compose::concat(g, &tensors.iter().collect::<Vec<_>>(), axis)),
            (stack, "stack", "Joins the tensors (all of one shape) along a new `axis`.",
             list [tensors], [], [axis "axis": i64 = 0 => "number"],
             |g| $crate::ops::compose::stack(g, &tensors.iter().collect::<Vec<_>>(), axis)),
            (slice, "slice", "`size` elements from `begin` per dimension (`-1` or a missing entry: to the end).", [a],
             [begin "begin": $crate::ops::Coords => "number | number[]"], [size "size": $crate::ops::Coords = $crate::ops::Coords::NONE => "number | number[]"],
             |g| $crate::ops::compose::slice(g, a, &begin, &size)),
            (pad, "pad", "Pads each dimension with `[before, after]` elements of `value`.", [a],
             [paddings "paddings": Vec<(i64, i64)> => "Array<[number, number]>"], [value "value": f64 = 0.0 => "number"],
             |g| $crate::ops::compose::pad(g, a, &paddings, value)),
            (tile, "tile", "Repeats the tensor `reps[k]` times along dimension `k`.", [a],
             [reps "reps": Vec<i64> => "number[]"], [],
             |g| $crate::ops::compose::tile(g, a, &reps)),
        }
    };
}

/// WGSL helpers the binary bodies use, for the element type `T` (prepended to every binary and fused
/// kernel that needs one).
pub(crate) fn binary_helpers(t: &str) -> String {
    // NaN tested on the bits: GPU compilers may assume finite math and fold `x != x` away (seen on
    // lavapipe), and branch-free: a select costs a SIMD lane nothing where an early return costs every
    // lane the control flow (SwiftShader: 4-16 % of a fused chain's kernel, `bench-kernel-study chain`)
    let (max, min) = if t == "f32" {
        let pick = |f: &str| {
            format!(
                "return select(select({f}(x, y), y, (bitcast<u32>(y) & 0x7fffffffu) > 0x7f800000u), x, \
                 (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u);"
            )
        };
        (pick("max"), pick("min"))
    } else {
        ("return max(x, y);".to_string(), "return min(x, y);".to_string())
    };
    let modulo = match t {
        "f32" => "return x - y * floor(x / y);",
        "i32" => "if (y == 0) { return x; } let r = x % y; if (r != 0 && ((r < 0) != (y < 0))) { return r + y; } return r;",
        _ => "if (y == 0u) { return x; } return x % y;",
    };
    // the NaN is built from `x` so it is not a const-expression (WGSL rejects NaN constants)
    let pow = if t == "f32" {
        "fn affon_pow(x: T, y: T) -> T { if (y == 0.0) { return 1.0; } let r = pow(abs(x), y); if (x >= 0.0 || (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u) { return r; } if (fract(y) != 0.0) { return bitcast<f32>(0x7fc00000u | (bitcast<u32>(x) & 0u)); } return select(r, -r, fract(y * 0.5) != 0.0); }\n"
    } else {
        ""
    };
    format!(
        "fn affon_max(x: T, y: T) -> T {{ {max} }}\n\
         fn affon_min(x: T, y: T) -> T {{ {min} }}\n\
         fn affon_mod(x: T, y: T) -> T {{ {modulo} }}\n{pow}"
    )
}
