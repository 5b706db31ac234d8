//! The JSON form of a program (`toJSON` / `fromJSON`), documented in docs/programs.md:
//!
//! ```json
//! { "format": "affon.program/1", "name": "running_mean",
//!   "nodes": [ {"op": "input", "name": "x", "dtype": "float32", "shape": [-1, 4]},
//!              {"op": "state", "name": "acc", "dtype": "float32", "shape": [4]},
//!              {"op": "sum", "args": [0], "axes": [0], "keepDims": false},
//!              {"op": "add", "args": [1, 2]},
//!              {"op": "relu", "args": [3]} ],
//!   "outputs": [{"name": "y", "node": 4}],
//!   "assign": [{"state": "acc", "node": 3}] }
//! ```
//!
//! A node's id is its index in `nodes`; `args` may only name earlier nodes. Constants carry
//! `data` (numbers; `"NaN"`, `"Infinity"`, `"-Infinity"` as strings), `shape` and `dtype`. Parsing
//! never panics: anything malformed is `INVALID_PROGRAM` naming the node, but a dim no program may
//! hold (zero, negative but an input's -1, a fraction), `INVALID_ARGUMENT` as anywhere (API.md).

use serde::{Deserialize, Serialize};

use super::{Node, Program};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{Num, Op};
use serde_json::{Map, Value};

/// The `format` tag written and required.
pub const FORMAT: &str = "affon.program/1";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProgramJson {
    format: String,
    name: String,
    nodes: Vec<NodeJson>,
    #[serde(default)]
    outputs: Vec<OutputJson>,
    #[serde(default)]
    assign: Vec<AssignJson>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputJson {
    name: String,
    node: usize,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AssignJson {
    state: String,
    node: usize,
}

/// A node: the fields every node may have, and its op's attributes (`attrs`, by their JSON names:
/// the op table's for its ops, `axes`/`keepDims` for reductions).
#[derive(Serialize, Deserialize, Default)]
struct NodeJson {
    op: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dtype: Option<DType>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shape: Option<Vec<serde_json::Number>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Vec<Num>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<Vec<usize>>,
    #[serde(flatten)]
    attrs: Map<String, Value>,
}

macro_rules! json_table {
    (surfaced: [$($e:tt),* $(,)?], internal: [$($i:tt),* $(,)?] $(,)?) => {
        json_table!(@all $($e,)* $($i,)*);
    };
    (@all $(($m:ident, $v:ident, $js:literal, $doc:literal, $k:path, [$($a:ident),*],
        [$($f:ident $fk:literal : $ft:ty => $fts:literal),*],
        [$($o:ident $ok:literal : $ot:ty = $od:expr => $ots:literal),*], $kgrad:tt $($rest:tt)*),)*) => {
        /// Writes an op-table op's attributes (all of them, defaults too: the round trip is exact).
        fn table_attrs(op: &Op, out: &mut Map<String, Value>) {
            match op {
                $(Op::$v { $($f,)* $($o,)* } => {
                    $(put(out, $fk, $f);)*
                    $(put(out, $ok, $o);)*
                })*
                Op::Unary(_) | Op::Binary(_) | Op::Reduce { .. } => {}
            }
        }

        /// The op-table op called `name`, its attributes taken from `attrs`.
        fn table_op(i: usize, name: &str, attrs: &mut Map<String, Value>) -> Result<Option<Op>> {
            Ok(Some(match name {
                $($js => Op::$v {
                    $($f: take(i, name, attrs, $fk)?.ok_or_else(|| bad(i, format!("'{name}' needs '{}'", $fk)))?,)*
                    $($o: take(i, name, attrs, $ok)?.unwrap_or_else(|| <$ot>::from($od)),)*
                },)*
                _ => return Ok(None),
            }))
        }
    };
}
crate::kernel_table!(json_table);

fn put<T: Serialize>(out: &mut Map<String, Value>, key: &str, v: &T) {
    let v = serde_json::to_value(v).expect("attributes are always serialisable");
    if !v.is_null() {
        out.insert(key.into(), v);
    }
}

fn take<T: serde::de::DeserializeOwned>(
    i: usize,
    op: &str,
    attrs: &mut Map<String, Value>,
    key: &str,
) -> Result<Option<T>> {
    match attrs.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|e| bad(i, format!("'{op}': '{key}' is {v}: {e}"))),
    }
}

fn node_json(node: &Node) -> NodeJson {
    match node {
        Node::Input { name, dtype, shape } => NodeJson {
            op: "input".into(),
            name: Some(name.clone()),
            dtype: Some(*dtype),
            shape: Some(shape.iter().map(|&d| d.into()).collect()),
            ..Default::default()
        },
        Node::State { name, dtype, shape } => NodeJson {
            op: "state".into(),
            name: Some(name.clone()),
            dtype: Some(*dtype),
            shape: Some(shape.iter().map(|&d| d.into()).collect()),
            ..Default::default()
        },
        Node::Constant { data, shape, dtype } => NodeJson {
            op: "constant".into(),
            dtype: Some(*dtype),
            shape: Some(shape.iter().map(|&d| d.into()).collect()),
            data: Some(data.iter().map(|&v| v.into()).collect()),
            ..Default::default()
        },
        Node::Op { op, args } => {
            let mut attrs = Map::new();
            match op {
                Op::Reduce { axes, keep_dims, .. } => {
                    put(&mut attrs, "axes", axes);
                    put(&mut attrs, "keepDims", keep_dims);
                }
                _ => table_attrs(op, &mut attrs),
            }
            NodeJson {
                op: op.name().into(),
                args: Some(args.clone()),
                attrs,
                ..Default::default()
            }
        }
    }
}

fn bad(i: usize, what: impl std::fmt::Display) -> Error {
    Error::InvalidProgram(format!("node {i}: {what}"))
}

/// The dims of node `i`'s `shape`, each a whole number (`4.0` too): anything else — a fraction, a
/// number past 2^53 — and a zero, a negative (but an input's -1) or an over-large dim is `INVALID_ARGUMENT`,
/// as anywhere (API.md); a missing shape is `INVALID_PROGRAM`.
fn dims(i: usize, shape: Option<Vec<i64>>, allow_dynamic: bool) -> Result<Vec<i64>> {
    let shape = shape.ok_or_else(|| bad(i, "missing 'shape'"))?;
    if let Some(d) = shape
        .iter()
        .find(|&&d| d == 0 || d < -1 || (!allow_dynamic && d < 0) || d > crate::shape::MAX_ELEMENTS as i64)
    {
        return Err(Error::InvalidArgument(format!(
            "node {i}: dimension {d} in {shape:?} is not allowed here"
        )));
    }
    Ok(shape)
}

/// `shape` as whole numbers (`INVALID_ARGUMENT` naming node `i` for any other number).
fn whole(i: usize, shape: Option<Vec<serde_json::Number>>) -> Result<Option<Vec<i64>>> {
    let Some(shape) = shape else { return Ok(None) };
    let exact = |f: f64| (f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15).then_some(f as i64);
    let dims = shape
        .iter()
        .map(|n| n.as_i64().or_else(|| n.as_f64().and_then(exact)).ok_or(n));
    dims.collect::<std::result::Result<Vec<_>, _>>()
        .map(Some)
        .map_err(|n| {
            Error::InvalidArgument(format!(
                "node {i}: dimension {n} is not a whole number below 2^53"
            ))
        })
}

fn parse_node(i: usize, j: NodeJson) -> Result<Node> {
    let NodeJson {
        op,
        name,
        dtype,
        shape,
        data,
        args,
        mut attrs,
    } = j;
    let shape = whole(i, shape)?;
    let unexpected = |present: bool, field: &str| {
        if present {
            Err(bad(i, format!("'{op}' takes no '{field}'")))
        } else {
            Ok(())
        }
    };
    let leftover = |attrs: &Map<String, Value>| match attrs.keys().next() {
        Some(k) => unexpected(true, k),
        None => Ok(()),
    };
    if matches!(op.as_str(), "input" | "state" | "constant") {
        unexpected(args.is_some(), "args")?;
        unexpected(name.is_some() && op == "constant", "name")?;
        unexpected(data.is_some() && op != "constant", "data")?;
        leftover(&attrs)?;
    }
    let need_dtype = || dtype.ok_or_else(|| bad(i, format!("'{op}' needs 'dtype'")));
    let need_name = || name.clone().ok_or_else(|| bad(i, format!("'{op}' needs 'name'")));
    let node = match op.as_str() {
        "input" => Node::Input {
            name: need_name()?,
            dtype: need_dtype()?,
            shape: dims(i, shape, true)?,
        },
        "state" => Node::State {
            name: need_name()?,
            dtype: need_dtype()?,
            shape: dims(i, shape, false)?.into_iter().map(|d| d as usize).collect(),
        },
        "constant" => Node::Constant {
            data: data
                .ok_or_else(|| bad(i, "constant needs 'data'"))?
                .into_iter()
                .map(f64::from)
                .collect(),
            shape: dims(i, shape, false)?.into_iter().map(|d| d as usize).collect(),
            dtype: need_dtype()?,
        },
        other => {
            unexpected(name.is_some(), "name")?;
            unexpected(data.is_some(), "data")?;
            let args = args.ok_or_else(|| bad(i, format!("'{other}' needs 'args'")))?;
            // `dtype` and `shape` are attributes of the ops that have them (cast, reshape)
            if let Some(d) = dtype {
                put(&mut attrs, "dtype", &d);
            }
            if let Some(s) = &shape {
                put(&mut attrs, "shape", s);
            }
            let op = if let Some(u) = Op::unary(other) {
                Op::Unary(u)
            } else if let Some(b) = Op::binary(other) {
                Op::Binary(b)
            } else if let Some(r) = Op::reduce(other) {
                Op::Reduce {
                    op: r,
                    axes: take(i, other, &mut attrs, "axes")?.unwrap_or_default(),
                    keep_dims: take(i, other, &mut attrs, "keepDims")?.unwrap_or(false),
                }
            } else {
                table_op(i, other, &mut attrs)?.ok_or_else(|| bad(i, format!("unknown op '{other}'")))?
            };
            leftover(&attrs)?;
            Node::Op { op, args }
        }
    };
    Ok(node)
}

impl Program {
    /// The JSON form (see the module docs); `from_json(to_json())` is exact.
    pub fn to_json(&self) -> serde_json::Value {
        let j = ProgramJson {
            format: FORMAT.into(),
            name: self.name.clone(),
            nodes: self.nodes.iter().map(node_json).collect(),
            outputs: self
                .outputs
                .iter()
                .map(|(n, id)| OutputJson {
                    name: n.clone(),
                    node: *id,
                })
                .collect(),
            assign: self
                .assigns
                .iter()
                .map(|(s, id)| AssignJson {
                    state: s.clone(),
                    node: *id,
                })
                .collect(),
        };
        serde_json::to_value(j).expect("program JSON is always serialisable")
    }

    /// The JSON text of [`Program::to_json`].
    pub fn to_json_string(&self) -> String {
        self.to_json().to_string()
    }

    /// Parses and validates a program; anything malformed is `INVALID_PROGRAM` (or the shape and
    /// dtype codes for type errors, `INVALID_ARGUMENT` for dims), never a panic.
    pub fn from_json(text: &str) -> Result<Program> {
        let j: ProgramJson = serde_json::from_str(text)
            .map_err(|e| Error::InvalidProgram(format!("program JSON is malformed: {e}")))?;
        if j.format != FORMAT {
            return Err(Error::InvalidProgram(format!(
                "format is '{}', expected '{FORMAT}'",
                j.format
            )));
        }
        let mut p = Program::new(&j.name);
        for (i, n) in j.nodes.into_iter().enumerate() {
            let node = parse_node(i, n)?;
            p.push(node)?;
        }
        for o in j.outputs {
            p.output(&o.name, o.node)?;
        }
        for a in j.assign {
            p.assign(&a.state, a.node)?;
        }
        p.validate()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests;
