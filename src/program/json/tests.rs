//! The JSON form's round trip and its refusals.
use super::*;

fn running_mean() -> Program {
    let mut p = Program::new("running_mean");
    let x = p.input("x", DType::Float32, &[-1, 4]).unwrap();
    let acc = p.state("acc", DType::Float32, &[4]).unwrap();
    let s = p.sum(x, &[0], false).unwrap();
    let next = p.add(acc, s).unwrap();
    p.assign("acc", next).unwrap();
    let r = p.relu(next).unwrap();
    p.output("y", r).unwrap();
    let c = p
        .constant(&[f64::NAN, f64::INFINITY, -0.5, 1e-30], &[4], DType::Float32)
        .unwrap();
    let m = p.mul(r, c).unwrap();
    let t = p.transpose(m, None).unwrap();
    p.output("z", t).unwrap();
    p
}

#[test]
fn json_round_trip_is_exact() {
    let p = running_mean();
    let text = p.to_json_string();
    let q = Program::from_json(&text).unwrap();
    assert_eq!(q.to_json_string(), text);
    assert_eq!(q.nodes().len(), p.nodes().len());
    assert!(
        text.contains("\"NaN\"") && text.contains("\"Infinity\""),
        "{text}"
    );
}

#[test]
fn malformed_json_is_invalid_program_never_a_panic() {
    let good = running_mean().to_json();
    let mut cases: Vec<String> = vec![
        "".into(),
        "{".into(),
        "[]".into(),
        "null".into(),
        r#"{"format":"affon.program/1","name":"p","nodes":[{"op":"add","args":[0,0]}],"outputs":[{"name":"y","node":0}]}"#.into(),
        r#"{"format":"affon.program/1","name":"p","nodes":[{"op":"input","name":"x","dtype":"float32","shape":[2]},{"op":"relu","args":[2]}],"outputs":[{"name":"y","node":1}]}"#.into(),
        r#"{"format":"affon.program/1","name":"p","nodes":[{"op":"input","name":"x","dtype":"float32","shape":[2]}],"outputs":[{"name":"y","node":7}]}"#.into(),
        r#"{"format":"affon.program/1","name":"p","nodes":[{"op":"frobnicate","args":[]}]}"#.into(),
        r#"{"format":"affon.program/2","name":"p","nodes":[]}"#.into(),
        r#"{"format":"affon.program/1","name":"p","nodes":[{"op":"input","name":"x","dtype":"float32","shape":[2]}],"outputs":[]}"#.into(),
        r#"{"format":"affon.program/1","name":"p","nodes":[{"op":"input","name":"x","dtype":"float32","shape":[2],"axis":1}],"outputs":[{"name":"y","node":0}]}"#.into(),
    ];
    // every prefix of a valid program
    let text = good.to_string();
    cases.extend((0..text.len()).step_by(7).map(|n| text[..n].to_string()));
    for c in cases {
        let e = Program::from_json(&c).unwrap_err();
        assert_eq!(e.code(), "INVALID_PROGRAM", "{c} → {e}");
    }
    let e = Program::from_json(r#"{"format":"affon.program/1","name":"p","nodes":[{"op":"input","name":"x","dtype":"float32","shape":[2,3]},{"op":"input","name":"w","dtype":"float32","shape":[2,3]},{"op":"matmul","args":[0,1]}],"outputs":[{"name":"y","node":2}]}"#).unwrap_err();
    assert_eq!(e.code(), "SHAPE_MISMATCH");
    assert!(e.to_string().contains("node 2 (matmul)"), "{e}");
}

/// A zero, negative, fractional or over-large dimension is INVALID_ARGUMENT in the JSON form too
/// (API.md: "anywhere"), naming the node; a missing shape stays INVALID_PROGRAM.
#[test]
fn bad_dims_in_json_are_invalid_argument() {
    let x = r#"{"op":"input","name":"x","dtype":"float32","shape":[2,3]}"#;
    let program = |node: &str| {
        format!(
            r#"{{"format":"affon.program/1","name":"p","nodes":[{x},{node}],"outputs":[{{"name":"y","node":0}}]}}"#
        )
    };
    for node in [
        r#"{"op":"input","name":"z","dtype":"float32","shape":[0]}"#,
        r#"{"op":"input","name":"z","dtype":"float32","shape":[2,-3]}"#,
        r#"{"op":"input","name":"z","dtype":"float32","shape":[1.5]}"#,
        r#"{"op":"input","name":"z","dtype":"float32","shape":[1e30]}"#,
        r#"{"op":"input","name":"z","dtype":"float32","shape":[18446744073709551615]}"#,
        r#"{"op":"state","name":"s","dtype":"float32","shape":[0]}"#,
        r#"{"op":"state","name":"s","dtype":"float32","shape":[-1]}"#,
        r#"{"op":"state","name":"s","dtype":"float32","shape":[4294967296]}"#,
        r#"{"op":"constant","data":[],"dtype":"float32","shape":[2,0]}"#,
        r#"{"op":"constant","data":[1],"dtype":"float32","shape":[0.5]}"#,
        r#"{"op":"reshape","args":[0],"shape":[0,6]}"#,
        r#"{"op":"reshape","args":[0],"shape":[3,2.5]}"#,
    ] {
        let e = Program::from_json(&program(node)).unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{node} → {e}");
        assert!(e.to_string().contains("node 1"), "{node} → {e}");
    }
    // a whole number written as a float is that number
    let p = Program::from_json(&program(
        r#"{"op":"state","name":"s","dtype":"float32","shape":[4.0]}"#,
    ))
    .unwrap();
    assert!(
        p.to_json_string().contains(r#""shape":[4]"#),
        "{}",
        p.to_json_string()
    );
    let e = Program::from_json(&program(r#"{"op":"state","name":"s","dtype":"float32"}"#)).unwrap_err();
    assert_eq!(e.code(), "INVALID_PROGRAM", "{e}");
}
