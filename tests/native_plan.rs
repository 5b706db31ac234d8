//! `memoryPlan()` against telemetry's peak: alone in its binary because it resets peaks.
#![cfg(not(target_arch = "wasm32"))]

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/programs.rs"]
mod programs;

#[test]
fn memory_plan_matches_telemetry() {
    let s = affon::Session::new(Default::default()).expect("a GPU adapter is required");
    pollster::block_on(programs::memory_plan_matches_telemetry(&s));
}
