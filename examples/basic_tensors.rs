//! Tensors, eager ops and the accounting, natively.
//!
//!     cargo run --example basic_tensors

#[cfg(not(target_arch = "wasm32"))]
fn main() -> affon::Result<()> {
    use affon::{DType, Session, SessionOptions};

    let session = Session::new(SessionOptions::default())?;
    println!("adapter: {:?}", session.adapter());

    // Creation: data + shape; the dtype follows the element type.
    let a = session.tensor(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    let b = session.tensor(&[10.0f32, 20.0, 30.0], &[3])?;
    let ids = session.tensor(&[7i32, -1], &[2])?;
    let flags = session.tensor(&[true, false, true], &[3])?;

    // Eager ops (the same kernels programs use); binary ops broadcast.
    let c = a.add(&b)?; // [2, 3] + [3]
    let m = a.matmul(&a.transpose(None)?)?; // [2, 3] × [3, 2]
    let p = c.softmax(-1)?;
    let total = c.sum(&[], false)?;
    assert_eq!(c.to_vec::<f32>()?, vec![11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
    assert_eq!(m.to_vec::<f32>()?, vec![14.0, 32.0, 32.0, 77.0]);
    assert_eq!(total.item()?, 141.0);
    assert!((p.sum(&[-1], false)?.to_vec::<f32>()?[0] - 1.0).abs() < 1e-6);
    assert_eq!(ids.to_vec::<i32>()?, vec![7, -1]);
    assert_eq!(flags.cast(DType::Float32)?.to_vec::<f32>()?, vec![1.0, 0.0, 1.0]);

    // Every byte accounted for: byteLength = elements × 4 for every dtype.
    let m0 = session.memory();
    println!(
        "live: {} tensors, {} bytes (peak {})",
        m0.num_tensors, m0.num_bytes, m0.peak_bytes
    );
    drop((c, m, p, total));
    let m1 = session.memory();
    println!(
        "after dropping four results: {} tensors, {} bytes",
        m1.num_tensors, m1.num_bytes
    );
    assert_eq!(m1.num_bytes, 24 + 12 + 8 + 12);

    // Misuse is an error with a stable code, and changes nothing.
    let e = a.add(&session.ones(&[4], DType::Float32)?).unwrap_err();
    println!("{}: {e}", e.code());
    assert_eq!(e.code(), "SHAPE_MISMATCH");
    let pool = session.pool_usage();
    println!("{pool}");
    Ok(())
}

#[cfg(target_arch = "wasm32")]
fn main() {}
