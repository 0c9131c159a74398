//! Which of the layer's routes a request takes: decided once, here, for
//! every path the layer serves, before anything reads the body.
//!
//! The routes are tried in a fixed order, the more specific first: a
//! WebSocket upgrade, the token counts, the Messages model list, background
//! runs, the Conversations API, stored responses, the model catalog,
//! compaction, and last the client endpoint itself, the translated
//! exchange. Each route is served only where the direction and its settings
//! have it (a stored response only with a store, compaction only for
//! Responses clients); what no route takes goes to the inner service as it
//! is.

use http::{Method, Request};

#[cfg(feature = "websocket")]
use crate::settings::WebSocketSettings;

use crate::background;
use crate::catalog;
use crate::direction::sealed::Direction;
use crate::direction::state;
use crate::exchange::{compaction, count_tokens, input_tokens};
use crate::messages_models::{self, Asked};
use crate::replies::Refused;
use crate::settings::CatalogSettings;
use crate::shared::Shared;
use crate::stateful::{self, ConversationRoute, Stateful, StoredRoute};
use crate::BackgroundRuns;

/// A route the layer serves: what it does with one request, what it read
/// from the path to do it, and the settings that serve it. `prefix` is
/// what comes before the layer's endpoint (`/v1` in `/v1/responses`), kept
/// for the upstream's path.
pub(crate) enum Route {
    /// A WebSocket upgrade on the client endpoint (Responses WebSocket
    /// mode).
    #[cfg(feature = "websocket")]
    WebSocket {
        prefix: String,
        settings: WebSocketSettings,
    },
    /// `POST …/responses/input_tokens`.
    InputTokens { prefix: String },
    /// `GET …/models` or `GET …/models/{id}` of a Messages client.
    MessagesModels { prefix: String, asked: Asked },
    /// `POST …/messages/count_tokens`.
    CountTokens { prefix: String },
    /// Following a background run's events, or cancelling it; or the 400
    /// its query earns.
    Background {
        route: Result<background::Route, Refused>,
        runs: BackgroundRuns,
        stateful: Stateful,
    },
    /// The Conversations API; a write under a credential the backend has
    /// not accepted yet asks it first, at `{prefix}/models`.
    Conversation {
        prefix: String,
        route: ConversationRoute,
        stateful: Stateful,
    },
    /// A stored response: retrieved, deleted, or its input items listed.
    Stored {
        route: StoredRoute,
        stateful: Stateful,
    },
    /// `GET …/models`, answered from the catalog.
    Catalog {
        prefix: String,
        catalog: CatalogSettings,
    },
    /// `POST …/responses/compact`.
    Compact { prefix: String },
    /// `POST` on the client endpoint: a translated exchange.
    Exchange { prefix: String },
}

impl Route {
    /// The route `request` takes through a layer of direction `D` with
    /// `shared`'s settings; `None` for a request the layer does not serve,
    /// which goes to the inner service untouched.
    pub(crate) fn of<D: Direction, B>(shared: &Shared<D>, request: &Request<B>) -> Option<Self> {
        let (method, uri) = (request.method(), request.uri());
        let (path, query) = (uri.path(), uri.query());
        let settings = &shared.direction;
        let endpoint = shared
            .common
            .client_endpoint
            .as_deref()
            .unwrap_or(D::CLIENT_ENDPOINT);
        #[cfg(feature = "websocket")]
        if let Some(settings) = state::websocket::<D>(settings) {
            let prefix = endpoint_prefix(path, endpoint);
            if let (Some(prefix), true) = (prefix, crate::websocket::is_upgrade(request)) {
                return Some(Self::WebSocket {
                    prefix: prefix.to_owned(),
                    settings: settings.clone(),
                });
            }
        }
        if let Some(prefix) = input_tokens::route::<D>(method, path, endpoint) {
            return Some(Self::InputTokens { prefix });
        }
        if let Some((prefix, asked)) = messages_models::route::<D>(method, path, query) {
            return Some(Self::MessagesModels { prefix, asked });
        }
        if let Some(prefix) = count_tokens::route::<D>(method, path, endpoint) {
            return Some(Self::CountTokens { prefix });
        }
        if let Some(stateful) = state::stateful::<D>(settings) {
            if let Some(runs) = state::background::<D>(settings) {
                if let Some(route) = background::route(method, path, query, endpoint) {
                    let (runs, stateful) = (runs.clone(), stateful.clone());
                    return Some(Self::Background {
                        route,
                        runs,
                        stateful,
                    });
                }
            }
            if let Some((prefix, route)) = stateful::conversation_route(method, path) {
                let stateful = stateful.clone();
                return Some(Self::Conversation {
                    prefix: prefix.to_owned(),
                    route,
                    stateful,
                });
            }
            if let Some(route) = stateful::route(method, path, endpoint) {
                let stateful = stateful.clone();
                return Some(Self::Stored { route, stateful });
            }
        }
        if let Some(catalog) = &shared.common.catalog {
            if let Some(prefix) = catalog::route(method, path) {
                return Some(Self::Catalog {
                    prefix: prefix.to_owned(),
                    catalog: catalog.clone(),
                });
            }
        }
        if let Some(prefix) = compaction::route::<D>(settings, method, path, endpoint) {
            return Some(Self::Compact { prefix });
        }
        let prefix = (method == Method::POST)
            .then(|| endpoint_prefix(path, endpoint))
            .flatten()?;
        Some(Self::Exchange {
            prefix: prefix.to_owned(),
        })
    }
}

/// The path before the endpoint, if the path ends with it.
fn endpoint_prefix<'p>(path: &'p str, endpoint: &str) -> Option<&'p str> {
    path.trim_end_matches('/').strip_suffix(endpoint)
}

#[cfg(test)]
mod tests;
