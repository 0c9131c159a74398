//! One turn's messages: the exchange's reply, an event stream or an error,
//! as the messages the client receives.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use futures_util::stream::{self, Stream, StreamExt};
use http::{header, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use serde_json::value::RawValue;
use wirebridge_sse::Decoder;
use wirebridge_wire::RawObject;

use super::rejection::{BrokenStream, NoReply, TurnFailure, UnreadableReply};
use super::server_event::{error_event, error_reply_event, with_lane};
use crate::body::ResponseBody;
use crate::request_body::BoxError;

/// Something to send the client.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outgoing {
    /// A text message, and whether it ends the turn and how.
    Text(String, Ending),
    /// The turn's stream is quiet but alive: a ping keeps idle-cutting
    /// proxies off the connection.
    Ping,
}

/// How a message ends its turn, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// It does not.
    No,
    /// A response the client can continue from.
    Done,
    /// A failure: `response.failed`, or an error event.
    Failed,
}

/// A turn's messages, in order.
pub(crate) type TurnMessages = Pin<Box<dyn Stream<Item = Outgoing> + Send>>;

/// A turn's exchange: its reply, or `None` when the upstream service
/// failed without one.
pub(crate) type TurnExchange<B> =
    Pin<Box<dyn Future<Output = Option<Response<ResponseBody<B>>>> + Send>>;

/// Largest error reply read: the exchange writes them, and they are small.
const MAX_ERROR_REPLY: usize = 1024 * 1024;

enum State<B> {
    Exchange(TurnExchange<B>),
    Streaming {
        body: Pin<Box<ResponseBody<B>>>,
        decoder: Decoder,
        comments: u64,
    },
    Done,
}

struct Turn<B> {
    state: State<B>,
    lane: Option<String>,
    max_event_size: usize,
    queue: VecDeque<Outgoing>,
}

/// The messages of a turn whose exchange is `exchange` (`None`: the
/// upstream service failed without a reply); `lane` is the client's
/// `stream_id`.
pub(crate) fn messages<B>(
    exchange: impl Future<Output = Option<Response<ResponseBody<B>>>> + Send + 'static,
    lane: Option<String>,
    max_event_size: usize,
) -> TurnMessages
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: fmt::Display + Into<BoxError>,
{
    let turn = Turn {
        state: State::Exchange(Box::pin(exchange)),
        lane,
        max_event_size,
        queue: VecDeque::new(),
    };
    stream::unfold(turn, |mut turn| async move {
        loop {
            if let Some(next) = turn.queue.pop_front() {
                return Some((next, turn));
            }
            turn.advance().await?;
        }
    })
    .boxed()
}

impl<B> Turn<B>
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: fmt::Display + Into<BoxError>,
{
    /// Moves on until there is something to send; `None` once done.
    async fn advance(&mut self) -> Option<()> {
        match &mut self.state {
            State::Exchange(exchange) => {
                let reply = exchange.await;
                self.state = State::Done;
                match reply {
                    Some(response) => self.reply(response).await,
                    None => self.fail(NoReply.into()),
                }
            }
            State::Streaming {
                body,
                decoder,
                comments,
            } => match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        decoder.feed(&data);
                        drain(decoder, &mut self.queue, self.lane.as_deref());
                        if decoder.comments_seen() > *comments {
                            *comments = decoder.comments_seen();
                            self.queue.push_back(Outgoing::Ping);
                        }
                    }
                }
                Some(Err(e)) => {
                    self.state = State::Done;
                    self.fail(BrokenStream(e.to_string()).into());
                }
                None => {
                    while let Some(Ok(event)) = decoder.finish() {
                        push_event(
                            &mut self.queue,
                            event.event,
                            event.data,
                            self.lane.as_deref(),
                        );
                    }
                    self.state = State::Done;
                }
            },
            State::Done => return None,
        }
        Some(())
    }

    /// The exchange's reply: a stream to read, or one body.
    async fn reply(&mut self, response: Response<ResponseBody<B>>) {
        let (head, body) = response.into_parts();
        let event_stream = head
            .headers
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if head.status.is_success() && event_stream {
            self.state = State::Streaming {
                body: Box::pin(body),
                decoder: Decoder::with_max_event_size(self.max_event_size),
                comments: 0,
            };
            return;
        }
        let bytes = match Limited::new(body, MAX_ERROR_REPLY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => return self.fail(UnreadableReply(e.to_string()).into()),
        };
        if head.status.is_success() {
            // A backend that answered a stream request with one body: its
            // response, as the events a stream would have carried.
            return body_events(&bytes, &mut self.queue, self.lane.as_deref());
        }
        let event = error_reply_event(head.status, &bytes, self.lane.as_deref());
        self.queue.push_back(Outgoing::Text(event, Ending::Failed));
    }

    fn fail(&mut self, failure: TurnFailure) {
        let event = error_event(&failure, self.lane.as_deref());
        self.queue.push_back(Outgoing::Text(event, Ending::Failed));
    }
}

fn drain(decoder: &mut Decoder, queue: &mut VecDeque<Outgoing>, lane: Option<&str>) {
    while let Some(Ok(event)) = decoder.next_event() {
        push_event(queue, event.event, event.data, lane);
    }
}

fn push_event(queue: &mut VecDeque<Outgoing>, name: Option<&str>, data: &str, lane: Option<&str>) {
    let ending = match name {
        Some("response.completed" | "response.incomplete") => Ending::Done,
        Some("response.failed" | "error") => Ending::Failed,
        _ => Ending::No,
    };
    queue.push_back(Outgoing::Text(with_lane(data, lane), ending));
}

/// The events of a response that arrived whole: created, each output item
/// done, and the terminal event its status calls for.
fn body_events(body: &[u8], queue: &mut VecDeque<Outgoing>, lane: Option<&str>) {
    let response = std::str::from_utf8(body)
        .ok()
        .and_then(|text| serde_json::from_str::<&RawValue>(text).ok())
        .and_then(|raw| RawObject::parse(raw).ok().map(|object| (raw, object)));
    let Some((raw, object)) = response else {
        let event = error_reply_event(StatusCode::BAD_GATEWAY, body, lane);
        queue.push_back(Outgoing::Text(event, Ending::Failed));
        return;
    };
    let items: Vec<&RawValue> = object
        .get("output")
        .and_then(|output| serde_json::from_str(output.get()).ok())
        .unwrap_or_default();
    let mut started = object.clone();
    started.set("status", r#""in_progress""#);
    started.set("output", "[]");
    let mut sequence = 0;
    let mut push = |event: String, ending: Ending| {
        queue.push_back(Outgoing::Text(with_lane(&event, lane), ending));
    };
    let mut next = || {
        sequence += 1;
        sequence - 1
    };
    push(
        format!(
            r#"{{"type":"response.created","sequence_number":{},"response":{}}}"#,
            next(),
            started.to_raw().get()
        ),
        Ending::No,
    );
    for (index, item) in items.iter().enumerate() {
        push(
            format!(
                r#"{{"type":"response.output_item.added","sequence_number":{},"output_index":{index},"item":{}}}"#,
                next(),
                item.get()
            ),
            Ending::No,
        );
        push(
            format!(
                r#"{{"type":"response.output_item.done","sequence_number":{},"output_index":{index},"item":{}}}"#,
                next(),
                item.get()
            ),
            Ending::No,
        );
    }
    let (name, ending) = match object.str("status") {
        Some("failed") => ("response.failed", Ending::Failed),
        Some("incomplete") => ("response.incomplete", Ending::Done),
        _ => ("response.completed", Ending::Done),
    };
    push(
        format!(
            r#"{{"type":"{name}","sequence_number":{},"response":{}}}"#,
            next(),
            raw.get()
        ),
        ending,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Frame;
    use http_body_util::StreamBody;

    type Broken =
        StreamBody<stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, std::io::Error>>>>;

    /// A body that sends `data`, then breaks.
    fn broken(data: &'static str) -> Broken {
        let error = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        StreamBody::new(stream::iter(vec![
            Ok(Frame::data(Bytes::from_static(data.as_bytes()))),
            Err(error),
        ]))
    }

    async fn texts<B>(reply: Option<Response<ResponseBody<B>>>) -> Vec<(String, Ending)>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: fmt::Display + Into<BoxError>,
    {
        messages(async move { reply }, Some("l".into()), 1 << 20)
            .filter_map(|out| async move {
                match out {
                    Outgoing::Text(text, ending) => Some((text, ending)),
                    Outgoing::Ping => None,
                }
            })
            .collect()
            .await
    }

    fn failure(status: u16, message: &str) -> (String, Ending) {
        let event = format!(
            r#"{{"type":"error","status":{status},"error":{{"message":"{message}","type":"server_error","param":null,"code":"upstream_error"}},"stream_id":"l"}}"#
        );
        (event, Ending::Failed)
    }

    #[tokio::test]
    async fn failures_of_the_upstream_are_pinned() {
        assert_eq!(
            texts::<Broken>(None).await,
            [failure(
                502,
                "the upstream service failed before it answered"
            )]
        );

        let mut unreadable = Response::new(ResponseBody::passthrough(broken("{")));
        *unreadable.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        assert_eq!(
            texts(Some(unreadable)).await,
            [failure(502, "the reply could not be read: reset")]
        );

        let mut cut = Response::new(ResponseBody::passthrough(broken(
            "event: response.created\ndata: {\"type\":\"response.created\"}\n\n",
        )));
        cut.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/event-stream"),
        );
        assert_eq!(
            texts(Some(cut)).await,
            [
                (
                    r#"{"stream_id":"l","type":"response.created"}"#.to_owned(),
                    Ending::No
                ),
                failure(502, "the event stream broke: reset"),
            ]
        );

        let mut odd = Response::new(ResponseBody::<Broken>::full("oops"));
        *odd.status_mut() = StatusCode::BAD_GATEWAY;
        assert_eq!(texts(Some(odd)).await, [failure(502, "oops")]);
    }
}
