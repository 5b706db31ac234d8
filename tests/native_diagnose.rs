//! Diagnosis cases, attribution, reports and OOM forensics natively. One test: the cases read
//! process-wide metrics and must not overlap. Each case gets a fresh session (its own pool), as a
//! user's workload would.
#![cfg(not(target_arch = "wasm32"))]

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/programs.rs"]
mod programs;

#[path = "shared/diagnosis.rs"]
mod diagnosis;

use affon::{PoolOptions, Session, SessionOptions};
use pollster::block_on;

fn session(label: &str) -> Session {
    Session::new(SessionOptions {
        label: Some(label.into()),
        ..Default::default()
    })
    .expect("a GPU adapter is required")
}

#[test]
fn every_verdict_attribution_report_and_forensics() {
    block_on(async {
        diagnosis::forgets_one_output_per_iteration(&session("forgotten-output")).await;
        diagnosis::keeps_every_tenth_output(&session("every-tenth")).await;
        diagnosis::keeps_old_states(&session("old-states")).await;
        diagnosis::growing_shapes(&session("growing-shapes")).await;
        diagnosis::cycles_distinct_sizes(&session("distinct-sizes")).await;
        diagnosis::steady_loop(&session("steady")).await;
        diagnosis::a_long_watch_of_nothing_is_steady(&session("long-watch")).await;
        diagnosis::grows_a_host_array(&session("host-array")).await;
        diagnosis::live_tensor_attribution(&session("attribution")).await;
        diagnosis::report_fields(&session("report")).await;
        diagnosis::watch_refusals_and_a_lost_neighbour(&session("refusals"), &session("lost")).await;
    });
    let small = Session::new(SessionOptions {
        pool: PoolOptions {
            max_total_bytes: Some(64 << 10),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    block_on(diagnosis::out_of_memory_forensics(&small));
}
