//! The native benches' 8-op elementwise chain on one input `x` (`[-1]`): x·x, then relu, sqrt, neg,
//! exp, abs, square, tanh — compiled into one kernel — and, with `sum`, its full sum (read by the
//! same kernel). Output `y`. Included by `compute`, `workloads` and `elementwise_forms`.

use affon::{DType, Program};

pub fn chain_program(sum: bool) -> Program {
    let mut p = Program::new(if sum { "chain_sum" } else { "chain" });
    let x = p.input("x", DType::Float32, &[-1]).unwrap();
    let mut v = p.mul(x, x).unwrap();
    for f in [
        Program::relu,
        Program::sqrt,
        Program::neg,
        Program::exp,
        Program::abs,
        Program::square,
        Program::tanh,
    ] {
        v = f(&mut p, v).unwrap();
    }
    if sum {
        v = p.sum(v, &[], false).unwrap();
    }
    p.output("y", v).unwrap();
    p
}
