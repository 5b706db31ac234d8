//! What reading telemetry costs, natively: one `metrics()` call (process records, runtime memory,
//! per-origin and per-session records), `Session::memory()`, and `liveTensors()`, with 100 live
//! tensors in 10 origins.
//!
//!     cargo bench --bench telemetry

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use affon::{DType, Session, SessionOptions};
    use criterion::Criterion;

    pub fn run() {
        let s = Session::new(SessionOptions::default()).expect("a GPU adapter is required");
        let base = s.ones(&[64], DType::Float32).unwrap();
        let mut live = vec![];
        for i in 0..100 {
            let t = match i % 10 {
                0 => base.square(),
                1 => base.exp(),
                2 => base.neg(),
                3 => base.abs(),
                4 => base.relu(),
                5 => base.sigmoid(),
                6 => base.tanh(),
                7 => base.sqrt(),
                8 => base.copy(),
                _ => base.add(&base),
            };
            live.push(t.unwrap());
        }
        let mut c = Criterion::default().configure_from_args();
        c.bench_function("telemetry::metrics()", |b| b.iter(affon::telemetry::metrics));
        c.bench_function("Session::memory()", |b| b.iter(|| s.memory()));
        c.bench_function("telemetry::live_tensors()", |b| {
            b.iter(affon::telemetry::live_tensors)
        });
        c.final_summary();
        drop(live);
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::run();
}

#[cfg(target_arch = "wasm32")]
fn main() {}
