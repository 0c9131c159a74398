//! Who may keep responses, and what a gap in a stored conversation does:
//! requests without credentials keep nothing unless an anonymous store is
//! allowed, and a missing turn is refused unless continuing is allowed
//! (and then reported).

mod common;

use common::stateful::{call, call_as, echo_upstream, text};
use common::{body, read};
use http::{Request, StatusCode};
use serde_json::{json, Value};
use tower::{Layer, ServiceExt};
use wirebridge_store::MemoryStore;
use wirebridge_tower::{MissingHistory, ResponsesToChatLayer, DROPPED_HEADER};

#[tokio::test]
async fn requests_without_credentials_keep_nothing_and_say_why() {
    let s = ResponsesToChatLayer::new()
        .store(MemoryStore::new())
        .layer(echo_upstream());
    let turn = json!({"model": "m", "input": "one"});
    let (status, first, _) = call_as(&s, "POST", "/v1/responses", None, Some(turn)).await;
    assert_eq!(status, 200);
    assert_eq!(first["store"], false, "it says it was not kept: {first}");
    let id = first["id"].as_str().unwrap();

    let (status, error, _) = call_as(
        &s,
        "POST",
        "/v1/responses",
        None,
        Some(json!({"model": "m", "input": "two", "previous_response_id": id})),
    )
    .await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["error"]["code"], "store_requires_credentials");
    assert_eq!(error["error"]["param"], "previous_response_id");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("credential"),
        "{error}"
    );
    let (status, _, _) = call_as(&s, "GET", &format!("/v1/responses/{id}"), None, None).await;
    assert_eq!(status, 404);
    // A streamed answer says so too.
    let (status, _, bytes) = call_as(
        &s,
        "POST",
        "/v1/responses",
        None,
        Some(json!({"model": "m", "input": "one", "stream": true})),
    )
    .await;
    assert_eq!(status, 200);
    let frames = wirebridge_testkit::parse_sse(&bytes);
    let done: Value = serde_json::from_str(&frames.last().unwrap().data).unwrap();
    assert_eq!(done["response"]["store"], false);
}

#[tokio::test]
async fn an_anonymous_store_is_shared_when_allowed() {
    let s = ResponsesToChatLayer::new()
        .store(MemoryStore::new())
        .anonymous_store(true)
        .layer(echo_upstream());
    let (_, first, _) = call_as(
        &s,
        "POST",
        "/v1/responses",
        None,
        Some(json!({"model": "m", "input": "one"})),
    )
    .await;
    assert_eq!(first["store"], true);
    let (status, second, _) = call_as(
        &s,
        "POST",
        "/v1/responses",
        None,
        Some(json!({"model": "m", "input": "two", "previous_response_id": first["id"]})),
    )
    .await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(
        text(&second),
        format!("user:one | assistant:{} | user:two", text(&first))
    );
    // A credential is another tenant still.
    let (status, _, _) = call(
        &s,
        "GET",
        &format!("/v1/responses/{}", first["id"].as_str().unwrap()),
        "k1",
        None,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_gap_is_answered_from_what_is_kept_when_allowed_and_reported() {
    let s = ResponsesToChatLayer::new()
        .store(MemoryStore::new())
        .missing_history(MissingHistory::Continue)
        .layer(echo_upstream());
    let mut previous: Option<String> = None;
    let mut ids = Vec::new();
    for input in ["one", "two", "three"] {
        let (_, response, _) = call(
            &s,
            "POST",
            "/v1/responses",
            "k1",
            Some(json!({"model": "m", "input": input, "previous_response_id": previous})),
        )
        .await;
        previous = response["id"].as_str().map(str::to_owned);
        ids.push(previous.clone().unwrap());
    }
    call(
        &s,
        "DELETE",
        &format!("/v1/responses/{}", ids[1]),
        "k1",
        None,
    )
    .await;

    let request = Request::post("/v1/responses")
        .header("authorization", "Bearer k1")
        .body(body(
            &json!({"model": "m", "input": "four", "previous_response_id": ids[2]}).to_string(),
        ))
        .unwrap();
    let (status, headers, bytes) = read(s.oneshot(request).await.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    let response: Value = serde_json::from_slice(&bytes).unwrap();
    // The upstream got turn three first: turns one and two went with the
    // deleted response (turn three's answer still quotes them).
    let seen = text(&response);
    assert!(seen.starts_with("user:three | assistant:"), "{seen}");
    assert!(seen.ends_with("user:four"), "{seen}");
    assert_eq!(headers[DROPPED_HEADER], "previous_response_id");
}
