//! Models from ONNX: a `ModelProto` becomes an ordinary [`Program`] (`Program::from_onnx`). The
//! bytes are decoded with prost into the types of `proto.rs`, generated once from `onnx.proto` of
//! the pinned `onnx` package by `scripts/gen-onnx-proto.sh` and committed, so the build needs no
//! protoc. `import.rs` walks the graph: initializers, `Constant` nodes and frozen inputs are
//! *host values* (`host.rs`), known at import — what shape computations and attribute-like inputs
//! (a `Reshape`'s shape, a `Slice`'s starts) read — and become program constants where an op reads
//! them as tensors; every node becomes the program nodes of its translation (`ops/`).
//!
//! What is not built yet (issue 55, in progress): shapes computed from *dynamic* dims (folded per
//! specialisation), `If`, the `states` option, empty tensors, node names as origins, and the ops
//! the table lacks (`Resize`, `ConvTranspose`, `Einsum`, …): each is `UNSUPPORTED` naming the op,
//! its node and the opset.

mod host;
mod import;
mod ops;
/// The ONNX protobuf types (generated; for building models in tests and tools).
#[doc(hidden)]
#[allow(clippy::all, missing_docs, rustdoc::all)]
pub mod proto;

use std::collections::BTreeMap;

use crate::error::Result;
use crate::program::Program;

pub use host::Values;

/// How to import a model (API.md "Models from ONNX").
#[derive(Debug, Clone, Default)]
pub struct OnnxOptions {
    /// The Program's name (default: the graph's name, else `onnx`).
    pub name: Option<String>,
    /// Fixes symbolic dims of the named inputs (a `-1` keeps that dim symbolic).
    pub input_shapes: BTreeMap<String, Vec<i64>>,
    /// Freezes the named inputs to these values (their element count; row-major): they become
    /// constants and leave the Program's inputs.
    pub input_values: BTreeMap<String, Vec<f64>>,
}

impl Program {
    /// The Program of an ONNX model: `bytes` holds a `ModelProto` (the default domain at opset 7 or
    /// newer). Malformed bytes are `INVALID_ARGUMENT`; an op, attribute value or dtype affon does not
    /// implement is `UNSUPPORTED`, naming the op type, the node and the opset.
    pub fn from_onnx(bytes: &[u8], options: &OnnxOptions) -> Result<Program> {
        import::import(bytes, options)
    }
}

/// The values of a serialized ONNX `TensorProto` (the node test suite's inputs and outputs): its
/// dims, affon dtype and elements as numbers.
pub fn tensor_values(bytes: &[u8]) -> Result<Values> {
    host::decode_tensor(bytes)
}

/// The names of a model's graph inputs that are not initializers, in order (what a caller feeds).
pub fn input_names(bytes: &[u8]) -> Result<Vec<String>> {
    import::input_names(bytes)
}
