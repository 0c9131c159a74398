//! The route table: every path the layer serves, as each direction and its
//! settings route it.

use std::sync::Arc;

use http::{Method, Request};
use wirebridge_convert::catalog::ModelCatalog;
use wirebridge_store::MemoryStore;

use super::Route;
use crate::direction::{ChatOverResponses, MessagesOverResponses, ResponsesOverChat};
use crate::settings::{CatalogSettings, ResponsesSettings};
use crate::shared::Shared;
use crate::stateful::{ConversationRoute, Stateful, StoredRoute};
use crate::BackgroundRuns;

/// A Responses layer with everything on: a store, background runs, a
/// catalog, WebSocket mode (on by default).
fn responses_layer() -> Shared<ResponsesOverChat> {
    let mut shared = Shared::<ResponsesOverChat> {
        direction: ResponsesSettings {
            stateful: Some(Stateful::new(Arc::new(MemoryStore::new()))),
            background: Some(BackgroundRuns::new()),
            ..ResponsesSettings::default()
        },
        ..Shared::default()
    };
    shared.common.catalog = Some(CatalogSettings::new(ModelCatalog::default()));
    shared
}

fn request(method: Method, uri: &str) -> Request<()> {
    Request::builder().method(method).uri(uri).body(()).unwrap()
}

/// The route's name and what it read from the path, for comparing.
fn named(route: Option<Route>) -> (&'static str, String) {
    let Some(route) = route else {
        return ("pass through", String::new());
    };
    match route {
        #[cfg(feature = "websocket")]
        Route::WebSocket { prefix, .. } => ("websocket", prefix),
        Route::InputTokens { prefix } => ("input_tokens", prefix),
        Route::MessagesModels { prefix, .. } => ("messages_models", prefix),
        Route::CountTokens { prefix } => ("count_tokens", prefix),
        Route::Background {
            route: Ok(route), ..
        } => ("background", format!("{route:?}")),
        Route::Background { route: Err(_), .. } => ("background refused", String::new()),
        Route::Conversation { route, .. } => ("conversation", format!("{route:?}")),
        Route::Stored { route, .. } => ("stored", format!("{route:?}")),
        Route::Catalog { prefix, .. } => ("catalog", prefix),
        Route::Compact { prefix } => ("compact", prefix),
        Route::Exchange { prefix } => ("exchange", prefix),
    }
}

fn route<D: crate::direction::sealed::Direction>(
    shared: &Shared<D>,
    method: Method,
    uri: &str,
) -> (&'static str, String) {
    named(Route::of(shared, &request(method, uri)))
}

#[test]
fn every_path_of_a_responses_layer_takes_its_route() {
    let shared = responses_layer();
    let stored = |route: StoredRoute| format!("{route:?}");
    let conversation = |route: ConversationRoute| format!("{route:?}");
    let cases = [
        (
            Method::POST,
            "/v1/responses",
            ("exchange", "/v1".to_owned()),
        ),
        (
            Method::POST,
            "/openai/v1/responses/",
            ("exchange", "/openai/v1".to_owned()),
        ),
        (Method::POST, "/responses", ("exchange", String::new())),
        (
            Method::POST,
            "/v1/responses/input_tokens",
            ("input_tokens", "/v1".to_owned()),
        ),
        (
            Method::POST,
            "/v1/responses/compact",
            ("compact", "/v1".to_owned()),
        ),
        (
            Method::GET,
            "/v1/responses/resp_1",
            ("stored", stored(StoredRoute::Retrieve("resp_1".into()))),
        ),
        (
            Method::DELETE,
            "/v1/responses/resp_1",
            ("stored", stored(StoredRoute::Delete("resp_1".into()))),
        ),
        (
            Method::GET,
            "/v1/responses/resp_1/input_items",
            ("stored", stored(StoredRoute::InputItems("resp_1".into()))),
        ),
        (
            Method::POST,
            "/v1/conversations",
            ("conversation", conversation(ConversationRoute::Create)),
        ),
        (
            Method::GET,
            "/v1/conversations/conv_1/items",
            (
                "conversation",
                conversation(ConversationRoute::ListItems("conv_1".into())),
            ),
        ),
        (Method::GET, "/v1/models", ("catalog", "/v1".to_owned())),
        (
            Method::GET,
            "/v1/chat/completions",
            ("pass through", String::new()),
        ),
        (
            Method::POST,
            "/v1/chat/completions",
            ("pass through", String::new()),
        ),
        (
            Method::GET,
            "/v1/responses",
            ("pass through", String::new()),
        ),
        (
            Method::PUT,
            "/v1/responses/resp_1",
            ("pass through", String::new()),
        ),
    ];
    for (method, uri, expected) in cases {
        assert_eq!(
            route(&shared, method.clone(), uri),
            expected,
            "{method} {uri}"
        );
    }
}

#[test]
fn background_routes_come_before_stored_responses() {
    let shared = responses_layer();
    let (name, _) = route(&shared, Method::GET, "/v1/responses/resp_1?stream=true");
    assert_eq!(name, "background");
    let (name, _) = route(&shared, Method::POST, "/v1/responses/resp_1/cancel");
    assert_eq!(name, "background");
    let (name, _) = route(
        &shared,
        Method::GET,
        "/v1/responses/resp_1?stream=true&starting_after=x",
    );
    assert_eq!(name, "background refused", "a cursor that is no number");
    // Without background runs, a cancel is the inner service's.
    let mut without = responses_layer();
    without.direction.background = None;
    let (name, _) = route(&without, Method::POST, "/v1/responses/resp_1/cancel");
    assert_eq!(name, "pass through");
}

#[test]
fn stored_routes_need_a_store_and_the_catalog_a_catalog() {
    let shared = Shared::<ResponsesOverChat>::default();
    for (method, uri) in [
        (Method::GET, "/v1/responses/resp_1"),
        (Method::POST, "/v1/conversations"),
        (Method::GET, "/v1/models"),
    ] {
        assert_eq!(
            route(&shared, method.clone(), uri),
            ("pass through", String::new()),
            "{method} {uri}"
        );
    }
}

#[cfg(feature = "websocket")]
#[test]
fn an_upgrade_on_the_endpoint_is_a_websocket() {
    use http::header;

    let shared = responses_layer();
    let upgrade = |uri: &str| {
        Request::builder()
            .method(Method::GET)
            .uri(uri)
            .header(header::CONNECTION, "Upgrade")
            .header(header::UPGRADE, "websocket")
            .body(())
            .unwrap()
    };
    assert_eq!(
        named(Route::of(&shared, &upgrade("/v1/responses"))),
        ("websocket", "/v1".to_owned())
    );
    assert_eq!(
        named(Route::of(&shared, &upgrade("/v1/chat/completions"))),
        ("pass through", String::new())
    );
    let mut off = responses_layer();
    off.direction.websocket = None;
    assert_eq!(
        named(Route::of(&off, &upgrade("/v1/responses"))),
        ("pass through", String::new())
    );
}

#[test]
fn chat_and_messages_layers_route_their_own_endpoints() {
    let chat = Shared::<ChatOverResponses>::default();
    assert_eq!(
        route(&chat, Method::POST, "/v1/chat/completions"),
        ("exchange", "/v1".to_owned())
    );
    for (method, uri) in [
        (Method::POST, "/v1/responses"),
        (Method::POST, "/v1/responses/compact"),
        (Method::POST, "/v1/responses/input_tokens"),
        (Method::POST, "/v1/messages/count_tokens"),
    ] {
        assert_eq!(
            route(&chat, method.clone(), uri),
            ("pass through", String::new()),
            "{method} {uri}"
        );
    }

    let messages = Shared::<MessagesOverResponses>::default();
    let cases = [
        (Method::POST, "/v1/messages", ("exchange", "/v1".to_owned())),
        (
            Method::POST,
            "/v1/messages/count_tokens",
            ("count_tokens", "/v1".to_owned()),
        ),
        (
            Method::GET,
            "/v1/models",
            ("messages_models", "/v1".to_owned()),
        ),
        (
            Method::GET,
            "/v1/models/claude-x",
            ("messages_models", "/v1".to_owned()),
        ),
        (
            Method::POST,
            "/v1/responses",
            ("pass through", String::new()),
        ),
    ];
    for (method, uri, expected) in cases {
        assert_eq!(
            route(&messages, method.clone(), uri),
            expected,
            "{method} {uri}"
        );
    }
}

#[test]
fn a_layer_with_its_own_endpoint_routes_that_path() {
    let mut shared = responses_layer();
    shared.common.client_endpoint = Some("/agents/turn".into());
    assert_eq!(
        route(&shared, Method::POST, "/api/agents/turn"),
        ("exchange", "/api".to_owned())
    );
    assert_eq!(
        route(&shared, Method::POST, "/v1/responses"),
        ("pass through", String::new())
    );
}
