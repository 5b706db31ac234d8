//! The one ledger helper every error test uses, natively and in the browser: a snapshot of *every*
//! `compute.storage` and `compute.memory` record (process-wide and labelled), compared exactly.
//! "A failed call changes no accounting" means no record in it moves.
#![allow(dead_code)]

use affon::telemetry;

/// Every storage and pool record: `(scope, name, labels, value)`, sorted.
#[derive(Debug, Clone, PartialEq)]
pub struct Ledger(pub Vec<(String, String, String, f64)>);

/// Takes the snapshot.
pub fn ledger() -> Ledger {
    let mut rows: Vec<(String, String, String, f64)> = telemetry::metrics()
        .into_iter()
        .filter(|r| r.scope == "compute.storage" || r.scope == "compute.memory")
        .map(|r| {
            let labels = r.labels.as_ref().map(|l| format!("{l:?}")).unwrap_or_default();
            (r.scope.to_string(), r.name.to_string(), labels, r.value)
        })
        .collect();
    rows.sort_by(|a, b| (&a.0, &a.1, &a.2).cmp(&(&b.0, &b.1, &b.2)));
    Ledger(rows)
}

impl Ledger {
    /// The value of one record (`labels` as `{"session": "x"}` debug text, or `""`).
    pub fn get(&self, name: &str, labels: &str) -> f64 {
        self.0
            .iter()
            .find(|(_, n, l, _)| n == name && l == labels)
            .map(|r| r.3)
            .unwrap_or_else(|| panic!("no record {name} {labels}"))
    }
}

/// Panics, naming every record that moved, unless `after` equals `before`.
pub fn assert_unchanged(before: &Ledger, after: &Ledger, what: &str) {
    if before == after {
        return;
    }
    let mut moved = Vec::new();
    for b in &before.0 {
        match after.0.iter().find(|a| (&a.0, &a.1, &a.2) == (&b.0, &b.1, &b.2)) {
            Some(a) if a.3 == b.3 => {}
            Some(a) => moved.push(format!("{}/{} {} {} → {}", b.0, b.1, b.2, b.3, a.3)),
            None => moved.push(format!("{}/{} {} disappeared", b.0, b.1, b.2)),
        }
    }
    for a in &after.0 {
        if !before.0.iter().any(|b| (&a.0, &a.1, &a.2) == (&b.0, &b.1, &b.2)) {
            moved.push(format!("{}/{} {} appeared", a.0, a.1, a.2));
        }
    }
    panic!("{what}: a failed call changed the ledger: {}", moved.join("; "));
}

/// The same snapshot for the JS tests, as a JS function returning it as a string: the one
/// definition every inline JS test is given (`ledger()` before and after, compared as strings).
/// With it, `ledger.around(run, moved)`: calls `run()` (which catches its own errors), then
/// `moved()` if the ledger is not what it was before — after `run`'s promise settles when it
/// returns one — and returns what `run` returned: one failing call's window.
#[cfg(target_arch = "wasm32")]
pub fn js_ledger() -> wasm_bindgen::JsValue {
    let make = js_sys::Function::new_no_args(
        "const ledger = () => JSON.stringify(globalThis.__AFFON_DEVTOOLS_HOOK__.telemetry.metrics()
           .filter((r) => r.scope === 'compute.storage' || r.scope === 'compute.memory')
           .map((r) => [r.scope, r.name, JSON.stringify(r.labels ?? {}), r.value]).sort());
         ledger.around = (run, moved) => {
           const before = ledger();
           const after = (v) => { if (ledger() !== before) moved(); return v; };
           const r = run();
           return r instanceof Promise ? r.then(after) : after(r);
         };
         return ledger;",
    );
    make.call0(&wasm_bindgen::JsValue::UNDEFINED)
        .expect("the ledger function is made")
}

/// The exported classes the inline JS tests are given: `[Session, Program, telemetry]` (the same
/// objects `pkg/affon.js` exports), taken from a session, a program and the telemetry instance.
#[cfg(target_arch = "wasm32")]
pub async fn js_classes() -> [wasm_bindgen::JsValue; 3] {
    use wasm_bindgen::JsValue;
    let s: JsValue = affon::js::JsSession::create(JsValue::UNDEFINED)
        .await
        .map(JsValue::from)
        .expect("WebGPU adapter required");
    let p: JsValue = affon::js::JsProgram::new("probe".into()).unwrap().into();
    let t: JsValue = affon::js::JsTelemetry::instance().into();
    [s, p, t].map(|v| js_sys::Reflect::get(&v, &"constructor".into()).unwrap())
}

/// `o[k]` (the inline JS tests' results are plain objects).
#[cfg(target_arch = "wasm32")]
pub fn field(o: &wasm_bindgen::JsValue, k: &str) -> wasm_bindgen::JsValue {
    js_sys::Reflect::get(o, &k.into()).unwrap()
}

/// A JS array (or typed array) of numbers; NaN for an entry that is not one.
#[cfg(target_arch = "wasm32")]
pub fn nums(v: &wasm_bindgen::JsValue) -> Vec<f64> {
    js_sys::Array::from(v)
        .iter()
        .map(|x| x.as_f64().unwrap_or(f64::NAN))
        .collect()
}

/// A JS `Session` handle with the default options.
#[cfg(target_arch = "wasm32")]
pub async fn js_session() -> wasm_bindgen::JsValue {
    affon::js::JsSession::create(wasm_bindgen::JsValue::UNDEFINED)
        .await
        .map(wasm_bindgen::JsValue::from)
        .expect("WebGPU adapter required")
}

/// Fails with every entry of the JS array `problems` (an inline JS test's findings), if any.
#[cfg(target_arch = "wasm32")]
pub fn assert_no_problems(problems: &wasm_bindgen::JsValue, context: &str) {
    let list: Vec<String> = js_sys::Array::from(problems)
        .iter()
        .filter_map(|p| p.as_string())
        .collect();
    assert!(
        list.is_empty(),
        "{} problems {context}:\n{}",
        list.len(),
        list.join("\n")
    );
}

/// Runs `f`, which must fail with `code`, and checks that no record moved.
pub fn fails_unchanged<T>(code: &str, what: &str, f: impl FnOnce() -> affon::Result<T>) -> affon::Error {
    let before = ledger();
    let r = f();
    let after = ledger();
    let e = match r {
        Ok(_) => panic!("{what}: expected {code}, the call succeeded"),
        Err(e) => e,
    };
    assert_eq!(e.code(), code, "{what}: {e}");
    assert_unchanged(&before, &after, what);
    e
}
