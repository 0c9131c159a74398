//! A Messages client's conversation that starts from a `compaction`
//! block: the Messages layer above reads the block as the `compaction`
//! item it was and marks the request with its path ([`CompactedAt`]).
//! Here, where the seal key is, the carrier is opened for the request's
//! tenant before anything else: one that does not open (forged, altered,
//! another tenant's) is a 400 naming the block, not a summary quietly
//! left out.

use wirebridge_convert::messages_to_responses::{check_compacted, CompactedAt};
use wirebridge_convert::responses_to_chat::Seal;

use crate::direction::sealed::Direction;
use crate::direction::{state, Tenant};
use crate::replies::Refused;
use crate::shared::Shared;

/// Checks the compaction block a request marked [`CompactedAt`] starts
/// from; requests without the mark pass.
pub(super) fn check<D: Direction>(
    shared: &Shared<D>,
    parts: &http::request::Parts,
    tenant: &Tenant,
    body: &[u8],
) -> Result<(), Refused> {
    let Some(at) = parts.extensions.get::<CompactedAt>() else {
        return Ok(());
    };
    let seal = state::compaction::<D>(&shared.direction)
        .and_then(|settings| settings.sealer.as_ref())
        .map(|sealer| Seal {
            sealer: sealer.clone(),
            scope: tenant.key.clone(),
        });
    check_compacted(body, at, seal.as_ref()).map_err(Refused::from_convert)
}
