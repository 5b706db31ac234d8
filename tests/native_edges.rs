//! The core's promises at the edges, natively (lavapipe here). Each scenario compares the whole
//! process ledger, so tests run one at a time (`RUST_TEST_THREADS=1` in `.cargo/config.toml`).
#![cfg(not(target_arch = "wasm32"))]

#[path = "shared/ledger.rs"]
mod ledger;

#[path = "shared/edges.rs"]
mod edges;

#[path = "shared/limits.rs"]
mod limits;

#[path = "shared/program_check.rs"]
mod program_check;

#[path = "shared/scratch_edges.rs"]
mod scratch_edges;

#[path = "shared/index_checks.rs"]
mod index_checks;

use std::sync::Arc;

use affon::{DType, PoolOptions, Program, Session, SessionOptions};
use pollster::block_on;

fn bounded(max_total_bytes: u64) -> Session {
    Session::new(SessionOptions {
        pool: PoolOptions {
            max_total_bytes: Some(max_total_bytes),
            ..Default::default()
        },
        ..Default::default()
    })
    .expect("a GPU adapter is required")
}

#[test]
fn creation_limits() {
    block_on(edges::creation_limits(&bounded(64 << 30)));
}

#[test]
fn eager_op_out_of_room() {
    block_on(edges::eager_op_out_of_room(&bounded(1 << 20)));
}

#[test]
fn split_reduction_at_the_bound() {
    block_on(scratch_edges::split_reduction_at_the_bound(&bounded(1 << 20)));
}

#[test]
fn composite_scratch_at_the_bound() {
    block_on(scratch_edges::composite_scratch_at_the_bound(&bounded(1 << 20)));
}

#[test]
fn line_parts_at_the_bound() {
    block_on(scratch_edges::line_parts_at_the_bound(&bounded(1 << 20)));
}

#[test]
fn eager_gather_reports_at_the_next_readback() {
    block_on(index_checks::eager_gather_reports_at_the_next_readback(&bounded(
        64 << 20,
    )));
}

#[test]
fn sync_reports_a_bad_index_once() {
    block_on(index_checks::sync_reports_a_bad_index_once(&bounded(64 << 20)));
}

#[test]
fn one_hot_is_not_checked() {
    block_on(index_checks::one_hot_is_not_checked(&bounded(64 << 20)));
}

#[test]
fn program_gather_names_its_node() {
    block_on(index_checks::program_gather_names_its_node(&bounded(64 << 20)));
}

#[test]
fn run_out_of_room_mid_program() {
    block_on(edges::run_out_of_room_mid_program(&bounded(1 << 20)));
}

#[test]
fn create_state_all_or_nothing() {
    block_on(edges::create_state_all_or_nothing(&bounded(1 << 20)));
}

#[test]
fn assignments_read_old_values() {
    block_on(edges::assignments_read_old_values(&bounded(1 << 30)));
}

#[test]
fn grids_past_the_workgroup_limit() {
    block_on(limits::grids_past_the_workgroup_limit(&bounded(1 << 30)));
}

#[test]
fn nn_grids_past_the_workgroup_limit() {
    block_on(limits::nn_grids_past_the_workgroup_limit(&bounded(1 << 30)));
}

#[test]
fn matmul_grids_past_the_workgroup_limit() {
    block_on(limits::matmul_grids_past_the_workgroup_limit(&bounded(1 << 30)));
}

#[test]
fn long_tidy_stays_small() {
    block_on(limits::long_tidy_stays_small(&bounded(1 << 30)));
}

#[test]
fn specialisation_cache_is_bounded() {
    block_on(limits::specialisation_cache_is_bounded(&bounded(1 << 30)));
}

#[test]
fn forgotten_handles() {
    block_on(limits::forgotten_handles_release(&bounded(1 << 30)));
    block_on(limits::forgotten_session(bounded(1 << 30), &bounded(1 << 30)));
    block_on(limits::dispose_releases_forgotten(bounded(1 << 30)));
}

#[test]
fn plans_past_4_gib() {
    limits::plans_past_4_gib();
}

/// The pipeline cache keeps at most `MAX_PIPELINES`; each distinct fused chain is a pipeline.
#[test]
fn pipeline_cache_is_bounded() {
    let s = bounded(1 << 30);
    let x = s.ones(&[4], DType::Float32).unwrap();
    let before = s.stats();
    let ops = [Program::neg, Program::abs, Program::exp, Program::relu];
    let n = affon::MAX_PIPELINES + 4;
    for i in 0..n {
        // a chain spelling i in base 4: a distinct fused expression (and pipeline) for each i
        let mut p = Program::new("chain");
        let mut v = p.input("x", DType::Float32, &[4]).unwrap();
        let mut k = i;
        for _ in 0..5 {
            v = ops[k % 4](&mut p, v).unwrap();
            k /= 4;
        }
        p.output("y", v).unwrap();
        let exe = s.compile(&p).unwrap();
        drop(exe.run(&[("x", &x)], None).unwrap());
    }
    let after = s.stats();
    assert!(s.pipelines() <= affon::MAX_PIPELINES);
    assert!(after.pipeline_cache_evictions - before.pipeline_cache_evictions >= 4);
    assert_eq!(after.pipeline_cache_entries as usize, s.pipelines());
}

/// `Executable::dispose` racing `run` on other threads: every run either completes or reports
/// `DISPOSED`; nothing panics, and the accounting ends exact.
#[test]
fn dispose_races_run() {
    let s = Arc::new(bounded(1 << 30));
    for round in 0..20 {
        let mut p = Program::new("raced");
        let x = p.input("x", DType::Float32, &[16]).unwrap();
        let c = p.constant(&[2.0; 16], &[16], DType::Float32).unwrap();
        let y = p.mul(x, c).unwrap();
        let t = p.transpose(y, None).unwrap();
        p.output("y", t).unwrap();
        let exe = Arc::new(s.compile(&p).unwrap());
        let live0 = s.stats().live_bytes;
        let runners: Vec<_> = (0..3)
            .map(|_| {
                let (s, exe) = (s.clone(), exe.clone());
                std::thread::spawn(move || {
                    let x = s.ones(&[16], DType::Float32).unwrap();
                    for _ in 0..50 {
                        match exe.run(&[("x", &x)], None) {
                            Ok(out) => drop(out),
                            Err(e) => assert_eq!(e.code(), "DISPOSED", "{e}"),
                        }
                    }
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_micros(200 * round));
        exe.dispose();
        for r in runners {
            r.join().expect("no run panicked");
        }
        assert_eq!(
            s.stats().live_bytes,
            live0 - 64,
            "round {round}: the constant was released"
        );
    }
}

/// The program-JSON fuzz property on the committed seeds, with dynamic dims up to 2^20.
#[test]
fn program_json_seeds_plan_in_64_bit_arithmetic() {
    program_check::check_seeds();
}
