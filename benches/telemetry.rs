//! What reading telemetry costs, natively: one `metrics()` call (process records, runtime memory,
//! per-origin and per-session records), `Session::memory()`, and `liveTensors()`, with 100 live
//! tensors in 10 origins; and `metrics()` / `Session::memory()` with none and with 1000 in 10
//! origins (issue 15's two cases).
//!
//!     cargo bench --bench telemetry

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use affon::{DType, Session, SessionOptions};
    use criterion::Criterion;

    pub fn run() {
        let s = Session::new(SessionOptions::default()).expect("a GPU adapter is required");
        let mut c = Criterion::default().configure_from_args();
        c.bench_function("telemetry::metrics(), no live tensor", |b| {
            b.iter(affon::telemetry::metrics)
        });
        c.bench_function("Session::memory(), no live tensor", |b| b.iter(|| s.memory()));
        let base = s.ones(&[64], DType::Float32).unwrap();
        let mut live = vec![];
        // 100 results of 10 ops (an origin each), then 900 more of the same ops
        let grow = |live: &mut Vec<affon::Tensor>, n: usize| {
            for i in 0..n {
                live.push(origin(&base, i % 10).unwrap());
            }
        };
        grow(&mut live, 100);
        c.bench_function("telemetry::metrics()", |b| b.iter(affon::telemetry::metrics));
        c.bench_function("Session::memory()", |b| b.iter(|| s.memory()));
        c.bench_function("telemetry::live_tensors()", |b| {
            b.iter(affon::telemetry::live_tensors)
        });
        grow(&mut live, 900);
        assert_eq!(s.memory().num_tensors, 1001);
        c.bench_function("telemetry::metrics(), 1000 live tensors in 10 origins", |b| {
            b.iter(affon::telemetry::metrics)
        });
        c.bench_function("Session::memory(), 1000 live tensors in 10 origins", |b| {
            b.iter(|| s.memory())
        });
        c.final_summary();
        drop(live);
    }

    /// A result of one of 10 ops on `base` (each call site its own origin).
    fn origin(base: &affon::Tensor, op: usize) -> affon::Result<affon::Tensor> {
        match op {
            0 => base.square(),
            1 => base.exp(),
            2 => base.neg(),
            3 => base.abs(),
            4 => base.relu(),
            5 => base.sigmoid(),
            6 => base.tanh(),
            7 => base.sqrt(),
            8 => base.copy(),
            _ => base.add(base),
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::run();
}

#[cfg(target_arch = "wasm32")]
fn main() {}
