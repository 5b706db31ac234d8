//! The ONNX backend node test suite as a test of the project: every case `scripts/onnx-cases.sh`
//! writes from the pinned `onnx` package (outside git) is imported (`Program::from_onnx`), run on
//! this machine's adapter and compared with the suite's outputs (rtol 1e-3, atol 1e-7, as the
//! suite's runner; integers and bools exactly). Prints `N passed, N failed` with the failures
//! grouped by op, and fails when a case `tests/onnx/node.txt` lists as passing does not. An input
//! the importer needs as a constant (a `Reshape`'s shape, a `Slice`'s starts — tract's `input:`
//! cases) is frozen to its value with `inputValues`, as a user would.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use affon::onnx::{input_names, tensor_values, OnnxOptions, Values};
use affon::{DType, Program, Session, SessionOptions};

const RTOL: f64 = 1e-3;
const ATOL: f64 = 1e-7;

fn cases_dir() -> PathBuf {
    let dir = std::env::var_os("AFFON_ONNX_NODE_CASES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").unwrap_or_default();
            PathBuf::from(home).join(".cache/affon/onnx-node-1.23.2")
        });
    assert!(
        dir.join("VERSION").exists(),
        "no ONNX node cases in {}: run scripts/onnx-cases.sh (it creates the pinned venv and writes them)",
        dir.display()
    );
    dir
}

/// The values of `dir/name` (a serialized TensorProto).
fn read(dir: &Path, name: &str) -> Result<Values, String> {
    let bytes = std::fs::read(dir.join(name)).map_err(|e| format!("{name}: {e}"))?;
    tensor_values(&bytes).map_err(|e| format!("{name}: {e}"))
}

/// Imports the model, freezing each input the importer asks for as a constant.
fn import(bytes: &[u8], inputs: &BTreeMap<String, Values>) -> Result<(Program, BTreeSet<String>), String> {
    let mut options = OnnxOptions::default();
    for _ in 0..8 {
        match Program::from_onnx(bytes, &options) {
            Ok(p) => return Ok((p, options.input_values.keys().cloned().collect())),
            Err(e) => {
                let msg = e.to_string();
                let wanted = msg
                    .split("needs input '")
                    .nth(1)
                    .and_then(|r| r.split('\'').next());
                match wanted.and_then(|n| inputs.get(n).map(|v| (n, v))) {
                    Some((n, v)) if !options.input_values.contains_key(n) => {
                        options.input_values.insert(n.to_string(), v.data.clone());
                        options
                            .input_shapes
                            .insert(n.to_string(), v.shape.iter().map(|&d| d as i64).collect());
                    }
                    _ => return Err(format!("import: {msg}")),
                }
            }
        }
    }
    Err("import: too many inputs needed as constants".into())
}

fn close(got: f64, want: f64, dtype: DType) -> bool {
    match dtype {
        DType::Float32 => {
            (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= ATOL + RTOL * want.abs()
        }
        _ => got == want,
    }
}

/// Runs one case: `Ok` when every output matches.
fn run_case(s: &Session, dir: &Path) -> Result<(), String> {
    if let Ok(kind) = std::fs::read_to_string(dir.join("kind.txt")) {
        return Err(format!("kind: {}", kind.trim()));
    }
    let bytes = std::fs::read(dir.join("model.onnx")).map_err(|e| e.to_string())?;
    let names = input_names(&bytes).map_err(|e| format!("import: {e}"))?;
    let mut inputs = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        let v = read(dir, &format!("input_{i}.pb"))?;
        inputs.insert(n.clone(), v);
    }
    let (program, frozen) = import(&bytes, &inputs)?;
    let exe = s.compile(&program).map_err(|e| format!("compile: {e}"))?;
    let mut tensors = vec![];
    for (n, v) in inputs.iter().filter(|(n, _)| !frozen.contains(*n)) {
        let t = s
            .tensor_from_f64(&v.data, &v.shape, v.dtype)
            .map_err(|e| format!("input '{n}': {e}"))?;
        tensors.push((n.as_str(), t));
    }
    let refs: Vec<(&str, &affon::Tensor)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
    let outputs = exe.run(&refs, None).map_err(|e| format!("run: {e}"))?;
    for (i, (name, t)) in outputs.iter().enumerate() {
        let want = read(dir, &format!("output_{i}.pb"))?;
        if t.shape() != want.shape.as_slice() {
            return Err(format!(
                "output '{name}': shape {:?}, expected {:?}",
                t.shape(),
                want.shape
            ));
        }
        let got = pollster::block_on(t.read_f64()).map_err(|e| format!("read: {e}"))?;
        if let Some(k) = (0..got.len()).find(|&k| !close(got[k], want.data[k], want.dtype)) {
            return Err(format!(
                "output '{name}'[{k}] = {}, expected {}",
                got[k], want.data[k]
            ));
        }
    }
    exe.dispose();
    Ok(())
}

/// The cases `tests/onnx/node.txt` lists as passing (one a line; `#` starts a comment).
fn listed() -> BTreeSet<String> {
    let text = include_str!("onnx/node.txt");
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn onnx_backend_node_suite() {
    let dir = cases_dir();
    let s = Session::new(SessionOptions::default()).expect("a GPU adapter is required");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the cases directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    let (mut passed, mut failed) = (BTreeSet::new(), BTreeMap::new());
    let mut by_op: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let ops = std::fs::read_to_string(case.join("ops.txt")).unwrap_or_default();
        let op = ops.lines().next().unwrap_or("?").to_string();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_case(&s, case)))
            .unwrap_or_else(|_| Err("panicked".into()));
        let e = by_op.entry(op).or_default();
        match r {
            Ok(()) => {
                e.0 += 1;
                passed.insert(name);
            }
            Err(why) => {
                e.1 += 1;
                failed.insert(name, why);
            }
        }
    }
    report(&passed, &failed, &by_op);
    let expected = listed();
    let broken: Vec<String> = expected
        .iter()
        .filter(|c| !passed.contains(*c))
        .map(|c| {
            format!(
                "{c}: {}",
                failed.get(c).map_or("not in the suite", String::as_str)
            )
        })
        .collect();
    let new: Vec<&String> = passed.iter().filter(|c| !expected.contains(*c)).collect();
    if !new.is_empty() {
        println!(
            "passing but not listed in tests/onnx/node.txt ({}): {new:?}",
            new.len()
        );
    }
    assert!(
        broken.is_empty(),
        "listed cases that failed ({}):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

fn report(
    passed: &BTreeSet<String>,
    failed: &BTreeMap<String, String>,
    by_op: &BTreeMap<String, (usize, usize)>,
) {
    let total = passed.len() + failed.len();
    println!(
        "ONNX node suite: {} passed, {} failed, of {total}",
        passed.len(),
        failed.len()
    );
    for (op, (p, f)) in by_op {
        if *f > 0 {
            println!("  {op}: {p} passed, {f} failed");
        }
    }
    if std::env::var_os("AFFON_ONNX_VERBOSE").is_some() {
        for (c, why) in failed {
            println!("    {c}: {why}");
        }
    }
}

/// Malformed models never panic (an abort in the browser): every truncation of a few of the suite's
/// models, and byte flips, import to a model or an error.
#[test]
fn malformed_models_are_errors_not_panics() {
    let dir = cases_dir();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut tried = 0;
    for case in [
        "test_conv_with_strides_padding",
        "test_gemm_all_attributes",
        "test_slice",
        "test_reshape_zero_dim",
        "test_split_variable_parts_2d_opset18",
        "test_batchnorm_example",
    ] {
        let bytes = std::fs::read(dir.join(case).join("model.onnx")).expect(case);
        let mut variants: Vec<Vec<u8>> = (0..bytes.len()).map(|n| bytes[..n].to_vec()).collect();
        for _ in 0..300 {
            let mut b = bytes.clone();
            let at = (next() % b.len() as u64) as usize;
            b[at] ^= (next() % 255 + 1) as u8;
            variants.push(b);
        }
        for v in variants {
            tried += 1;
            let r = std::panic::catch_unwind(|| Program::from_onnx(&v, &OnnxOptions::default()).map(drop));
            assert!(
                r.is_ok(),
                "{case}: a {}-byte variant panicked the importer",
                v.len()
            );
        }
    }
    assert!(tried > 1800, "{tried} variants");
}
