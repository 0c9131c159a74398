//! `ResponsesToChatLayer` over replaying upstreams.

mod common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use common::{body, read, upstream, End, ScriptedBody, Seen};
use http::{Request, StatusCode};
use serde_json::Value;
use tower::{Layer, ServiceExt};
use wirebridge_testkit::{chat_grammar, fixtures, parse_sse, responses_grammar};
use wirebridge_tower::{
    Budget, Exchange, Observer, ResponsesToChatLayer, DROPPED_HEADER, REASONING_INCLUDED_HEADER,
};

const STREAM_REQUEST: &str = r#"{"model":"gpt-x","input":"hi","stream":true,"store":false}"#;

fn post(path: &str, json: &str) -> Request<ScriptedBody> {
    Request::post(path)
        .header("authorization", "Bearer sk-test")
        .header("x-request-id", "client-req")
        .body(body(json))
        .unwrap()
}

#[tokio::test]
async fn every_recorded_chat_stream_reaches_the_client_as_a_valid_responses_stream() {
    for (seed, stream) in fixtures::chat_streams().into_iter().enumerate() {
        let seen = Seen::default();
        let upstream = upstream(
            StatusCode::OK,
            "text/event-stream",
            stream.sse.clone(),
            seed as u64,
            seen.clone(),
        );
        let service = ResponsesToChatLayer::new().layer(upstream);
        let response = service
            .oneshot(post("/v1/responses", STREAM_REQUEST))
            .await
            .unwrap();
        let (status, headers, bytes) = read(response).await;
        assert_eq!(status, 200, "{}", stream.name);
        assert_eq!(headers["content-type"], "text/event-stream");
        // The usage is the backend's, counting the reasoning it was given.
        assert_eq!(headers[REASONING_INCLUDED_HEADER], "true");
        assert!(
            headers.get("content-length").is_none(),
            "{}: stale content-length",
            stream.name
        );
        let t = responses_grammar::check(&parse_sse(&bytes))
            .unwrap_or_else(|v| panic!("{}: {v}", stream.name));
        let expected = chat_grammar::transcript_of_recorded(&stream.frames());
        assert_eq!(t.text, expected.text, "{}", stream.name);
        assert_eq!(
            t.function_calls.len(),
            expected.tool_calls.len(),
            "{}",
            stream.name
        );

        let (uri, upstream_headers, upstream_body) = seen.last();
        assert_eq!(uri, "/v1/chat/completions");
        assert_eq!(upstream_headers["authorization"], "Bearer sk-test");
        assert_eq!(upstream_headers["accept-encoding"], "identity");
        assert_eq!(
            upstream_headers["content-length"],
            upstream_body.len().to_string().as_str()
        );
        let chat: Value = serde_json::from_slice(&upstream_body).unwrap();
        assert_eq!(chat["messages"][0]["content"], "hi");
        assert_eq!(chat["stream_options"]["include_usage"], true);
    }
}

#[tokio::test]
async fn json_replies_translate_and_keep_upstream_headers() {
    let reply = fixtures::load_bytes("openai-python/chat-json-parallel-tool-calls.json");
    let seen = Seen::default();
    let service = ResponsesToChatLayer::new().layer(upstream(
        StatusCode::OK,
        "application/json",
        reply,
        3,
        seen,
    ));
    let request = r#"{"model":"m","input":"weather?","metadata":{"k":"v"}}"#;
    let response = service
        .oneshot(post("/openai/v1/responses", request))
        .await
        .unwrap();
    let (status, headers, bytes) = read(response).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-length"], bytes.len().to_string().as_str());
    assert_eq!(headers["x-request-id"], "req_123");
    assert_eq!(headers["x-ratelimit-remaining-requests"], "99");
    assert_eq!(headers[DROPPED_HEADER], "metadata");
    assert_eq!(headers[REASONING_INCLUDED_HEADER], "true");
    let response: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(response["object"], "response");
    assert_eq!(response["output"].as_array().unwrap().len(), 2);
    assert_eq!(response["output"][0]["type"], "function_call");
}

#[tokio::test]
async fn other_paths_pass_through_unbuffered() {
    // The client body sends one frame and then stalls: a buffering layer
    // would wait forever; a pass-through hands the body over at once.
    let (client_body, _) = ScriptedBody::new(vec![Bytes::from_static(b"first")], End::Pending);
    let upstream = tower::service_fn(
        |request: Request<wirebridge_tower::RequestBody<ScriptedBody>>| async move {
            use http_body::Body;
            let mut body = request.into_body();
            let frame =
                std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await;
            let first = frame.unwrap().unwrap().into_data().unwrap();
            let reply = ScriptedBody::new(vec![first, Bytes::from_static(b" echoed")], End::Eof).0;
            Ok::<_, std::convert::Infallible>(http::Response::new(reply))
        },
    );
    let service = ResponsesToChatLayer::new().layer(upstream);
    let request = Request::post("/v1/files").body(client_body).unwrap();
    let response =
        tokio::time::timeout(std::time::Duration::from_secs(5), service.oneshot(request))
            .await
            .unwrap()
            .unwrap();
    let (_, _, bytes) = read(response).await;
    assert_eq!(&bytes[..], b"first echoed");

    // GET on the endpoint itself is not a translation either.
    let seen = Seen::default();
    let service = ResponsesToChatLayer::new().layer(upstream_echo(seen.clone()));
    let response = service
        .oneshot(Request::get("/v1/responses/resp_1").body(body("")).unwrap())
        .await
        .unwrap();
    let (status, _, bytes) = read(response).await;
    assert_eq!(status, 200);
    assert_eq!(&bytes[..], b"untouched");
    assert_eq!(seen.last().0, "/v1/responses/resp_1");
}

fn upstream_echo(
    seen: Seen,
) -> impl tower::Service<
    Request<wirebridge_tower::RequestBody<ScriptedBody>>,
    Response = http::Response<ScriptedBody>,
    Error = std::convert::Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    upstream(StatusCode::OK, "text/plain", b"untouched".to_vec(), 1, seen)
}

/// Records the budgets an observer is told were reached.
#[derive(Clone, Default)]
struct Budgets(Arc<Mutex<Vec<Budget>>>);

impl Observer for Budgets {
    fn on_exchange(&self, _: &Exchange) {}
    fn on_budget(&self, budget: Budget) {
        self.0.lock().unwrap().push(budget);
    }
}

#[tokio::test]
async fn oversized_bodies_get_413_without_being_read() {
    let seen = Seen::default();
    let budgets = Budgets::default();
    let service = ResponsesToChatLayer::new()
        .body_limit(64)
        .observer(budgets.clone())
        .layer(upstream_echo(seen.clone()));
    // Declared too large: refused before reading.
    let (big, _) = ScriptedBody::new(vec![], End::Pending);
    let request = Request::post("/v1/responses")
        .header("content-length", "100")
        .body(big)
        .unwrap();
    let (status, _, bytes) = read(service.clone().oneshot(request).await.unwrap()).await;
    assert_eq!(status, 413);
    let error: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(error["error"]["code"], "request_too_large");
    // Undeclared, streamed past the limit.
    let frames = vec![Bytes::from(vec![b' '; 40]), Bytes::from(vec![b' '; 40])];
    let (streamed, _) = ScriptedBody::new(frames, End::Pending);
    let (status, _, _) = read(
        service
            .oneshot(Request::post("/v1/responses").body(streamed).unwrap())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 413);
    // Each refusal is a budget reached, for the observer's metrics.
    assert_eq!(
        *budgets.0.lock().unwrap(),
        [Budget::RequestBody, Budget::RequestBody]
    );
    assert!(
        seen.0.lock().unwrap().is_empty(),
        "the upstream must not be called"
    );
}

#[tokio::test]
async fn untranslatable_requests_get_400_naming_the_field() {
    let seen = Seen::default();
    let service = ResponsesToChatLayer::new().layer(upstream_echo(seen.clone()));
    let request = post(
        "/v1/responses",
        r#"{"model":"m","input":[{"role":"wizard","content":"x"}]}"#,
    );
    let (status, headers, bytes) = read(service.oneshot(request).await.unwrap()).await;
    assert_eq!(status, 400);
    assert_eq!(headers["content-type"], "application/json");
    let error: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(error["error"]["param"], "input[0].role");
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert!(seen.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn upstream_errors_keep_their_status_and_are_reshaped() {
    let cases: [(u16, &str, &str, &str); 4] = [
        (
            401,
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key","param":null}}"#,
            "Incorrect API key provided",
            "invalid_api_key",
        ),
        (
            429,
            r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
            "Rate limit reached",
            "rate_limit_exceeded",
        ),
        (
            500,
            "<html>Internal Server Error</html>",
            "the upstream answered 500 Internal Server Error: <html>Internal Server Error</html>",
            "",
        ),
        (
            400,
            r#"{"object":"error","message":"max_tokens is too large","type":"BadRequestError","code":400}"#,
            "max_tokens is too large",
            "400",
        ),
    ];
    for (status, body_text, message, code) in cases {
        let service = ResponsesToChatLayer::new().layer(upstream(
            StatusCode::from_u16(status).unwrap(),
            "application/json",
            body_text.as_bytes().to_vec(),
            2,
            Seen::default(),
        ));
        let (got, headers, bytes) = read(
            service
                .oneshot(post("/v1/responses", STREAM_REQUEST))
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(got.as_u16(), status);
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(
            headers["x-request-id"], "req_123",
            "request ids pass through on errors too"
        );
        assert!(
            headers.get(REASONING_INCLUDED_HEADER).is_none(),
            "an error reports no usage"
        );
        let error: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(error["error"]["message"], message);
        if code.is_empty() {
            assert!(error["error"]["code"].is_null());
        } else {
            assert_eq!(error["error"]["code"], code);
        }
        assert!(error["error"]["type"].is_string());
    }
}

#[tokio::test]
async fn an_error_as_the_first_event_is_a_failure() {
    let sse = b"data: {\"error\":{\"message\":\"model overloaded\",\"type\":\"server_error\",\"code\":\"overloaded\"}}\n\n".to_vec();
    let service = ResponsesToChatLayer::new().layer(upstream(
        StatusCode::OK,
        "text/event-stream",
        sse,
        4,
        Seen::default(),
    ));
    let (_, _, bytes) = read(
        service
            .oneshot(post("/v1/responses", STREAM_REQUEST))
            .await
            .unwrap(),
    )
    .await;
    let t = responses_grammar::check(&parse_sse(&bytes)).unwrap();
    assert_eq!(t.status, "failed");
    assert_eq!(t.error.unwrap()["message"], "model overloaded");
}

#[tokio::test]
async fn an_upstream_cut_mid_stream_ends_with_a_failure_event() {
    let stream = fixtures::load_bytes("openai-python/chat-stream-text.sse");
    let frames: Vec<Bytes> = wirebridge_testkit::split_random(&stream[..stream.len() / 2], 8)
        .into_iter()
        .map(Bytes::from)
        .collect();
    let (upstream_body, _) = ScriptedBody::new(frames, End::Error);
    let body_cell = Arc::new(Mutex::new(Some(upstream_body)));
    let upstream = tower::service_fn(
        move |_req: Request<wirebridge_tower::RequestBody<ScriptedBody>>| {
            let body = body_cell.lock().unwrap().take().unwrap();
            async move {
                let mut response = http::Response::new(body);
                response
                    .headers_mut()
                    .insert("content-type", "text/event-stream".parse().unwrap());
                Ok::<_, std::convert::Infallible>(response)
            }
        },
    );
    let service = ResponsesToChatLayer::new().layer(upstream);
    let (_, _, bytes) = read(
        service
            .oneshot(post("/v1/responses", STREAM_REQUEST))
            .await
            .unwrap(),
    )
    .await;
    let frames = parse_sse(&bytes);
    let t = responses_grammar::check(&frames).unwrap();
    assert_eq!(t.status, "failed");
    assert!(t.error.unwrap()["message"]
        .as_str()
        .unwrap()
        .contains("connection reset by peer"));
}

#[tokio::test]
async fn a_client_that_goes_away_drops_the_upstream_body() {
    let (upstream_body, dropped) = ScriptedBody::new(
        vec![Bytes::from_static(
            b"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n",
        )],
        End::Pending,
    );
    let body_cell = Arc::new(Mutex::new(Some(upstream_body)));
    let upstream = tower::service_fn(
        move |_req: Request<wirebridge_tower::RequestBody<ScriptedBody>>| {
            let body = body_cell.lock().unwrap().take().unwrap();
            async move {
                let mut response = http::Response::new(body);
                response
                    .headers_mut()
                    .insert("content-type", "text/event-stream".parse().unwrap());
                Ok::<_, std::convert::Infallible>(response)
            }
        },
    );
    let exchanges = Arc::new(Mutex::new(Vec::<Exchange>::new()));
    let sink = exchanges.clone();
    let service = ResponsesToChatLayer::new()
        .observer(move |e: &Exchange| sink.lock().unwrap().push(e.clone()))
        .layer(upstream);
    let response = service
        .oneshot(post("/v1/responses", STREAM_REQUEST))
        .await
        .unwrap();
    let mut body = response.into_body();
    use http_body::Body;
    let first = std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await;
    assert!(first.unwrap().is_ok());
    assert!(!dropped.load(Ordering::SeqCst));
    drop(body);
    assert!(
        dropped.load(Ordering::SeqCst),
        "the upstream body must be dropped with the client's"
    );
    let exchanges = exchanges.lock().unwrap();
    assert_eq!(exchanges.len(), 1);
    assert_eq!(exchanges[0].reply.outcome.as_deref(), Some("client_closed"));
}

#[tokio::test]
async fn compressed_upstream_bodies_are_refused_not_garbled() {
    let upstream = tower::service_fn(
        |_req: Request<wirebridge_tower::RequestBody<ScriptedBody>>| async move {
            let mut response = http::Response::new(ScriptedBody::split(b"\x1f\x8b\x08\x00", 1));
            response
                .headers_mut()
                .insert("content-type", "application/json".parse().unwrap());
            response
                .headers_mut()
                .insert("content-encoding", "gzip".parse().unwrap());
            Ok::<_, std::convert::Infallible>(response)
        },
    );
    let service = ResponsesToChatLayer::new().layer(upstream);
    let (status, _, bytes) = read(
        service
            .oneshot(post("/v1/responses", r#"{"model":"m","input":"x"}"#))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 502);
    let error: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(error["error"]["code"], "unsupported_upstream_encoding");
}

#[tokio::test]
async fn the_observer_sees_each_exchange() {
    let stream = fixtures::load_bytes("openai-python/chat-stream-parallel-tool-calls.sse");
    let exchanges = Arc::new(Mutex::new(Vec::<Exchange>::new()));
    let sink = exchanges.clone();
    let service = ResponsesToChatLayer::new()
        .observer(move |e: &Exchange| sink.lock().unwrap().push(e.clone()))
        .layer(upstream(
            StatusCode::OK,
            "text/event-stream",
            stream,
            5,
            Seen::default(),
        ));
    let request = r#"{"model":"gpt-x","input":"hi","stream":true,"prompt_cache_key":"k"}"#;
    let (_, _, _) = read(
        service
            .oneshot(post("/v1/responses", request))
            .await
            .unwrap(),
    )
    .await;
    let exchanges = exchanges.lock().unwrap();
    assert_eq!(exchanges.len(), 1);
    let e = &exchanges[0];
    assert_eq!(e.model, "gpt-x");
    assert!(e.stream);
    assert_eq!(e.status, 200);
    assert_eq!(e.reply.outcome.as_deref(), Some("completed"));
    let names: Vec<_> = e.reply.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["GetWeatherArgs", "get_stock_price"]);
    assert!(e.reply.usage.unwrap().input > 0);
    assert_eq!(e.losses.paths(), "prompt_cache_key");
    assert!(e.time_to_first_byte.unwrap() <= e.total_time);
    assert!(e.translation_time > std::time::Duration::ZERO && e.translation_time <= e.total_time);
}
