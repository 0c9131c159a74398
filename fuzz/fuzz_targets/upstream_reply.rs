//! Arbitrary bytes as an upstream's reply, status and headers included,
//! to a client's request through one of the layers: a Responses client
//! over a Chat service, a Chat client over a Responses service, a Messages
//! client over a Responses service, or a Responses client over a
//! Responses service that keeps no state (the bridge's store in front).
//!
//! The input:
//!
//! ```text
//! [options] [status: 2 bytes] header lines ("name: value\n")… "\n" body…
//! ```
//!
//! Options bits 0–1 choose the layer, bit 2 whether the client asks for a
//! stream, bits 3–7 where the body is cut into the frames it arrives in
//! (as the stream targets' split byte). The status is 100 to 599; header
//! lines that are no valid header are left out.
//!
//! Checks, beyond not panicking and not hanging: that whatever the
//! one-pass readers of a completion, of a `Response` and of its shell read
//! of the body, serde reads the same (`read_as_serde`, `body_as_serde`,
//! `shell_as_serde`); and that the
//! client gets a final
//! status (no 1xx), a body that ends without an error, a `content-length`
//! only when it is the body's, and, in its own dialect, either a stream
//! that passes the strict grammar with exactly one terminal event (for the
//! native pass-through, the promises it can keep for any backend: see
//! [`check_native`]), a JSON object of its API's kind, or a JSON error with
//! a message.
#![no_main]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{header, HeaderName, HeaderValue, Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tower::{service_fn, Layer, Service, ServiceExt};
use wirebridge_fuzz::{pieces, unreadable_copy, Json};
use wirebridge_testkit::{chat_grammar, messages_grammar, parse_sse, responses_grammar, SseFrame};
use wirebridge_tower::store::MemoryStore;
use wirebridge_tower::{
    ChatToResponsesLayer, MessagesToResponsesLayer, RequestBody, ResponsesToChatLayer,
    StatefulResponsesLayer,
};
use wirebridge_wire::chat::lenient::read_check::read_as_serde;
use wirebridge_wire::responses::lenient::read_check::shell_as_serde;
use wirebridge_wire::responses::lenient::reply_read_check::body_as_serde;

/// The client's API.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Client {
    Responses,
    Chat,
    Messages,
}

/// The upstream's reply body, in the frames it arrives in.
struct Frames(VecDeque<Bytes>);

impl Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|data| Ok(Frame::data(data))))
    }
}

/// The reply the input describes.
struct Reply {
    status: StatusCode,
    headers: Vec<(HeaderName, HeaderValue)>,
    frames: Vec<Bytes>,
}

impl Reply {
    fn parse(rest: &[u8], split: u8) -> Self {
        let (status, rest) = match rest {
            [hi, lo, rest @ ..] => (u16::from_be_bytes([*hi, *lo]), rest),
            _ => (200, &[][..]),
        };
        let status = StatusCode::from_u16(100 + status % 500).expect("100 to 599");
        let (head, body) = match rest.windows(2).position(|w| w == b"\n\n") {
            Some(end) => (&rest[..end], &rest[end + 2..]),
            None => (rest, &[][..]),
        };
        let headers = head
            .split(|&b| b == b'\n')
            .filter_map(|line| {
                let colon = line.iter().position(|&b| b == b':')?;
                let name = HeaderName::from_bytes(&line[..colon]).ok()?;
                let value = HeaderValue::from_bytes(line[colon + 1..].trim_ascii()).ok()?;
                Some((name, value))
            })
            .collect();
        let frames = pieces(body, split)
            .into_iter()
            .map(Bytes::copy_from_slice)
            .collect();
        Self {
            status,
            headers,
            frames,
        }
    }

    fn response(&self) -> Response<Frames> {
        let mut response = Response::new(Frames(self.frames.iter().cloned().collect()));
        *response.status_mut() = self.status;
        for (name, value) in &self.headers {
            response.headers_mut().append(name, value.clone());
        }
        response
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime")
    })
}

/// What the client got: the head, and the whole body.
async fn exchange<S, B>(service: S, request: Request<Full<Bytes>>) -> (http::response::Parts, Bytes)
where
    S: Service<Request<Full<Bytes>>, Response = Response<B>>,
    S::Error: std::fmt::Debug,
    B: Body,
    B::Error: std::fmt::Debug,
{
    let response = service.oneshot(request).await.expect("the layer answers");
    let (head, body) = response.into_parts();
    let body = body
        .collect()
        .await
        .expect("the body ends without an error");
    (head, body.to_bytes())
}

fn request(client: Client, stream: bool) -> Request<Full<Bytes>> {
    let (path, body) = match client {
        Client::Responses => (
            "/v1/responses",
            format!(r#"{{"model":"m","input":"Hi","stream":{stream}}}"#),
        ),
        Client::Chat => (
            "/v1/chat/completions",
            format!(
                r#"{{"model":"m","messages":[{{"role":"user","content":"Hi"}}],"stream":{stream}}}"#
            ),
        ),
        Client::Messages => (
            "/v1/messages",
            format!(
                r#"{{"model":"m","max_tokens":64,"messages":[{{"role":"user","content":"Hi"}}],"stream":{stream}}}"#
            ),
        ),
    };
    Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::AUTHORIZATION, "Bearer sk-fuzz")
        .body(Full::new(Bytes::from(body)))
        .expect("a valid request")
}

/// Checks a stream in the client's dialect. `native`: a Responses stream
/// re-sent to a Responses client (see [`check_native`]).
fn check_stream(client: Client, native: bool, body: &[u8], upstream: &[u8]) {
    let frames = parse_sse(body);
    if native {
        return check_native(&frames, body);
    }
    let (checked, terminals): (Result<(), _>, &[&str]) = match client {
        Client::Responses => (
            responses_grammar::check(&frames).map(drop),
            &[
                "response.completed",
                "response.incomplete",
                "response.failed",
            ],
        ),
        Client::Messages => (
            messages_grammar::check(&frames).map(drop),
            &["message_stop", "error"],
        ),
        Client::Chat => {
            if let Err(violation) = chat_grammar::check(&frames, false) {
                assert!(
                    unreadable_copy(&violation, &frames, upstream),
                    "{violation}\n{}",
                    String::from_utf8_lossy(body)
                );
            }
            let done = frames.iter().filter(|f| f.data == "[DONE]").count();
            assert_eq!(done, 1, "{}", String::from_utf8_lossy(body));
            return;
        }
    };
    if let Err(violation) = checked {
        assert!(
            unreadable_copy(&violation, &frames, upstream),
            "{violation}\n{}",
            String::from_utf8_lossy(body)
        );
    }
    let ended = frames
        .iter()
        .filter(|f| f.event.as_deref().is_some_and(|e| terminals.contains(&e)))
        .count();
    assert_eq!(ended, 1, "{}", String::from_utf8_lossy(body));
}

/// The promises of a native Responses stream re-sent. The bridge re-sends
/// the backend's events with its own ids, numbers and the fields the API
/// requires that it can know, but passes on the rest as the backend wrote
/// it (an event or item type it does not know, a done text that is not its
/// deltas, an index out of order), so its output is only as well-formed as
/// the backend's; the strict grammar holds it to that in the convert
/// crate's tests, on well-formed backends. What holds for any backend:
/// every frame is JSON with a type, numbered in order from 0, and the
/// stream ends with exactly one terminal event, a failure as an `error`
/// event then `response.failed`.
fn check_native(frames: &[SseFrame], body: &[u8]) {
    let text = || String::from_utf8_lossy(body).into_owned();
    let mut kinds = Vec::new();
    for (n, frame) in frames.iter().enumerate() {
        if Json::of(frame.data.as_bytes()) == Json::Grammar {
            // A value copied as the backend wrote it (see unreadable_copy).
            return;
        }
        let event: Value = serde_json::from_str(&frame.data)
            .unwrap_or_else(|e| panic!("frame {n} is no JSON ({e}): {}", text()));
        let kind = event["type"]
            .as_str()
            .unwrap_or_else(|| panic!("frame {n} has no type"));
        assert_eq!(frame.event.as_deref(), Some(kind), "frame {n}");
        assert_eq!(event["sequence_number"], n, "frame {n}: {}", text());
        kinds.push(kind.to_owned());
    }
    let terminal = |k: &str| {
        [
            "response.completed",
            "response.incomplete",
            "response.failed",
        ]
        .contains(&k)
    };
    assert_eq!(
        kinds.iter().filter(|k| terminal(k)).count(),
        1,
        "{}",
        text()
    );
    let last = kinds.last().map(String::as_str).unwrap_or_default();
    assert!(terminal(last), "{}", text());
    if last == "response.failed" {
        assert_eq!(kinds[kinds.len() - 2], "error", "{}", text());
    }
    assert_eq!(
        kinds.iter().filter(|k| *k == "error").count(),
        usize::from(last == "response.failed")
    );
}

/// Checks a JSON body in the client's dialect: its API's object on
/// success, its API's error otherwise.
fn check_json(client: Client, status: StatusCode, body: &[u8]) {
    let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(body) else {
        assert_ne!(
            Json::of(body),
            Json::Not,
            "{status}: {}",
            String::from_utf8_lossy(body)
        );
        return;
    };
    let text = || String::from_utf8_lossy(body).into_owned();
    if status.is_success() {
        let (field, kind) = match client {
            Client::Responses => ("object", "response"),
            Client::Chat => ("object", "chat.completion"),
            Client::Messages => ("type", "message"),
        };
        assert_eq!(object.get(field), Some(&Value::from(kind)), "{}", text());
    } else {
        if client == Client::Messages {
            assert_eq!(
                object.get("type"),
                Some(&Value::from("error")),
                "{}",
                text()
            );
        }
        let message = object
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str);
        assert!(
            message.is_some_and(|m| !m.is_empty()),
            "{status}: {}",
            text()
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&options, rest)) = data.split_first() else {
        return;
    };
    let reply = std::sync::Arc::new(Reply::parse(rest, options >> 3));
    let stream = options & 4 != 0;
    let upstream_body: Vec<u8> = reply.frames.concat();
    read_as_serde(&upstream_body);
    body_as_serde(&upstream_body);
    shell_as_serde(&upstream_body);
    let backend = {
        let reply = reply.clone();
        service_fn(move |_: Request<RequestBody<Full<Bytes>>>| {
            let response = reply.response();
            async move { Ok::<_, Infallible>(response) }
        })
    };
    let (client, (head, body)) = runtime().block_on(async {
        match options & 3 {
            0 => (
                Client::Responses,
                exchange(
                    ResponsesToChatLayer::new().layer(backend),
                    request(Client::Responses, stream),
                )
                .await,
            ),
            1 => (
                Client::Chat,
                exchange(
                    ChatToResponsesLayer::new().layer(backend),
                    request(Client::Chat, stream),
                )
                .await,
            ),
            2 => (
                Client::Messages,
                exchange(
                    MessagesToResponsesLayer::new().layer(backend),
                    request(Client::Messages, stream),
                )
                .await,
            ),
            _ => (
                Client::Responses,
                exchange(
                    StatefulResponsesLayer::new()
                        .store(MemoryStore::new())
                        .layer(backend),
                    request(Client::Responses, stream),
                )
                .await,
            ),
        }
    });

    assert!(!head.status.is_informational(), "a final {}", head.status);
    if let Some(length) = head.headers.get(header::CONTENT_LENGTH) {
        assert_eq!(
            length.to_str().ok().and_then(|l| l.parse::<usize>().ok()),
            Some(body.len()),
            "content-length {length:?} on a body of {} bytes",
            body.len()
        );
        assert!(!head.headers.contains_key(header::TRANSFER_ENCODING));
    }
    let event_stream = head
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if event_stream {
        assert!(head.status.is_success(), "a {} stream", head.status);
        check_stream(client, options & 3 == 3, &body, &upstream_body);
    } else {
        check_json(client, head.status, &body);
    }
});
