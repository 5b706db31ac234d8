//! The op table's JS surface in headless Chromium on WebGPU (`web/op_table_js.rs`), in a test
//! binary of its own: with it inside `web_programs.rs` that binary had two inline JS snippets of its
//! own and its page hung at load ("Loading scripts...", the renderer unresponsive) in about half the
//! runs here — with the snippet left out, 4 of 4 passed — so each browser test binary has one.
#![cfg(target_arch = "wasm32")]

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "web/op_table_js.rs"]
mod op_table_js;

use ledger::{field, js_session, nums};

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
