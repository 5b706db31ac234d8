//! The labelled corpus of memory patterns, written once as data and run natively and in Chromium
//! (`native_corpus.rs`, `web_corpus.rs`). Each pattern is named after the report it comes from and
//! states the verdict it must get, the origin its evidence must name and the finding it must list.
#![allow(dead_code)]

use std::collections::VecDeque;

use affon::telemetry::{self, Diagnosis, Verdict, WatchOptions};
use affon::{DType, Executable, ExecutionState, Program, Session, Tensor};

pub use crate::corpus_table::patterns;

use crate::programs::running_mean;

/// What a pattern's iterations work with. `s` is watched; `other` is a second session (for the
/// cross-session patterns). Everything a pattern keeps lives here until the pattern ends.
pub struct World<'a> {
    pub s: &'a Session,
    pub other: &'a Session,
    /// 256 float32 (1 KiB).
    pub x: Tensor,
    /// 5 float32 (20 B): tiny tensors.
    pub tiny: Tensor,
    pub mean: Executable,
    pub mean_state: ExecutionState,
    pub predict: Executable,
    pub decode: Executable,
    pub decode_state: ExecutionState,
    pub kept: Vec<Tensor>,
    pub queue: VecDeque<Tensor>,
    pub states: Vec<ExecutionState>,
    pub exes: Vec<Executable>,
    pub host: Vec<Vec<u8>>,
    /// In the browser the host grows the JS heap (objects the GC must keep).
    #[cfg(target_arch = "wasm32")]
    pub host_js: Vec<wasm_bindgen::JsValue>,
    pub rng: u64,
}

/// `predict`: x [-1, 8] → relu(x · w + b), w and b constants.
pub fn predict_program() -> Program {
    let mut p = Program::new("predict");
    let x = p.input("x", DType::Float32, &[-1, 8]).unwrap();
    let w = p.constant(&[0.125; 32], &[8, 4], DType::Float32).unwrap();
    let b = p.constant(&[0.5; 4], &[4], DType::Float32).unwrap();
    let y = p.matmul(x, w).unwrap();
    let y = p.add(y, b).unwrap();
    let y = p.relu(y).unwrap();
    p.output("y", y).unwrap();
    p
}

/// `decode`: one token step over a fixed-capacity KV cache held in state and updated in place.
pub fn decode_program() -> Program {
    let mut p = Program::new("decode");
    let t = p.input("token", DType::Float32, &[16, 64]).unwrap();
    let k = p.state("k", DType::Float32, &[16, 64]).unwrap();
    let half = p.constant(&[0.5], &[], DType::Float32).unwrap();
    let decayed = p.mul(k, half).unwrap();
    let next = p.add(decayed, t).unwrap();
    p.assign("k", next).unwrap();
    let logits = p.sum(next, &[1], false).unwrap();
    p.output("logits", logits).unwrap();
    p
}

impl<'a> World<'a> {
    pub fn new(s: &'a Session, other: &'a Session) -> World<'a> {
        let mean = s.compile(&running_mean()).unwrap();
        let mean_state = mean.create_state(&[]).unwrap();
        let decode = s.compile(&decode_program()).unwrap();
        let decode_state = decode.create_state(&[]).unwrap();
        World {
            s,
            other,
            x: s.ones(&[256], DType::Float32).unwrap(),
            tiny: s.ones(&[5], DType::Float32).unwrap(),
            mean,
            mean_state,
            predict: s.compile(&predict_program()).unwrap(),
            decode,
            decode_state,
            kept: vec![],
            queue: VecDeque::new(),
            states: vec![],
            exes: vec![],
            host: vec![],
            #[cfg(target_arch = "wasm32")]
            host_js: vec![],
            rng: 0x9e37_79b9_7f4a_7c15,
        }
    }

    /// A seeded pseudo-random number in `0..n` (the same on every target).
    pub fn rand(&mut self, n: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % n
    }

    pub fn run_mean(&self) -> affon::Result<Tensor> {
        let x = self.s.ones(&[3, 4], DType::Float32)?;
        Ok(self.mean.run(&[("x", &x)], Some(&self.mean_state))?.remove(0).1)
    }

    pub fn run_predict(&self, rows: usize) -> affon::Result<Tensor> {
        let x = self.s.fill(&[rows, 8], 1.0, DType::Float32)?;
        Ok(self.predict.run(&[("x", &x)], None)?.remove(0).1)
    }

    /// One generation of `tokens` steps over `state`; returns the last logits.
    pub fn generate(&self, state: &ExecutionState, tokens: usize) -> affon::Result<Tensor> {
        let tok = self.s.ones(&[16, 64], DType::Float32)?;
        let mut last = None;
        for _ in 0..tokens {
            last = Some(self.decode.run(&[("token", &tok)], Some(state))?.remove(0).1);
        }
        last.ok_or_else(|| affon::Error::InvalidArgument("no tokens".into()))
    }

    /// A host allocation of about `mib` MiB, kept: natively touched bytes (resident memory), in the
    /// browser JS objects (the JS heap), as a host-side cache would grow.
    pub fn grow_host(&mut self, mib: usize, i: u64) {
        #[cfg(not(target_arch = "wasm32"))]
        self.host.push(vec![(i % 251) as u8 + 1; mib << 20]);
        #[cfg(target_arch = "wasm32")]
        {
            let a = js_sys::Array::new();
            for k in 0..(mib * 16 * 1024) {
                let o = js_sys::Object::new();
                let _ = js_sys::Reflect::set(&o, &"k".into(), &((k as u64 + i) as f64).into());
                let _ = js_sys::Reflect::set(&o, &"v".into(), &format!("entry {k} of {i}").into());
                a.push(&o);
            }
            self.host_js.push(a.into());
        }
    }
}

/// One labelled pattern.
pub struct Pattern {
    /// `<source>-<what>`, e.g. `tfjs-604-loop-without-dispose`.
    pub name: &'static str,
    /// The real report it comes from, in a sentence.
    pub source: &'static str,
    pub expect: Verdict,
    /// The origin the evidence must name (leaks).
    pub origin: Option<&'static str>,
    /// A finding kind the diagnosis must list.
    pub finding: Option<&'static str>,
    pub warmup: u64,
    pub iterations: u64,
    /// Watch only the watched session's figures.
    pub session_only: bool,
    pub step: fn(&mut World, u64) -> affon::Result<()>,
}

pub const fn pat(
    name: &'static str,
    source: &'static str,
    expect: Verdict,
    origin: Option<&'static str>,
    step: fn(&mut World, u64) -> affon::Result<()>,
) -> Pattern {
    Pattern {
        name,
        source,
        expect,
        origin,
        finding: None,
        warmup: 8,
        iterations: 24,
        session_only: false,
        step,
    }
}

/// Runs one pattern in the given (fresh) sessions; `Err` says what did not match: the verdict, the
/// origin its evidence must name, or the finding it must list.
pub async fn run(p: &Pattern, s: &Session, other: &Session) -> Result<Diagnosis, String> {
    let mut w = World::new(s, other);
    collect_garbage();
    let opts = WatchOptions {
        warmup: p.warmup,
        iterations: p.iterations,
        session: p.session_only.then(|| s.label().to_string()),
    };
    let d = telemetry::watch(&[s, other], opts, async |i| (p.step)(&mut w, i))
        .await
        .map_err(|e| format!("{}: {e}", p.name))?;
    drop(w);
    let explain = |why: String| {
        let series = d.series.as_ref();
        format!(
            "{} ({}): {why}; got {:?} — {}\n    findings {:?}\n    live {:?}\n    pool {:?}\n    peak {:?}\n    runtime {:?}",
            p.name,
            p.source,
            d.verdict,
            d.summary,
            d.findings,
            series.map(|s| &s.live_bytes),
            series.map(|s| &s.pool_bytes),
            series.map(|s| &s.peak_bytes),
            series.map(|s| &s.runtime_bytes),
        )
    };
    if d.verdict != p.expect {
        return Err(explain(format!("expected {:?}", p.expect)));
    }
    if let Some(o) = p.origin {
        let named = d.evidence.iter().any(|e| e.metric == format!("origin:{o}"));
        if !named || d.grown_origins.first().map(String::as_str) != Some(o) {
            return Err(explain(format!(
                "evidence must name '{o}' first (grown {:?})",
                d.grown_origins
            )));
        }
    }
    if let Some(k) = p.finding {
        if !d.findings.iter().any(|f| f.kind == k) {
            return Err(explain(format!("expected a '{k}' finding")));
        }
    }
    let len = d.series.as_ref().map_or(0, |s| s.live_bytes.len()) as u64;
    if len != p.warmup + p.iterations + 1 {
        return Err(explain(format!("{len} samples")));
    }
    Ok(d)
}

/// In the browser, a full collection before a pattern (Chromium runs with `--expose-gc`): the JS heap
/// then holds only this pattern's objects, not the garbage of the previous ones, which a collection
/// in the middle of the window would otherwise subtract from it. Natively nothing to do.
fn collect_garbage() {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsCast;
        let gc = js_sys::Reflect::get(&js_sys::global(), &"gc".into()).unwrap_or_default();
        if let Some(f) = gc.dyn_ref::<js_sys::Function>() {
            let _ = f.call0(&wasm_bindgen::JsValue::UNDEFINED);
        }
    }
}

/// Runs every pattern, each in two fresh sessions from `make(label)`; returns one line per pattern
/// that passed (`name verdict: summary`) and the failures.
pub async fn run_all<F: std::future::Future<Output = Session>>(
    make: impl Fn(String) -> F,
) -> (Vec<String>, Vec<String>) {
    crate::corpus_table::check_table();
    let (mut lines, mut failures) = (vec![], vec![]);
    for p in patterns() {
        let (s, other) = (
            make(p.name.to_string()).await,
            make(format!("{}-other", p.name)).await,
        );
        match run(&p, &s, &other).await {
            Ok(d) => lines.push(format!("{:<50} {:?}: {}", p.name, d.verdict, d.summary)),
            Err(e) => failures.push(e),
        }
    }
    (lines, failures)
}
