//! WebSocket mode through the layer, served by hyper on loopback and
//! driven by a tungstenite client: turns, lanes, the connection cache,
//! warm-ups, errors, limits and disconnects.
#![cfg(feature = "websocket")]

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::Message;
use wirebridge_store::MemoryStore;
use wirebridge_tower::{
    ResponsesToChatLayer, WebSocketSettings, MODELS_ETAG_HEADER, REASONING_INCLUDED_HEADER,
    SERVER_MODEL_HEADER, TURN_STATE_HEADER, WEBSOCKET_MAX_MESSAGE_BYTES_HEADER,
};

mod common;
use common::websocket::{
    check_grammar, completed, connect, create, next, output_text, send, serve, turn, Upstream,
};

#[tokio::test]
async fn turns_run_in_order_and_continue_from_the_connection_cache() {
    let upstream = Arc::new(Upstream::default());
    let url = serve(ResponsesToChatLayer::new(), Arc::clone(&upstream)).await;
    let mut client = connect(&url, Some("sk-a")).await;

    // Each turn continues the last: `store: false`, so only the
    // connection keeps them.
    send(&mut client, create("one", json!({"store": false}))).await;
    let first = turn(&mut client).await;
    check_grammar(&first);
    let first_id = completed(&first)["id"].as_str().unwrap().to_owned();
    assert_eq!(completed(&first)["store"], false);
    assert_eq!(output_text(completed(&first)), "user:one");

    send(
        &mut client,
        create(
            "two",
            json!({"store": false, "previous_response_id": first_id}),
        ),
    )
    .await;
    let second = turn(&mut client).await;
    let second_id = completed(&second)["id"].as_str().unwrap().to_owned();
    send(
        &mut client,
        create(
            "three",
            json!({"store": false, "previous_response_id": second_id}),
        ),
    )
    .await;
    let third = turn(&mut client).await;
    check_grammar(&third);
    assert_eq!(
        output_text(completed(&third)),
        "user:one | assistant:user:one | user:two | assistant:user:one | assistant:user:one | user:two | user:three",
    );
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 3);

    // Another connection has another cache: not found there.
    let mut other = connect(&url, Some("sk-a")).await;
    send(
        &mut other,
        create("four", json!({"previous_response_id": second_id})),
    )
    .await;
    let error = turn(&mut other).await.pop().unwrap();
    assert_eq!(error["type"], "error");
    assert_eq!(error["status"], 404);
    assert_eq!(error["error"]["code"], "previous_response_not_found");
    assert_eq!(error["error"]["param"], "previous_response_id");
}

#[tokio::test]
async fn the_upgrade_says_the_usage_counts_the_reasoning_given() {
    // Codex reads the header from the upgrade, for every turn after it.
    let url = serve(ResponsesToChatLayer::new(), Arc::new(Upstream::default())).await;
    let (_client, response) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .unwrap();
    assert_eq!(response.status(), 101);
    assert_eq!(response.headers()[REASONING_INCLUDED_HEADER], "true");
}

#[tokio::test]
async fn the_upgrade_gives_codex_the_message_limit_and_a_turn_state() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;

    let layer = ResponsesToChatLayer::new().body_limit(4096);
    let url = serve(layer, Arc::new(Upstream::default())).await;
    let (mut client, response) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .unwrap();
    let headers = response.headers();
    // The limit is the one the connection enforces.
    assert_eq!(headers[WEBSOCKET_MAX_MESSAGE_BYTES_HEADER], "4096");
    let state = headers[TURN_STATE_HEADER].to_str().unwrap().to_owned();
    assert!(!state.is_empty());
    // No catalog was served: neither its tag nor a model is named.
    assert!(headers.get(MODELS_ETAG_HEADER).is_none());
    assert!(headers.get(SERVER_MODEL_HEADER).is_none());
    let too_large = json!({"type": "response.create", "input": "x".repeat(4096)});
    client
        .send(Message::text(too_large.to_string()))
        .await
        .unwrap();
    let closed = loop {
        match client.next().await {
            Some(Ok(Message::Close(frame))) => break frame,
            Some(Ok(_)) => continue,
            _ => panic!("the connection ended without a close frame"),
        }
    };
    assert_eq!(closed.unwrap().code, CloseCode::Size);

    // A connection Codex reopens during a turn sends the state back: the
    // same one is answered.
    let mut request = url.as_str().into_client_request().unwrap();
    request
        .headers_mut()
        .insert(TURN_STATE_HEADER, state.parse().unwrap());
    let (_again, response) = tokio_tungstenite::connect_async(request).await.unwrap();
    assert_eq!(response.headers()[TURN_STATE_HEADER], state.as_str());
    // Another connection, another state.
    let (_other, response) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .unwrap();
    assert_ne!(response.headers()[TURN_STATE_HEADER], state.as_str());
}

#[tokio::test]
async fn messages_sent_at_once_run_in_order_each_in_its_lane() {
    let upstream = Arc::new(Upstream::default());
    let url = serve(ResponsesToChatLayer::new(), Arc::clone(&upstream)).await;
    let mut client = connect(&url, Some("sk-a")).await;
    for lane in ["a", "b", "c"] {
        send(&mut client, create(lane, json!({"stream_id": lane}))).await;
    }
    for lane in ["a", "b", "c"] {
        let events = turn(&mut client).await;
        assert!(events.iter().all(|e| e["stream_id"] == lane), "{events:#?}");
        assert_eq!(output_text(completed(&events)), format!("user:{lane}"));
        let sequence: Vec<u64> = events
            .iter()
            .map(|e| e["sequence_number"].as_u64().unwrap())
            .collect();
        assert_eq!(sequence, (0..events.len() as u64).collect::<Vec<_>>());
    }
}

#[tokio::test]
async fn a_failed_continuation_evicts_what_it_continued() {
    let upstream = Arc::new(Upstream::default());
    let url = serve(ResponsesToChatLayer::new(), Arc::clone(&upstream)).await;
    let mut client = connect(&url, Some("sk-a")).await;
    send(&mut client, create("one", json!({"store": false}))).await;
    let first = turn(&mut client).await;
    let id = completed(&first)["id"].as_str().unwrap().to_owned();

    send(
        &mut client,
        create(
            "fail",
            json!({"previous_response_id": id, "stream_id": "x"}),
        ),
    )
    .await;
    let error = turn(&mut client).await.pop().unwrap();
    assert_eq!(
        error,
        json!({"type": "error", "status": 500, "stream_id": "x", "error": {
            "message": "the model is overloaded", "type": "server_error", "param": null, "code": "overloaded"}})
    );

    send(
        &mut client,
        create("again", json!({"previous_response_id": id})),
    )
    .await;
    let error = turn(&mut client).await.pop().unwrap();
    assert_eq!(error["status"], 404);
    assert_eq!(error["error"]["code"], "previous_response_not_found");
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_warm_up_reaches_no_backend_and_its_input_is_continued() {
    let upstream = Arc::new(Upstream::default());
    let url = serve(ResponsesToChatLayer::new(), Arc::clone(&upstream)).await;
    let mut client = connect(&url, Some("sk-a")).await;
    send(
        &mut client,
        create("context", json!({"generate": false, "store": false})),
    )
    .await;
    let warmup = turn(&mut client).await;
    check_grammar(&warmup);
    let response = completed(&warmup);
    assert_eq!(response["output"], json!([]));
    assert_eq!(response["model"], "m");
    assert_eq!(response["usage"]["total_tokens"], 0);
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 0);

    let id = response["id"].as_str().unwrap().to_owned();
    send(
        &mut client,
        create("go", json!({"previous_response_id": id})),
    )
    .await;
    let events = turn(&mut client).await;
    assert_eq!(output_text(completed(&events)), "user:context | user:go");
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 1);
}

/// A `store: false` conversation longer than a connection's cache used to
/// hold (every response listed its ancestors, and the cache kept 1,024):
/// 1,200 turns on one connection, each continuing the last, and the next
/// reaches the backend with all of them.
#[tokio::test]
async fn a_conversation_of_1_200_turns_continues_from_the_connection_cache() {
    const TURNS: usize = 1_200;
    let upstream = Arc::new(Upstream::default());
    let url = serve(ResponsesToChatLayer::new(), Arc::clone(&upstream)).await;
    let mut client = connect(&url, Some("sk-a")).await;
    let mut previous: Option<String> = None;
    for n in 0..TURNS {
        let mut extra = json!({"generate": false, "store": false});
        if let Some(id) = previous.take() {
            extra["previous_response_id"] = json!(id);
        }
        send(&mut client, create(&format!("t{n}"), extra)).await;
        let events = turn(&mut client).await;
        previous = Some(completed(&events)["id"].as_str().unwrap().to_owned());
    }
    send(
        &mut client,
        create(
            "go",
            json!({"store": false, "previous_response_id": previous}),
        ),
    )
    .await;
    let events = turn(&mut client).await;
    let text = output_text(completed(&events));
    let said: Vec<&str> = text.split(" | ").collect();
    assert_eq!(said.len(), TURNS + 1);
    assert_eq!(said[0], "user:t0");
    assert_eq!(said[TURNS - 1], format!("user:t{}", TURNS - 1));
    assert_eq!(said[TURNS], "user:go");
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn disconnecting_mid_turn_drops_the_upstream_request() {
    let upstream = Arc::new(Upstream::default());
    let url = serve(ResponsesToChatLayer::new(), Arc::clone(&upstream)).await;
    let mut client = connect(&url, Some("sk-a")).await;
    send(&mut client, create("hang", json!({}))).await;
    loop {
        let event = next(&mut client).await;
        if event["type"] == "response.output_text.delta" {
            assert_eq!(event["delta"], "thinking");
            break;
        }
    }
    assert!(!upstream.dropped.load(Ordering::SeqCst));
    drop(client);
    for _ in 0..200 {
        if upstream.dropped.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the upstream body was still held 2 s after the client left");
}

#[tokio::test]
async fn bad_messages_get_error_events_and_the_connection_stays_usable() {
    let upstream = Arc::new(Upstream::default());
    let url = serve(ResponsesToChatLayer::new(), Arc::clone(&upstream)).await;
    let mut client = connect(&url, Some("sk-a")).await;

    client
        .send(Message::Binary(Bytes::from_static(b"{}")))
        .await
        .unwrap();
    let error = next(&mut client).await;
    assert_eq!(
        (error["status"].as_u64(), error["error"]["code"].as_str()),
        (Some(400), Some("unsupported_message"))
    );

    client
        .send(Message::Text("{not json".into()))
        .await
        .unwrap();
    assert_eq!(next(&mut client).await["error"]["code"], "invalid_json");

    send(&mut client, create("x", json!({"stream": false}))).await;
    let error = next(&mut client).await;
    assert_eq!(error["error"]["param"], "stream");

    // A steer the failure event could not hand back.
    send(&mut client, json!({"type": "response.steer", "input": "x"})).await;
    let error = next(&mut client).await;
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["param"], "previous_response_id");

    // An acknowledgement gets no answer; the next turn's events come next.
    send(
        &mut client,
        json!({"type": "response.processed", "response_id": "r"}),
    )
    .await;
    send(&mut client, create("still here", json!({}))).await;
    let events = turn(&mut client).await;
    assert_eq!(events[0]["type"], "response.created");
    assert_eq!(output_text(completed(&events)), "user:still here");

    // A request the translator refuses: the 400 it would get over HTTP.
    send(
        &mut client,
        json!({"type": "response.create", "input": "no model"}),
    )
    .await;
    let error = next(&mut client).await;
    assert_eq!(error["status"], 400);
    assert_eq!(error["error"]["param"], "model");
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 1);
}

/// The fields of `ResponseSteerFailedEvent` (openai-python, openai-node):
/// the steer handed back, and why it failed.
fn assert_steer_refused(event: &Value, previous_response_id: &str, input: &Value) {
    assert_eq!(event["type"], "response.steer.failed", "{event}");
    assert_eq!(event["sequence_number"], 0);
    assert_eq!(
        event["steer"],
        json!({"previous_response_id": previous_response_id, "input": input})
    );
    assert_eq!(event["error"]["type"], "invalid_request_error");
    assert_eq!(event["error"]["code"], "steering_not_supported");
    assert!(event["error"]["message"].is_string());
}

#[tokio::test]
async fn a_steer_is_refused_with_its_input_handed_back_and_the_turn_goes_on() {
    let upstream = Arc::new(Upstream::default());
    let url = serve(ResponsesToChatLayer::new(), Arc::clone(&upstream)).await;
    let mut client = connect(&url, Some("sk-a")).await;

    // While a turn runs (its backend has sent one chunk, then waits).
    send(&mut client, create("hang", json!({"stream_id": "s"}))).await;
    let created = next(&mut client).await;
    assert_eq!(created["type"], "response.created");
    let running = created["response"]["id"].as_str().unwrap().to_owned();
    loop {
        if next(&mut client).await["type"] == "response.output_text.delta" {
            break;
        }
    }
    let input = json!([{"type": "message", "role": "user",
        "content": [{"type": "input_text", "text": "shorter, please"}]}]);
    send(
        &mut client,
        json!({"type": "response.steer", "previous_response_id": running, "input": input}),
    )
    .await;
    assert_steer_refused(&next(&mut client).await, &running, &input);
    // The refusal took nothing from the turn: its backend request is still
    // open, and the connection still answers.
    assert!(!upstream.dropped.load(Ordering::SeqCst));
    drop(client);

    // Between turns, a string input comes back as a string.
    let mut client = connect(&url, Some("sk-a")).await;
    send(&mut client, create("one", json!({}))).await;
    let done = completed(&turn(&mut client).await)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    send(
        &mut client,
        json!({"type": "response.steer", "previous_response_id": done, "input": "and then?"}),
    )
    .await;
    assert_steer_refused(&next(&mut client).await, &done, &json!("and then?"));
    send(
        &mut client,
        create("and then?", json!({"previous_response_id": done})),
    )
    .await;
    assert_eq!(
        output_text(completed(&turn(&mut client).await)),
        "user:one | assistant:user:one | user:and then?"
    );
}

#[tokio::test]
async fn an_idle_connection_is_closed_and_a_huge_message_closes_with_1009() {
    let upstream = Arc::new(Upstream::default());
    let layer = ResponsesToChatLayer::new()
        .body_limit(4096)
        .websocket(WebSocketSettings::new().idle_timeout(Duration::from_millis(200)));
    let url = serve(layer, upstream).await;

    let mut client = connect(&url, None).await;
    let closed = tokio::time::timeout(Duration::from_secs(3), client.next())
        .await
        .unwrap();
    match closed {
        Some(Ok(Message::Close(Some(frame)))) => {
            assert_eq!(frame.code, CloseCode::Normal);
            assert_eq!(frame.reason.as_str(), "idle timeout");
        }
        other => panic!("{other:?}"),
    }

    let mut client = connect(&url, None).await;
    let huge = create(&"x".repeat(8192), json!({}));
    client
        .send(Message::Text(huge.to_string().into()))
        .await
        .unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(3), client.next())
        .await
        .unwrap();
    match closed {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(frame.code, CloseCode::Size),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn messages_beyond_the_queue_limit_are_refused() {
    let upstream = Arc::new(Upstream::default());
    let layer = ResponsesToChatLayer::new().websocket(
        WebSocketSettings::new().max_queued(1, WebSocketSettings::DEFAULT_MAX_QUEUED_BYTES),
    );
    let url = serve(layer, upstream).await;
    let mut client = connect(&url, Some("sk-a")).await;
    send(&mut client, create("hang", json!({}))).await;
    send(&mut client, create("waits", json!({}))).await;
    send(
        &mut client,
        create("one too many", json!({"stream_id": "z"})),
    )
    .await;
    loop {
        let event = next(&mut client).await;
        if event["type"] == "error" {
            assert_eq!(event["status"], 429);
            assert_eq!(event["stream_id"], "z");
            assert_eq!(event["error"]["code"], "too_many_queued_responses");
            break;
        }
    }
}

#[tokio::test]
async fn stored_responses_chain_across_connections_for_their_tenant_only() {
    let upstream = Arc::new(Upstream::default());
    let url = serve(
        ResponsesToChatLayer::new().store(MemoryStore::new()),
        upstream,
    )
    .await;
    let mut a = connect(&url, Some("sk-a")).await;
    send(&mut a, create("kept", json!({}))).await;
    let kept = completed(&turn(&mut a).await).clone();
    assert_eq!(kept["store"], true);
    send(&mut a, create("not kept", json!({"store": false}))).await;
    let unkept = completed(&turn(&mut a).await).clone();
    drop(a);

    let mut b = connect(&url, Some("sk-a")).await;
    send(
        &mut b,
        create("next", json!({"previous_response_id": kept["id"]})),
    )
    .await;
    assert_eq!(
        output_text(completed(&turn(&mut b).await)),
        "user:kept | assistant:user:kept | user:next"
    );
    send(
        &mut b,
        create("next", json!({"previous_response_id": unkept["id"]})),
    )
    .await;
    assert_eq!(turn(&mut b).await.pop().unwrap()["status"], 404);

    let mut other_tenant = connect(&url, Some("sk-b")).await;
    send(
        &mut other_tenant,
        create("next", json!({"previous_response_id": kept["id"]})),
    )
    .await;
    assert_eq!(turn(&mut other_tenant).await.pop().unwrap()["status"], 404);
}

#[tokio::test]
async fn without_a_credential_the_connection_keeps_its_responses_and_stores_none() {
    let upstream = Arc::new(Upstream::default());
    let url = serve(
        ResponsesToChatLayer::new().store(MemoryStore::new()),
        upstream,
    )
    .await;
    let mut client = connect(&url, None).await;
    send(&mut client, create("one", json!({"store": true}))).await;
    let first = completed(&turn(&mut client).await).clone();
    assert_eq!(
        first["store"], false,
        "nothing is stored without a credential"
    );
    send(
        &mut client,
        create("two", json!({"previous_response_id": first["id"]})),
    )
    .await;
    assert_eq!(
        output_text(completed(&turn(&mut client).await)),
        "user:one | assistant:user:one | user:two"
    );
}

#[tokio::test]
async fn pings_are_answered_between_and_during_turns() {
    let upstream = Arc::new(Upstream::default());
    let url = serve(ResponsesToChatLayer::new(), upstream).await;
    let mut client = connect(&url, Some("sk-a")).await;
    let pong = |message: Option<Result<Message, _>>| match message {
        Some(Ok(Message::Pong(payload))) => payload,
        other => panic!("{other:?}"),
    };
    client
        .send(Message::Ping(Bytes::from_static(b"idle")))
        .await
        .unwrap();
    let reply = tokio::time::timeout(Duration::from_secs(3), client.next())
        .await
        .unwrap();
    assert_eq!(pong(reply), Bytes::from_static(b"idle"));

    // While a turn hangs upstream, the connection still answers.
    send(&mut client, create("hang", json!({}))).await;
    loop {
        if next(&mut client).await["type"] == "response.output_text.delta" {
            break;
        }
    }
    client
        .send(Message::Ping(Bytes::from_static(b"busy")))
        .await
        .unwrap();
    let reply = tokio::time::timeout(Duration::from_secs(3), client.next())
        .await
        .unwrap();
    assert_eq!(pong(reply), Bytes::from_static(b"busy"));
}

#[tokio::test]
async fn a_connection_holds_its_turns_to_the_layers_bound_on_stored_items() {
    // No store: the connection's own cache is all that is kept, and the
    // bound set on the layer holds for it too.
    let upstream = Arc::new(Upstream::default());
    let layer = ResponsesToChatLayer::new().max_resolved_input(4_000);
    let url = serve(layer, Arc::clone(&upstream)).await;
    let mut client = connect(&url, Some("sk-a")).await;
    send(
        &mut client,
        create(&"x".repeat(1_500), json!({"store": false})),
    )
    .await;
    let first = completed(&turn(&mut client).await)["id"].clone();
    // Its input and the answer repeating it come to about 3,000 bytes.
    let continued = |id: &Value| json!({"store": false, "previous_response_id": id});
    send(&mut client, create("two", continued(&first))).await;
    let second = completed(&turn(&mut client).await)["id"].clone();
    // With the second turn's answer (the first repeated), over 4,000.
    send(&mut client, create("three", continued(&second))).await;
    let error = turn(&mut client).await.pop().unwrap();
    assert_eq!(error["type"], "error", "{error}");
    assert_eq!(error["status"], 400, "{error}");
    assert_eq!(error["error"]["code"], "resolved_input_too_large");
    assert_eq!(error["error"]["param"], "previous_response_id");
    assert_eq!(upstream.calls.load(Ordering::SeqCst), 2);
}
