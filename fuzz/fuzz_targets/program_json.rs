//! Program JSON: parse, validate and plan must never panic, whatever the bytes (the property is in
//! `tests/shared/program_check.rs`, shared with the wasm32 test that runs it on the seeds).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/shared/program_check.rs"]
mod program_check;

fuzz_target!(|data: &[u8]| {
    let _ = program_check::check(data);
});
