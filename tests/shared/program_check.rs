//! The program-JSON property, written once: the fuzz target (`fuzz/fuzz_targets/program_json.rs`)
//! runs it on arbitrary bytes natively, and `web_edges.rs` / `native_edges.rs` run it on the seed
//! corpus, so the size arithmetic is also exercised as wasm32 computes it (32-bit `usize`; tests
//! build with overflow checks, so a wrapped product panics there).
#![allow(dead_code)]

use std::collections::HashMap;

/// Dynamic dims tried for every input: small ones, and ones that take plans past 2^32 bytes.
pub const DYNAMIC_DIMS: [usize; 4] = [1, 3, 65_535, 1 << 20];

/// Parse, validate and plan `data` never panic. A program that parses round-trips exactly; its
/// plan for each choice of dynamic dims either fails with an affon error or is consistent (the
/// peak holds every output; byte counts are whole elements).
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(p) = affon::Program::from_json(text) else {
        return;
    };
    let again = affon::Program::from_json(&p.to_json_string()).expect("a parsed program re-parses");
    assert_eq!(again.to_json_string(), p.to_json_string(), "round trip is exact");
    for (k, &dyn_dim) in DYNAMIC_DIMS.iter().enumerate() {
        let shapes: HashMap<String, Vec<usize>> = p
            .inputs()
            .map(|(_, name, _, decl)| {
                let dims = decl.iter().enumerate().map(|(i, &d)| {
                    if d > 0 {
                        d as usize
                    } else if k == 0 {
                        1 + (data.len() + i) % 5
                    } else {
                        dyn_dim
                    }
                });
                (name.to_string(), dims.collect())
            })
            .collect();
        if let Ok(plan) = p.memory_plan(&shapes) {
            assert!(plan.peak_bytes >= plan.output_bytes, "{plan:?}");
            assert!(plan.peak_bytes >= plan.intermediate_bytes, "{plan:?}");
            for b in [
                plan.peak_bytes,
                plan.output_bytes,
                plan.intermediate_bytes,
                plan.state_bytes,
            ] {
                assert_eq!(b % 4, 0, "{plan:?}");
            }
        }
    }
}

/// The committed seeds (`fuzz/seeds/program_json/`), for the test targets.
pub const SEEDS: [&str; 6] = [
    include_str!("../../fuzz/seeds/program_json/broadcast.json"),
    include_str!("../../fuzz/seeds/program_json/cyclic.json"),
    include_str!("../../fuzz/seeds/program_json/mlp.json"),
    include_str!("../../fuzz/seeds/program_json/nonfinite.json"),
    include_str!("../../fuzz/seeds/program_json/pool_grad.json"),
    include_str!("../../fuzz/seeds/program_json/running_mean.json"),
];
