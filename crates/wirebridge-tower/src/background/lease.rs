//! Leases on runs: how a reader of a shared store tells a run that is
//! still going from one whose process is gone.
//!
//! A process that is killed (or whose machine stops) writes no last state:
//! its runs would read `queued` or `in_progress` forever. So the process
//! running a run holds a lease on it in the store
//! ([`ResponseStore::hold_lease`]), renewed every third of its length; a
//! reader that finds a response still running with no lease held marks it
//! `failed`. A store whose runs end with its process (the memory store)
//! keeps no leases, and nothing is marked.

use std::convert::Infallible;
use std::time::Duration;

use wirebridge_convert::responses_to_chat::Turn;
use wirebridge_store::{ResponseStore, StoredResponse};

use super::respond::{status_of, with_status};
use crate::stateful::{with_output, Stateful};

/// Why a run whose lease expired ended, as its response says.
pub(crate) const ABANDONED: &str =
    "the server running the response stopped before it was done, and said nothing more";

/// Renews the lease on run `id` of `tenant` every third of `lease`, for as
/// long as it is polled. A renewal the store refuses is tried again at the
/// next; the lease lasts until then.
pub(crate) async fn renew(
    store: &dyn ResponseStore,
    tenant: &str,
    id: &str,
    lease: Duration,
) -> Infallible {
    loop {
        tokio::time::sleep(lease / 3).await;
        if let Err(e) = store.hold_lease(tenant, id, lease).await {
            tracing::warn!(response_id = %id, error = %e, "the lease on a background response could not be renewed");
        }
    }
}

/// `record` as it stands: when it says its run is still going but no
/// process holds the run's lease, it is marked `failed` (and kept so), and
/// the failed record is answered instead. A store that cannot be asked
/// leaves the record as it is.
pub(crate) async fn settled(
    stateful: &Stateful,
    store: &dyn ResponseStore,
    tenant: &str,
    record: StoredResponse,
) -> StoredResponse {
    if !matches!(
        status_of(&record.response).as_deref(),
        Some("queued" | "in_progress")
    ) {
        return record;
    }
    match store.lease_held(tenant, &record.id).await {
        Ok(Some(false)) => {}
        // Held, kept by no lease (the run ends with this process), or not
        // known now.
        _ => return record,
    }
    let Ok(response) = with_output(&record.response, "[]") else {
        return record;
    };
    let failed = with_status(&response, "failed", Some(("server_error", ABANDONED)));
    tracing::warn!(response_id = %record.id, "a background response whose lease expired is marked failed");
    let turn = Turn {
        previous_response_id: record.parent.clone(),
        conversation: None,
        input: record.input.clone(),
        store: true,
    };
    if stateful.save_state(tenant, &turn, &failed).await.is_err() {
        return record;
    }
    match store.get(tenant, &record.id).await {
        Ok(Some(kept)) => kept,
        _ => record,
    }
}
