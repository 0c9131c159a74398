//! The Conversations API writes to the store only under a credential the
//! backend accepts: a write under one not yet accepted asks the backend
//! once (`GET …/models` with the client's credentials), a refused one is
//! answered with the backend's own refusal and keeps nothing, reads and
//! deletes ask nothing, and a layer told to trust credentials asks nothing.

mod common;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use common::stateful::call;
use common::{End, ScriptedBody};
use http::{Request, Response, StatusCode};
use serde_json::json;
use tower::{Layer, Service};
use wirebridge_store::MemoryStore;
use wirebridge_tower::{RequestBody, ResponsesToChatLayer};

/// Every request the backend got: its method, path and `authorization`.
type Asked = Arc<Mutex<Vec<(String, String, String)>>>;

/// A backend that lists its models for `Bearer good` alone, refuses every
/// other credential with `status`, and is sent nothing else here.
fn backend(
    asked: Asked,
    status: StatusCode,
) -> impl Service<
    Request<RequestBody<ScriptedBody>>,
    Response = Response<ScriptedBody>,
    Error = Infallible,
    Future = impl Send,
> + Clone {
    tower::service_fn(move |request: Request<RequestBody<ScriptedBody>>| {
        let asked = asked.clone();
        async move {
            let authorization = request
                .headers()
                .get("authorization")
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default();
            let good = authorization == "Bearer good";
            asked.lock().unwrap().push((
                request.method().to_string(),
                request.uri().path().to_owned(),
                authorization,
            ));
            let (status, body) = match good {
                true => (StatusCode::OK, json!({"object": "list", "data": []})),
                false => (
                    status,
                    json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
                ),
            };
            let mut response =
                Response::new(ScriptedBody::new(vec![Bytes::from(body.to_string())], End::Eof).0);
            *response.status_mut() = status;
            Ok::<_, Infallible>(response)
        }
    })
}

fn conversation() -> serde_json::Value {
    json!({"items": [{"role": "user", "content": "Hello"}], "metadata": {"k": "v"}})
}

#[tokio::test]
async fn a_credential_is_checked_once_before_its_first_write() {
    let asked = Asked::default();
    let s = ResponsesToChatLayer::new()
        .store(MemoryStore::new())
        .layer(backend(asked.clone(), StatusCode::UNAUTHORIZED));
    let (status, created, _) = call(
        &s,
        "POST",
        "/v1/conversations",
        "good",
        Some(conversation()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let id = created["id"].as_str().unwrap();
    let items = json!({"items": [{"role": "user", "content": "More"}]});
    let path = format!("/v1/conversations/{id}/items");
    let (status, _, _) = call(&s, "POST", &path, "good", Some(items)).await;
    assert_eq!(status, StatusCode::OK);
    let path = format!("/v1/conversations/{id}");
    let (status, _, _) = call(&s, "POST", &path, "good", Some(json!({"metadata": {}}))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, _) = call(&s, "GET", &path, "good", None).await;
    assert_eq!(status, StatusCode::OK);
    // One question, before the first write, with the client's credential.
    let asked = asked.lock().unwrap().clone();
    assert_eq!(
        asked,
        [("GET".into(), "/v1/models".into(), "Bearer good".into())]
    );
}

#[tokio::test]
async fn a_refused_credential_gets_the_backends_refusal_and_keeps_nothing() {
    for status in [StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN] {
        let asked = Asked::default();
        let s = ResponsesToChatLayer::new()
            .store(MemoryStore::new())
            .layer(backend(asked.clone(), status));
        for _ in 0..2 {
            let (got, error, _) = call(
                &s,
                "POST",
                "/v1/conversations",
                "made-up",
                Some(conversation()),
            )
            .await;
            assert_eq!(got, status, "{error}");
            assert_eq!(error["error"]["code"], "invalid_api_key", "{error}");
            assert_eq!(
                error["error"]["message"], "Incorrect API key provided",
                "{error}"
            );
        }
        // Nothing is remembered of a refused key: each write asks again.
        assert_eq!(asked.lock().unwrap().len(), 2);
        // Additions and updates are writes too; reads and deletes find
        // nothing without asking.
        let items = json!({"items": [{"role": "user", "content": "x"}]});
        let (got, _, _) = call(
            &s,
            "POST",
            "/v1/conversations/conv_1/items",
            "made-up",
            Some(items),
        )
        .await;
        assert_eq!(got, status);
        let (got, _, _) = call(
            &s,
            "POST",
            "/v1/conversations/conv_1",
            "made-up",
            Some(json!({"metadata": {}})),
        )
        .await;
        assert_eq!(got, status);
        assert_eq!(asked.lock().unwrap().len(), 4);
        for method in ["GET", "DELETE"] {
            let (got, _, _) = call(&s, method, "/v1/conversations/conv_1", "made-up", None).await;
            assert_eq!(got, StatusCode::NOT_FOUND);
        }
        assert_eq!(asked.lock().unwrap().len(), 4);
    }
}

#[tokio::test]
async fn a_backend_that_cannot_say_is_a_502_naming_the_check() {
    let s = ResponsesToChatLayer::new()
        .store(MemoryStore::new())
        .layer(backend(Asked::default(), StatusCode::NOT_FOUND));
    let (status, error, _) = call(
        &s,
        "POST",
        "/v1/conversations",
        "other",
        Some(conversation()),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{error}");
    assert_eq!(error["error"]["code"], "credential_unchecked", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("GET /v1/models"), "{message}");
    assert!(message.contains("trust_credentials"), "{message}");
}

#[tokio::test]
async fn made_up_keys_do_not_evict_a_real_tenants_conversation() {
    let asked = Asked::default();
    let s = ResponsesToChatLayer::new()
        .store(MemoryStore::new().max_tenants(2))
        .layer(backend(asked.clone(), StatusCode::UNAUTHORIZED));
    let (_, created, _) = call(
        &s,
        "POST",
        "/v1/conversations",
        "good",
        Some(conversation()),
    )
    .await;
    let path = format!("/v1/conversations/{}", created["id"].as_str().unwrap());
    let mut refused = Vec::new();
    for n in 0..20 {
        let key = format!("made-up-{n}");
        let (status, _, _) =
            call(&s, "POST", "/v1/conversations", &key, Some(conversation())).await;
        refused.push(status);
    }
    let (status, found, _) = call(&s, "GET", &path, "good", None).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found, created);
    assert!(
        refused.iter().all(|s| *s == StatusCode::UNAUTHORIZED),
        "{refused:?}"
    );
    assert_eq!(asked.lock().unwrap().len(), 21);
}

#[tokio::test]
async fn trusted_credentials_are_not_checked() {
    let asked = Asked::default();
    let s = ResponsesToChatLayer::new()
        .store(MemoryStore::new())
        .trust_credentials(true)
        .layer(backend(asked.clone(), StatusCode::UNAUTHORIZED));
    let (status, created, _) = call(
        &s,
        "POST",
        "/v1/conversations",
        "gateway-checked",
        Some(conversation()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert!(asked.lock().unwrap().is_empty());
}
