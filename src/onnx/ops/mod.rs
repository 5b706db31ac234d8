//! ONNX ops as program nodes, one function per op type (or per family of ops affon's table already
//! has, mapped, not re-implemented), grouped by concept: `elementwise.rs`, `shape.rs` (with the host
//! folding of shape computations), `nn.rs`, `norm.rs`, `reduce.rs`. Each reads its node through
//! [`Cx`](super::import::Cx) and sets its outputs.

mod elementwise;
mod nn;
mod norm;
mod reduce;
mod shape;

use super::import::{Cx, Import};
use super::proto::NodeProto;
use crate::error::Result;

/// Translates `node` (the default domain only).
pub(crate) fn translate(im: &mut Import, node: &NodeProto) -> Result<()> {
    let mut cx = Cx { im, node };
    let domain = node.domain.as_deref().unwrap_or("");
    if !(domain.is_empty() || domain == "ai.onnx") {
        return Err(cx.unsupported(format!("the domain '{domain}' is not supported")));
    }
    for i in 0..node.input.len() {
        if let Some(n) = cx.input_name(i) {
            if !cx.im.has(n) {
                return Err(crate::error::Error::InvalidArgument(format!(
                    "ONNX node '{}' reads '{n}', which no earlier node, input or initializer makes",
                    node.name.as_deref().unwrap_or("")
                )));
            }
        }
    }
    let op = cx.op().to_string();
    if shape::fold(&mut cx, &op)? {
        return Ok(());
    }
    if elementwise::translate(&mut cx, &op)?
        || shape::translate(&mut cx, &op)?
        || norm::translate(&mut cx, &op)?
        || nn::translate(&mut cx, &op)?
        || reduce::translate(&mut cx, &op)?
    {
        return Ok(());
    }
    Err(cx.unsupported("this op is not implemented"))
}
