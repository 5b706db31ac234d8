//! A program with state, compiled once and run in a loop with disposal, natively.
//!
//!     cargo run --example program_with_state

#[cfg(not(target_arch = "wasm32"))]
fn main() -> affon::Result<()> {
    use std::collections::HashMap;

    use affon::{DType, Program, Session, SessionOptions};

    let session = Session::new(SessionOptions::default())?;
    // acc += sum(x, axis 0); y = relu(acc)
    let mut p = Program::new("running_mean");
    let x = p.input("x", DType::Float32, &[-1, 4])?;
    let acc = p.state("acc", DType::Float32, &[4])?;
    let s = p.sum(x, &[0], false)?;
    let next = p.add(acc, s)?;
    p.assign("acc", next)?;
    let y = p.relu(next)?;
    p.output("y", y)?;
    println!("{}", p.to_json_string());

    let exe = session.compile(&p)?;
    let state = exe.create_state(&[])?;
    let plan = exe.memory_plan(&HashMap::from([("x".to_string(), vec![3, 4])]))?;
    println!("memory plan for x [3, 4]: {plan:?}");

    let input = session.ones(&[3, 4], DType::Float32)?;
    let live_before = session.stats().live_bytes;
    for _ in 0..100 {
        for (_, out) in exe.run(&[("x", &input)], Some(&state))? {
            out.dispose(); // outputs are owned by the session: dispose them
        }
    }
    assert_eq!(session.stats().live_bytes, live_before, "live bytes exactly flat");
    let acc = state.get("acc")?.to_vec::<f32>()?;
    println!("acc after 100 runs: {acc:?}");
    assert_eq!(acc, vec![300.0; 4]);
    let st = session.stats();
    println!(
        "executions {}, specialisations compiled {}, fixups {}",
        st.executions, st.compiles, st.fixups
    );
    Ok(())
}

#[cfg(target_arch = "wasm32")]
fn main() {}
