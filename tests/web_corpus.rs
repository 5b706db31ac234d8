//! The labelled corpus of memory patterns (`shared/corpus_table.rs`) in headless Chromium on
//! WebGPU: every pattern must get its verdict, name its origin and list its finding.
#![cfg(target_arch = "wasm32")]

#[path = "shared/programs.rs"]
mod programs;

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/corpus.rs"]
mod corpus;

#[path = "shared/corpus_table.rs"]
mod corpus_table;

use affon::{Session, SessionOptions};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn session(label: String) -> Session {
    Session::create(SessionOptions {
        label: Some(label),
        ..Default::default()
    })
    .await
    .expect("WebGPU adapter required")
}

#[wasm_bindgen_test]
async fn every_pattern_gets_its_verdict() {
    corpus_table::check_table();
    let mut failures = vec![];
    for p in corpus::patterns() {
        let (s, other) = (
            session(p.name.to_string()).await,
            session(format!("{}-other", p.name)).await,
        );
        match corpus::run(&p, &s, &other).await {
            Ok(d) => {
                web_sys::console::log_1(&format!("{:<50} {:?}: {}", p.name, d.verdict, d.summary).into())
            }
            Err(e) => failures.push(e),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of the corpus failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
