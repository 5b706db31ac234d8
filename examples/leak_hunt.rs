//! The seed's before/warm/after walkthrough, natively: a leaky loop and its fix, each watched and
//! diagnosed, then the reproducible report.
//!
//!     cargo run --release --example leak_hunt
//!
//! Exits non-zero if either verdict is not the expected one (the test command runs it).

// `wasm-pack test` builds examples for wasm32 too; this one is native only.
#[cfg(not(target_arch = "wasm32"))]
mod native {
    use affon::telemetry::{self, Verdict, WatchOptions};
    use affon::{DType, Program, Session, SessionOptions};

    fn program() -> affon::Result<Program> {
        let mut p = Program::new("running_mean");
        let x = p.input("x", DType::Float32, &[-1, 4])?;
        let acc = p.state("acc", DType::Float32, &[4])?;
        let s = p.sum(x, &[0], false)?;
        let next = p.add(acc, s)?;
        p.assign("acc", next)?;
        let y = p.relu(next)?;
        p.output("y", y)?;
        Ok(p)
    }

    pub fn main() -> affon::Result<()> {
        let session = Session::new(SessionOptions {
            label: Some("leak-hunt".into()),
            ..Default::default()
        })?;
        let a = session.adapter();
        println!("adapter: {} {} ({})", a.backend, a.name, a.device_type);
        let exe = session.compile(&program()?)?;
        let state = exe.create_state(&[])?;
        let x = session.random_normal(&[64, 4], 0.0, 1.0, 42)?;
        let options = WatchOptions::new(10, 50);

        // 1. The leak: every run's output is kept in a list and never disposed.
        let mut history = Vec::new();
        let leaky = pollster::block_on(telemetry::watch(&[&session], options.clone(), async |_| {
            let mut out = exe.run(&[("x", &x)], Some(&state))?;
            history.push(out.remove(0).1);
            Ok(())
        }))?;
        println!("\n== leaky loop: {:?}\n{}", leaky.verdict, leaky.summary);
        for e in &leaky.evidence {
            println!(
                "  {:<45} warm {:>10} after {:>10} ({:+} per iteration)",
                e.metric,
                e.warm,
                e.after,
                e.per_iteration.unwrap_or(0.0)
            );
        }
        println!("  live tensors by origin:");
        for g in telemetry::live_tensors() {
            println!(
                "    {:<45} {:>4} tensors {:>8} bytes, oldest from iteration {}",
                g.origin, g.count, g.bytes, g.oldest_iteration
            );
        }
        drop(history);

        // 2. The fix: dispose each output after use.
        let fixed = pollster::block_on(telemetry::watch(&[&session], options.clone(), async |_| {
            for (_, t) in exe.run(&[("x", &x)], Some(&state))? {
                t.dispose();
            }
            Ok(())
        }))?;
        println!("\n== fixed loop: {:?}\n{}", fixed.verdict, fixed.summary);

        // 3. The report for a bug tracker.
        let context = serde_json::json!({
            "program": "running_mean",
            "inputs": [{ "name": "x", "shape": x.shape(), "dtype": "float32" }],
            "pattern": "outputs kept in a list (leaky); disposed after use (fixed)",
        });
        let mut report = telemetry::report(context, Some(&leaky));
        // the full metric arrays are in the report for machines; print the figures for people
        for snap in ["baseline", "warm", "steady"] {
            if let Some(s) = report["snapshots"][snap].as_object_mut() {
                s.remove("metrics");
            }
        }
        println!(
            "\n== report (leaky loop, raw metric arrays omitted)\n{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );

        if leaky.verdict != Verdict::OwnershipLeak || fixed.verdict != Verdict::Steady {
            eprintln!(
                "unexpected verdicts: leaky {:?}, fixed {:?}",
                leaky.verdict, fixed.verdict
            );
            std::process::exit(1);
        }
        Ok(())
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> affon::Result<()> {
    native::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}
