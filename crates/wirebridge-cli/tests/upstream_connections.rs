//! How many connections the real binary opens to its upstream: requests
//! one after another, translated or not, streamed or not, share one kept
//! connection.
//!
//! The upstream is the demo, as a process of its own, behind a forwarder
//! that counts the connections it accepts.

mod support;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use support::{post, start, Proc};
use tokio::net::{TcpListener, TcpStream};
use wirebridge_testkit::{chat_grammar, messages_grammar, parse_sse, responses_grammar};

/// Forwards every connection it accepts to `upstream`, counting them.
async fn counting_forwarder(upstream: SocketAddr) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut server = TcpStream::connect(upstream).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
    (addr, accepted)
}

/// The demo upstream, and a bridge in front of it (through the counting
/// forwarder) started with `args`.
async fn bridge(args: &[&str]) -> (Proc, Proc, Arc<AtomicUsize>) {
    let demo = start(&["demo"]);
    let demo_addr: SocketAddr = demo.url.strip_prefix("http://").unwrap().parse().unwrap();
    let (forwarder, accepted) = counting_forwarder(demo_addr).await;
    let upstream = format!("http://{forwarder}/v1");
    let mut all = vec!["serve", "--upstream", &upstream];
    all.extend_from_slice(args);
    (start(&all), demo, accepted)
}

const ROUNDS: usize = 5;

/// Sends `body` to `path` `ROUNDS` times, one after another, checking each
/// reply with `check`.
async fn rounds(proxy: &Proc, path: &str, body: Value, check: fn(&[u8])) {
    for _ in 0..ROUNDS {
        let (status, reply) = post(&format!("{}{path}", proxy.url), &body).await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&reply));
        check(&reply);
    }
}

fn responses_stream(reply: &[u8]) {
    let t = responses_grammar::check(&parse_sse(reply)).unwrap();
    assert!(t.text.contains("Hello"), "{}", t.text);
}

fn chat_stream(reply: &[u8]) {
    let t = chat_grammar::check(&parse_sse(reply), false).unwrap();
    assert!(t.text.contains("Hello"), "{}", t.text);
}

fn messages_stream(reply: &[u8]) {
    let t = messages_grammar::check(&parse_sse(reply)).unwrap();
    assert!(t.text.contains("Hello"), "{}", t.text);
}

fn json_body(reply: &[u8]) {
    let body: Value = serde_json::from_slice(reply).unwrap();
    assert!(body.to_string().contains("Hello"), "{body}");
}

fn responses_request(stream: bool) -> Value {
    json!({"model": "demo", "input": "Hello", "stream": stream, "store": false})
}

fn chat_request(stream: bool) -> Value {
    json!({"model": "demo", "messages": [{"role": "user", "content": "Hello"}], "stream": stream})
}

fn messages_request(stream: bool) -> Value {
    json!({"model": "demo", "max_tokens": 64, "messages": [{"role": "user", "content": "Hello"}], "stream": stream})
}

#[tokio::test]
async fn sequential_requests_over_a_chat_upstream_share_one_connection() {
    let (proxy, _demo, accepted) = bridge(&[]).await;
    // Translated streams first: each ended with the upstream's body
    // still to be read to its end, which closed the connection.
    rounds(
        &proxy,
        "/v1/responses",
        responses_request(true),
        responses_stream,
    )
    .await;
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "translated streams");
    rounds(
        &proxy,
        "/v1/messages",
        messages_request(true),
        messages_stream,
    )
    .await;
    rounds(&proxy, "/v1/responses", responses_request(false), json_body).await;
    rounds(
        &proxy,
        "/v1/chat/completions",
        chat_request(true),
        chat_stream,
    )
    .await;
    rounds(
        &proxy,
        "/v1/chat/completions",
        chat_request(false),
        json_body,
    )
    .await;
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "every request");
}

#[tokio::test]
async fn sequential_requests_over_a_responses_upstream_share_one_connection() {
    for profile in ["generic", "openai"] {
        let (proxy, _demo, accepted) =
            bridge(&["--upstream-api", "responses", "--profile", profile]).await;
        rounds(
            &proxy,
            "/v1/chat/completions",
            chat_request(true),
            chat_stream,
        )
        .await;
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "{profile}: translated streams"
        );
        rounds(
            &proxy,
            "/v1/responses",
            responses_request(true),
            responses_stream,
        )
        .await;
        rounds(
            &proxy,
            "/v1/messages",
            messages_request(true),
            messages_stream,
        )
        .await;
        rounds(
            &proxy,
            "/v1/chat/completions",
            chat_request(false),
            json_body,
        )
        .await;
        rounds(&proxy, "/v1/responses", responses_request(false), json_body).await;
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            1,
            "{profile}: every request"
        );
    }
}
