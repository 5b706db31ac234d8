//! An ONNX model built in the test (`y = relu(x · W + b)`, a symbolic batch dim), imported and run on
//! both targets against float64 written here; malformed and unsupported models are errors.
#![allow(dead_code)]

use affon::onnx::proto::{
    tensor_shape_proto::{dimension::Value as Dim, Dimension},
    type_proto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto,
    TypeProto, ValueInfoProto,
};
use affon::onnx::OnnxOptions;
use affon::{DType, Program, Session};
use prost::Message;

const W: [f32; 6] = [0.5, -1.0, 2.0, 0.25, -0.5, 1.5]; // [3, 2]
const B: [f32; 2] = [0.1, -0.2];

fn value(name: &str, dims: &[Dim]) -> ValueInfoProto {
    let shape = TensorShapeProto {
        dim: dims
            .iter()
            .map(|d| Dimension {
                value: Some(d.clone()),
                ..Default::default()
            })
            .collect(),
    };
    let t = type_proto::Tensor {
        elem_type: Some(1),
        shape: Some(shape),
    };
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(t)),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn node(op: &str, name: &str, inputs: &[&str], output: &str) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        name: Some(name.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        ..Default::default()
    }
}

fn floats(name: &str, dims: &[i64], v: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(1),
        float_data: v.to_vec(),
        ..Default::default()
    }
}

/// The model's bytes; `op` is the activation (`Relu`, or one affon lacks).
pub fn tiny_model(op: &str) -> Vec<u8> {
    let graph = GraphProto {
        name: Some("tiny".into()),
        node: vec![
            node("MatMul", "mm", &["x", "W"], "xw"),
            node("Add", "bias", &["xw", "B"], "h"),
            node(op, "act", &["h"], "y"),
        ],
        initializer: vec![floats("W", &[3, 2], &W), floats("B", &[2], &B)],
        input: vec![value("x", &[Dim::DimParam("batch".into()), Dim::DimValue(3)])],
        output: vec![value("y", &[Dim::DimParam("batch".into()), Dim::DimValue(2)])],
        ..Default::default()
    };
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}

pub async fn tiny_model_runs(s: &Session) {
    let p = Program::from_onnx(&tiny_model("Relu"), &OnnxOptions::default()).unwrap();
    let (inputs, outputs) = p.signature();
    assert_eq!(inputs, vec![("x".to_string(), DType::Float32, vec![-1, 3])]);
    assert_eq!(outputs, vec![("y".to_string(), DType::Float32, vec![-1, 2])]);
    assert_eq!(p.name(), "tiny");
    let exe = s.compile(&p).unwrap();
    let x = [1.0f32, 2.0, 3.0, -1.0, 0.5, 2.0];
    let xt = s.tensor(&x, &[2, 3]).unwrap();
    let out = exe.run(&[("x", &xt)], None).unwrap();
    let (name, y) = &out[0];
    assert_eq!((name.as_str(), y.shape()), ("y", &[2usize, 2][..]));
    let got = y.read::<f32>().await.unwrap();
    for r in 0..2 {
        for c in 0..2 {
            let v: f64 = (0..3)
                .map(|k| x[r * 3 + k] as f64 * W[k * 2 + c] as f64)
                .sum::<f64>()
                + B[c] as f64;
            let want = v.max(0.0);
            assert!(
                (got[r * 2 + c] as f64 - want).abs() < 1e-6,
                "y[{r}][{c}] = {}, want {want}",
                got[r * 2 + c]
            );
        }
    }
    // a fixed batch and a renamed program
    let mut o = OnnxOptions {
        name: Some("fixed".into()),
        ..Default::default()
    };
    o.input_shapes.insert("x".into(), vec![2, 3]);
    let p = Program::from_onnx(&tiny_model("Relu"), &o).unwrap();
    assert_eq!((p.name(), p.signature().1[0].2.clone()), ("fixed", vec![2, 2]));
}

/// Truncated bytes and an unknown op are errors that move no `compute.storage`/`compute.memory`
/// record.
pub fn broken_models_are_errors() {
    let bytes = tiny_model("Relu");
    let half = &bytes[..bytes.len() / 2];
    crate::ledger::fails_unchanged("INVALID_ARGUMENT", "a truncated model", || {
        Program::from_onnx(half, &OnnxOptions::default())
    });
    let e = crate::ledger::fails_unchanged("UNSUPPORTED", "an unknown op", || {
        Program::from_onnx(&tiny_model("NotAnOp"), &OnnxOptions::default())
    });
    assert!(
        e.to_string().contains("ONNX NotAnOp (node 'act', opset 17)"),
        "{e}"
    );
}

fn int_value(name: &str, dims: &[i64]) -> ValueInfoProto {
    let mut v = value(name, &dims.iter().map(|&d| Dim::DimValue(d)).collect::<Vec<_>>());
    if let Some(type_proto::Value::TensorType(t)) = v.r#type.as_mut().and_then(|t| t.value.as_mut()) {
        t.elem_type = Some(7); // int64
    }
    v
}

/// `GatherElements` along axis 1: right values, and an index past the axis — which would land in the
/// next row of the flattened data — reported at the readback, not read silently.
pub async fn gather_elements_checks_its_indices(s: &Session) {
    let mut n = node("GatherElements", "ge", &["data", "idx"], "y");
    n.attribute.push(affon::onnx::proto::AttributeProto {
        name: Some("axis".into()),
        i: Some(1),
        r#type: Some(2),
        ..Default::default()
    });
    let graph = GraphProto {
        node: vec![n],
        input: vec![
            value("data", &[Dim::DimValue(2), Dim::DimValue(3)]),
            int_value("idx", &[2, 2]),
        ],
        output: vec![value("y", &[Dim::DimValue(2), Dim::DimValue(2)])],
        ..Default::default()
    };
    let model = ModelProto {
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(13),
        }],
        graph: Some(graph),
        ..Default::default()
    };
    let p = Program::from_onnx(&model.encode_to_vec(), &OnnxOptions::default()).unwrap();
    let exe = s.compile(&p).unwrap();
    let data = s.tensor(&[1.0f32, 2., 3., 4., 5., 6.], &[2, 3]).unwrap();
    let good = s.tensor(&[2i32, 0, -1, 1], &[2, 2]).unwrap();
    let y = exe
        .run(&[("data", &data), ("idx", &good)], None)
        .unwrap()
        .remove(0)
        .1;
    assert_eq!(y.read::<f32>().await.unwrap(), [3., 1., 6., 5.]);
    let bad = s.tensor(&[0i32, 3, 1, 1], &[2, 2]).unwrap();
    let y = exe
        .run(&[("data", &data), ("idx", &bad)], None)
        .unwrap()
        .remove(0)
        .1;
    let e = y.read::<f32>().await.unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    assert!(e.to_string().contains("`gather`"), "{e}");
}
