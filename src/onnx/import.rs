//! The graph walk: `ModelProto` → Program. Each ONNX value name maps to a program node, a host value
//! (known at import), or both once a host value is read as a tensor.

use std::collections::HashMap;

use prost::Message;

use super::host::{self, Values};
use super::proto::{self, ModelProto, NodeProto, ValueInfoProto};
use super::OnnxOptions;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::compose::Graph;
use crate::ops::Dims;
use crate::program::{NodeId, Program};

/// One ONNX value as the import holds it.
#[derive(Default, Clone)]
struct Value {
    node: Option<NodeId>,
    host: Option<Values>,
}

/// The import in progress.
pub(crate) struct Import {
    pub p: Program,
    values: HashMap<String, Value>,
    /// The default domain's opset.
    pub opset: i64,
}

pub(crate) fn import(bytes: &[u8], options: &OnnxOptions) -> Result<Program> {
    let model = ModelProto::decode(bytes)
        .map_err(|e| Error::InvalidArgument(format!("not an ONNX model (ModelProto): {e}")))?;
    let opset = opset(&model)?;
    let graph = model
        .graph
        .as_ref()
        .ok_or_else(|| Error::InvalidArgument("the ONNX model has no graph".into()))?;
    let name = options
        .name
        .clone()
        .or_else(|| graph.name.clone().filter(|n| !n.is_empty()))
        .unwrap_or_else(|| "onnx".into());
    let mut im = Import {
        p: Program::new(&name),
        values: HashMap::new(),
        opset,
    };
    for t in &graph.initializer {
        let n = t.name.clone().unwrap_or_default();
        im.set_host(&n, host::values(t, &format!("initializer '{n}'"))?);
    }
    for input in &graph.input {
        im.input(input, options)?;
    }
    for node in &graph.node {
        super::ops::translate(&mut im, node)?;
    }
    for output in &graph.output {
        let n = output.name.clone().unwrap_or_default();
        let id = im.node(&n)?;
        im.p.output(&n, id)?;
    }
    Ok(im.p)
}

pub(crate) fn input_names(bytes: &[u8]) -> Result<Vec<String>> {
    let model = ModelProto::decode(bytes)
        .map_err(|e| Error::InvalidArgument(format!("not an ONNX model (ModelProto): {e}")))?;
    let graph = model.graph.unwrap_or_default();
    let init: std::collections::HashSet<_> =
        graph.initializer.iter().filter_map(|t| t.name.clone()).collect();
    Ok(graph
        .input
        .into_iter()
        .filter_map(|i| i.name)
        .filter(|n| !init.contains(n))
        .collect())
}

/// The default domain's opset (7 or newer).
fn opset(model: &ModelProto) -> Result<i64> {
    let v = model
        .opset_import
        .iter()
        .find(|o| matches!(o.domain.as_deref(), None | Some("") | Some("ai.onnx")))
        .and_then(|o| o.version)
        .unwrap_or(1);
    if v < 7 {
        return Err(Error::Unsupported(format!(
            "ONNX opset {v}: affon imports the default domain at opset 7 and newer"
        )));
    }
    Ok(v)
}

impl Import {
    /// A graph input: a frozen value, an initializer's default (already a host value), or a
    /// program input of its declared dtype and dims (symbolic ones `-1`, unless fixed).
    fn input(&mut self, input: &ValueInfoProto, options: &OnnxOptions) -> Result<()> {
        let name = input.name.clone().unwrap_or_default();
        let (dtype, mut shape) = declared(input, &name)?;
        if let Some(fixed) = options.input_shapes.get(&name) {
            shape = fixed.clone();
        }
        if let Some(data) = options.input_values.get(&name) {
            let dims: Vec<usize> = shape.iter().map(|&d| d.max(1) as usize).collect();
            let want: usize = dims.iter().product();
            if data.len() != want || shape.iter().any(|&d| d < 0) && data.len() != 1 {
                return Err(Error::InvalidArgument(format!(
                    "inputValues '{name}': {} values for an input of dims {shape:?}",
                    data.len()
                )));
            }
            let values = Values {
                data: data.clone(),
                shape: dims,
                dtype,
            };
            self.set_host(&name, values);
            return Ok(());
        }
        if self.values.contains_key(&name) {
            return Ok(()); // an initializer: its default stands
        }
        let id = self.p.input(&name, dtype, &shape)?;
        self.set_node(&name, id);
        Ok(())
    }

    pub fn set_node(&mut self, name: &str, id: NodeId) {
        self.values.insert(
            name.to_string(),
            Value {
                node: Some(id),
                host: None,
            },
        );
    }

    pub fn set_host(&mut self, name: &str, v: Values) {
        self.values.insert(
            name.to_string(),
            Value {
                node: None,
                host: Some(v),
            },
        );
    }

    /// The program node of value `name` (a host value becomes a constant, once).
    pub fn node(&mut self, name: &str) -> Result<NodeId> {
        let v = self.values.get(name).ok_or_else(|| {
            Error::InvalidArgument(format!("ONNX value '{name}' is read before it is made"))
        })?;
        if let Some(id) = v.node {
            return Ok(id);
        }
        let h = v.host.clone().unwrap_or_else(|| Values::ints(&[]));
        let id = self.p.constant(&h.data, &h.shape, h.dtype)?;
        if let Some(v) = self.values.get_mut(name) {
            v.node = Some(id);
        }
        Ok(id)
    }

    /// The host value of `name`, when known at import.
    pub fn host(&self, name: &str) -> Option<&Values> {
        self.values.get(name).and_then(|v| v.host.as_ref())
    }

    /// Whether value `name` exists.
    pub fn has(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// The dims and dtype of value `name`.
    pub fn meta(&mut self, name: &str) -> Result<(Dims, DType)> {
        if let Some(h) = self.host(name) {
            return Ok((h.shape.iter().map(|&d| Some(d)).collect(), h.dtype));
        }
        let id = self.node(name)?;
        self.p.meta(&id)
    }
}

/// A graph input's declared dtype and dims (`-1` for a symbolic or missing dim).
fn declared(v: &ValueInfoProto, name: &str) -> Result<(DType, Vec<i64>)> {
    let what = format!("input '{name}'");
    let Some(proto::type_proto::Value::TensorType(t)) = v.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        return Err(Error::Unsupported(format!(
            "{what}: only tensor inputs are supported"
        )));
    };
    let dtype = host::dtype(t.elem_type.unwrap_or(0), &what)?;
    let dims = t.shape.as_ref().map(|s| s.dim.as_slice()).unwrap_or(&[]);
    let shape = dims
        .iter()
        .map(|d| match d.value {
            Some(proto::tensor_shape_proto::dimension::Value::DimValue(n)) if n >= 0 => n,
            _ => -1,
        })
        .collect();
    Ok((dtype, shape))
}

/// A node as its translation reads it: inputs, attributes, outputs.
pub(crate) struct Cx<'a> {
    pub im: &'a mut Import,
    pub node: &'a NodeProto,
}

impl Cx<'_> {
    /// The op type.
    pub fn op(&self) -> &str {
        self.node.op_type.as_deref().unwrap_or("")
    }

    /// `UNSUPPORTED` naming the op, the node and the opset.
    pub fn unsupported(&self, why: impl std::fmt::Display) -> Error {
        Error::Unsupported(format!(
            "ONNX {} (node '{}', opset {}): {why}",
            self.op(),
            self.node.name.as_deref().unwrap_or(""),
            self.im.opset
        ))
    }

    /// The name of input `i`, `None` when absent or empty (an omitted optional input).
    pub fn input_name(&self, i: usize) -> Option<&str> {
        self.node
            .input
            .get(i)
            .map(String::as_str)
            .filter(|n| !n.is_empty())
    }

    /// Input `i` as a program node.
    pub fn input(&mut self, i: usize) -> Result<NodeId> {
        let n = self
            .input_name(i)
            .ok_or_else(|| self.unsupported(format!("input {i} is missing")))?;
        let n = n.to_string();
        self.im.node(&n)
    }

    /// Input `i` as a program node, `None` when absent.
    pub fn opt_input(&mut self, i: usize) -> Result<Option<NodeId>> {
        match self.input_name(i) {
            Some(_) => self.input(i).map(Some),
            None => Ok(None),
        }
    }

    /// Input `i` as a host value, `None` when absent; `UNSUPPORTED` when it is computed at run time.
    pub fn host_input(&self, i: usize) -> Result<Option<Values>> {
        let Some(n) = self.input_name(i) else {
            return Ok(None);
        };
        match self.im.host(n) {
            Some(v) => Ok(Some(v.clone())),
            None => Err(self.unsupported(format!(
                "needs input '{n}' as a constant (an initializer, a Constant, or frozen with inputValues)"
            ))),
        }
    }

    /// The dims and dtype of input `i`.
    pub fn meta(&mut self, i: usize) -> Result<(Dims, DType)> {
        let n = self
            .input_name(i)
            .ok_or_else(|| self.unsupported(format!("input {i} is missing")))?;
        let n = n.to_string();
        self.im.meta(&n)
    }

    /// The concrete dims of input `i` (`UNSUPPORTED` while any is symbolic).
    pub fn dims(&mut self, i: usize) -> Result<Vec<usize>> {
        let (d, _) = self.meta(i)?;
        d.iter()
            .map(|&x| x.ok_or_else(|| self.unsupported("a symbolic dim (fix it with inputShapes)")))
            .collect()
    }

    /// The number of outputs the node names.
    pub fn outputs(&self) -> usize {
        self.node.output.len()
    }

    /// Output `i` is `id`.
    pub fn set(&mut self, i: usize, id: NodeId) {
        if let Some(n) = self.node.output.get(i).filter(|n| !n.is_empty()) {
            self.im.set_node(n, id);
        }
    }

    /// Output `i` is the host value `v`.
    pub fn set_host(&mut self, i: usize, v: Values) {
        if let Some(n) = self.node.output.get(i).filter(|n| !n.is_empty()) {
            self.im.set_host(n, v);
        }
    }

    fn attr(&self, name: &str) -> Option<&proto::AttributeProto> {
        self.node
            .attribute
            .iter()
            .find(|a| a.name.as_deref() == Some(name))
    }

    /// An int attribute.
    pub fn int(&self, name: &str, default: i64) -> i64 {
        self.attr(name).and_then(|a| a.i).unwrap_or(default)
    }

    /// A float attribute.
    pub fn float(&self, name: &str, default: f64) -> f64 {
        self.attr(name).and_then(|a| a.f).map_or(default, |f| f as f64)
    }

    /// An ints attribute, `None` when absent.
    pub fn ints(&self, name: &str) -> Option<Vec<i64>> {
        self.attr(name).map(|a| a.ints.clone())
    }

    /// A string attribute.
    pub fn string(&self, name: &str, default: &str) -> String {
        self.attr(name)
            .and_then(|a| a.s.as_ref())
            .map_or(default.to_string(), |s| String::from_utf8_lossy(s).into_owned())
    }

    /// A tensor attribute's values.
    pub fn tensor(&self, name: &str) -> Result<Option<Values>> {
        match self.attr(name).and_then(|a| a.t.as_ref()) {
            Some(t) => host::values(t, &format!("attribute '{name}'")).map(Some),
            None => Ok(None),
        }
    }

    /// Whether the node has attribute `name`.
    pub fn has_attr(&self, name: &str) -> bool {
        self.attr(name).is_some()
    }

    /// Ints given by an attribute (before `since`) or by input `i` (from `since`), `None` when absent.
    pub fn ints_from(&self, attr: &str, i: usize, since: i64) -> Result<Option<Vec<i64>>> {
        if self.im.opset < since {
            return Ok(self.ints(attr));
        }
        Ok(self.host_input(i)?.map(|v| v.as_ints()))
    }
}
