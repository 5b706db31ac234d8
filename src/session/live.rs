//! The live sessions: those whose owning handle is alive (the `Session` that `create` returned,
//! not dropped; in the browser, its JS handle not yet collected). `telemetry.watch()` synchronises
//! each of them between iterations and `telemetry.pools()` lists their pools.

use std::sync::{Mutex, MutexGuard};

use super::Session;
use crate::device::AdapterIdentity;
use crate::platform::{Shared, WeakShared};
use crate::pool::{PoolConfig, PoolUsage};
use crate::tensor::SessionShared;

/// The live sessions by id, weakly, in creation order.
struct Live(Vec<(u64, WeakShared<SessionShared>)>);

// SAFETY: only on wasm32-unknown-unknown (built without the `atomics` feature), where there is
// exactly one thread; natively the weak handles are `Arc`-based and `Send` already.
#[cfg(web)]
unsafe impl Send for Live {}

static LIVE: Mutex<Live> = Mutex::new(Live(Vec::new()));

fn live() -> MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A new session is live.
pub(super) fn register(s: &Shared<SessionShared>) {
    live().0.push((s.id, Shared::downgrade(s)));
}

/// Its owning handle went: the session is no longer live (it may still be open for its tensors).
pub(super) fn unregister(id: u64) {
    live().0.retain(|(i, w)| *i != id && w.strong_count() > 0);
}

/// One live session's pool, for `telemetry.pools()` (fields in the JSON form's key order).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolSnapshot {
    /// The adapter it runs on.
    pub adapter: AdapterIdentity,
    /// The pool configuration in force.
    pub config: PoolConfig,
    /// Whether the session was disposed (listed while it still has live tensors).
    pub disposed: bool,
    /// The session's label.
    pub session: String,
    /// The pool's figures.
    pub usage: PoolUsage,
}

impl Session {
    /// Every live session, in creation order, as views: dropping a view leaves its session as it
    /// is (only the owning handle disposes on drop).
    pub fn live() -> Vec<Session> {
        let shared: Vec<Shared<SessionShared>> = live().0.iter().filter_map(|(_, w)| w.upgrade()).collect();
        shared
            .into_iter()
            .map(|shared| Session {
                shared,
                dispose_on_drop: false,
                owner: false,
            })
            .collect()
    }

    /// The pools of the live sessions, but disposed sessions with no live tensor left.
    pub fn pools() -> Vec<PoolSnapshot> {
        Session::live()
            .iter()
            .filter(|s| !s.is_disposed() || s.stats().live_tensors > 0)
            .map(|s| PoolSnapshot {
                adapter: s.adapter().clone(),
                config: s.pool_config(),
                disposed: s.is_disposed(),
                session: s.label().to_string(),
                usage: s.pool_usage(),
            })
            .collect()
    }
}
