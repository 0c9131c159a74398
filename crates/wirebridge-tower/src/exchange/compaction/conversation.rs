//! What a compacting request of one tenant works from: the translation
//! options sealed for it. Its stored state is resolved as any request's
//! ([`stored`](crate::exchange::stored)).

use std::sync::Arc;

use http::StatusCode;
use wirebridge_convert::responses_to_chat::{Options, Seal};
use wirebridge_wire::error::ApiError;

use crate::direction::Tenant;
use crate::replies::Refused;
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

/// Compaction seals its summary: without a key, it cannot run.
pub(super) fn no_seal_key() -> Refused {
    Refused::new(
        StatusCode::NOT_IMPLEMENTED,
        ApiError {
            message: "compaction is not available on this bridge: it seals each summary into the \
                      compaction item it hands back, and no seal key is configured"
                .into(),
            kind: "server_error".into(),
            param: None,
            code: Some("compaction_unavailable".into()),
        },
    )
}
