//! How a translated stream's bytes are framed for the client: every
//! upstream frame already at hand (what one read of the upstream
//! connection brought) is translated into one client frame, so that it
//! leaves in one write, and a long burst is cut into frames of bounded
//! size. The stream's first client frame does not wait for the rest of a
//! burst: it leaves once one upstream frame gave it something. A caller in the same process may ask for bare JSON instead
//! ([`Framing`] as a request extension): each event is then a frame of its
//! own.

mod common;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use common::body;
use http::{Request, Response};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use tower::{Layer, ServiceExt};
use wirebridge_testkit::parse_sse;
use wirebridge_testkit::responses_grammar::{self, CheckOptions};
use wirebridge_tower::{Framing, RequestBody, ResponsesToChatLayer};

/// The upper bound the layer puts on one client frame, before the event
/// that crosses it.
const MAX_BATCH: usize = 64 * 1024;

/// A Chat chunk carrying `text`.
fn chunk(text: &str) -> Bytes {
    Bytes::from(format!(
        "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\
         \"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":null}}]}}\n\n"
    ))
}

fn last_chunks() -> Vec<Bytes> {
    vec![
        Bytes::from_static(
            b"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\
              \"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        ),
        Bytes::from_static(b"data: [DONE]\n\n"),
    ]
}

/// A stream body that yields its bursts' frames back to back, and is not
/// ready between two bursts (as a connection is between two reads).
struct Bursts {
    bursts: VecDeque<VecDeque<Bytes>>,
}

impl Body for Bursts {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let Some(burst) = self.bursts.front_mut() else {
            return Poll::Ready(None);
        };
        if let Some(frame) = burst.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(frame))));
        }
        self.bursts.pop_front();
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The client frames a Responses client gets from a Chat upstream that
/// sends `bursts`, and the grammar check of their bytes.
async fn client_frames(bursts: Vec<Vec<Bytes>>) -> Vec<Bytes> {
    let (frames, marked) = framed(bursts, None).await;
    assert!(!marked, "an SSE reply is not marked as bare JSON");
    let all: Vec<u8> = frames.iter().flat_map(|f| f.iter().copied()).collect();
    responses_grammar::check_with(&parse_sse(&all), &CheckOptions::strict())
        .unwrap_or_else(|v| panic!("{v}\n{}", String::from_utf8_lossy(&all)));
    frames
}

/// The frames of the reply to a request asking for `framing` (none: the
/// default), and whether the reply says its events are bare JSON.
async fn framed(bursts: Vec<Vec<Bytes>>, framing: Option<Framing>) -> (Vec<Bytes>, bool) {
    let service = ResponsesToChatLayer::new().layer(tower::service_fn(
        move |_: Request<RequestBody<common::ScriptedBody>>| {
            let body = Bursts {
                bursts: bursts.iter().map(|b| b.iter().cloned().collect()).collect(),
            };
            async move {
                let mut response = Response::new(body);
                response
                    .headers_mut()
                    .insert("content-type", "text/event-stream".parse().unwrap());
                Ok::<_, Infallible>(response)
            }
        },
    ));
    let mut request = Request::post("/v1/responses")
        .body(body(r#"{"model":"m","input":"hi","stream":true}"#))
        .unwrap();
    if let Some(framing) = framing {
        request.extensions_mut().insert(framing);
    }
    let response = service.oneshot(request).await.unwrap();
    let marked = response
        .extensions()
        .get::<Framing>()
        .is_some_and(Framing::is_json);
    let mut body = response.into_body();
    let mut frames = Vec::new();
    while let Some(frame) = body.frame().await {
        frames.push(frame.unwrap().into_data().unwrap());
    }
    (frames, marked)
}

/// The text deltas a client frame holds.
fn deltas_in(frame: &Bytes) -> usize {
    parse_sse(frame)
        .iter()
        .filter(|f| f.event.as_deref() == Some("response.output_text.delta"))
        .count()
}

#[tokio::test]
async fn the_events_of_one_read_leave_in_one_frame() {
    let first = vec![chunk("One"), chunk(" two"), chunk(" three")];
    let second = vec![chunk(" four"), chunk(" five")];
    let third = vec![chunk(" six"), chunk(" seven"), chunk(" eight")];
    let frames = client_frames(vec![first, second, third, last_chunks()]).await;
    // The first burst's first chunk leaves at once; what follows of it
    // leaves together, and so does each later burst.
    let deltas: Vec<usize> = frames.iter().map(deltas_in).collect();
    assert_eq!(
        deltas,
        [1, 2, 2, 3, 0],
        "one client frame per upstream burst"
    );
    assert!(String::from_utf8_lossy(&frames[0]).contains("response.created"));
    assert!(String::from_utf8_lossy(&frames[4]).contains("response.completed"));
}

#[tokio::test]
async fn the_first_event_does_not_wait_for_the_rest_of_a_burst() {
    // An upstream that sends its whole stream in one go, as a fast server
    // on a short path does.
    let mut burst: Vec<Bytes> = (0..1_000).map(|n| chunk(&format!(" w{n}"))).collect();
    burst.extend(last_chunks());
    let frames = client_frames(vec![burst]).await;
    let first = String::from_utf8_lossy(&frames[0]);
    assert!(first.contains("response.created"), "{first}");
    assert_eq!(deltas_in(&frames[0]), 1, "{first}");
    assert!(frames[0].len() < 4 * 1024, "{} bytes", frames[0].len());
    // The rest of the burst is batched again.
    assert!(frames.len() <= 6, "{} frames", frames.len());
}

#[tokio::test]
async fn a_long_burst_is_cut_into_bounded_frames() {
    let word = "x".repeat(200);
    let mut burst: Vec<Bytes> = (0..1_000).map(|_| chunk(&word)).collect();
    burst.extend(last_chunks());
    let frames = client_frames(vec![burst]).await;
    let total: usize = frames.iter().map(Bytes::len).sum();
    assert!(total > 4 * MAX_BATCH, "the burst is large: {total} bytes");
    // A frame of deltas ends at most one delta (a few hundred bytes here)
    // past the bound. The frame that ends the text also holds its `*.done`
    // events, which repeat the whole text.
    let deltas: Vec<&Bytes> = frames
        .iter()
        .filter(|f| {
            let text = String::from_utf8_lossy(f);
            text.contains("response.output_text.delta")
                && !text.contains("response.output_text.done")
        })
        .collect();
    assert!(deltas.len() >= 3, "{} frames of deltas", deltas.len());
    for frame in deltas {
        assert!(frame.len() < MAX_BATCH + 1_024, "{} bytes", frame.len());
    }
}

/// Counts the wakes it is given.
struct CountingWaker(std::sync::atomic::AtomicUsize);

impl std::task::Wake for CountingWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[tokio::test]
async fn after_its_first_frame_the_body_is_not_ready_once_so_a_server_sends_it() {
    // A server (hyper's among them) takes a body's frames into its buffer
    // for as long as the body is ready, and writes when it is not. With
    // the rest of a burst ready, the first frame would wait in that buffer
    // for most of the burst to be translated.
    let mut burst: Vec<Bytes> = (0..300).map(|n| chunk(&format!(" w{n}"))).collect();
    burst.extend(last_chunks());
    let service = ResponsesToChatLayer::new().layer(tower::service_fn(
        move |_: Request<RequestBody<common::ScriptedBody>>| {
            let body = Bursts {
                bursts: VecDeque::from([burst.iter().cloned().collect()]),
            };
            async move {
                let mut response = Response::new(body);
                response
                    .headers_mut()
                    .insert("content-type", "text/event-stream".parse().unwrap());
                Ok::<_, Infallible>(response)
            }
        },
    ));
    let request = Request::post("/v1/responses")
        .body(body(r#"{"model":"m","input":"hi","stream":true}"#))
        .unwrap();
    let mut body = std::pin::pin!(service.oneshot(request).await.unwrap().into_body());
    let wakes = std::sync::Arc::new(CountingWaker(Default::default()));
    let waker = std::task::Waker::from(wakes.clone());
    let mut cx = Context::from_waker(&waker);
    let woken = || wakes.0.load(std::sync::atomic::Ordering::Relaxed);

    let Poll::Ready(Some(Ok(first))) = body.as_mut().poll_frame(&mut cx) else {
        panic!("the first frame is ready");
    };
    assert_eq!(deltas_in(first.data_ref().unwrap()), 1);
    assert!(body.as_mut().poll_frame(&mut cx).is_pending());
    assert_eq!(woken(), 1, "the body asks to be polled again at once");
    let mut deltas = 1;
    for _ in 0..100 {
        match body.as_mut().poll_frame(&mut cx) {
            Poll::Ready(Some(frame)) => deltas += deltas_in(frame.unwrap().data_ref().unwrap()),
            Poll::Ready(None) => break,
            // The upstream's own pause at the end of its burst.
            Poll::Pending => {}
        }
    }
    assert_eq!(deltas, 300, "the rest of the burst follows");
}

#[tokio::test]
async fn asked_for_bare_json_each_event_is_a_frame_with_its_lane() {
    let bursts = || {
        vec![
            vec![chunk("One"), chunk(" two")],
            vec![chunk(" three")],
            last_chunks(),
        ]
    };
    let sse = client_frames(bursts()).await;
    let sse: Vec<u8> = sse.iter().flat_map(|f| f.iter().copied()).collect();
    let sse = parse_sse(&sse);

    let (frames, marked) = framed(bursts(), Some(Framing::json_with_stream_id("lane-7"))).await;
    assert!(marked, "the reply says its events are bare JSON");
    assert_eq!(frames.len(), sse.len(), "one frame per event");
    for (frame, event) in frames.iter().zip(&sse) {
        let text = std::str::from_utf8(frame).unwrap();
        assert!(
            text.starts_with(r#"{"stream_id":"lane-7","type":""#),
            "{text}"
        );
        let mut json: serde_json::Value = serde_json::from_str(text).unwrap();
        json.as_object_mut().unwrap().remove("stream_id");
        let mut want: serde_json::Value = serde_json::from_str(&event.data).unwrap();
        // Generated ids differ from run to run; everything else is equal.
        for value in [&mut json, &mut want] {
            let text = value.to_string();
            let text = ids_evened(&text);
            *value = serde_json::from_str(&text).unwrap();
        }
        assert_eq!(json, want);
        assert_eq!(Some(json["type"].as_str().unwrap()), event.event.as_deref());
    }
}

/// `text` with every generated id (`resp_…`, `msg_…`, a `created_at`)
/// made the same.
fn ids_evened(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = ["resp_", "msg_"]
        .iter()
        .filter_map(|prefix| rest.find(prefix).map(|i| (i, prefix.len())))
        .min()
    {
        let (at, len) = at;
        out.push_str(&rest[..at + len]);
        rest = &rest[at + len..];
        let end = rest.find('"').unwrap_or(rest.len());
        out.push_str("ID");
        rest = &rest[end..];
    }
    out.push_str(rest);
    let value: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut value = value;
    if let Some(response) = value.get_mut("response") {
        for key in ["created_at", "completed_at"] {
            if response.get(key).is_some() {
                response[key] = serde_json::Value::from(0);
            }
        }
    }
    value.to_string()
}
