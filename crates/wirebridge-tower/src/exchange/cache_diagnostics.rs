//! Prompt cache diagnostics, answered from the store: the fingerprint of
//! the request compared with is read under the request's tenant, compared
//! with this request's, and the reply says what was found; this request's
//! fingerprint is then kept under its reply's id, for a later one.
//!
//! The comparison is the convert crate's (`cache_diagnostics`), the same
//! for every dialect; only where the store is and whose it is are read
//! here. A fingerprint another tenant kept is not found, as one never kept
//! or expired is: no tenant learns anything of another's requests.

use wirebridge_convert::cache_diagnostics::{compare, CacheDiagnosis, Fingerprint, Verdict};

use wirebridge_store::ResponseStore;

use crate::direction::sealed::ReplyContext;
use crate::direction::Tenant;
use crate::stateful::Stateful;

/// Answers `diagnosis` into `context` and keeps its fingerprint; the
/// verdict, if a comparison was asked for. Without a store, or for a
/// tenant that may keep nothing, the comparison is `unavailable` and
/// nothing is kept; a store that fails is logged and answered
/// `unavailable` too: the request goes on either way.
pub(crate) async fn answer<C: ReplyContext>(
    stateful: Option<&Stateful>,
    tenant: &Tenant,
    diagnosis: CacheDiagnosis,
    context: &mut C,
) -> Option<Verdict> {
    let store = stateful.and_then(Stateful::store).filter(|_| tenant.stores);
    let CacheDiagnosis {
        comparison,
        fingerprint,
    } = diagnosis;
    // The comparison and the keeping do not wait for each other: one
    // round trip's time before the request goes on, not two.
    let reply_id = context.reply_id();
    let comparing = async {
        match &comparison {
            Some(id) => Some(compared(store, &tenant.key, id, &fingerprint).await),
            None => None,
        }
    };
    let keeping = async {
        let (Some(store), Some(id)) = (store, &reply_id) else {
            return;
        };
        let kept = store.keep_fingerprint(&tenant.key, id, fingerprint.encode());
        if let Err(e) = kept.await {
            tracing::warn!(error = %e, response = %id, "prompt cache fingerprint not kept");
        }
    };
    let (verdict, ()) = tokio::join!(comparing, keeping);
    if let Some(verdict) = &verdict {
        context.diagnosed(verdict);
    }
    verdict
}

/// The verdict of comparing `fingerprint` with the one `tenant` kept for
/// response `id`.
async fn compared(
    store: Option<&std::sync::Arc<dyn ResponseStore>>,
    tenant: &str,
    id: &str,
    fingerprint: &Fingerprint,
) -> Verdict {
    let Some(store) = store else {
        return Verdict::Unavailable;
    };
    match store.fingerprint(tenant, id).await {
        Ok(Some(kept)) => match Fingerprint::decode(&kept) {
            Some(baseline) => compare(&baseline, fingerprint),
            // Kept in a shape this version does not read.
            None => Verdict::NotFound,
        },
        Ok(None) => Verdict::NotFound,
        Err(e) => {
            tracing::warn!(error = %e, "prompt cache diagnostics: the store cannot be read");
            Verdict::Unavailable
        }
    }
}
