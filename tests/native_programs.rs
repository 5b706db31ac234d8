//! Programs, executables and states on the native GPU (lavapipe here).
#![cfg(not(target_arch = "wasm32"))]

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/programs.rs"]
mod programs;

#[path = "shared/onnx_model.rs"]
mod onnx_model;

#[path = "shared/fusion.rs"]
mod fusion;

use affon::{Session, SessionOptions};
use pollster::block_on;

fn session() -> Session {
    Session::new(SessionOptions::default()).expect("a GPU adapter is required (install mesa-vulkan-drivers)")
}

#[test]
fn stateful_program_100_runs() {
    block_on(programs::stateful_program_100_runs(&session()));
}

#[test]
fn program_errors_change_nothing() {
    block_on(programs::program_errors_change_nothing(&session()));
}

#[test]
fn outputs_aliasing_and_constants() {
    block_on(programs::outputs_aliasing_and_constants(&session()));
}

#[test]
fn tidy_and_profile() {
    block_on(programs::tidy_and_profile(&session()));
}

#[test]
fn elementwise_chains_fuse() {
    block_on(fusion::elementwise_chains_fuse(&session()));
}

#[test]
fn reductions_read_their_chain() {
    block_on(fusion::reductions_read_their_chain(&session()));
}

#[test]
fn split_reductions_are_planned_and_accounted() {
    block_on(fusion::split_reductions_are_planned_and_accounted(&session()));
}

#[test]
fn line_parts_are_planned_and_accounted() {
    block_on(fusion::line_parts_are_planned_and_accounted(&session()));
}

/// Chains read by a reduction, through the reductions' GPU forms (lavapipe runs the CPU forms).
#[test]
fn reductions_read_their_chain_in_the_gpu_kernel_forms() {
    let s = Session::new(SessionOptions {
        kernels: affon::Kernels::Gpu,
        ..Default::default()
    })
    .unwrap();
    block_on(fusion::reductions_read_their_chain(&s));
    block_on(fusion::split_reductions_are_planned_and_accounted(&s));
}

#[test]
fn an_onnx_model_imports_and_runs() {
    pollster::block_on(onnx_model::tiny_model_runs(&session()));
    onnx_model::broken_models_are_errors();
    pollster::block_on(onnx_model::gather_elements_checks_its_indices(&session()));
}
