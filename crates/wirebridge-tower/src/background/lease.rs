//! Leases on runs: how a reader of a shared store tells a run that is
//! still going from one whose process is gone.
//!
//! A process that is killed (or whose machine stops) writes no last state:
//! its runs would read `queued` or `in_progress` forever. So the process
//! running a run holds a lease on it in the store
//! ([`ResponseStore::hold_lease`]), renewed every third of its length; a
//! reader that finds a response still running with no lease held marks it
//! `failed` ([`settled`](crate::stateful::settled), which the stored
//! routes and continuations read through). A store whose runs end with its
//! process (the memory store) keeps no leases, and nothing is marked.

use std::convert::Infallible;
use std::time::Duration;

use wirebridge_store::ResponseStore;

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
