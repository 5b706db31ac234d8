//! Who holds the bytes: every live storage is recorded with its origin (eager op, program output,
//! state of program X, constant, user label), the iteration it was created in and, with
//! `captureStacks`, a trimmed stack of the creating call. One table per session; updated at every
//! storage acquire and release (the same points the ledger is).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The current iteration: advanced by `telemetry.watch` (each iteration) and by
/// [`next_iteration`]; recorded with each storage so age can be read as "created N iterations ago".
static ITERATION: AtomicU64 = AtomicU64::new(0);

/// Advances the iteration counter; returns the new value.
pub fn next_iteration() -> u64 {
    let n = ITERATION.fetch_add(1, Ordering::Relaxed) + 1;
    if crate::trace::enabled() {
        crate::trace::iteration(n);
    }
    n
}

/// The current iteration.
pub fn current_iteration() -> u64 {
    ITERATION.load(Ordering::Relaxed)
}

#[derive(Debug, Clone)]
struct Owner {
    origin: Arc<str>,
    bytes: u64,
    iteration: u64,
    stack: Option<Arc<str>>,
    forgotten: bool,
}

/// The live storages of one session, and running totals per origin (so `metrics()` does not regroup
/// every storage on each call).
#[derive(Debug, Default)]
pub(crate) struct OwnerTable {
    live: Mutex<Live>,
    /// Handles collected by the JS garbage collector without `dispose()` (ever).
    forgotten_handles: AtomicU64,
}

/// One live storage (`telemetry.storages()` rows): what the panel's per-storage timeline draws.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StorageInfo {
    /// The storage's id (stable for its life; ids grow with creation order).
    pub id: u64,
    /// The owning session's label.
    pub session: String,
    /// What created it.
    pub origin: String,
    /// Its `byteLength`.
    pub bytes: u64,
    /// The iteration it was created in.
    pub iteration: u64,
    /// Its handle was collected without `dispose()`.
    pub forgotten: bool,
    /// The creating stack (with `captureStacks`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stack: Option<String>,
}

/// Live storage grouped by origin (`telemetry.liveTensors()` rows).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerGroup {
    /// What created the storage.
    pub origin: String,
    /// Live storages with this origin.
    pub count: u64,
    /// Their bytes (`byteLength` sum).
    pub bytes: u64,
    /// The iteration the oldest of them was created in.
    pub oldest_iteration: u64,
    /// How many of them were forgotten (handle collected without `dispose()`).
    pub forgotten: u64,
    /// The creating stack of the oldest one (with `captureStacks`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stack: Option<String>,
}

#[derive(Debug, Default)]
struct Live {
    owners: HashMap<u64, Owner>,
    /// origin → (storages, bytes), in origin order (`metrics()` emits them so, with no regrouping);
    /// entries removed when they reach zero. Keys are shared with the owners, so a known origin
    /// costs no allocation.
    totals: BTreeMap<Arc<str>, (u64, u64)>,
    forgotten: (u64, u64),
}

impl OwnerTable {
    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn add(&self, id: u64, origin: &str, bytes: u64, stack: Option<String>) {
        let mut l = self.live();
        let key = match l.totals.get_key_value(origin) {
            Some((k, _)) => k.clone(),
            None => Arc::from(origin),
        };
        let t = l.totals.entry(key.clone()).or_default();
        t.0 += 1;
        t.1 += bytes;
        let o = Owner {
            origin: key,
            bytes,
            iteration: current_iteration(),
            stack: stack.map(Into::into),
            forgotten: false,
        };
        l.owners.insert(id, o);
    }

    pub(crate) fn remove(&self, id: u64) {
        let mut l = self.live();
        if let Some(o) = l.owners.remove(&id) {
            if o.forgotten {
                l.forgotten.0 -= 1;
                l.forgotten.1 -= o.bytes;
            }
            if let Some(t) = l.totals.get_mut(&o.origin) {
                t.0 -= 1;
                t.1 -= o.bytes;
                if t.0 == 0 {
                    l.totals.remove(&o.origin);
                }
            }
        }
    }

    /// This table's live storages, labelled with `session`.
    pub(crate) fn storages_into(&self, session: &str, into: &mut Vec<StorageInfo>) {
        for (&id, o) in &self.live().owners {
            into.push(StorageInfo {
                id,
                session: session.to_string(),
                origin: o.origin.to_string(),
                bytes: o.bytes,
                iteration: o.iteration,
                forgotten: o.forgotten,
                stack: o.stack.as_ref().map(|s| s.to_string()),
            });
        }
    }

    /// Calls `f` with each origin's live bytes, in origin order (held under this table's lock: `f`
    /// must not reach the owner tables).
    pub(crate) fn each_origin(&self, mut f: impl FnMut(&Arc<str>, u64)) {
        for (origin, &(_, bytes)) in &self.live().totals {
            f(origin, bytes);
        }
    }

    /// Marks a storage whose handle was collected without `dispose()`.
    #[cfg_attr(native, allow(dead_code))] // only JS handles are garbage-collected
    pub(crate) fn forget(&self, id: u64) {
        self.forgotten_handles.fetch_add(1, Ordering::Relaxed);
        let mut l = self.live();
        let mut newly = None;
        if let Some(o) = l.owners.get_mut(&id) {
            if !o.forgotten {
                o.forgotten = true;
                newly = Some(o.bytes);
            }
        }
        if let Some(b) = newly {
            l.forgotten.0 += 1;
            l.forgotten.1 += b;
        }
    }

    /// Handles collected without `dispose()`, ever.
    pub(crate) fn forgotten_handles(&self) -> u64 {
        self.forgotten_handles.load(Ordering::Relaxed)
    }

    /// Forgotten storages still live: `(count, bytes)`.
    pub(crate) fn forgotten_live(&self) -> (u64, u64) {
        self.live().forgotten
    }

    /// Adds this table's groups into `into` (keyed by origin).
    pub(crate) fn group_into(&self, into: &mut BTreeMap<String, OwnerGroup>) {
        for o in self.live().owners.values() {
            // look up first: allocating the key for every storage is most of the cost
            if !into.contains_key(&*o.origin) {
                into.insert(
                    o.origin.to_string(),
                    OwnerGroup {
                        origin: o.origin.to_string(),
                        count: 0,
                        bytes: 0,
                        oldest_iteration: u64::MAX,
                        forgotten: 0,
                        stack: None,
                    },
                );
            }
            let g = into.get_mut(&*o.origin).expect("inserted above");
            g.count += 1;
            g.bytes += o.bytes;
            g.forgotten += o.forgotten as u64;
            if o.iteration < g.oldest_iteration || g.stack.is_none() {
                if o.iteration < g.oldest_iteration {
                    g.oldest_iteration = o.iteration;
                }
                if o.stack.is_some() {
                    g.stack = o.stack.as_deref().map(str::to_string);
                }
            }
        }
    }
}

/// Sorts groups largest first (ties by origin).
pub(crate) fn sorted(groups: BTreeMap<String, OwnerGroup>) -> Vec<OwnerGroup> {
    let mut v: Vec<OwnerGroup> = groups.into_values().collect();
    v.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.origin.cmp(&b.origin)));
    v
}
