//! What a compacting request of one tenant works from: the translation
//! options sealed for it. Its stored state is resolved as any request's
//! ([`stored`](crate::exchange::stored)).

use std::sync::Arc;

use wirebridge_convert::responses_to_chat::{Options, Seal};

use crate::direction::Tenant;
use crate::settings::ResponsesSettings;

/// The options to translate with for `tenant`, and the seal that binds
/// summaries to it (when a sealer is set).
pub(super) fn options(settings: &ResponsesSettings, tenant: &Tenant) -> (Options, Option<Seal>) {
    let seal = settings.sealer.as_ref().map(|sealer| Seal {
        sealer: Arc::clone(sealer),
        scope: tenant.key.clone(),
    });
    let options = Options {
        seal: seal.clone(),
        ..settings.convert.clone()
    };
    (options, seal)
}
