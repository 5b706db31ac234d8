//! Program JSON: parse, validate and plan must never panic, whatever the bytes. A program that
//! parses must round-trip exactly, and planning it for small input shapes either succeeds or fails
//! with an affon error.
#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(p) = affon::Program::from_json(text) else {
        return;
    };
    let again = affon::Program::from_json(&p.to_json_string()).expect("a parsed program re-parses");
    assert_eq!(again.to_json_string(), p.to_json_string(), "round trip is exact");
    // plan with every dynamic dim set to a small size taken from the input
    let seed = data.len();
    let shapes: HashMap<String, Vec<usize>> = p
        .inputs()
        .map(|(_, name, _, decl)| {
            let dims = decl
                .iter()
                .enumerate()
                .map(|(i, &d)| if d > 0 { d as usize } else { 1 + (seed + i) % 5 });
            (name.to_string(), dims.collect())
        })
        .collect();
    let _ = p.memory_plan(&shapes);
});
