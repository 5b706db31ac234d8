//! Program, Executable and ExecutionState scenarios, written once and run on both GPU targets.
#![allow(dead_code)]

use std::collections::HashMap;

use affon::{DType, Program, Session};

/// The API.md example: `acc += sum(x, 0)`, output `relu(acc)`.
pub fn running_mean() -> Program {
    let mut p = Program::new("running_mean");
    let x = p.input("x", DType::Float32, &[-1, 4]).unwrap();
    let acc = p.state("acc", DType::Float32, &[4]).unwrap();
    let s = p.sum(x, &[0], false).unwrap();
    let next = p.add(acc, s).unwrap();
    p.assign("acc", next).unwrap();
    let y = p.relu(next).unwrap();
    p.output("y", y).unwrap();
    p
}

/// A stateful program run 100 times gives the analytic answer; outputs disposed each time keep
/// live bytes exactly flat; a repeated input shape compiles nothing; a new one compiles once.
pub async fn stateful_program_100_runs(s: &Session) {
    let exe = s
        .compile(&Program::from_json(&running_mean().to_json_string()).unwrap())
        .unwrap();
    assert_eq!(exe.name(), "running_mean");
    let state = exe.create_state(&[]).unwrap();
    assert_eq!(state.byte_length(), 16);
    // rows [1,2,3,4] - k, k = 0..3 → column sums 10 - 6 = [-2, 1, 4, 7]... computed on the CPU
    let x: Vec<f32> = (0..12)
        .map(|i| (i % 4) as f32 + 1.0 - (i / 4) as f32 * 2.0)
        .collect();
    let col: Vec<f32> = (0..4).map(|c| (0..3).map(|r| x[r * 4 + c]).sum()).collect();
    let input = s.tensor(&x, &[3, 4]).unwrap();
    let live0 = s.stats().live_bytes;
    let compiles0 = s.stats().compiles;
    let mut last = vec![];
    for i in 0..100 {
        let mut out = exe.run(&[("x", &input)], Some(&state)).unwrap();
        let (name, y) = out.remove(0);
        assert_eq!(name, "y");
        assert_eq!(y.origin(), "program 'running_mean' output 'y'");
        if i == 99 {
            last = y.read::<f32>().await.unwrap();
        }
        y.dispose();
        assert_eq!(s.stats().live_bytes, live0, "live bytes flat after run {i}");
    }
    let want: Vec<f32> = col.iter().map(|c| (c * 100.0).max(0.0)).collect();
    assert_eq!(last, want);
    let acc = state.get("acc").unwrap();
    assert_eq!(
        acc.read::<f32>().await.unwrap(),
        col.iter().map(|c| c * 100.0).collect::<Vec<_>>()
    );
    let st = s.stats();
    assert_eq!(
        st.compiles - compiles0,
        1,
        "one specialisation for one input shape"
    );
    assert_eq!(exe.cache_entries(), 1);
    assert_eq!(st.executions, 100);
    // another shape: one more specialisation
    let x5 = s.ones(&[5, 4], DType::Float32).unwrap();
    exe.run(&[("x", &x5)], Some(&state)).unwrap();
    assert_eq!(s.stats().compiles - compiles0, 2);
    assert_eq!(s.stats().executable_cache_entries, 2);
    exe.dispose();
    assert_eq!(
        s.stats().executable_cache_entries,
        0,
        "disposing removes its cache entries"
    );
    assert!(state.get("acc").is_ok(), "the state outlives its executable");
}

/// `memoryPlan()` is what telemetry sees: the run's peak over the bytes live before it.
pub async fn memory_plan_matches_telemetry(s: &Session) {
    let mut p = Program::new("chain");
    let x = p.input("x", DType::Float32, &[-1]).unwrap();
    let a = p.exp(x).unwrap();
    let b = p.mul(a, a).unwrap();
    let c = p.relu(b).unwrap();
    let d = p.sum(c, &[], false).unwrap();
    p.output("total", d).unwrap();
    let exe = s.compile(&p).unwrap();
    let shapes = HashMap::from([("x".to_string(), vec![1024])]);
    let plan = exe.memory_plan(&shapes).unwrap();
    assert_eq!(
        (
            plan.intermediate_bytes,
            plan.output_bytes,
            plan.state_bytes,
            plan.peak_bytes
        ),
        (4096, 4, 0, 4100),
        "a (4 KiB: it has two readers) is the only intermediate — mul and relu are computed as the \
         sum reads them — and the 4-byte output is made while a is live"
    );
    assert_eq!(
        exe.memory_plan(&HashMap::new()).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    let xs: Vec<f32> = (0..1024).map(|i| (i as f32) / 1024.0 - 0.5).collect();
    let x = s.tensor(&xs, &[1024]).unwrap();
    let before = s.stats().live_bytes;
    affon::telemetry::reset_peak();
    let out = exe.run(&[("x", &x)], None).unwrap();
    let st = s.stats();
    assert_eq!(
        st.peak_bytes,
        before + plan.peak_bytes,
        "telemetry confirms the plan"
    );
    assert_eq!(
        st.live_bytes,
        before + 4,
        "intermediates are gone when run returns"
    );
    let got = out[0].1.item_f64().await.unwrap();
    let want: f64 = xs.iter().map(|&v| ((v as f64).exp().powi(2)).max(0.0)).sum();
    assert!((got - want).abs() <= 1e-4 * want, "{got} vs {want}");
}

/// Every misuse of run/createState/compile has its code and changes nothing.
pub async fn program_errors_change_nothing(s: &Session) {
    let exe = s.compile(&running_mean()).unwrap();
    let state = exe.create_state(&[]).unwrap();
    let x = s.ones(&[2, 4], DType::Float32).unwrap();
    let xi = s.ones(&[2, 4], DType::Int32).unwrap();
    let wrong = s.ones(&[2, 5], DType::Float32).unwrap();
    let other = s.compile(&running_mean()).unwrap();
    let other_state = other.create_state(&[]).unwrap();
    let bad_init = s.ones(&[3], DType::Float32).unwrap();
    let before = crate::ledger::ledger();
    let before_exec = s.stats();
    let code = |r: affon::Result<Vec<(String, affon::Tensor)>>| r.map(|_| ()).unwrap_err().code();
    assert_eq!(
        code(exe.run(&[], Some(&state))),
        "INVALID_ARGUMENT",
        "missing input"
    );
    assert_eq!(
        code(exe.run(&[("x", &x), ("z", &x)], Some(&state))),
        "INVALID_ARGUMENT",
        "extra input"
    );
    assert_eq!(
        code(exe.run(&[("x", &x), ("x", &x)], Some(&state))),
        "INVALID_ARGUMENT",
        "twice"
    );
    assert_eq!(code(exe.run(&[("x", &xi)], Some(&state))), "DTYPE_MISMATCH");
    assert_eq!(code(exe.run(&[("x", &wrong)], Some(&state))), "SHAPE_MISMATCH");
    assert_eq!(
        code(exe.run(&[("x", &x)], None)),
        "INVALID_ARGUMENT",
        "state required"
    );
    assert_eq!(
        code(exe.run(&[("x", &x)], Some(&other_state))),
        "INVALID_ARGUMENT",
        "foreign state"
    );
    assert_eq!(
        exe.create_state(&[("acc", &bad_init)])
            .map(|_| ())
            .unwrap_err()
            .code(),
        "SHAPE_MISMATCH"
    );
    assert_eq!(
        exe.create_state(&[("nope", &bad_init)])
            .map(|_| ())
            .unwrap_err()
            .code(),
        "INVALID_ARGUMENT"
    );
    let mut bad = Program::new("bad");
    let i = bad.input("x", DType::Float32, &[2, 3]).unwrap();
    assert_eq!(bad.matmul(i, i).unwrap_err().code(), "SHAPE_MISMATCH");
    assert_eq!(
        bad.sqrt(bad.nodes().len()).unwrap_err().code(),
        "INVALID_PROGRAM",
        "unknown node"
    );
    // a zero or negative dimension is INVALID_ARGUMENT in a program too (API.md), and adds no node
    let n = bad.nodes().len();
    for dims in [&[0i64][..], &[2, -2], &[-3]] {
        assert_eq!(
            bad.input("z", DType::Float32, dims).unwrap_err().code(),
            "INVALID_ARGUMENT",
            "{dims:?}"
        );
    }
    assert_eq!(
        bad.reshape(i, vec![0i64, 6]).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    // a state's or a constant's zero dimension too, and a constant value its dtype cannot hold
    let zero_state = bad.state("z0", DType::Float32, &[2, 0]).unwrap_err();
    let zero_constant = bad.constant(&[], &[0], DType::Float32).unwrap_err();
    let int = bad.constant(&[1.5], &[1], DType::Int32).unwrap_err();
    for e in [zero_state, zero_constant, int] {
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    }
    assert_eq!(
        bad.reshape(i, vec![-2i64, 3]).unwrap_err().code(),
        "INVALID_ARGUMENT"
    );
    // a scalar has no axis 0: the node is refused (INVALID_PROGRAM, naming it) when it is added
    let sc = bad.state("sc", DType::Float32, &[]).unwrap();
    let nodes = bad.nodes().len();
    let e = bad.max(sc, &[0], false).unwrap_err();
    assert_eq!(e.code(), "INVALID_PROGRAM", "{e}");
    assert!(e.to_string().contains("axis 0"), "{e}");
    assert_eq!(bad.nodes().len(), nodes, "a refused node is not added");
    // the internal gradient ops a program's JSON may name: their shapes are checked like any op's
    // (x, filter and g must be a forward convolution's), never trusted by the kernels
    let conv_grad = |op: &str, x: &str, f: &str, g: &str, dw: bool| {
        format!(
            r#"{{"format":"affon.program/1","name":"g","nodes":[{{"op":"input","name":"x","dtype":"float32","shape":{x}}},{{"op":"input","name":"f","dtype":"float32","shape":{f}}},{{"op":"input","name":"g","dtype":"float32","shape":{g}}},{{"op":"{op}","args":[0,1,2],"strides":1,"pad":"valid","dilations":1,"depthwise":{dw}}}],"outputs":[{{"name":"y","node":3}}]}}"#
        )
    };
    for op in ["convInputGrad", "convFilterGrad"] {
        for (x, f, g, dw) in [
            ("[2]", "[2]", "[2]", false),
            ("[1,4,4,2]", "[3,3,2,5]", "[1,2,2,4]", false),
            ("[1,4,4,2]", "[3,3,2,5]", "[1,3,3,5]", false),
            ("[1,4,4,2]", "[3,3,2,2]", "[1,2,2,2]", true),
            ("[1,4,4,2]", "[3,3,2,5]", "[1,2,2,5]", true),
        ] {
            let e = Program::from_json(&conv_grad(op, x, f, g, dw))
                .map(|_| ())
                .unwrap_err();
            assert_eq!(e.code(), "SHAPE_MISMATCH", "{op} x {x} filter {f} g {g}: {e}");
        }
        // the forward shapes are accepted
        Program::from_json(&conv_grad(op, "[1,4,4,2]", "[3,3,2,5]", "[1,2,2,5]", false)).unwrap();
        Program::from_json(&conv_grad(op, "[1,4,4,2]", "[3,3,2,3]", "[1,2,2,6]", true)).unwrap();
    }
    // `where` with a number for `b`: shapes that do not broadcast add nothing, not even the constant
    let cond = bad.input("c", DType::Bool, &[4]).unwrap();
    let (n, json) = (bad.nodes().len().max(n), bad.to_json_string());
    assert_eq!(
        bad.select_scalar(i, cond, 2.0).unwrap_err().code(),
        "SHAPE_MISMATCH"
    );
    assert_eq!(
        (bad.nodes().len(), bad.to_json_string()),
        (n, json),
        "a rejected where adds no node"
    );
    assert_eq!(
        s.compile(&bad).map(|_| ()).unwrap_err().code(),
        "INVALID_PROGRAM",
        "no outputs"
    );
    crate::ledger::assert_unchanged(&before, &crate::ledger::ledger(), "program misuse");
    let after = s.stats();
    assert_eq!(
        (after.executions, after.compiles),
        (before_exec.executions, before_exec.compiles),
        "failed runs execute and compile nothing"
    );
    drop(bad_init);
    // initialised state; disposed objects
    let init = s.tensor(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let st2 = exe.create_state(&[("acc", &init)]).unwrap();
    assert_eq!(
        st2.get("acc").unwrap().read::<f32>().await.unwrap(),
        vec![1.0, 2.0, 3.0, 4.0]
    );
    st2.dispose();
    let before = crate::ledger::ledger();
    assert_eq!(code(exe.run(&[("x", &x)], Some(&st2))), "DISPOSED");
    assert_eq!(st2.get("acc").map(|_| ()).unwrap_err().code(), "DISPOSED");
    crate::ledger::assert_unchanged(&before, &crate::ledger::ledger(), "a disposed state");
    x.dispose();
    let before = crate::ledger::ledger();
    assert_eq!(code(exe.run(&[("x", &x)], Some(&state))), "DISPOSED");
    crate::ledger::assert_unchanged(&before, &crate::ledger::ledger(), "a disposed input");
    exe.dispose();
    exe.dispose();
    let before = crate::ledger::ledger();
    assert_eq!(code(exe.run(&[("x", &wrong)], Some(&state))), "DISPOSED");
    assert_eq!(exe.create_state(&[]).map(|_| ()).unwrap_err().code(), "DISPOSED");
    crate::ledger::assert_unchanged(&before, &crate::ledger::ledger(), "a disposed executable");
}

/// Outputs that alias inputs, constants or each other are copies (fixups); constants are held
/// by the executable and released on dispose.
pub async fn outputs_aliasing_and_constants(s: &Session) {
    let mut p = Program::new("alias");
    let x = p.input("x", DType::Int32, &[3]).unwrap();
    let c = p.constant(&[10.0, 20.0, 30.0], &[3], DType::Int32).unwrap();
    let y = p.add(x, c).unwrap();
    p.output("same", x).unwrap();
    p.output("y", y).unwrap();
    p.output("y2", y).unwrap();
    p.output("c", c).unwrap();
    let live0 = s.stats().live_bytes;
    let exe = s.compile(&p).unwrap();
    assert_eq!(
        s.stats().live_bytes,
        live0 + 12,
        "the constant is live storage of the executable"
    );
    let x = s.tensor(&[1i32, 2, 3], &[3]).unwrap();
    let fix0 = s.stats().fixups;
    let out = exe.run(&[("x", &x)], None).unwrap();
    assert_eq!(s.stats().fixups - fix0, 3, "same, y2 and c are copies");
    let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["same", "y", "y2", "c"]);
    assert_eq!(out[0].1.read::<i32>().await.unwrap(), vec![1, 2, 3]);
    assert_eq!(out[1].1.read::<i32>().await.unwrap(), vec![11, 22, 33]);
    assert_eq!(out[2].1.read::<i32>().await.unwrap(), vec![11, 22, 33]);
    assert_eq!(out[3].1.read::<i32>().await.unwrap(), vec![10, 20, 30]);
    drop(out);
    drop(x);
    exe.dispose();
    assert_eq!(
        s.stats().live_bytes,
        live0,
        "constants released with the executable"
    );
}

/// TensorFlow.js's memory cases, natively in Rust (the JS versions run in the browser tests).
pub async fn tidy_and_profile(s: &Session) {
    let base = s.memory();
    let r = s.tidy(|| {
        let a = s.tensor(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
        let b = a.square().unwrap();
        b.sum(&[], false).unwrap()
    });
    let m = s.memory();
    assert_eq!(
        (m.num_tensors - base.num_tensors, m.num_bytes - base.num_bytes),
        (1, 4)
    );
    assert_eq!(r.item_f64().await.unwrap(), 14.0);
    drop(r);
    let (info, x) = s
        .profile(|| {
            let x = s.tensor(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
            let x2 = x.square().unwrap();
            x2.dispose();
            let x2 = x.square().unwrap();
            x2.dispose();
            x
        })
        .unwrap();
    assert_eq!((info.new_bytes, info.new_tensors), (12, 1));
    assert_eq!(info.peak_bytes, s.memory().num_bytes - 12 + 24);
    assert_eq!(info.kernels.len(), 2);
    assert_eq!(info.kernels[0].name, "square");
    assert_eq!(info.kernels[0].bytes_added, 12);
    assert_eq!(info.kernels[0].input_shapes, vec![vec![3]]);
    drop(x);
}
