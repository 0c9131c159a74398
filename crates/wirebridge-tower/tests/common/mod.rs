//! Test upstreams: `service_fn`s that replay recorded bytes in random-sized
//! frames, and bodies whose reading and dropping the tests can observe.
#![allow(dead_code)]

pub mod stateful;
#[cfg(feature = "websocket")]
pub mod websocket;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use wirebridge_testkit::split_random;
use wirebridge_tower::RequestBody;

/// A body yielding prepared frames, then optionally an error or nothing
/// forever, and recording when it is dropped.
pub struct ScriptedBody {
    frames: VecDeque<Bytes>,
    end: End,
    dropped: Arc<AtomicBool>,
}

/// How a [`ScriptedBody`] ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Cleanly.
    Eof,
    /// With a body error (a broken connection).
    Error,
    /// Never: it stays pending (a slow upstream).
    Pending,
}

impl ScriptedBody {
    pub fn new(frames: Vec<Bytes>, end: End) -> (Self, Arc<AtomicBool>) {
        let dropped = Arc::new(AtomicBool::new(false));
        (
            Self {
                frames: frames.into(),
                end,
                dropped: dropped.clone(),
            },
            dropped,
        )
    }

    pub fn split(bytes: &[u8], seed: u64) -> Self {
        let frames = split_random(bytes, seed)
            .into_iter()
            .map(Bytes::from)
            .collect();
        Self::new(frames, End::Eof).0
    }
}

impl Drop for ScriptedBody {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

impl Body for ScriptedBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(frame) = self.frames.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(frame))));
        }
        match self.end {
            End::Eof => Poll::Ready(None),
            End::Error => {
                self.end = End::Eof;
                Poll::Ready(Some(Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "connection reset by peer",
                ))))
            }
            End::Pending => Poll::Pending,
        }
    }
}

/// What the upstream saw.
#[derive(Default, Clone)]
pub struct Seen(pub Arc<Mutex<Vec<(String, http::HeaderMap, Bytes)>>>);

impl Seen {
    pub fn last(&self) -> (String, http::HeaderMap, Bytes) {
        self.0
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("the upstream was called")
    }
}

/// An upstream answering every request with `status`, `content_type` and
/// `body` split into random frames, recording the requests it gets.
pub fn upstream(
    status: StatusCode,
    content_type: &'static str,
    body: Vec<u8>,
    seed: u64,
    seen: Seen,
) -> impl tower::Service<
    Request<RequestBody<ScriptedBody>>,
    Response = Response<ScriptedBody>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    tower::service_fn(move |request: Request<RequestBody<ScriptedBody>>| {
        let body = body.clone();
        let seen = seen.clone();
        async move {
            let (parts, request_body) = request.into_parts();
            let bytes = request_body
                .collect()
                .await
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            seen.0
                .lock()
                .unwrap()
                .push((parts.uri.to_string(), parts.headers, bytes));
            let mut response = Response::new(ScriptedBody::split(&body, seed));
            *response.status_mut() = status;
            response
                .headers_mut()
                .insert(http::header::CONTENT_TYPE, content_type.parse().unwrap());
            response
                .headers_mut()
                .insert("x-request-id", "req_123".parse().unwrap());
            response
                .headers_mut()
                .insert("x-ratelimit-remaining-requests", "99".parse().unwrap());
            response
                .headers_mut()
                .insert(http::header::CONTENT_LENGTH, body.len().into());
            Ok::<_, Infallible>(response)
        }
    })
}

/// A client request body.
pub fn body(json: &str) -> ScriptedBody {
    ScriptedBody::new(vec![Bytes::copy_from_slice(json.as_bytes())], End::Eof).0
}

pub async fn read<B>(response: Response<B>) -> (StatusCode, http::HeaderMap, Bytes)
where
    B: Body<Data = Bytes>,
    B::Error: std::fmt::Debug,
{
    let (parts, body) = response.into_parts();
    (
        parts.status,
        parts.headers,
        body.collect().await.unwrap().to_bytes(),
    )
}

/// `request` declaring function tools named `names`, as the recorded
/// request did: a call to a tool the client did not declare is one the
/// backend ran itself, and is left out of the reply.
pub fn declaring<'n>(request: &str, names: impl IntoIterator<Item = &'n str>) -> String {
    let mut request: serde_json::Value = serde_json::from_str(request).unwrap();
    let mut tools: Vec<serde_json::Value> = Vec::new();
    for name in names {
        let tool = serde_json::json!({"type": "function", "function": {"name": name}});
        if !tools.contains(&tool) {
            tools.push(tool);
        }
    }
    if !tools.is_empty() {
        request["tools"] = serde_json::Value::from(tools);
    }
    request.to_string()
}
