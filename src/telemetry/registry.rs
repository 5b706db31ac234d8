//! The registry of sessions telemetry reports on: each session's ledger, owner table, report
//! information and flags, held weakly, and the rule that keeps labels unique.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::owners::OwnerTable;
use crate::accounting::Ledger;

/// One session, weakly.
pub(super) struct Registered {
    pub(super) label: String,
    pub(super) ledger: Weak<Ledger>,
    pub(super) owners: Weak<OwnerTable>,
    pub(super) info: Weak<SessionInfo>,
    pub(super) forgotten: Weak<crate::forgotten::ForgottenStore>,
    pub(super) lost: Arc<AtomicBool>,
    disposed: Arc<AtomicBool>,
}

impl Registered {
    /// Whether the session still names records: open (not disposed). A disposed session gives its
    /// label up at once (API.md), though tensors or states that outlive it keep their storage: the
    /// process-wide records still count them.
    pub(super) fn holds_label(&self) -> bool {
        self.ledger.strong_count() > 0 && !self.disposed.load(Ordering::SeqCst)
    }
}

/// What reports say about a session (adapter, settings).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session's label.
    pub label: String,
    /// Its adapter.
    pub adapter: crate::AdapterIdentity,
    /// Its pool configuration.
    pub pool: crate::PoolConfig,
    /// Whether tensors record their creating stack.
    pub capture_stacks: bool,
    /// Whether collected handles release their storage.
    pub release_on_collect: bool,
}

static SESSIONS: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

/// Labels of sessions being created: claimed before the device is awaited, given up when the
/// session is registered or its creation fails.
static CLAIMED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A claim on a label while its session is created (see [`claim_label`]); dropping it gives the
/// label up.
pub(crate) struct LabelClaim(String);

impl Drop for LabelClaim {
    fn drop(&mut self) {
        let mut c = CLAIMED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = c.iter().position(|l| *l == self.0) {
            c.swap_remove(i);
        }
    }
}

/// `INVALID_ARGUMENT` if an open session already has this label, or one being created claimed it:
/// labels name per-session records and `watch`'s `session` filter, so they are unique. A disposed
/// session gives its label up at once (its handle and tensors may live on) and its records stop. The claim is held across the wait for a device, so two creations
/// started together with one label cannot both pass the check.
pub(crate) fn claim_label(label: &str) -> crate::Result<LabelClaim> {
    let mut claimed = CLAIMED.lock().unwrap_or_else(|p| p.into_inner());
    let taken =
        claimed.iter().any(|l| l == label) || registry().iter().any(|r| r.label == label && r.holds_label());
    if taken {
        return Err(crate::Error::InvalidArgument(format!(
            "a live session is already labelled '{label}': session labels are unique"
        )));
    }
    claimed.push(label.to_string());
    Ok(LabelClaim(label.to_string()))
}

/// Registers a session so its figures appear as labelled records while it lives.
pub(crate) fn register_session(
    ledger: &Arc<Ledger>,
    owners: &Arc<OwnerTable>,
    info: &Arc<SessionInfo>,
    forgotten: &Arc<crate::forgotten::ForgottenStore>,
    (lost, disposed): (Arc<AtomicBool>, Arc<AtomicBool>),
) {
    let mut s = registry();
    s.retain(|r| r.ledger.strong_count() > 0 && (r.label != info.label || r.holds_label()));
    s.push(Registered {
        label: info.label.clone(),
        ledger: Arc::downgrade(ledger),
        owners: Arc::downgrade(owners),
        info: Arc::downgrade(info),
        forgotten: Arc::downgrade(forgotten),
        lost,
        disposed,
    });
}

/// The registered sessions (a poisoned lock is taken over: its list is still whole).
pub(super) fn registry() -> std::sync::MutexGuard<'static, Vec<Registered>> {
    SESSIONS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The owner tables of the live sessions.
pub(super) fn owner_tables() -> Vec<Arc<OwnerTable>> {
    registry().iter().filter_map(|r| r.owners.upgrade()).collect()
}
