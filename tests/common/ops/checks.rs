//! One op run on the GPU and checked against the reference, with the tolerance its op takes.

use affon::ops::{BinaryOp, Op, ReduceOp, UnaryOp};
use affon::{DType, Result, Session, Tensor};

use super::*;

pub fn run_unary(t: &Tensor, op: UnaryOp) -> Result<Tensor> {
    t.apply(&Op::Unary(op), &[])
}

pub fn run_binary(a: &Tensor, op: BinaryOp, b: &Tensor) -> Result<Tensor> {
    a.apply(&Op::Binary(op), &[b])
}

pub fn run_reduce(t: &Tensor, op: ReduceOp, axes: &[i64], keep: bool) -> Result<Tensor> {
    let op = Op::Reduce {
        op,
        axes: axes.to_vec(),
        keep_dims: keep,
    };
    t.apply(&op, &[])
}

pub async fn check_unary<T: Num>(s: &Session, op: UnaryOp, x: &Host<T>) {
    let what = format!("{} {} {:?}", Op::Unary(op).name(), T::DTYPE, x.shape);
    let tol = match op {
        UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Relu | UnaryOp::Square => Tol::Exact,
        _ => REL,
    };
    let tol = if T::DTYPE == DType::Float32 {
        tol
    } else {
        Tol::Exact
    };
    let t = x.upload(s);
    expect(&what, run_unary(&t, op), &unary_ref(op, x), tol).await;
}

pub async fn check_binary<T: Num>(s: &Session, op: BinaryOp, a: &Host<T>, b: &Host<T>) {
    let what = format!(
        "{} {} {:?} with {:?}",
        Op::Binary(op).name(),
        T::DTYPE,
        a.shape,
        b.shape
    );
    let tol = if T::DTYPE == DType::Float32 && op == BinaryOp::Div {
        REL
    } else {
        Tol::Exact
    };
    let (ta, tb) = (a.upload(s), b.upload(s));
    expect(&what, run_binary(&ta, op, &tb), &binary_ref(op, a, b), tol).await;
}

pub async fn check_matmul<T: Num>(s: &Session, a: &Host<T>, b: &Host<T>) {
    let what = format!("matmul {} {:?} · {:?}", T::DTYPE, a.shape, b.shape);
    let k = a.shape[a.shape.len() - 1] as f64;
    let tol = if T::DTYPE == DType::Float32 {
        // k products summed in some order: 1e-5·k·max|a|·max|b| + 1e-6
        Tol::Close {
            rel: 0.0,
            abs: 1e-5 * k * a.max_abs() * b.max_abs() + 1e-6,
        }
    } else {
        Tol::Exact
    };
    let (ta, tb) = (a.upload(s), b.upload(s));
    expect(&what, ta.matmul(&tb), &matmul_ref(a, b), tol).await;
}

/// `h` with its last two axes swapped (what a transposed operand's storage holds).
pub fn swap_last2<T: Num>(h: &Host<T>) -> Host<T> {
    let r = h.shape.len();
    let (rows, cols) = (h.shape[r - 2], h.shape[r - 1]);
    let mut data = Vec::with_capacity(h.data.len());
    for m in h.data.chunks(rows * cols) {
        for c in 0..cols {
            for row in 0..rows {
                data.push(m[row * cols + c]);
            }
        }
    }
    let mut shape = h.shape.clone();
    shape.swap(r - 2, r - 1);
    Host { shape, data }
}

/// `op(a)·op(b)` with the operands stored transposed and read in place (`transposeA/B`), against
/// the reference of the untransposed product.
pub async fn check_matmul_t<T: Num>(s: &Session, a: &Host<T>, b: &Host<T>, ta: bool, tb: bool) {
    let what = format!(
        "matmul {} {:?} · {:?} (transposeA {ta}, transposeB {tb})",
        T::DTYPE,
        a.shape,
        b.shape
    );
    let k = a.shape[a.shape.len() - 1] as f64;
    let tol = Tol::Close {
        rel: 0.0,
        abs: 1e-5 * k * a.max_abs() * b.max_abs() + 1e-6,
    };
    let sa = if ta { swap_last2(a) } else { a.clone() };
    let sb = if tb { swap_last2(b) } else { b.clone() };
    let (xa, xb) = (sa.upload(s), sb.upload(s));
    expect(&what, xa.matmul_t(&xb, ta, tb), &matmul_ref(a, b), tol).await;
}

pub async fn check_reduce<T: Num>(s: &Session, op: ReduceOp, x: &Host<T>, axes: &[i64], keep: bool) {
    let name = Op::Reduce {
        op,
        axes: vec![],
        keep_dims: keep,
    }
    .name();
    let what = format!("{name} {} {:?} axes {axes:?} keepDims {keep}", T::DTYPE, x.shape);
    let rank = x.shape.len();
    let n: usize = if axes.is_empty() {
        x.shape.iter().product()
    } else {
        axes.iter().map(|&a| x.shape[norm_axis(a, rank)]).product()
    };
    let tol = match (T::DTYPE, op) {
        // n terms summed in some order: 1e-5·n·max|x| + 1e-6; the mean is that divided by n
        (DType::Float32, ReduceOp::Sum) => Tol::Close {
            rel: 0.0,
            abs: 1e-5 * n as f64 * x.max_abs() + 1e-6,
        },
        (DType::Float32, ReduceOp::Mean) => Tol::Close {
            rel: 0.0,
            abs: 1e-5 * x.max_abs() + 1e-6,
        },
        _ => Tol::Exact,
    };
    let t = x.upload(s);
    expect(
        &what,
        run_reduce(&t, op, axes, keep),
        &reduce_ref(op, x, axes, keep),
        tol,
    )
    .await;
}

pub async fn check_softmax(s: &Session, x: &Host<f32>, axis: i64) {
    let what = format!("softmax float32 {:?} axis {axis}", x.shape);
    // n exponentials (WGSL: within 3 + 2|x| ULP, ≤ 2e-6 relative where an element passes 1e-6)
    // summed, then one division: 2e-5·|w| + 1e-6, whatever n (a sum missing a term worth more
    // than 2e-5 of the row's total fails)
    let tol = Tol::Close { rel: 2e-5, abs: 1e-6 };
    let t = x.upload(s);
    expect(&what, t.softmax(axis), &softmax_ref(x, axis), tol).await;
}

pub async fn check_layout<T: Val>(s: &Session, x: &Host<T>) {
    let n = x.data.len();
    let t = x.upload(s);
    let reshapes: Vec<Vec<i64>> = match x.shape.len() {
        0 => vec![vec![1], vec![-1], vec![1, 1, -1]],
        _ => vec![
            vec![-1],
            vec![n as i64],
            vec![1, -1, 1],
            vec![-1, *x.shape.last().unwrap() as i64],
            vec![x.shape[0] as i64, -1],
        ],
    };
    for r in &reshapes {
        let what = format!("reshape {} {:?} to {r:?}", T::DTYPE, x.shape);
        expect(&what, t.reshape(r.as_slice()), &reshape_ref(x, r), Tol::Exact).await;
    }
    let rank = x.shape.len() as i64;
    let mut perms: Vec<Option<Vec<i64>>> = vec![None, Some((0..rank).collect())];
    if rank == 3 {
        perms.extend([[1, 0, 2], [0, 2, 1], [2, 0, 1], [1, 2, 0], [-1, 0, 1]].map(|p| Some(p.to_vec())));
    }
    if rank == 4 {
        perms.push(Some(vec![3, 1, 0, 2]));
    }
    for p in &perms {
        let what = format!("transpose {} {:?} perm {p:?}", T::DTYPE, x.shape);
        let want = transpose_ref(x, p.as_deref());
        expect(&what, t.transpose(p.clone()), &want, Tol::Exact).await;
    }
}

pub async fn check_cast(s: &Session, from: DType, words: &[u32], shape: &[usize]) {
    let shape_v = shape.to_vec();
    let t = match from {
        DType::Float32 => s.tensor(
            &words.iter().map(|&w| f32::from_bits(w)).collect::<Vec<_>>(),
            shape,
        ),
        DType::Int32 => s.tensor(&words.iter().map(|&w| w as i32).collect::<Vec<_>>(), shape),
        DType::Uint32 => s.tensor(words, shape),
        DType::Bool => s.tensor(&words.iter().map(|&w| w != 0).collect::<Vec<_>>(), shape),
    }
    .unwrap_or_else(|e| panic!("upload {from} {shape_v:?}: {e}"));
    for to in [DType::Float32, DType::Int32, DType::Uint32, DType::Bool] {
        let what = format!("cast {from} {shape_v:?} to {to}");
        let out = t
            .cast(to)
            .unwrap_or_else(|e| panic!("{what}: the op failed: {e}"));
        assert_eq!(out.dtype(), to, "{what}: result dtype");
        assert_eq!(out.shape(), shape, "{what}: result shape");
        let got = read_words_typed(&out)
            .await
            .unwrap_or_else(|e| panic!("{what}: read failed: {e}"));
        drop(out);
        let want: Vec<u32> = words.iter().map(|&w| cast_word(w, from, to)).collect();
        // compared as words (exact) but reported as values
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "{what}: first difference at index {i} (coordinates {:?}): input {}, got {}, want {}",
                unravel(i, shape),
                from.word_to_f64(words[i]),
                to.word_to_f64(got[i]),
                to.word_to_f64(want[i])
            );
        }
    }
}
