//! What both directions serving Responses clients share: whose request it
//! is, the options it is translated with, and the settings of one WebSocket
//! connection.

use std::borrow::Cow;
use std::sync::Arc;

use http::HeaderMap;
use wirebridge_convert::responses_to_chat::{Options, Seal};

use super::Tenant;
use crate::settings::ResponsesSettings;
#[cfg(feature = "websocket")]
use crate::stateful::Stateful;

/// The translation options of one request: the settings', with the seal
/// bound to the request's tenant (what one tenant sealed, only it opens).
pub(super) fn options<'s>(settings: &'s ResponsesSettings, tenant: &str) -> Cow<'s, Options> {
    match &settings.sealer {
        Some(sealer) => Cow::Owned(Options {
            seal: Some(Seal {
                sealer: Arc::clone(sealer),
                scope: tenant.to_owned(),
            }),
            ..settings.convert.clone()
        }),
        None => Cow::Borrowed(&settings.convert),
    }
}

/// The tenant of a request.
pub(super) fn tenant(settings: &ResponsesSettings, headers: &HeaderMap) -> Tenant {
    if settings.stateful.is_none() && settings.sealer.is_none() {
        return Tenant {
            key: String::new(),
            stores: false,
        };
    }
    // A configured tenant header, else a hash of the credential: one key
    // never sees another's state. The raw bytes, not `to_str`: a value
    // that is not visible ASCII would otherwise fall into the anonymous
    // tenant, shared with every other such value.
    let header = match &settings.tenant_header {
        Some(name) => headers.get(name),
        None => headers.get(http::header::AUTHORIZATION),
    };
    let credential = header.map(http::HeaderValue::as_bytes);
    Tenant {
        key: wirebridge_store::tenant_key(credential),
        stores: credential.is_some() || settings.anonymous_store,
    }
}

/// The settings of one WebSocket connection's turns.
#[cfg(feature = "websocket")]
pub(super) fn session(
    settings: &ResponsesSettings,
    cache: Arc<wirebridge_store::MemoryStore>,
    stores: bool,
) -> ResponsesSettings {
    let store = settings
        .stateful
        .as_ref()
        .and_then(Stateful::store)
        .filter(|_| stores)
        .cloned();
    let mut session = settings.clone();
    let mut stateful = Stateful::cached(settings.stateful.as_ref(), store, cache);
    stateful.max_resolved(settings.max_resolved_input);
    session.stateful = Some(stateful);
    session.convert.store = true;
    session.convert.keep_unstored = true;
    // A WebSocket turn is answered on its connection: none runs in the
    // background.
    session.convert.background = false;
    session.background = None;
    // The connection is the namespace of its cache: a client without a
    // credential keeps its responses there, and in no shared store.
    session.anonymous_store = true;
    session
}
