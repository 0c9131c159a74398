//! The server around the answers: routes, API selection, request errors,
//! HTTP/2, in-process use and graceful shutdown.

mod common;

use bytes::Bytes;
use common::*;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;
use wirebridge_demo::{service, Api, DemoConfig, DemoServer};

#[tokio::test]
async fn health_and_models() {
    let server = DemoServer::start(DemoConfig::default().model("my-model")).await;
    let health = send(&server, "GET", "/healthz", "").await;
    assert_eq!(health.status, 200);
    assert_eq!(&health.bytes()[..], b"ok\n");
    let models = send(&server, "GET", "/v1/models", "").await;
    assert_eq!(models.status, 200);
    let list = models.json();
    assert_eq!(list["object"], "list");
    assert_eq!(list["data"][0]["id"], "my-model");
    assert_eq!(list["data"][0]["object"], "model");
    // The configured model is used when a request names none.
    let answer = post(&server, CHAT, &json!({"messages": []})).await;
    assert_eq!(answer.json()["model"], "my-model");
}

#[tokio::test]
async fn unknown_urls_and_methods() {
    let server = start().await;
    let answer = send(&server, "POST", "/v1/embeddings", "{}").await;
    assert_eq!(answer.status, 404);
    assert_eq!(error_of(&answer)["code"], "unknown_url");
    let answer = send(&server, "GET", CHAT, "").await;
    assert_eq!(answer.status, 405);
    error_of(&answer);
}

#[tokio::test]
async fn api_selection() {
    let chat_only = DemoServer::start(DemoConfig::default().api(Api::Chat)).await;
    assert_eq!(
        post(&chat_only, CHAT, &chat_request("hi", false))
            .await
            .status,
        200
    );
    let answer = post(&chat_only, RESPONSES, &responses_request("hi", false)).await;
    assert_eq!(answer.status, 404);
    assert_eq!(error_of(&answer)["code"], "unknown_url");

    let responses_only = DemoServer::start(DemoConfig::default().api(Api::Responses)).await;
    assert_eq!(
        post(&responses_only, CHAT, &chat_request("hi", false))
            .await
            .status,
        404
    );
    let answer = post(&responses_only, RESPONSES, &responses_request("hi", false)).await;
    check_responses_body(&answer);
}

#[tokio::test]
async fn bad_requests_name_the_parameter() {
    let server = start().await;
    let answer = send(&server, "POST", CHAT, "{not json").await;
    assert_eq!(answer.status, 400);
    assert_eq!(error_of(&answer)["type"], "invalid_request_error");
    let answer = post(&server, CHAT, &json!({"model": "m"})).await;
    assert_eq!(answer.status, 400);
    assert_eq!(error_of(&answer)["param"], "messages");
    let answer = post(&server, RESPONSES, &json!({"input": 5})).await;
    assert_eq!(error_of(&answer)["param"], "input");
    let answer = post(
        &server,
        RESPONSES,
        &json!({"input": "x", "max_output_tokens": -1}),
    )
    .await;
    assert_eq!(error_of(&answer)["param"], "max_output_tokens");

    let small = DemoServer::start(DemoConfig::default().max_request_bytes(64)).await;
    let answer = post(&small, CHAT, &chat_request(&"x".repeat(100), false)).await;
    assert_eq!(answer.status, 413);
    error_of(&answer);
}

#[tokio::test]
async fn http2_prior_knowledge() {
    let server = start().await;
    let h2 = Client::builder(TokioExecutor::new())
        .http2_only(true)
        .build_http();
    let body = chat_request("over h2", true).to_string();
    let answer = send_with(&h2, &server.url(), "POST", CHAT, &body).await;
    let t = check_chat_stream(&answer, false);
    assert!(t.text.contains("over h2"));
    let body = responses_request("over h2", true).to_string();
    let answer = send_with(&h2, &server.url(), "POST", RESPONSES, &body).await;
    check_responses_stream(&answer);
}

#[tokio::test]
async fn in_process_service_without_a_socket() {
    let svc = service(Arc::new(DemoConfig::default()));
    let req = http::Request::post("/v1/responses")
        .body(Full::new(Bytes::from(
            responses_request("in process", true).to_string(),
        )))
        .unwrap();
    let res = svc.clone().oneshot(req).await.unwrap();
    assert_eq!(res.status(), 200);
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let frames = wirebridge_testkit::parse_sse(&bytes);
    let t = wirebridge_testkit::responses_grammar::check(&frames).unwrap();
    assert!(t.text.contains("in process"));
    assert_eq!(svc.config().api, Api::Both);
}

#[tokio::test]
async fn shutdown_lets_open_streams_finish() {
    let server = start().await;
    let url = server.url();
    let open = tokio::spawn(async move {
        let body = chat_request("demo:slow 25 finish me", true).to_string();
        send_with(&client(), &url, "POST", CHAT, &body).await
    });
    tokio::time::sleep(Duration::from_millis(60)).await;
    let url = server.url();
    server.shutdown().await.unwrap();
    let answer = open.await.unwrap();
    let t = check_chat_stream(&answer, false);
    assert!(t.text.contains("finish me"));
    // Nothing listens any more.
    let req = http::Request::get(format!("{url}/healthz"))
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert!(client().request(req).await.is_err());
}

#[tokio::test]
async fn serve_on_a_given_listener() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(wirebridge_demo::serve(
        listener,
        DemoConfig::default(),
        async {
            let _ = stopped.await;
        },
    ));
    let answer = send_with(&client(), &url, "GET", "/healthz", "").await;
    assert_eq!(answer.status, 200);
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}
