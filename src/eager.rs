//! One eager op: infer its result, take the output from the pool and record the same kernel a program
//! node would ([`crate::kernels::record`]) — or defer it into a pending chain (`lazy/`).

use crate::dtype::DType;
use crate::error::Result;
use crate::ops::{infer, Op};
use crate::platform::Shared;
use crate::tensor::SessionShared;
use crate::tensor::Tensor;

/// Runs `op` on `args` eagerly in `s`; the result is a new tensor owned by `s` — pending when the
/// op is elementwise (see `lazy.rs`).
pub(crate) fn apply(s: &Shared<SessionShared>, op: &Op, args: &[&Tensor]) -> Result<Tensor> {
    run(s, op, args, true)
}

/// [`apply`], its kernel recorded at once (inside composites, which fuse their own chains).
pub(crate) fn apply_now(s: &Shared<SessionShared>, op: &Op, args: &[&Tensor]) -> Result<Tensor> {
    run(s, op, args, false)
}

/// `op`'s output (of `out`'s shape and dtype) allocated now and pending: `steps` over `args` and
/// `params` (`lazy::defer`), its kernel observed with the inputs' `shapes`.
pub(crate) fn deferred(
    s: &Shared<SessionShared>,
    op: &Op,
    steps: &[crate::program::fusion::Step],
    params: &[u32],
    args: &[&Tensor],
    shapes: &[&[usize]],
    out: (Vec<usize>, DType),
) -> Result<Tensor> {
    let out = {
        let _submission = s.submission(); // as every acquisition
        Tensor::allocate(s, out.0, out.1, op.name().to_string())?
    };
    crate::tensor::lazy::defer(s, steps, params, args, &out, &[]);
    s.upper.scopes.observe(&s.ledger, op.name(), shapes, &[&out]);
    Ok(out)
}

fn run(s: &Shared<SessionShared>, op: &Op, args: &[&Tensor], lazy: bool) -> Result<Tensor> {
    s.check_open()?;
    for a in args {
        a.check_live()?;
        a.check_in(s, op.name())?;
    }
    let typed: Vec<_> = args
        .iter()
        .map(|t| (t.shape().iter().map(|&d| Some(d)).collect(), t.dtype()))
        .collect();
    let (dims, dtype) = infer(op, &typed)?;
    // concrete inputs give a concrete shape
    let shape: Vec<usize> = dims.into_iter().map(|d| d.unwrap_or(0)).collect();
    let shapes: Vec<&[usize]> = args.iter().map(|t| t.shape()).collect();
    if lazy && crate::tensor::lazy::defers(op, args, dtype) {
        let steps = crate::tensor::lazy::one_step(op, args.len());
        return deferred(s, op, &steps, &[], args, &shapes, (shape, dtype));
    }
    // a reduction of a pending tensor reads its chain as it reduces
    let prologue = match (op, args) {
        (Op::Reduce { .. }, [a]) if a.dtype() == dtype => crate::tensor::lazy::chain_of(a),
        _ => None,
    };
    let in_shape = args.first().map_or(&[][..], |a| a.shape());
    let scratch = op.scratch_words(in_shape, shape.iter().product::<usize>() as u64);
    record_into(
        s,
        shape,
        dtype,
        op.name(),
        &shapes,
        scratch,
        |ctx, enc, out| match &prologue {
            Some(chain) => {
                let leaves: Vec<_> = chain
                    .leaves
                    .iter()
                    .map(crate::tensor::lazy::LeafRef::operand)
                    .collect();
                let group = chain.group(Some((op.clone(), args[0].shape().to_vec())));
                crate::kernels::record_group(ctx, enc, &group, &leaves, out)
            }
            None => {
                let operands = args.iter().map(|t| t.operand()).collect::<Result<Vec<_>>>()?;
                crate::kernels::record(ctx, enc, op, &operands, out)
            }
        },
    )
}

/// Allocates a tensor of `shape` (with `scratch` words for its kernel, admitted together), has
/// `f` record what computes it, commits it and observes it in the tidy scopes' telemetry.
pub(crate) fn record_into(
    s: &Shared<SessionShared>,
    shape: Vec<usize>,
    dtype: crate::dtype::DType,
    name: &str,
    in_shapes: &[&[usize]],
    scratch: u64,
    f: impl FnOnce(&crate::kernels::Ctx, &mut crate::commands::Commands, crate::kernels::Operand) -> Result<()>,
) -> Result<Tensor> {
    let _submission = s.submission();
    // the output and the kernel's scratch must fit together, before either is taken
    let _admitted = match scratch {
        0 => None,
        _ => Some(s.admit(&[crate::shape::byte_length(&shape)?, scratch * 4])?),
    };
    let out = Tensor::allocate(s, shape, dtype, name.to_string())?;
    let alloc = |words| crate::tensor::scratch(s, words, name);
    let ctx = crate::kernels::Ctx {
        scratch: Some(&alloc),
        origin: crate::kernels::Origin::Eager(name),
        ..s.ctx()
    };
    let mut enc = crate::commands::Commands::default();
    f(&ctx, &mut enc, out.operand()?)?;
    crate::runtime::commit(s, enc);
    s.upper.scopes.observe(&s.ledger, name, in_shapes, &[&out]);
    Ok(out)
}
