//! Browser tests: wasm-bindgen-test in headless Chromium on real WebGPU (SwiftShader here).
//! No adapter is a failure, never a skip.
#![cfg(target_arch = "wasm32")]

mod common;

#[path = "web/js_surface.rs"]
mod js_surface;

use affon::{Session, SessionOptions};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The idle trim is off (as natively, `.cargo/config.toml`): these tests compare exact pool figures.
fn no_idle_trim() -> affon::PoolOptions {
    affon::PoolOptions {
        idle_trim_ms: Some(0),
        ..Default::default()
    }
}

async fn session() -> Session {
    Session::create(SessionOptions {
        pool: no_idle_trim(),
        ..Default::default()
    })
    .await
    .expect("WebGPU adapter required: run Chromium with --enable-unsafe-webgpu")
}

/// A session whose pool is bounded at `max_total_bytes`.
async fn bounded(max_total_bytes: u64) -> Session {
    Session::create(SessionOptions {
        pool: affon::PoolOptions {
            max_total_bytes: Some(max_total_bytes),
            ..no_idle_trim()
        },
        ..Default::default()
    })
    .await
    .expect("WebGPU adapter required: run Chromium with --enable-unsafe-webgpu")
}

#[wasm_bindgen_test]
async fn adapter_is_real_webgpu() {
    let s = session().await;
    let a = s.adapter();
    assert_eq!(a.backend, "webgpu");
    assert!(!a.vendor.is_empty() || !a.architecture.is_empty(), "{a:?}");
    web_sys::console::log_1(&format!("adapter: {a:?}").into());
}

#[wasm_bindgen_test]
async fn accounting_scenario_matches_native_exactly() {
    let s = Session::create(common::scenario_options()).await.unwrap();
    let end = common::accounting_scenario(&s).await;
    assert_eq!(end, common::SCENARIO_END.to_vec());
}

#[wasm_bindgen_test]
async fn every_dtype_round_trips_exactly() {
    common::round_trip_every_dtype(&session().await).await;
}

#[wasm_bindgen_test]
async fn misuse_throws_the_api_codes_and_changes_nothing() {
    common::misuse_changes_nothing(&session().await).await;
}

#[wasm_bindgen_test]
async fn disposed_session_keeps_children_until_disposed() {
    common::disposed_session_semantics(&session().await).await;
}

#[wasm_bindgen_test]
async fn out_of_memory_at_the_bound_leaves_the_session_usable() {
    common::out_of_memory_at_the_bound(&bounded(64 << 10).await).await;
}

#[wasm_bindgen_test]
async fn a_request_larger_than_the_device_allows_is_out_of_memory() {
    let s = Session::create(SessionOptions {
        pool: affon::PoolOptions {
            max_total_bytes: Some(u64::MAX / 2),
            ..Default::default()
        },
        ..Default::default()
    })
    .await
    .unwrap();
    common::larger_than_the_device_allows(&s);
}

#[wasm_bindgen_test]
async fn ops_match_cpu_reference() {
    common::ops::ops_match_cpu_reference(&session().await).await;
}

#[wasm_bindgen_test]
async fn nn_ops_match_f64_reference() {
    common::nn::nn_ops_match_f64_reference(&session().await).await;
}

#[wasm_bindgen_test]
async fn gradients_match_finite_differences() {
    common::grad::gradients_match_finite_differences(&session().await).await;
}

#[wasm_bindgen_test]
async fn optimizers_match_reference() {
    common::train::optimizers_match_reference(&session().await).await;
}

#[wasm_bindgen_test]
async fn training_step_memory_is_planned() {
    common::train::training_step_memory_is_planned(&session().await).await;
}

#[wasm_bindgen_test]
async fn staging_respects_the_bound() {
    common::batch::staging_respects_the_bound(bounded(1 << 20).await).await;
}

/// The browser suite runs on SwiftShader, which takes the texture form (asserted: on another
/// adapter this fails rather than leaving the form untested).
#[wasm_bindgen_test]
async fn operand_texture_form_matches_and_is_counted() {
    let s = session().await;
    assert!(s.adapter().is_swiftshader(), "{:?}", s.adapter());
    common::operand_textures::texture_form_matches_and_is_counted(s, true).await;
}

#[wasm_bindgen_test]
async fn unchanged_operands_skip_their_texture_fills() {
    let s = session().await;
    assert!(s.adapter().is_swiftshader(), "{:?}", s.adapter());
    common::operand_textures::unchanged_operands_skip_their_fills(s, true).await;
}

#[wasm_bindgen_test]
async fn parameters_live_in_one_counted_ring() {
    common::batch::parameters_live_in_one_counted_ring(session().await).await;
}

#[wasm_bindgen_test]
async fn readbacks_reuse_counted_staging() {
    common::batch::readbacks_reuse_counted_staging(session().await).await;
}

#[wasm_bindgen_test]
async fn batch_norm_and_clip_fuse() {
    common::composite::batch_norm_and_clip_fuse(&session().await).await;
}

#[wasm_bindgen_test]
async fn long_index_runs_match() {
    common::composite::long_index_runs_match(&session().await).await;
}

#[wasm_bindgen_test]
async fn long_loops_match() {
    common::long_loops::long_loops_match(&session().await).await;
}

#[wasm_bindgen_test]
async fn big_filters_match() {
    common::big_filters::big_filters_match(&session().await).await;
}

#[wasm_bindgen_test]
async fn big_filter_gradients_match() {
    common::big_filters::big_filter_gradients_match(&session().await).await;
}

#[wasm_bindgen_test]
async fn many_positions_filter_gradient_matches() {
    common::big_filters::many_positions_filter_gradient_matches(&session().await).await;
}

#[wasm_bindgen_test]
async fn budget_edges_match() {
    common::budget_edges::budget_edges_match(&session().await).await;
}

#[wasm_bindgen_test]
async fn big_windows_match() {
    common::big_windows::big_windows_match(&session().await).await;
}

#[wasm_bindgen_test]
fn pool_grad_checks_its_gradient() {
    common::big_windows::pool_grad_checks_its_gradient();
}

#[wasm_bindgen_test]
async fn big_window_scratch_is_planned() {
    common::big_windows::big_window_scratch_is_planned(&session().await).await;
}

#[wasm_bindgen_test]
async fn layer_norm_reads_its_chain_through_the_reduction() {
    common::composite::layer_norm_reads_its_chain_through_the_reduction(&session().await).await;
}

#[wasm_bindgen_test]
async fn eager_chains_are_one_kernel() {
    common::lazy::eager_chains_are_one_kernel(&session().await).await;
}

#[wasm_bindgen_test]
async fn siblings_are_one_kernel() {
    common::lazy::siblings_are_one_kernel(&session().await).await;
}

#[wasm_bindgen_test]
async fn pending_values_are_computed_when_needed() {
    common::lazy::pending_values_are_computed_when_needed(&session().await).await;
}

#[wasm_bindgen_test]
async fn an_idle_session_gives_its_cache_back() {
    common::idle::an_idle_session_gives_its_cache_back().await;
}

#[wasm_bindgen_test]
async fn busy_or_off_sessions_keep_their_cache() {
    common::idle::busy_or_off_sessions_keep_their_cache().await;
}

#[wasm_bindgen_test]
async fn eager_work_is_batched() {
    common::batch::eager_work_is_batched(&session().await).await;
}

#[wasm_bindgen_test]
async fn pending_work_sees_its_inputs() {
    let strict = Session::create(SessionOptions {
        pool: affon::PoolOptions {
            oversize_threshold_bytes: Some(1),
            ..Default::default()
        },
        ..Default::default()
    })
    .await
    .unwrap();
    common::batch::pending_work_sees_its_inputs(&session().await, &strict).await;
}

/// `telemetry.metrics()` from JS (values as one Float64Array, the layout cached) gives exactly the
/// records `affon::telemetry::metrics()` builds, and a new origin or session (a new layout) appears
/// at once.
#[wasm_bindgen_test]
async fn metrics_from_js_are_the_records() {
    use affon::telemetry::MetricRecord;
    let s = session().await;
    let x = s.tensor(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let y = x.square().unwrap();
    let compare = |what: &str| {
        let js: Vec<MetricRecord> =
            serde_wasm_bindgen::from_value(affon::js::JsTelemetry::metrics().unwrap()).unwrap();
        let rust = affon::telemetry::metrics();
        assert_eq!(js.len(), rust.len(), "{what}: record count");
        for (j, r) in js.iter().zip(&rust) {
            if r.scope == "runtime.memory" {
                assert_eq!((&j.scope, &j.name), (&r.scope, &r.name), "{what}");
                continue; // the JS heap moves between the two calls
            }
            assert_eq!(j, r, "{what}");
        }
        rust
    };
    compare("warm");
    compare("cached layout");
    let z = y.exp().unwrap(); // a new origin: a new layout
    let recs = compare("new origin");
    assert!(recs.iter().any(|r| r.name == "live_bytes_by_origin"
        && r.labels
            .as_ref()
            .is_some_and(|l| l.get("origin").map(String::as_str) == Some("exp"))));
    drop((x, y, z));
    compare("origins gone");
    // the same origins in the other order (the process-wide records go largest first): a new
    // layout, never the cached one with the values under swapped labels
    let order = |recs: &[MetricRecord]| -> Vec<String> {
        let process_wide = recs.iter().filter(|r| r.name == "live_bytes_by_origin");
        process_wide
            .filter_map(|r| r.labels.as_ref().filter(|l| !l.contains_key("session")))
            .filter_map(|l| l.get("origin").cloned())
            .filter(|o| o == "ones" || o == "zeros")
            .collect()
    };
    let ones = s.ones(&[1 << 18], affon::DType::Float32).unwrap(); // 1 MiB
    let zeros = s.zeros(&[1 << 19], affon::DType::Float32).unwrap(); // 2 MiB
    assert_eq!(order(&compare("zeros above ones")), ["zeros", "ones"]);
    let more = s.ones(&[1 << 19], affon::DType::Float32).unwrap(); // ones: 3 MiB
    assert_eq!(order(&compare("ones above zeros")), ["ones", "zeros"]);
    drop((ones, zeros, more));
    // labels are frozen (shared between calls, so nobody's copy changes under them)
    let a = js_sys::Array::from(&affon::js::JsTelemetry::metrics().unwrap());
    let labelled = a
        .iter()
        .find(|r| !js_sys::Reflect::get(r, &"labels".into()).unwrap().is_undefined())
        .expect("a labelled record");
    let labels = js_sys::Reflect::get(&labelled, &"labels".into()).unwrap();
    assert!(js_sys::Object::is_frozen(
        labels.unchecked_ref::<js_sys::Object>()
    ));
}
