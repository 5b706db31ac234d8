//! The one order in which metric records are produced ([`emit`]), and the sinks that consume it:
//! whole records ([`Records`], behind `metrics()`), or values only ([`Values`]) with a hash of the
//! layout (scope, name, kind, unit, labels of every record) and, when the layout changes, the
//! layout itself ([`Layout`]). The browser's `telemetry.metrics()` crosses the values as one
//! `Float64Array` and rebuilds the records from a cached layout, so a call costs a few µs.

use std::borrow::Cow;

use super::{devices_lost, forgotten, ledger_rows, owner_tables, registry, MetricKind, MetricRecord};
use crate::accounting::{LedgerSnapshot, PROCESS};

/// `[count, sum, min, max, mean]` of a distribution.
pub(crate) type Dist = [f64; 5];

/// One record as [`emit`] produces it.
pub(crate) struct Row<'a> {
    pub scope: &'static str,
    pub name: &'static str,
    pub kind: MetricKind,
    pub unit: &'static str,
    /// In order; empty for process-wide records.
    pub labels: &'a [(&'static str, &'a str)],
    pub value: f64,
    /// Distributions only.
    pub dist: Option<Dist>,
}

/// A row from its parts.
fn row<'a>(
    (scope, name, kind, unit): (&'static str, &'static str, MetricKind, &'static str),
    labels: &'a [(&'static str, &'a str)],
    value: f64,
    dist: Option<Dist>,
) -> Row<'a> {
    Row {
        scope,
        name,
        kind,
        unit,
        labels,
        value,
        dist,
    }
}

/// Receives records in [`emit`]'s order.
pub(crate) trait Sink {
    /// One record; `labels` in order; `dist` for distributions.
    fn record(&mut self, r: Row);
}

fn ledger_into(sink: &mut impl Sink, s: &LedgerSnapshot, labels: &[(&'static str, &str)]) {
    for (scope, name, kind, unit, v) in ledger_rows(s) {
        sink.record(row((scope, name, kind, unit), labels, v as f64, None));
    }
    let n = s.run_time_count as f64;
    let ms = |us: u64| us as f64 / 1000.0;
    let sum = ms(s.run_time_sum_us);
    let mean = if n > 0.0 { sum / n } else { 0.0 };
    let min = if n > 0.0 { ms(s.run_time_min_us) } else { 0.0 };
    let dist = [n, sum, min, ms(s.run_time_max_us), mean];
    sink.record(row(
        ("compute.execution", "run_time", MetricKind::Distribution, "ms"),
        labels,
        mean,
        Some(dist),
    ));
}

/// Every record: the process-wide snapshot with the forgotten-handle figures and `runtime.memory`,
/// live bytes per origin (`{origin}`, largest first), then one labelled set per live session
/// (`{session}`), each followed by that session's live bytes per origin (`{session, origin}`).
pub(crate) fn emit(sink: &mut impl Sink) {
    use MetricKind::{Counter, Gauge};
    ledger_into(sink, &PROCESS.snapshot(), &[]);
    let (ever, count, bytes) = forgotten();
    sink.record(row(
        ("compute.storage", "forgotten_handles", Counter, "handles"),
        &[],
        ever as f64,
        None,
    ));
    sink.record(row(
        ("compute.storage", "forgotten_tensors", Gauge, "tensors"),
        &[],
        count as f64,
        None,
    ));
    sink.record(row(
        ("compute.storage", "forgotten_bytes", Gauge, "bytes"),
        &[],
        bytes as f64,
        None,
    ));
    let lost = devices_lost() as f64;
    sink.record(row(
        ("compute.execution", "devices_lost", Gauge, "sessions"),
        &[],
        lost,
        None,
    ));
    for (name, v) in crate::platform::runtime_memory() {
        sink.record(row(("runtime.memory", name, Gauge, "bytes"), &[], v as f64, None));
    }
    // one entry per origin across the sessions' tables (each in origin order), largest first
    let mut by_origin: Vec<(std::sync::Arc<str>, u64)> = Vec::new();
    for o in owner_tables() {
        o.each_origin(|origin, bytes| by_origin.push((origin.clone(), bytes)));
    }
    by_origin.sort_by(|a, b| a.0.cmp(&b.0));
    by_origin.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            kept.1 += later.1;
        }
        same
    });
    by_origin.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    for (origin, bytes) in &by_origin {
        let labels = [("origin", &**origin)];
        sink.record(row(
            ("compute.storage", "live_bytes_by_origin", Gauge, "bytes"),
            &labels,
            *bytes as f64,
            None,
        ));
    }
    // a disposed session's records stop (its label may name another session now)
    for r in registry().iter().filter(|r| r.holds_label()) {
        let Some(l) = r.ledger.upgrade() else { continue };
        ledger_into(sink, &l.snapshot(), &[("session", &r.label)]);
        if let Some(o) = r.owners.upgrade() {
            o.each_origin(|origin, bytes| {
                let labels = [("session", r.label.as_str()), ("origin", &**origin)];
                sink.record(row(
                    ("compute.storage", "live_bytes_by_origin", Gauge, "bytes"),
                    &labels,
                    bytes as f64,
                    None,
                ));
            });
        }
    }
}

/// Builds whole records.
#[derive(Default)]
pub(crate) struct Records(pub Vec<MetricRecord>);

impl Sink for Records {
    fn record(&mut self, r: Row) {
        let Row {
            scope,
            name,
            kind,
            unit,
            labels,
            value,
            dist,
        } = r;
        let d = |k: usize| dist.map(|d| d[k]);
        self.0.push(MetricRecord {
            scope: Cow::Borrowed(scope),
            name: Cow::Borrowed(name),
            kind,
            unit: Cow::Borrowed(unit),
            value,
            count: d(0),
            sum: d(1),
            min: d(2),
            max: d(3),
            mean: d(4),
            labels: (!labels.is_empty()).then(|| {
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            }),
        });
    }
}

/// Values only (`value`, then a distribution's five figures), and a hash of the layout.
#[cfg_attr(native, allow(dead_code))] // the browser's fast path
pub(crate) struct Values {
    pub values: Vec<f64>,
    pub hash: u64,
}

impl Default for Values {
    fn default() -> Values {
        Values {
            values: Vec::with_capacity(128),
            hash: 0xcbf2_9ce4_8422_2325,
        }
    }
}

#[cfg_attr(native, allow(dead_code))]
impl Values {
    fn mix(&mut self, bytes: &[u8]) {
        // FNV-1a over 8-byte words, then the length: a changed layout changes it
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let w = u64::from_le_bytes(w.try_into().unwrap_or_default());
            self.hash = (self.hash ^ w).wrapping_mul(0x0100_0000_01b3);
        }
        let tail = words.remainder().iter().fold(0u64, |a, &b| a << 8 | b as u64);
        self.hash = (self.hash ^ tail).wrapping_mul(0x0100_0000_01b3);
        self.hash = (self.hash ^ bytes.len() as u64 ^ 0xff00).wrapping_mul(0x0100_0000_01b3);
    }
}

impl Sink for Values {
    fn record(&mut self, r: Row) {
        let Row {
            scope,
            name,
            kind,
            unit,
            labels,
            value,
            dist,
        } = r;
        // the static names by address (no bytes to walk), the labels by content
        let words = [
            scope.as_ptr() as usize,
            name.as_ptr() as usize,
            unit.as_ptr() as usize,
            kind as usize,
        ];
        for w in words {
            self.hash = (self.hash ^ w as u64).wrapping_mul(0x0100_0000_01b3);
        }
        for (k, v) in labels {
            self.mix(k.as_bytes());
            self.mix(v.as_bytes());
        }
        self.values.push(value);
        if let Some(d) = dist {
            self.values.extend(d);
        }
    }
}

/// The layout as JSON: `[{scope, name, kind, unit, dist, labels}]` in record order, every field
/// present (`dist` a boolean, `labels` an object or null: the JS side reads own fields only).
#[derive(Default)]
#[cfg_attr(native, allow(dead_code))]
pub(crate) struct Layout(pub Vec<serde_json::Value>);

impl Sink for Layout {
    fn record(&mut self, r: Row) {
        let Row {
            scope,
            name,
            kind,
            unit,
            labels,
            dist,
            ..
        } = r;
        let labels = if labels.is_empty() {
            serde_json::Value::Null
        } else {
            let map: serde_json::Map<String, serde_json::Value> =
                labels.iter().map(|(k, v)| (k.to_string(), (*v).into())).collect();
            map.into()
        };
        self.0.push(serde_json::json!({
            "scope": scope, "name": name, "kind": kind, "unit": unit,
            "dist": dist.is_some(), "labels": labels,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_layout_rebuild_the_records() {
        let mut r = Records::default();
        emit(&mut r);
        let (mut v, mut l) = (Values::default(), Layout::default());
        emit(&mut v);
        emit(&mut l);
        assert_eq!(l.0.len(), r.0.len());
        let mut j = 0;
        for (rec, lay) in r.0.iter().zip(&l.0) {
            assert_eq!(lay["scope"], *rec.scope);
            assert_eq!(lay["name"], *rec.name);
            assert_eq!(lay["dist"].as_bool(), Some(rec.count.is_some()));
            assert_eq!(!lay["labels"].is_null(), rec.labels.is_some());
            j += if rec.count.is_some() { 6 } else { 1 };
        }
        assert_eq!(j, v.values.len());
        let mut again = Values::default();
        emit(&mut again);
        assert_eq!(again.hash, v.hash, "same layout, same hash");
    }

    #[test]
    fn a_changed_label_changes_the_hash() {
        let hash = |labels: &[(&'static str, &str)]| {
            let mut v = Values::default();
            let kind = MetricKind::Gauge;
            v.record(row(
                ("compute.storage", "live_bytes", kind, "bytes"),
                labels,
                1.0,
                None,
            ));
            v.hash
        };
        let base = hash(&[("session", "decoder-0001")]);
        assert_eq!(base, hash(&[("session", "decoder-0001")]));
        for other in ["decoder-0002", "decoder-000", "decoder-00011", "Decoder-0001", ""] {
            assert_ne!(base, hash(&[("session", other)]), "{other}");
        }
        assert_ne!(base, hash(&[("session", "decoder"), ("origin", "-0001")]));
        assert_ne!(base, hash(&[]));
    }

    #[test]
    fn labels_repeated_or_elsewhere_in_memory_still_tell_layouts_apart() {
        let kind = MetricKind::Gauge;
        let names = ("compute.storage", "live_bytes", kind, "bytes");
        let hash = |rows: &[&[(&'static str, &str)]]| {
            let mut v = Values::default();
            for labels in rows {
                v.record(row(names, labels, 1.0, None));
            }
            v.hash
        };
        let (a, b) = (String::from("decoder-0001"), String::from("decoder-0002"));
        let la = [("session", a.as_str())];
        let lb = [("session", b.as_str())];
        let la_copy = [("session", "decoder-0001")];
        // one slice for two records (a ledger's rows) against two sessions' slices
        assert_ne!(hash(&[&la, &la]), hash(&[&la, &lb]));
        assert_ne!(hash(&[&lb, &lb]), hash(&[&la, &lb]));
        assert_ne!(hash(&[&la, &la]), hash(&[&la, &[]]));
        assert_ne!(hash(&[&la, &la, &la]), hash(&[&la, &la]));
        // the same text elsewhere in memory, repeated: the same hash as the first slice repeated
        // would be allowed either way; it must differ from every different text
        assert_ne!(hash(&[&la, &la_copy, &lb]), hash(&[&la, &la_copy, &la]));
        assert_eq!(
            hash(&[&la, &la, &lb]),
            hash(&[&la, &la, &lb]),
            "stable across calls"
        );
    }
}
