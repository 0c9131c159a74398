//! Translated streams against upstreams that go quiet: the idle timeout
//! fails the stream with its own failure event, however many bytes trickle
//! in; keep-alive comments keep the client's connection warm meanwhile; a
//! non-streaming reply over its size limit is a 502. Time is paused: the
//! runtime jumps to each timer.

mod common;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use common::{body, read};
use http::{Request, Response, StatusCode};
use http_body::{Body, Frame};
use tower::{Layer, ServiceExt};
use wirebridge_testkit::parse_sse;
use wirebridge_testkit::responses_grammar::{self, CheckOptions};
use wirebridge_tower::{RequestBody, ResponsesToChatLayer};

const FIRST_CHUNK: &str = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Thinking\"},\"finish_reason\":null}]}\n\n";

/// A stream body: `frames`, each after `gap`, then silence for ever.
struct Trickle {
    frames: Vec<Bytes>,
    gap: Duration,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Body for Trickle {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.frames.is_empty() {
            return Poll::Pending;
        }
        let gap = self.gap;
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(gap)));
        std::task::ready!(sleep.as_mut().poll(cx));
        self.sleep = None;
        let frame = self.frames.remove(0);
        Poll::Ready(Some(Ok(Frame::data(frame))))
    }
}

/// Streams `frames` as a Chat upstream, one every `gap`.
fn upstream(
    frames: Vec<Bytes>,
    gap: Duration,
) -> impl tower::Service<
    Request<RequestBody<common::ScriptedBody>>,
    Response = Response<Trickle>,
    Error = Infallible,
    Future = impl Send,
> + Clone {
    tower::service_fn(move |_request| {
        let body = Trickle {
            frames: frames.clone(),
            gap,
            sleep: None,
        };
        async move {
            let mut response = Response::new(body);
            response
                .headers_mut()
                .insert("content-type", "text/event-stream".parse().unwrap());
            Ok::<_, Infallible>(response)
        }
    })
}

fn request() -> Request<common::ScriptedBody> {
    Request::post("/v1/responses")
        .body(body(r#"{"model":"m","input":"hi","stream":true}"#))
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_silent_upstream_fails_the_stream_with_its_failure_event() {
    let service = ResponsesToChatLayer::new()
        .stream_idle_timeout(Duration::from_secs(30))
        .layer(upstream(vec![Bytes::from(FIRST_CHUNK)], Duration::ZERO));
    let started = tokio::time::Instant::now();
    let (status, _, bytes) = read(service.oneshot(request()).await.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(started.elapsed().as_secs(), 30);
    let frames = parse_sse(&bytes);
    let t = responses_grammar::check_with(&frames, &CheckOptions::strict())
        .unwrap_or_else(|v| panic!("{v}\n{}", String::from_utf8_lossy(&bytes)));
    assert_eq!(t.text, "Thinking", "what was said is kept");
    let last = frames.last().unwrap();
    assert_eq!(last.event.as_deref(), Some("response.failed"));
    assert!(last.data.contains("no event for 30 s"), "{}", last.data);
}

#[tokio::test(start_paused = true)]
async fn bytes_that_complete_no_event_do_not_keep_a_stream_alive() {
    // One byte of an event every 5 s: never idle by bytes, idle by events.
    let drip: Vec<Bytes> = FIRST_CHUNK
        .bytes()
        .take(40)
        .map(|b| Bytes::copy_from_slice(&[b]))
        .collect();
    let service = ResponsesToChatLayer::new()
        .stream_idle_timeout(Duration::from_secs(12))
        .layer(upstream(drip, Duration::from_secs(5)));
    let started = tokio::time::Instant::now();
    let (_, _, bytes) = read(service.oneshot(request()).await.unwrap()).await;
    assert_eq!(started.elapsed().as_secs(), 12);
    let frames = parse_sse(&bytes);
    responses_grammar::check_with(&frames, &CheckOptions::strict()).unwrap();
    assert_eq!(
        frames.last().unwrap().event.as_deref(),
        Some("response.failed")
    );
}

#[tokio::test(start_paused = true)]
async fn a_quiet_stream_gets_keepalive_comments_until_it_ends() {
    let service = ResponsesToChatLayer::new()
        .keepalive_interval(Duration::from_secs(10))
        .stream_idle_timeout(Duration::from_secs(35))
        .layer(upstream(vec![Bytes::from(FIRST_CHUNK)], Duration::ZERO));
    let (_, _, bytes) = read(service.oneshot(request()).await.unwrap()).await;
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    // 10, 20 and 30 s after the first chunk's events; the stream fails at 35.
    assert_eq!(text.matches(": keepalive\n\n").count(), 3, "{text}");
    let frames = parse_sse(&bytes);
    responses_grammar::check_with(&frames, &CheckOptions::strict()).unwrap();
}

#[tokio::test]
async fn a_reply_over_the_size_limit_is_a_502() {
    let reply = format!(
        r#"{{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{{"index":0,"message":{{"role":"assistant","content":"{}"}},"finish_reason":"stop"}}]}}"#,
        "x".repeat(4096)
    );
    let service = ResponsesToChatLayer::new()
        .max_reply_size(1024)
        .layer(common::upstream(
            StatusCode::OK,
            "application/json",
            reply.into_bytes(),
            1,
            common::Seen::default(),
        ));
    let request = Request::post("/v1/responses")
        .body(body(r#"{"model":"m","input":"hi"}"#))
        .unwrap();
    let (status, _, bytes) = read(service.oneshot(request).await.unwrap()).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    let error: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(error["error"]["code"], "upstream_reply_too_large");
}

#[tokio::test(start_paused = true)]
async fn each_event_moves_the_idle_deadline() {
    // Events 8 s apart, under the 10 s timeout: the stream fails 10 s after
    // the third, not 10 s after it started.
    let events = vec![Bytes::from(FIRST_CHUNK); 3];
    let service = ResponsesToChatLayer::new()
        .stream_idle_timeout(Duration::from_secs(10))
        .layer(upstream(events, Duration::from_secs(8)));
    let started = tokio::time::Instant::now();
    let (_, _, bytes) = read(service.oneshot(request()).await.unwrap()).await;
    assert_eq!(started.elapsed().as_secs(), 34);
    let frames = parse_sse(&bytes);
    let t = responses_grammar::check_with(&frames, &CheckOptions::strict()).unwrap();
    assert_eq!(t.text, "ThinkingThinkingThinking");
    assert_eq!(
        frames.last().unwrap().event.as_deref(),
        Some("response.failed")
    );
}
