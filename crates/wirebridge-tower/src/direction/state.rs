//! What the exchange asks of a direction's state: read from the Responses
//! side's settings where the direction serves Responses clients
//! ([`Settings::responses`](super::sealed::Settings::responses)), and
//! nothing kept anywhere else.

use std::sync::Arc;

use http::HeaderMap;
use wirebridge_convert::catalog::ModelCatalog;

use super::responses_side;
use super::sealed::{Direction, Settings as _};
use super::Tenant;
use crate::settings::ResponsesSettings;
#[cfg(feature = "websocket")]
use crate::settings::WebSocketSettings;
use crate::stateful::{MissingHistory, Stateful};

/// The response store, if one is set.
pub(crate) fn stateful<D: Direction>(settings: &D::Settings) -> Option<&Stateful> {
    settings.responses().and_then(|r| r.stateful.as_ref())
}

/// The background runs, if background responses are run.
pub(crate) fn background<D: Direction>(settings: &D::Settings) -> Option<&crate::BackgroundRuns> {
    settings.responses().and_then(|r| r.background.as_ref())
}

/// The tenant of a request: nobody's where nothing is kept.
pub(crate) fn tenant<D: Direction>(settings: &D::Settings, headers: &HeaderMap) -> Tenant {
    match settings.responses() {
        Some(responses) => responses_side::tenant(responses, headers),
        None => Tenant {
            key: String::new(),
            stores: false,
        },
    }
}

/// What to do with a stored conversation that misses a turn.
pub(crate) fn missing_history<D: Direction>(settings: &D::Settings) -> MissingHistory {
    settings
        .responses()
        .map_or(MissingHistory::Refuse, |r| r.missing_history)
}

/// The settings compaction runs with (Responses clients only).
pub(crate) fn compaction<D: Direction>(settings: &D::Settings) -> Option<&ResponsesSettings> {
    settings.responses()
}

/// Takes the model catalog the layer serves, where translating reads it
/// too (a model's context window, for Responses clients).
pub(crate) fn use_catalog<D: Direction>(settings: &mut D::Settings, catalog: &ModelCatalog) {
    if let Some(responses) = settings.responses_mut() {
        responses.convert.catalog = Some(Arc::new(catalog.clone()));
    }
}

/// The body limit is now `bytes`: the bound on the stored items a request
/// may take in follows it, where the direction keeps any (unless set).
pub(crate) fn follow_body_limit<D: Direction>(settings: &mut D::Settings, bytes: usize) {
    if let Some(responses) = settings.responses_mut() {
        responses.follow_body_limit(bytes);
    }
}

/// How WebSocket mode is served; `None` where it is not.
#[cfg(feature = "websocket")]
pub(crate) fn websocket<D: Direction>(settings: &D::Settings) -> Option<&WebSocketSettings> {
    settings.responses().and_then(|r| r.websocket.as_ref())
}

/// The settings of one WebSocket connection's turns: every response kept
/// in the connection's `cache` (`store: false` ones too), and in the store
/// as well when asked and the connection's tenant `stores`.
#[cfg(feature = "websocket")]
pub(crate) fn session<D: Direction>(
    settings: &D::Settings,
    cache: Arc<wirebridge_store::MemoryStore>,
    stores: bool,
) -> D::Settings {
    let mut session = settings.clone();
    if let Some(responses) = session.responses_mut() {
        *responses = responses_side::session(responses, cache, stores);
    }
    session
}
