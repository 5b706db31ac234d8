//! The op table's JS surface in headless Chromium: camelCase names, number operands, comparisons
//! to `Uint8Array`, the same ops as program nodes with number constants; every rejected call leaves
//! the ledger as it was. Part of `web_programs.rs`.

use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

use super::{field, js_session, ledger, nums};

#[wasm_bindgen(inline_js = r#"
// The op table's JS surface: camelCase names, number operands (kernel parameters of a deferred op, else
// scalars of the tensor's dtype freed after the op), comparisons to Uint8Array, the same ops as program nodes with number constants.
export async function tableOps(session, Program, ledger) {
  const out = {};
  out.moved = []; // rejected calls after which the ledger is not what it was
  const rejects = (k, f) => ledger.around(() => {
    try { f(); out[k] = 'no error'; } catch (e) { out[k] = e.code; }
  }, () => out.moved.push(k));
  const x = session.tensor(new Float32Array([-2, -0.5, 0, 1.5]), [4]);
  const before = session.memory().numBytes;
  const y = x.mul(2);
  out.bytesAfterMul = session.memory().numBytes - before; // the result only (16): the number is a kernel parameter
  out.mul = Array.from(await y.toArray());
  out.bytesAfterRead = session.memory().numBytes - before;
  const g = x.greater(0); // not deferred: its 4-byte scalar is freed after the op
  out.bytesAfterGreater = session.memory().numBytes - before;
  g.dispose();
  out.greater = Array.from(await x.greater(0).toArray());
  out.greaterType = (await x.greater(0).toArray()).constructor.name;
  out.squaredDifference = Array.from(await x.squaredDifference(1).toArray());
  out.logicalNot = Array.from(await x.greater(0).logicalNot().toArray());
  out.floor = Array.from(await x.floor().toArray());
  const i = session.tensor([1, 2, 3], [3], 'int32');
  rejects('fractionalInt', () => i.add(0.5));
  rejects('erfInt', () => i.erf());
  const p = new Program('table');
  const n = p.input('x', 'float32', [4]);
  p.output('y', p.maximum(p.mul(n, 3), 1));
  p.output('eq', p.equal(p.round(n), -0));
  const exe = session.compile(p);
  const r = exe.run({ x });
  out.programY = Array.from(await r.y.toArray());
  out.programEq = Array.from(await r.eq.toArray());
  // composites, eager and as nodes
  out.leaky = Array.from(await x.leakyRelu().toArray());
  out.clip = Array.from(await x.clipByValue(-1, 1).toArray());
  out.expandShape = x.expandDims(0).shape;
  out.anyTrue = await x.greater(1).any().item();
  const q = new Program('composite');
  const qn = q.input('x', 'float32', [-1, 4]);
  q.output('ls', q.logSoftmax(qn));
  const ls = session.compile(q).run({ x: x.reshape([1, 4]) }).ls;
  out.logSoftmax = Array.from(await ls.toArray());
  rejects('badClip', () => x.clipByValue(2, 1));
  const a = session.tensor([1, 2, 3, 4, 5, 6], [3, 2]);
  out.matmulT = Array.from(await a.matmul(a, true, false).toArray()); // aᵀa
  const gamma = session.tensor([1, 2, -1, 0.5], [4]), beta = session.tensor([0.5, 0, 1, -1], [4]);
  out.layerNorm = Array.from(await x.reshape([1, 4]).layerNorm(gamma, beta).toArray());
  // TF.js creation and readback ergonomics
  const nested = session.tensor([[1, 2, 3], [4, 5, 6]]);
  out.nestedShape = nested.shape;
  out.nestedArray = await nested.array();
  out.scalarShape = session.tensor(7).shape;
  out.scalarArray = await session.scalar(2.5).array();
  out.range = Array.from(await session.range(0, 5, 2).data());
  out.rangeInt = (await session.range(3, 0, -1, 'int32').data()).constructor.name;
  out.eye = await session.eye(2).array();
  out.boolNested = Array.from(await session.tensor([[true, false]], undefined, 'bool').data());
  rejects('ragged', () => session.tensor([[1, 2], [3]]));
  rejects('ragged2', () => session.tensor([[1, 2], 3]));
  rejects('emptyRange', () => session.range(0, 0));
  const v = session.tensor([[3, 1, 2], [0, 5, 5]]);
  out.argMax = Array.from(await v.argMax().data());
  out.where = await v.where(v.greater(1), 0).array();
  out.oneHot = await session.tensor([1, 0], undefined, 'int32').oneHot(2).array();
  const w = new Program('select');
  const wn = w.input('v', 'float32', [2, 3]);
  w.output('m', w.argMax(w.where(wn, w.less(wn, 4), -1), 1));
  out.programArgMax = Array.from(await session.compile(w).run({ v }).m.data());
  out.slice = await v.slice([0, 1], [2, -1]).array();
  // numbers for a rank-1 tensor (TF.js); the size may be left out or -1
  const r1 = session.tensor([4, 5, 6, 7, 8]);
  out.sliceNumbers = [await r1.slice(1, 3).array(), await r1.slice(2).array(), await r1.slice(3, -1).array()];
  rejects('sliceString', () => r1.slice('1'));
  out.pad = await v.slice([1, 0], [1, 2]).pad([[0, 0], [1, 1]], 9).array();
  out.tile = await session.tensor([1, 2]).tile([2]).array();
  out.split = await Promise.all(v.split(3, 1).map((t) => t.array()));
  out.splitRest = await Promise.all(v.split([1, -1], 1).map((t) => t.array()));
  out.splitRestFirst = v.split([-1, 2], 1).map((t) => t.shape);
  rejects('splitTwoRests', () => v.split([-1, -1], 1));
  rejects('splitNoRest', () => v.split([3, -1], 1));
  rejects('splitZeroSize', () => v.split([-1, 0], 1));
  // the bad size is named by its place in numOrSizes (the -1 counted)
  try { v.split([-1, 0], 1); } catch (e) { out.splitZeroSizeSays = /size 1 is 0/.test(e.message); }
  out.concat = await session.concat([v, v.neg()], 0).array();
  out.stack = session.stack([v, v], 1).shape;
  const z = new Program('joins');
  const zn = z.input('v', 'float32', [2, 3]);
  const [left, right] = z.split(zn, [1, -1], 1);
  z.output('swapped', z.concat([right, left], 1));
  out.programConcat = await session.compile(z).run({ v }).swapped.array();
  out.prod = await session.tensor([[1, 2, 3], [4, 5, 6]]).prod(1).array();
  out.cumsum = await session.tensor([1, 2, 3, 4]).cumsum(0, true, true).array();
  // nn and gather (NHWC, TF.js argument forms)
  const img = session.tensor([1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 3, 3, 1]);
  const ones = session.ones([2, 2, 1, 1]);
  out.conv = await img.conv2d(ones, 1, 'valid').array();
  out.convSameShape = img.conv2d(ones, [2, 2], 'same').shape;
  out.convPadShape = img.conv2d(ones, 1, 1, 2).shape;
  out.maxPool = await img.maxPool(2, 1, 'valid').array();
  out.avgPool = await img.avgPool(3, 1, 'same').array();
  out.depthwiseShape = img.depthwiseConv2d(session.ones([1, 1, 1, 2]), 1, 'same').shape;
  const rows = session.tensor([[1, 2], [3, 4], [5, 6]]);
  out.gather = await rows.gather(session.tensor([2, 0], undefined, 'int32')).array();
  out.gatherAxis1 = await rows.gather(session.tensor([1], undefined, 'int32'), 1).array();
  const cp = new Program('conv');
  const cx = cp.input('x', 'float32', [-1, 3, 3, 1]);
  cp.output('y', cp.relu(cp.conv2d(cx, cp.constant([1, 1, 1, 1], [2, 2, 1, 1]), [1, 1], 'valid')));
  out.programConv = await session.compile(cp).run({ x: img }).y.array();
  rejects('badPad', () => img.conv2d(ones, 1, 'full'));
  rejects('zeroStride', () => img.conv2d(ones, [0, 1], 'same'));
  const twoChannels = session.ones([2, 2, 2, 1]);
  rejects('channelMismatch', () => img.conv2d(twoChannels, 1, 'same'));
  rejects('gatherFloat', () => rows.gather(rows));
  rejects('poolNoPad', () => img.maxPool(2, 1));
  // training from JS: p.grad, p.sgd, p.adam and their rejections
  const tp = new Program('train');
  const tw = tp.state('w', 'float32', [3]);
  const tl = tp.sum(tp.square(tw));
  const [tg] = tp.grad(tl, [tw]);
  out.gradShape = typeof tg.id;
  rejects('gradNonScalar', () => tp.grad(tp.square(tw), [tw]));
  rejects('sgdNoRate', () => tp.sgd([tw], [tg], {}));
  rejects('adamUnknownOption', () => tp.adam([tw], [tg], { lr: 0.1 }));
  tp.sgd([tw], [tg], { learningRate: 0.25 });
  rejects('assignTrained', () => tp.assign('w', tl));
  const texe = session.compile(tp);
  const tstate = texe.createState({ w: session.tensor([1, -2, 4]) });
  texe.run({}, tstate);
  out.sgdStep = await tstate.get('w').array(); // w − 0.25 · 2w = w / 2
  for (const t of [x, y, i, r.y, r.eq, ls]) t.dispose();
  exe.dispose();
  return out;
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = tableOps)]
    async fn table_ops(session: JsValue, program: JsValue, ledger: JsValue) -> JsValue;
}

#[wasm_bindgen_test]
async fn op_table_js_surface() {
    let s = js_session().await;
    let p: JsValue = affon::js::JsProgram::new("probe".into()).unwrap().into();
    let class = js_sys::Reflect::get(&p, &"constructor".into()).unwrap();
    let out = table_ops(s, class, ledger::js_ledger()).await;
    assert_eq!(
        js_sys::JSON::stringify(&field(&out, "moved"))
            .unwrap()
            .as_string()
            .as_deref(),
        Some("[]"),
        "a rejected call moved the ledger"
    );
    assert_eq!(field(&out, "bytesAfterMul").as_f64(), Some(16.0));
    assert_eq!(field(&out, "bytesAfterRead").as_f64(), Some(16.0));
    assert_eq!(
        field(&out, "bytesAfterGreater").as_f64(),
        Some(16.0 + 16.0),
        "the scalar was freed"
    );
    assert_eq!(nums(&field(&out, "mul")), vec![-4.0, -1.0, 0.0, 3.0]);
    assert_eq!(nums(&field(&out, "greater")), vec![0.0, 0.0, 0.0, 1.0]);
    assert_eq!(
        field(&out, "greaterType").as_string().as_deref(),
        Some("Uint8Array")
    );
    assert_eq!(
        nums(&field(&out, "squaredDifference")),
        vec![9.0, 2.25, 1.0, 0.25]
    );
    assert_eq!(nums(&field(&out, "logicalNot")), vec![1.0, 1.0, 1.0, 0.0]);
    assert_eq!(nums(&field(&out, "floor")), vec![-2.0, -1.0, 0.0, 1.0]);
    assert_eq!(
        field(&out, "fractionalInt").as_string().as_deref(),
        Some("INVALID_ARGUMENT")
    );
    assert_eq!(
        field(&out, "erfInt").as_string().as_deref(),
        Some("DTYPE_MISMATCH")
    );
    assert_eq!(nums(&field(&out, "programY")), vec![1.0, 1.0, 1.0, 4.5]);
    // round(-0.5) = -0 (half to even), round(0) = 0, both equal to -0
    assert_eq!(nums(&field(&out, "programEq")), vec![0.0, 1.0, 1.0, 0.0]);
    let leaky = nums(&field(&out, "leaky"));
    let want = [-0.4f32, -0.1, 0.0, 1.5];
    assert!(
        leaky.iter().zip(want).all(|(g, w)| (*g - w as f64).abs() < 1e-6),
        "{leaky:?}"
    );
    assert_eq!(nums(&field(&out, "clip")), vec![-1.0, -0.5, 0.0, 1.0]);
    assert_eq!(nums(&field(&out, "expandShape")), vec![1.0, 4.0]);
    assert_eq!(field(&out, "anyTrue").as_f64(), Some(1.0));
    // float64 references over x = [-2, -0.5, 0, 1.5]: x − log Σ eˣ; (x − μ)/√(σ² + 1e-5)·γ + β
    let xs = [-2.0f64, -0.5, 0.0, 1.5];
    let lse = xs.iter().map(|v| v.exp()).sum::<f64>().ln();
    let near = |k: &str, want: Vec<f64>| {
        let got = nums(&field(&out, k));
        assert_eq!(got.len(), want.len(), "{k}");
        for (g, w) in got.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-5 * w.abs().max(1.0),
                "{k}: {got:?} vs {want:?}"
            );
        }
    };
    near("logSoftmax", xs.iter().map(|v| v - lse).collect());
    let mu = xs.iter().sum::<f64>() / 4.0;
    let var = xs.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / 4.0;
    let (gamma, beta) = ([1.0, 2.0, -1.0, 0.5], [0.5, 0.0, 1.0, -1.0]);
    let ln: Vec<f64> = (0..4)
        .map(|i| (xs[i] - mu) / (var + 1e-5).sqrt() * gamma[i] + beta[i])
        .collect();
    near("layerNorm", ln);
    assert_eq!(
        field(&out, "badClip").as_string().as_deref(),
        Some("INVALID_ARGUMENT")
    );
    assert_eq!(nums(&field(&out, "matmulT")), vec![35.0, 44.0, 44.0, 56.0]);
    let json = |k: &str| {
        js_sys::JSON::stringify(&field(&out, k))
            .unwrap()
            .as_string()
            .unwrap()
    };
    let expect = [
        ("nestedShape", "[2,3]"),
        ("nestedArray", "[[1,2,3],[4,5,6]]"),
        ("scalarShape", "[]"),
        ("scalarArray", "2.5"),
        ("range", "[0,2,4]"),
        ("rangeInt", "\"Int32Array\""),
        ("eye", "[[1,0],[0,1]]"),
        ("boolNested", "[1,0]"),
        ("ragged", "\"INVALID_ARGUMENT\""),
        ("ragged2", "\"INVALID_ARGUMENT\""),
        ("emptyRange", "\"INVALID_ARGUMENT\""),
        ("argMax", "[0,1]"),
        ("where", "[[3,0,2],[0,5,5]]"),
        ("oneHot", "[[0,1],[1,0]]"),
        ("programArgMax", "[0,0]"),
        ("slice", "[[1,2],[5,5]]"),
        ("sliceNumbers", "[[5,6,7],[6,7,8],[7,8]]"),
        ("sliceString", "\"INVALID_ARGUMENT\""),
        ("pad", "[[9,0,5,9]]"),
        ("tile", "[1,2,1,2]"),
        ("split", "[[[3],[0]],[[1],[5]],[[2],[5]]]"),
        ("splitRest", "[[[3],[0]],[[1,2],[5,5]]]"),
        ("splitRestFirst", "[[2,1],[2,2]]"),
        ("splitTwoRests", "\"INVALID_ARGUMENT\""),
        ("splitNoRest", "\"INVALID_ARGUMENT\""),
        ("splitZeroSize", "\"INVALID_ARGUMENT\""),
        ("splitZeroSizeSays", "true"),
        ("concat", "[[3,1,2],[0,5,5],[-3,-1,-2],[0,-5,-5]]"),
        ("stack", "[2,2,3]"),
        ("programConcat", "[[1,2,3],[5,5,0]]"),
        ("prod", "[6,120]"),
        ("cumsum", "[9,7,4,0]"),
        ("conv", "[[[[12],[16]],[[24],[28]]]]"),
        ("convSameShape", "[1,2,2,1]"),
        ("convPadShape", "[1,3,3,1]"),
        ("maxPool", "[[[[5],[6]],[[8],[9]]]]"),
        ("avgPool", "[[[[3],[3.5],[4]],[[4.5],[5],[5.5]],[[6],[6.5],[7]]]]"),
        ("depthwiseShape", "[1,3,3,2]"),
        ("gather", "[[5,6],[1,2]]"),
        ("gatherAxis1", "[[2],[4],[6]]"),
        ("programConv", "[[[[12],[16]],[[24],[28]]]]"),
        ("badPad", "\"INVALID_ARGUMENT\""),
        ("zeroStride", "\"INVALID_ARGUMENT\""),
        ("channelMismatch", "\"SHAPE_MISMATCH\""),
        ("gatherFloat", "\"DTYPE_MISMATCH\""),
        ("poolNoPad", "\"INVALID_ARGUMENT\""),
        ("gradShape", "\"number\""),
        ("gradNonScalar", "\"INVALID_PROGRAM\""),
        ("sgdNoRate", "\"INVALID_ARGUMENT\""),
        ("adamUnknownOption", "\"INVALID_ARGUMENT\""),
        ("assignTrained", "\"INVALID_PROGRAM\""),
        ("sgdStep", "[0.5,-1,2]"),
    ];
    for (k, want) in expect {
        assert_eq!(json(k), want, "{k}");
    }
}
