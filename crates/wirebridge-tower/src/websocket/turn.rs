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
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use wirebridge_convert::{Frames, Framing};
use wirebridge_wire::RawObject;

use super::rejection::{BrokenStream, NoReply, TurnFailure, UnreadableReply};
use super::server_event::{error_event, error_reply_event};
use crate::body::ResponseBody;
use crate::request_body::BoxError;

/// Something to send the client.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outgoing {
    /// A text message, and whether it ends the turn and how.
    Text(Utf8Bytes, Ending),
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
    /// The exchange's stream, in bare JSON: each frame one event, as the
    /// client receives it (its `stream_id` in it already).
    Streaming(Pin<Box<ResponseBody<B>>>),
    Done,
}

struct Turn<B> {
    state: State<B>,
    lane: Option<String>,
    /// How many bytes the lane adds before an event's own fields.
    lane_len: usize,
    queue: VecDeque<Outgoing>,
}

/// The framing a turn's exchange is asked for: bare JSON events, each with
/// the client's `stream_id` (`lane`) first.
pub(crate) fn framing(lane: Option<&str>) -> Framing {
    match lane {
        Some(lane) => Framing::json_with_stream_id(lane),
        None => Framing::json(),
    }
}

/// The messages of a turn whose exchange is `exchange` (`None`: the
/// upstream service failed without a reply), asked for its stream in
/// [`framing`]`(lane)`; `lane` is the client's `stream_id`.
pub(crate) fn messages<B>(
    exchange: impl Future<Output = Option<Response<ResponseBody<B>>>> + Send + 'static,
    lane: Option<String>,
) -> TurnMessages
where
    B: Body<Data = Bytes> + Send + 'static,
    B::Error: fmt::Display + Into<BoxError>,
{
    let turn = Turn {
        state: State::Exchange(Box::pin(exchange)),
        lane_len: lane_len(lane.as_deref()),
        lane,
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

/// The messages of a turn the bridge answered itself (a warm-up): its
/// `events`, written in [`framing`]`(lane)`, each a message.
pub(crate) fn answered(events: &Frames, lane: Option<&str>) -> TurnMessages {
    let lane_len = lane_len(lane);
    let messages: Vec<Outgoing> = events
        .events()
        .map(|event| {
            let ending = ending_of(event, lane_len);
            // The bridge wrote them with serde_json: UTF-8.
            let text = String::from_utf8_lossy(event).into_owned();
            Outgoing::Text(text.into(), ending)
        })
        .collect();
    stream::iter(messages).boxed()
}

/// How many bytes the lane (the client's `stream_id`) adds before an
/// event's own fields.
fn lane_len(lane: Option<&str>) -> usize {
    lane.map_or(0, |lane| {
        r#"{"stream_id":"#.len() + serde_json::to_string(lane).map_or(0, |l| l.len())
    })
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
            State::Streaming(body) => match body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(event) = frame.into_data() {
                        self.event(event);
                    }
                }
                Some(Err(e)) => {
                    self.state = State::Done;
                    self.fail(BrokenStream(e.to_string()).into());
                }
                None => self.state = State::Done,
            },
            State::Done => return None,
        }
        Some(())
    }

    /// One event of the exchange's stream; an empty one is a keep-alive.
    fn event(&mut self, event: Bytes) {
        if event.is_empty() {
            return self.queue.push_back(Outgoing::Ping);
        }
        let ending = ending_of(&event, self.lane_len);
        match Utf8Bytes::try_from(event) {
            Ok(text) => self.queue.push_back(Outgoing::Text(text, ending)),
            Err(_) => {
                self.state = State::Done;
                self.fail(BrokenStream("an event is not UTF-8".into()).into());
            }
        }
    }

    /// The exchange's reply: a stream to read, or one body.
    async fn reply(&mut self, response: Response<ResponseBody<B>>) {
        let (head, body) = response.into_parts();
        let event_stream = head
            .headers
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        let apart = head
            .extensions
            .get::<Framing>()
            .is_some_and(Framing::is_json);
        if head.status.is_success() && event_stream && apart {
            self.state = State::Streaming(Box::pin(body));
            return;
        }
        let bytes = match Limited::new(body, MAX_ERROR_REPLY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => return self.fail(UnreadableReply(e.to_string()).into()),
        };
        if head.status.is_success() && !event_stream {
            // A backend that answered a stream request with one body: its
            // response, as the events a stream would have carried.
            return body_events(&bytes, &mut self.queue, self.lane.as_deref());
        }
        let status = match head.status.is_success() {
            // A stream not written for this turn: not one to pass on.
            true => StatusCode::BAD_GATEWAY,
            false => head.status,
        };
        let event = error_reply_event(status, &bytes, self.lane.as_deref());
        self.queue
            .push_back(Outgoing::Text(event.into(), Ending::Failed));
    }

    fn fail(&mut self, failure: TurnFailure) {
        let event = error_event(&failure, self.lane.as_deref());
        self.queue
            .push_back(Outgoing::Text(event.into(), Ending::Failed));
    }
}

/// How an event of the exchange's ends the turn. The bridge writes each
/// event's `type` first, after the lane's `lane_len` bytes, so it is read
/// from there; an event written otherwise is parsed for it.
fn ending_of(event: &[u8], lane_len: usize) -> Ending {
    const TYPE: &[u8] = br#""type":""#;
    let fast = event
        .get(lane_len + 1..)
        .and_then(|rest| rest.strip_prefix(TYPE))
        .and_then(|rest| Some(&rest[..rest.iter().position(|&b| b == b'"')?]));
    let parsed;
    let kind = match fast {
        Some(kind) => kind,
        None => {
            #[derive(Deserialize)]
            struct Kind<'a> {
                #[serde(rename = "type", borrow)]
                kind: Option<&'a str>,
            }
            parsed = serde_json::from_slice::<Kind<'_>>(event)
                .ok()
                .and_then(|k| k.kind);
            parsed.map_or(&b""[..], str::as_bytes)
        }
    };
    match kind {
        b"response.completed" | b"response.incomplete" => Ending::Done,
        b"response.failed" | b"error" => Ending::Failed,
        _ => Ending::No,
    }
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
        queue.push_back(Outgoing::Text(event.into(), Ending::Failed));
        return;
    };
    let items: Vec<&RawValue> = object
        .get("output")
        .and_then(|output| serde_json::from_str(output.get()).ok())
        .unwrap_or_default();
    let mut started = object.clone();
    started.set("status", r#""in_progress""#);
    started.set("output", "[]");
    let mut events = Frames::new(framing(lane));
    let mut sequence = 0;
    let mut write = |events: &mut Frames, kind: &str, fields: &[(&str, &str)]| {
        events.event(None, |out| {
            out.extend_from_slice(br#"{"type":""#);
            out.extend_from_slice(kind.as_bytes());
            out.extend_from_slice(br#"","sequence_number":"#);
            out.extend_from_slice(sequence.to_string().as_bytes());
            for (key, value) in fields {
                out.extend_from_slice(format!(r#","{key}":"#).as_bytes());
                out.extend_from_slice(value.as_bytes());
            }
            out.push(b'}');
        });
        sequence += 1;
    };
    write(
        &mut events,
        "response.created",
        &[("response", started.to_raw().get())],
    );
    for (index, item) in items.iter().enumerate() {
        let index = index.to_string();
        for kind in ["response.output_item.added", "response.output_item.done"] {
            write(
                &mut events,
                kind,
                &[("output_index", &index), ("item", item.get())],
            );
        }
    }
    let (name, ending) = match object.str("status") {
        Some("failed") => ("response.failed", Ending::Failed),
        Some("incomplete") => ("response.incomplete", Ending::Done),
        _ => ("response.completed", Ending::Done),
    };
    write(&mut events, name, &[("response", raw.get())]);
    let count = events.events().count();
    for (at, event) in events.events().enumerate() {
        let ending = if at + 1 == count { ending } else { Ending::No };
        let text = String::from_utf8_lossy(event).into_owned();
        queue.push_back(Outgoing::Text(text.into(), ending));
    }
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
        messages(async move { reply }, Some("l".into()))
            .filter_map(|out| async move {
                match out {
                    Outgoing::Text(text, ending) => Some((text.to_string(), ending)),
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

        // The exchange's stream, an event a frame, broken after the first.
        let mut cut = Response::new(ResponseBody::passthrough(broken(
            r#"{"stream_id":"l","type":"response.created"}"#,
        )));
        cut.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/event-stream"),
        );
        cut.extensions_mut().insert(framing(Some("l")));
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

    #[test]
    fn endings_are_read_from_the_type_written_first() {
        let lane = r#"{"stream_id":"a\"b""#.len();
        for (event, lane_len, ending) in [
            (
                r#"{"type":"response.completed","response":{}}"#,
                0,
                Ending::Done,
            ),
            (
                r#"{"stream_id":"a\"b","type":"response.incomplete"}"#,
                lane,
                Ending::Done,
            ),
            (
                r#"{"stream_id":"a\"b","type":"response.failed"}"#,
                lane,
                Ending::Failed,
            ),
            (r#"{"type":"error","error":{}}"#, 0, Ending::Failed),
            (r#"{"type":"response.output_text.delta"}"#, 0, Ending::No),
            // Written otherwise: parsed.
            (
                r#"{"sequence_number":3,"type":"response.completed"}"#,
                0,
                Ending::Done,
            ),
            (r#"{"sequence_number":3}"#, 0, Ending::No),
        ] {
            assert_eq!(ending_of(event.as_bytes(), lane_len), ending, "{event}");
        }
    }

    #[tokio::test]
    async fn a_stream_not_written_for_the_turn_is_not_passed_on() {
        let mut sse = Response::new(ResponseBody::<Broken>::full(
            "event: response.created\ndata: {}\n\n",
        ));
        sse.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/event-stream"),
        );
        let sent = texts(Some(sse)).await;
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].1, Ending::Failed);
        assert!(sent[0].0.contains(r#""status":502"#), "{}", sent[0].0);
    }

    #[tokio::test]
    async fn a_whole_response_is_sent_as_its_events() {
        let body = r#"{"id":"r","status":"completed","output":[{"type":"message"}]}"#;
        let sent = texts(Some(Response::new(ResponseBody::<Broken>::full(body)))).await;
        let kinds: Vec<(String, Ending)> = sent
            .iter()
            .map(|(text, ending)| {
                let event: serde_json::Value = serde_json::from_str(text).unwrap();
                assert_eq!(event["stream_id"], "l");
                (event["type"].as_str().unwrap().to_owned(), *ending)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("response.created".to_owned(), Ending::No),
                ("response.output_item.added".to_owned(), Ending::No),
                ("response.output_item.done".to_owned(), Ending::No),
                ("response.completed".to_owned(), Ending::Done),
            ]
        );
        let created: serde_json::Value = serde_json::from_str(&sent[0].0).unwrap();
        assert_eq!(created["response"]["status"], "in_progress");
        assert_eq!(created["sequence_number"], 0);
    }
}
