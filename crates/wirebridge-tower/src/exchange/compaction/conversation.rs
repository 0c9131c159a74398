//! What a compacting request of one tenant works from: its stored
//! conversation, and the translation options sealed for it.

use std::sync::Arc;

use http::StatusCode;
use wirebridge_convert::responses_to_chat::{Options, Seal, Turn};
use wirebridge_convert::{Loss, LossKind, LossReport};
use wirebridge_wire::error::ApiError;

use crate::direction::sealed::{Direction, ReplyContext as _};
use crate::direction::Tenant;
use crate::replies::Refused;
use crate::settings::ResponsesSettings;
use crate::stateful::{needs_credentials, Resolved};

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

/// The stored conversation a request continues (`previous`) and the
/// items it refers to: as for any request, a 400 for a tenant that may keep
/// nothing, a 404 for a conversation that is not there.
pub(super) async fn resolve(
    settings: &ResponsesSettings,
    tenant: &Tenant,
    previous: Option<&str>,
    references: &[&str],
) -> Result<Resolved, Refused> {
    let Some(stateful) = &settings.stateful else {
        return Ok(Resolved::default());
    };
    if !tenant.stores {
        if previous.is_some() {
            return Err(needs_credentials("previous_response_id"));
        }
        if !references.is_empty() {
            return Err(needs_credentials("input"));
        }
    }
    stateful
        .resolve(&tenant.key, previous, references, settings.missing_history)
        .await
}

/// What the stored conversation means for a translation: the gap it misses
/// (a loss), and nothing kept for a tenant that may keep nothing.
pub(super) fn settle<D: Direction>(
    stored: &Resolved,
    tenant: &Tenant,
    turn: &mut Option<Turn>,
    context: &mut D::Context,
    losses: &mut LossReport,
) {
    if let Some(missing) = stored.missing() {
        losses.push(Loss {
            kind: LossKind::StatefulFeature,
            path: "previous_response_id".into(),
            reason: format!(
                "the conversation misses the earlier response '{missing}' (expired, evicted \
                 or deleted); answered from the turns still kept"
            ),
        });
    }
    if !tenant.stores && turn.take().is_some() {
        context.not_stored();
    }
}
