//! The labelled corpus of memory patterns (`shared/corpus_table.rs`), natively: every pattern
//! must get its verdict, name its origin and list its finding.
#![cfg(not(target_arch = "wasm32"))]

#[path = "shared/programs.rs"]
mod programs;

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/corpus.rs"]
mod corpus;

#[path = "shared/corpus_table.rs"]
mod corpus_table;

#[path = "shared/trace.rs"]
mod trace;

use affon::{Session, SessionOptions};

fn session(label: String) -> Session {
    Session::new(SessionOptions {
        label: Some(label),
        ..Default::default()
    })
    .expect("a GPU adapter is required")
}

#[test]
fn every_pattern_gets_its_verdict() {
    let (lines, failures) = pollster::block_on(corpus::run_all(|label| async move { session(label) }));
    println!("{}", lines.join("\n"));
    assert!(
        failures.is_empty(),
        "{} of the corpus failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `startTrace()`/`stopTrace()`: the JSON validates against the Trace Event format.
#[test]
fn trace_export_is_valid_trace_event_json() {
    pollster::block_on(trace::trace_of_a_workload(&session("trace-demo".into())));
}
