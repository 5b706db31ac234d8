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
/// peak holds every output; byte counts are whole elements). Returns how many of the choices
/// planned, or `None` when `data` is not a program.
pub fn check(data: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(data).ok()?;
    let p = affon::Program::from_json(text).ok()?;
    let mut planned = 0;
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
            planned += 1;
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
    Some(planned)
}

/// [`check`] on every seed, which must do what the seeds are for: all but `cyclic.json` parse and
/// plan, and `mlp.json` at 2^20 rows plans exactly its outputs' bytes.
pub fn check_seeds() {
    let planned: Vec<Option<usize>> = SEEDS.iter().map(|s| check(s.as_bytes())).collect();
    assert_eq!(planned[1], None, "cyclic.json is refused");
    for (i, n) in planned.iter().enumerate().filter(|&(i, _)| i != 1) {
        assert!(matches!(n, Some(k) if *k > 0), "seed {i} parses and plans: {n:?}");
    }
    let mlp = affon::Program::from_json(SEEDS[2]).unwrap();
    let plan = mlp
        .memory_plan(&HashMap::from([("x".to_string(), vec![1 << 20, 3])]))
        .unwrap();
    // p: softmax of [2^20, 3]·[3, 2], float32 [2^20, 2]; q: int32 [2^21] — 8 MiB each
    assert_eq!(plan.output_bytes, 16 << 20, "{plan:?}");
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
