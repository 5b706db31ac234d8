//! Device-side index checks, on both targets: `gather` indices that live on the device are checked
//! by the kernel; an out-of-range one reads 0, and the session's next readback or
//! `sync()` rejects once with `INVALID_ARGUMENT` naming the op (its origin) and the index. The
//! check adds no submission to a readback, moves no storage or pool record, and its 16-byte words
//! are counted once, with the parameter buffers.
#![allow(dead_code)]

use affon::{DType, Program, Session, Tensor};

use crate::ledger::{assert_unchanged, ledger};

fn counter(s: &Session, name: &str) -> f64 {
    let label = format!("{{\"session\": \"{}\"}}", s.label());
    affon::telemetry::metrics()
        .into_iter()
        .find(|r| r.name == name && r.labels.as_ref().map(|l| format!("{l:?}")) == Some(label.clone()))
        .map(|r| r.value)
        .unwrap_or_else(|| panic!("no {name} record for {label}"))
}

/// A readback that must fail with `INVALID_ARGUMENT` saying `says`, moving no storage or pool
/// record and taking one submission, as any readback does.
async fn rejects(s: &Session, t: &Tensor, says: &str, what: &str) {
    let before = ledger();
    let submits = counter(s, "submits");
    let e = t.read::<f32>().await.expect_err(what);
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{what}: {e}");
    assert!(e.to_string().contains(says), "{what}: {e}");
    assert_unchanged(&before, &ledger(), what);
    assert_eq!(
        counter(s, "submits") - submits,
        1.0,
        "{what}: the check rode on the readback's submission"
    );
}

/// Eager `gather` past its axis: the call succeeds, the next readback names `gather` and index 7,
/// once; the values read after have zeros where the bad index was.
pub async fn eager_gather_reports_at_the_next_readback(s: &Session) {
    let x = s.tensor(&[1f32, 2., 3., 4., 5., 6.], &[3, 2]).unwrap();
    // a dispatch (the parameter ring) and a readback (the staging buffer it keeps) before
    x.neg().unwrap().read::<f32>().await.unwrap();
    let (bytes, buffers) = (counter(s, "param_bytes"), counter(s, "param_buffers"));
    let idx = s.tensor(&[2i32, 7, 0], &[3]).unwrap();
    let y = x.gather(&idx, 0).unwrap();
    assert_eq!(
        (
            counter(s, "param_bytes") - bytes,
            counter(s, "param_buffers") - buffers
        ),
        (16.0, 1.0),
        "the session's check words, made at its first checked dispatch"
    );
    rejects(
        s,
        &y,
        "`gather` read index 7, outside [0, 3)",
        "the readback after a bad gather",
    )
    .await;
    assert_eq!(
        y.read::<f32>().await.unwrap(),
        [5., 6., 0., 0., 1., 2.],
        "reported once; the bad row read 0"
    );
    s.sync().await.expect("nothing left to report");
    // a good gather arms the check again, and reports nothing; the words are not made twice
    let good = s.tensor(&[1i32, 1], &[2]).unwrap();
    let z = x.gather(&good, 1).unwrap();
    let submits = counter(s, "submits");
    assert_eq!(z.read::<f32>().await.unwrap(), [2., 2., 4., 4., 6., 6.]);
    assert_eq!(
        counter(s, "submits") - submits,
        1.0,
        "no round trip added on the happy path"
    );
    assert_eq!(
        (
            counter(s, "param_bytes") - bytes,
            counter(s, "param_buffers") - buffers
        ),
        (16.0, 1.0)
    );
}

/// A bad index reported by `sync()` (once), negative indices too; a readback after reads fine.
pub async fn sync_reports_a_bad_index_once(s: &Session) {
    let x = s.tensor(&[10f32, 20., 30.], &[3]).unwrap();
    let idx = s.tensor(&[-1i32, 1], &[2]).unwrap();
    let y = x.gather(&idx, 0).unwrap();
    let before = ledger();
    let e = s.sync().await.expect_err("the sync after a bad gather");
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    assert!(
        e.to_string().contains("`gather` read index -1, outside [0, 3)"),
        "{e}"
    );
    assert_unchanged(&before, &ledger(), "a sync that reports a bad index");
    s.sync().await.expect("reported once");
    assert_eq!(y.read::<f32>().await.unwrap(), [0., 20.]);
}

/// `oneHot` is not checked: an index outside `[0, depth)` is a row of zeros by definition (TF.js,
/// ONNX), and arms nothing.
pub async fn one_hot_is_not_checked(s: &Session) {
    let idx = s.tensor(&[1i32, 5, -1], &[3]).unwrap();
    let y = idx.one_hot(3).unwrap();
    assert_eq!(
        y.read::<f32>().await.unwrap(),
        [0., 1., 0., 0., 0., 0., 0., 0., 0.]
    );
    s.sync().await.expect("nothing to report");
}

/// In a program, the report names the node: an embedding lookup whose token id is past the
/// vocabulary.
pub async fn program_gather_names_its_node(s: &Session) {
    let mut p = Program::new("embed");
    let table = p
        .constant(&[0.5, 1.5, 2.5, 3.5], &[2, 2], DType::Float32)
        .unwrap();
    let ids = p.input("ids", DType::Int32, &[-1]).unwrap();
    let rows = p.gather(table, ids, 0).unwrap();
    let h = p.relu(rows).unwrap();
    p.output("h", h).unwrap();
    let exe = s.compile(&p).unwrap();
    let ids = s.tensor(&[1i32, 9], &[2]).unwrap();
    let out = exe.run(&[("ids", &ids)], None).unwrap();
    let h = &out[0].1;
    let says = format!("`gather` (node {rows} of program 'embed') read index 9, outside [0, 2)");
    rejects(s, h, &says, "a program's bad token id").await;
    assert_eq!(h.read::<f32>().await.unwrap(), [2.5, 3.5, 0., 0.]);
}
