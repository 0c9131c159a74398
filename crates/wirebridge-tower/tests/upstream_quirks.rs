//! Upstreams that answer other than asked: a stream for a non-streaming
//! request, an error body with status 200, a redirect. The client always
//! gets what it asked for, or a clear 502 in its own API's shape.

mod common;

use common::{body, declaring, read, upstream, Seen};
use http::{Request, StatusCode};
use serde_json::Value;
use tower::{Layer, ServiceExt};
use wirebridge_testkit::{chat_grammar, fixtures, responses_grammar};
use wirebridge_tower::{ChatToResponsesLayer, ResponsesToChatLayer};

const RESPONSES_BODY_REQUEST: &str = r#"{"model":"gpt-x","input":"hi","store":false}"#;
const CHAT_BODY_REQUEST: &str = r#"{"model":"gpt-x","messages":[{"role":"user","content":"hi"}]}"#;

fn post(path: &str, json: &str) -> Request<common::ScriptedBody> {
    Request::post(path)
        .header("authorization", "Bearer sk-test")
        .body(body(json))
        .unwrap()
}

#[tokio::test]
async fn a_chat_stream_for_a_body_request_becomes_the_body() {
    for (seed, stream) in fixtures::chat_streams().into_iter().enumerate() {
        let expected = chat_grammar::transcript_of_recorded(&stream.frames());
        let service = ResponsesToChatLayer::new().layer(upstream(
            StatusCode::OK,
            "text/event-stream",
            stream.sse.clone(),
            seed as u64,
            Seen::default(),
        ));
        let response = service
            .oneshot(post("/v1/responses", RESPONSES_BODY_REQUEST))
            .await
            .unwrap();
        let (status, headers, bytes) = read(response).await;
        assert_eq!(status, 200, "{}", stream.name);
        assert_eq!(
            headers["content-type"], "application/json",
            "{}",
            stream.name
        );
        assert_eq!(headers["content-length"], bytes.len().to_string().as_str());
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        let t = responses_grammar::responses_body_transcript(&body);
        assert_eq!(body["object"], "response", "{}", stream.name);
        assert_eq!(t.text, expected.text, "{}", stream.name);
        assert_eq!(
            t.function_calls.len(),
            expected.tool_calls.len(),
            "{}",
            stream.name
        );
    }
}

#[tokio::test]
async fn a_responses_stream_for_a_body_request_becomes_the_body() {
    for (seed, stream) in fixtures::responses_streams().into_iter().enumerate() {
        let expected = responses_grammar::transcript_of_recorded(&stream.frames());
        let service = ChatToResponsesLayer::new().layer(upstream(
            StatusCode::OK,
            "text/event-stream",
            stream.sse.clone(),
            seed as u64,
            Seen::default(),
        ));
        let names = expected.function_calls.iter().map(|c| c.name.as_str());
        let request = declaring(CHAT_BODY_REQUEST, names);
        let response = service
            .oneshot(post("/v1/chat/completions", &request))
            .await
            .unwrap();
        let (status, headers, bytes) = read(response).await;
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        if expected.status == "failed" {
            assert_eq!(status, 502, "{}", stream.name);
            assert!(body["error"]["message"].is_string(), "{}", stream.name);
            continue;
        }
        assert_eq!(status, 200, "{}: {body}", stream.name);
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(body["object"], "chat.completion", "{}", stream.name);
        let t = chat_grammar::chat_body_transcript(&body);
        if !stream.name.contains("openai-phase") {
            // That recording was trimmed: its deltas do not add up.
            assert_eq!(t.text, expected.text, "{}", stream.name);
        }
        assert_eq!(
            t.tool_calls.len(),
            expected.function_calls.len(),
            "{}",
            stream.name
        );
        if expected.usage.is_some() {
            assert!(body["usage"]["total_tokens"].is_u64(), "{}", stream.name);
        }
    }
}

#[tokio::test]
async fn a_failing_stream_for_a_body_request_is_a_502_with_the_upstream_message() {
    let stream = concat!(
        "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Once\"}}]}\n\n",
        "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\",\"code\":\"busy\"}}\n\n",
    );
    let service = ResponsesToChatLayer::new().layer(upstream(
        StatusCode::OK,
        "text/event-stream",
        stream.as_bytes().to_vec(),
        1,
        Seen::default(),
    ));
    let (status, _, bytes) = read(
        service
            .oneshot(post("/v1/responses", RESPONSES_BODY_REQUEST))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 502);
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["error"]["message"], "overloaded");
    assert_eq!(body["error"]["code"], "busy");
}

#[tokio::test]
async fn an_error_body_with_status_200_is_a_502() {
    let error =
        br#"{"error":{"message":"model is loading","type":"server_error","code":"model_loading"}}"#;
    let service = ResponsesToChatLayer::new().layer(upstream(
        StatusCode::OK,
        "application/json",
        error.to_vec(),
        2,
        Seen::default(),
    ));
    let (status, headers, bytes) = read(
        service
            .oneshot(post("/v1/responses", RESPONSES_BODY_REQUEST))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 502);
    assert_eq!(headers["content-type"], "application/json");
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["error"]["message"], "model is loading");
    assert_eq!(body["error"]["code"], "model_loading");

    let failed = br#"{"id":"resp_1","object":"response","status":"failed","output":[],
        "error":{"code":"server_error","message":"model is loading"}}"#;
    let service = ChatToResponsesLayer::new().layer(upstream(
        StatusCode::OK,
        "application/json",
        failed.to_vec(),
        2,
        Seen::default(),
    ));
    let (status, _, bytes) = read(
        service
            .oneshot(post("/v1/chat/completions", CHAT_BODY_REQUEST))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 502);
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["error"]["message"], "model is loading");
}

#[tokio::test]
async fn an_informational_status_is_no_answer() {
    // A 1xx handed over as the final response (a hand-written service
    // can): passed on, the client would wait for an answer that never
    // comes.
    for status in [100, 103, 195] {
        let status = StatusCode::from_u16(status).unwrap();
        let seen = Seen::default();
        let service = ResponsesToChatLayer::new().layer(upstream(
            status,
            "application/json",
            b"{}".to_vec(),
            3,
            seen.clone(),
        ));
        let (got, _, bytes) = read(
            service
                .oneshot(post("/v1/responses", RESPONSES_BODY_REQUEST))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(got, 502, "{status}");
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(body["error"]["code"], "upstream_informational");
        assert!(body["error"]["message"]
            .as_str()
            .unwrap()
            .contains(status.as_str()));
    }
}

#[tokio::test]
async fn a_redirect_is_never_passed_on() {
    for status in [
        StatusCode::MOVED_PERMANENTLY,
        StatusCode::TEMPORARY_REDIRECT,
        StatusCode::PERMANENT_REDIRECT,
    ] {
        let redirect = |seen: &Seen| {
            let inner = upstream(status, "text/html", b"moved".to_vec(), 3, seen.clone());
            tower::ServiceBuilder::new()
                .map_response(|mut r: http::Response<_>| {
                    r.headers_mut().insert(
                        "location",
                        "https://elsewhere.example/steal".parse().unwrap(),
                    );
                    r
                })
                .service(inner)
        };
        let seen = Seen::default();
        let service = ResponsesToChatLayer::new().layer(redirect(&seen));
        let (got, headers, bytes) = read(
            service
                .oneshot(post("/v1/responses", RESPONSES_BODY_REQUEST))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(got, 502, "{status}");
        assert!(headers.get("location").is_none(), "{status}");
        let body: Value = serde_json::from_slice(&bytes).unwrap();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(status.as_str()), "{message}");
        assert_eq!(body["error"]["code"], "upstream_redirect");

        let service = ChatToResponsesLayer::new().layer(redirect(&seen));
        let (got, headers, _) = read(
            service
                .oneshot(post("/v1/chat/completions", CHAT_BODY_REQUEST))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(got, 502, "{status}");
        assert!(headers.get("location").is_none(), "{status}");
    }
}

#[tokio::test]
async fn a_body_for_a_stream_request_becomes_the_stream() {
    // Backends that ignore `stream` answer with a body: the client that
    // asked for a stream gets one, in its grammar, saying what the body
    // says; never the body itself.
    for (seed, (name, body)) in fixtures::chat_bodies().into_iter().enumerate() {
        let service = ResponsesToChatLayer::new().layer(upstream(
            StatusCode::OK,
            "application/json",
            body.clone(),
            seed as u64,
            Seen::default(),
        ));
        let request = r#"{"model":"gpt-x","input":"hi","store":false,"stream":true}"#;
        let (status, headers, bytes) = read(
            service
                .oneshot(post("/v1/responses", request))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{name}");
        assert_eq!(headers["content-type"], "text/event-stream", "{name}");
        let frames = wirebridge_testkit::parse_sse(&bytes);
        let t = responses_grammar::check(&frames)
            .unwrap_or_else(|v| panic!("{name}: {v}\n{}", String::from_utf8_lossy(&bytes)));
        let expected = chat_grammar::chat_body_transcript(&serde_json::from_slice(&body).unwrap());
        assert_eq!(t.text, expected.text, "{name}");
        assert_eq!(t.function_calls.len(), expected.tool_calls.len(), "{name}");
    }

    // An error body is refused before any event, as for a body request.
    let error = br#"{"error":{"message":"model is loading","type":"server_error"}}"#;
    let service = ResponsesToChatLayer::new().layer(upstream(
        StatusCode::OK,
        "application/json",
        error.to_vec(),
        1,
        Seen::default(),
    ));
    let request = r#"{"model":"gpt-x","input":"hi","store":false,"stream":true}"#;
    let (status, headers, bytes) = read(
        service
            .oneshot(post("/v1/responses", request))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 502);
    assert_eq!(headers["content-type"], "application/json");
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["error"]["message"], "model is loading");
}
