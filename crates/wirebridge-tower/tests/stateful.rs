//! `store`, `previous_response_id` and the retrieval endpoints, with the
//! memory store, over a Chat upstream that describes the conversation it got.

mod common;

use common::stateful::{call, call_as, service, service_with, text};
use http::HeaderValue;
use serde_json::{json, Value};
use wirebridge_store::MemoryStore;
use wirebridge_testkit::{parse_sse, responses_grammar};

#[tokio::test]
async fn a_conversation_continues_from_previous_response_id() {
    let s = service();
    let (status, first, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "instructions": "Be brief.", "input": "one"})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(text(&first), "system:Be brief. | user:one");
    let id = first["id"].as_str().unwrap();

    let (status, second, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "two", "previous_response_id": id})),
    )
    .await;
    assert_eq!(status, 200, "{second}");
    // The history comes first; instructions are not inherited.
    assert_eq!(
        text(&second),
        format!("user:one | assistant:{} | user:two", text(&first))
    );
    assert_eq!(second["previous_response_id"], id);

    // Retrieval returns exactly what the client got.
    let (status, retrieved, _) = call(
        &s,
        "GET",
        &format!("/v1/responses/{}", second["id"].as_str().unwrap()),
        "k1",
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(retrieved, second);
}

#[tokio::test]
async fn streamed_responses_are_stored_before_their_terminal_event() {
    let s = service();
    let (status, _, bytes) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "one", "stream": true})),
    )
    .await;
    assert_eq!(status, 200);
    let t = responses_grammar::check(&parse_sse(&bytes)).unwrap();
    // Right after the completed event arrived, the response can be chained on.
    let (status, _, bytes) = call(&s, "POST", "/v1/responses", "k1", Some(json!({"model": "m", "input": "two", "previous_response_id": t.response_id, "stream": true}))).await;
    assert_eq!(status, 200);
    let next = responses_grammar::check(&parse_sse(&bytes)).unwrap();
    assert_eq!(next.text, "user:one | assistant:user:one | user:two");
    let (_, retrieved, _) = call(
        &s,
        "GET",
        &format!("/v1/responses/{}", t.response_id),
        "k1",
        None,
    )
    .await;
    assert_eq!(retrieved["status"], "completed");
    assert_eq!(text(&retrieved), "user:one");
}

#[tokio::test]
async fn branches_see_only_their_own_history() {
    let s = service();
    let (_, root, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "root"})),
    )
    .await;
    let root_id = root["id"].as_str().unwrap();
    let (_, a, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "branch a", "previous_response_id": root_id})),
    )
    .await;
    let (_, b, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "branch b", "previous_response_id": root_id})),
    )
    .await;
    let (_, after_b, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "more", "previous_response_id": b["id"]})),
    )
    .await;
    assert!(!text(&after_b).contains("branch a"), "{}", text(&after_b));
    assert!(text(&after_b).contains("branch b"));
    assert!(text(&a).ends_with("user:branch a"));
}

#[tokio::test]
async fn store_false_keeps_nothing() {
    let s = service();
    let (_, first, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "x", "store": false})),
    )
    .await;
    let id = first["id"].as_str().unwrap();
    let (status, error, _) = call(&s, "GET", &format!("/v1/responses/{id}"), "k1", None).await;
    assert_eq!(status, 404);
    assert_eq!(error["error"]["code"], "not_found");
}

#[tokio::test]
async fn another_credential_sees_nothing() {
    let s = service();
    let (_, first, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "owner",
        Some(json!({"model": "m", "input": "secret"})),
    )
    .await;
    let id = first["id"].as_str().unwrap();
    let (status, _, bytes) =
        call(&s, "GET", &format!("/v1/responses/{id}"), "intruder", None).await;
    assert_eq!(status, 404);
    assert!(!String::from_utf8_lossy(&bytes).contains("secret"));
    let (status, error, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "intruder",
        Some(json!({"model": "m", "input": "x", "previous_response_id": id})),
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(error["error"]["code"], "previous_response_not_found");
    assert_eq!(error["error"]["param"], "previous_response_id");
    assert_eq!(error["error"]["type"], "invalid_request_error");
    let (status, _, _) = call(
        &s,
        "DELETE",
        &format!("/v1/responses/{id}"),
        "intruder",
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _, _) = call(&s, "GET", &format!("/v1/responses/{id}"), "owner", None).await;
    assert_eq!(status, 200, "the owner still has it");
}

#[tokio::test]
async fn delete_then_gone() {
    let s = service();
    let (_, first, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "x"})),
    )
    .await;
    let id = first["id"].as_str().unwrap();
    let (status, deleted, _) = call(&s, "DELETE", &format!("/v1/responses/{id}"), "k1", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        deleted,
        json!({"id": id, "object": "response.deleted", "deleted": true})
    );
    let (status, _, _) = call(&s, "GET", &format!("/v1/responses/{id}"), "k1", None).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn input_items_are_listed_and_paginated() {
    let s = service();
    let input: Vec<Value> = (0..5)
        .map(|n| json!({"role": "user", "content": format!("m{n}")}))
        .collect();
    let (_, first, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": input})),
    )
    .await;
    let id = first["id"].as_str().unwrap();
    let list = |query: &str| format!("/v1/responses/{id}/input_items{query}");

    let (status, page, _) = call(&s, "GET", &list(""), "k1", None).await;
    assert_eq!(status, 200);
    assert_eq!(page["object"], "list");
    assert_eq!(page["data"].as_array().unwrap().len(), 5);
    assert_eq!(
        page["data"][0]["content"][0]["text"]
            .as_str()
            .or(page["data"][0]["content"].as_str()),
        Some("m4"),
        "newest first by default"
    );
    assert_eq!(page["has_more"], false);

    let (_, page, _) = call(&s, "GET", &list("?order=asc&limit=2"), "k1", None).await;
    let texts = |p: &Value| {
        p["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["content"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(texts(&page), ["m0", "m1"]);
    assert_eq!(page["has_more"], true);
    let after = page["last_id"].as_str().unwrap().to_owned();
    let (_, page, _) = call(
        &s,
        "GET",
        &list(&format!("?order=asc&limit=2&after={after}")),
        "k1",
        None,
    )
    .await;
    assert_eq!(texts(&page), ["m2", "m3"]);
    assert_eq!(page["first_id"], page["data"][0]["id"]);

    let (status, error, _) = call(&s, "GET", &list("?limit=0"), "k1", None).await;
    assert_eq!(status, 400);
    assert_eq!(error["error"]["param"], "limit");
}

#[tokio::test]
async fn a_conversation_with_a_deleted_turn_is_refused_naming_it() {
    let s = service();
    let mut previous: Option<String> = None;
    let mut ids = Vec::new();
    for input in ["one", "two", "three"] {
        let (status, response, _) = call(
            &s,
            "POST",
            "/v1/responses",
            "k1",
            Some(json!({"model": "m", "input": input, "previous_response_id": previous})),
        )
        .await;
        assert_eq!(status, 200, "{response}");
        let id = response["id"].as_str().unwrap().to_owned();
        previous = Some(id.clone());
        ids.push(id);
    }
    let (first, middle, last) = (&ids[0], &ids[1], &ids[2]);
    let (status, _, _) = call(&s, "DELETE", &format!("/v1/responses/{middle}"), "k1", None).await;
    assert_eq!(status, 200);

    // Continuing would otherwise send turn three without turns one and two.
    let (status, error, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "four", "previous_response_id": last})),
    )
    .await;
    assert_eq!(status, 404, "{error}");
    assert_eq!(error["error"]["code"], "previous_response_not_found");
    assert_eq!(error["error"]["param"], "previous_response_id");
    assert_eq!(error["error"]["type"], "invalid_request_error");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains(&format!("'{middle}'")), "{message}");
    assert!(message.contains(&format!("'{last}'")), "{message}");

    // What is left stays readable, and the older part can still be continued.
    let (status, _, _) = call(&s, "GET", &format!("/v1/responses/{last}"), "k1", None).await;
    assert_eq!(status, 200);
    let (status, _, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "again", "previous_response_id": first})),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_response_the_store_does_not_keep_is_still_delivered_and_says_so() {
    // Every record is larger than this store keeps.
    let s = service_with(MemoryStore::new().max_bytes(10));
    for stream in [false, true] {
        let (status, _, bytes) = call(
            &s,
            "POST",
            "/v1/responses",
            "k1",
            Some(json!({"model": "m", "input": "one", "stream": stream})),
        )
        .await;
        assert_eq!(status, 200);
        // The client learns it: the response says `store: false`.
        let id = if stream {
            let frames = parse_sse(&bytes);
            let last: Value = serde_json::from_str(&frames.last().unwrap().data).unwrap();
            assert_eq!(last["type"], "response.completed");
            assert_eq!(last["response"]["store"], false, "{last}");
            let created: Value = serde_json::from_str(&frames[0].data).unwrap();
            assert_eq!(created["response"]["store"], true, "as asked, before");
            responses_grammar::check(&frames).unwrap().response_id
        } else {
            let response: Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(text(&response), "user:one");
            assert_eq!(response["store"], false, "{response}");
            response["id"].as_str().unwrap().to_owned()
        };
        let (status, error, _) = call(
            &s,
            "POST",
            "/v1/responses",
            "k1",
            Some(json!({"model": "m", "input": "two", "previous_response_id": id})),
        )
        .await;
        assert_eq!(status, 404, "{error}");
        assert_eq!(error["error"]["code"], "previous_response_not_found");
    }
}

#[tokio::test]
async fn credentials_that_are_not_visible_ascii_are_tenants_of_their_own() {
    let s = service();
    // Latin-1 bytes: valid in a header, but not text `to_str` accepts.
    let owner = || Some(HeaderValue::from_bytes(b"Bearer caf\xe9").unwrap());
    let other = || Some(HeaderValue::from_bytes(b"Bearer caf\xe8").unwrap());
    let (status, created, _) = call_as(
        &s,
        "POST",
        "/v1/responses",
        owner(),
        Some(json!({"model": "m", "input": "mine"})),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let path = format!("/v1/responses/{}", created["id"].as_str().unwrap());
    let (status, _, _) = call_as(&s, "GET", &path, owner(), None).await;
    assert_eq!(status, 200, "the owner sees it");
    for (who, authorization) in [("another such credential", other()), ("anonymous", None)] {
        let (status, _, _) = call_as(&s, "GET", &path, authorization, None).await;
        assert_eq!(status, 404, "{who} must not see it");
    }
}
