//! One turn's messages: the exchange's reply, an event stream or an error,
//! as the messages the client receives.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use futures_util::stream::{self, Stream, StreamExt};
use http::{header, Response};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use tokio_tungstenite::tungstenite::Utf8Bytes;
use wirebridge_convert::{Frames, Framing};

use super::rejection::{BrokenStream, NoReply, NotTheTurnsStream, TurnFailure, UnreadableReply};
use super::server_event::{error_event, error_reply_event};
use crate::body::ResponseBody;
use crate::request_body::BoxError;

/// Something to send the client, or the turn's end.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outgoing {
    /// A text message.
    Text(Utf8Bytes),
    /// The turn's stream is quiet but alive: a ping keeps idle-cutting
    /// proxies off the connection.
    Ping,
    /// The turn is over, and how it ended: the last item of every turn's
    /// messages, sending nothing itself.
    Ended(Ending),
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// With a response the client can continue from (`completed` or
    /// `incomplete`).
    Done,
    /// In failure: `response.failed`, an error event, or no end at all.
    Failed,
}

impl Ending {
    /// The ending of a response whose status (its writer's summary) is
    /// `outcome`: a stream whose writer wrote no end did not end well.
    fn of(outcome: Option<&str>) -> Self {
        match outcome {
            Some("completed" | "incomplete") => Ending::Done,
            _ => Ending::Failed,
        }
    }
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

/// The messages of a turn the bridge answered itself with a response it
/// completed (a warm-up): its `events`, written in [`framing`]`(lane)`,
/// each a message.
pub(crate) fn answered(events: &Frames) -> TurnMessages {
    let messages: Vec<Outgoing> = events
        .events()
        .map(|event| {
            // The bridge wrote them with serde_json: UTF-8.
            Outgoing::Text(String::from_utf8_lossy(event).into_owned().into())
        })
        .chain([Outgoing::Ended(Ending::Done)])
        .collect();
    stream::iter(messages).boxed()
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
                None => {
                    // The translator that wrote the stream knows how the
                    // response ended; its events are not read for it.
                    let ending = Ending::of(body.outcome().as_deref());
                    self.state = State::Done;
                    self.queue.push_back(Outgoing::Ended(ending));
                }
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
        match Utf8Bytes::try_from(event) {
            Ok(text) => self.queue.push_back(Outgoing::Text(text)),
            Err(_) => {
                self.state = State::Done;
                self.fail(BrokenStream("an event is not UTF-8".into()).into());
            }
        }
    }

    /// The exchange's reply: its stream to read, or an error.
    async fn reply(&mut self, response: Response<ResponseBody<B>>) {
        let (head, body) = response.into_parts();
        let content_type = head.headers.get(header::CONTENT_TYPE);
        let event_stream =
            content_type.is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        let apart = head
            .extensions
            .get::<Framing>()
            .is_some_and(Framing::is_json);
        if head.status.is_success() && event_stream && apart {
            self.state = State::Streaming(Box::pin(body));
            return;
        }
        if head.status.is_success() {
            // The exchange answers a turn with its stream even when the
            // backend answered with a body: anything else was not written
            // for this turn, and is not passed on.
            let content_type = content_type
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .unwrap_or_else(|| "none".into());
            return self.fail(NotTheTurnsStream(content_type).into());
        }
        let bytes = match Limited::new(body, MAX_ERROR_REPLY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => return self.fail(UnreadableReply(e.to_string()).into()),
        };
        let event = error_reply_event(head.status, &bytes, self.lane.as_deref());
        self.queue.push_back(Outgoing::Text(event.into()));
        self.queue.push_back(Outgoing::Ended(Ending::Failed));
    }

    fn fail(&mut self, failure: TurnFailure) {
        let event = error_event(&failure, self.lane.as_deref());
        self.queue.push_back(Outgoing::Text(event.into()));
        self.queue.push_back(Outgoing::Ended(Ending::Failed));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use http::StatusCode;
    use http_body::Frame;
    use http_body_util::StreamBody;
    use wirebridge_convert::responses_to_chat::{ResponsesContext, StreamTranslator};

    use crate::body::StreamState;
    use crate::loss_warnings::LossWarnings;
    use crate::observer::{self, NoopObserver};
    use crate::tracker::Tracker;

    type Chunks =
        StreamBody<stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, std::io::Error>>>>;

    /// A body that sends `data`, then breaks.
    fn broken(data: &'static str) -> Chunks {
        let error = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        StreamBody::new(stream::iter(vec![
            Ok(Frame::data(Bytes::from_static(data.as_bytes()))),
            Err(error),
        ]))
    }

    /// A body that sends `data`, then ends.
    fn whole(data: &'static str) -> Chunks {
        StreamBody::new(stream::iter(vec![Ok(Frame::data(Bytes::from_static(
            data.as_bytes(),
        )))]))
    }

    /// The turn's messages: each text, and the ending as the last item.
    async fn sent<B>(reply: Option<Response<ResponseBody<B>>>) -> Vec<Outgoing>
    where
        B: Body<Data = Bytes> + Send + 'static,
        B::Error: fmt::Display + Into<BoxError>,
    {
        messages(async move { reply }, Some("l".into()))
            .filter(|out| std::future::ready(*out != Outgoing::Ping))
            .collect()
            .await
    }

    fn text(event: &str) -> Outgoing {
        Outgoing::Text(event.to_owned().into())
    }

    fn failure(status: u16, message: &str) -> Outgoing {
        text(&format!(
            r#"{{"type":"error","status":{status},"error":{{"message":"{message}","type":"server_error","param":null,"code":"upstream_error"}},"stream_id":"l"}}"#
        ))
    }

    /// A reply the exchange marks as the turn's stream.
    fn stream_reply<B>(body: ResponseBody<B>) -> Response<ResponseBody<B>> {
        let mut reply = Response::new(body);
        reply.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/event-stream"),
        );
        reply.extensions_mut().insert(framing(Some("l")));
        reply
    }

    /// A Chat upstream's stream, translated for a Responses client as the
    /// exchange translates it for a turn.
    fn translated(chat: &'static str) -> Response<ResponseBody<Chunks>> {
        let observer: Arc<dyn observer::Observer> = Arc::new(NoopObserver);
        let tracker = Tracker::new(
            &observer,
            &Arc::new(LossWarnings::default()),
            observer::Direction::ResponsesToChat,
        );
        let translator = StreamTranslator::new(ResponsesContext::default());
        let state = StreamState::new(translator, 1 << 20, tracker).framing(framing(Some("l")));
        stream_reply(ResponseBody::stream(whole(chat), Box::new(state)))
    }

    #[tokio::test]
    async fn failures_of_the_upstream_are_pinned() {
        let failed = Outgoing::Ended(Ending::Failed);
        assert_eq!(
            sent::<Chunks>(None).await,
            [
                failure(502, "the upstream service failed before it answered"),
                Outgoing::Ended(Ending::Failed),
            ]
        );

        let mut unreadable = Response::new(ResponseBody::passthrough(broken("{")));
        *unreadable.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        assert_eq!(
            sent(Some(unreadable)).await,
            [failure(502, "the reply could not be read: reset"), failed]
        );

        // The exchange's stream, an event a frame, broken after the first.
        let cut = stream_reply(ResponseBody::passthrough(broken(
            r#"{"stream_id":"l","type":"response.created"}"#,
        )));
        assert_eq!(
            sent(Some(cut)).await,
            [
                text(r#"{"stream_id":"l","type":"response.created"}"#),
                failure(502, "the event stream broke: reset"),
                Outgoing::Ended(Ending::Failed),
            ]
        );

        let mut odd = Response::new(ResponseBody::<Chunks>::full("oops"));
        *odd.status_mut() = StatusCode::BAD_GATEWAY;
        assert_eq!(
            sent(Some(odd)).await,
            [failure(502, "oops"), Outgoing::Ended(Ending::Failed)]
        );
    }

    #[tokio::test]
    async fn the_ending_is_the_translators_not_read_from_the_events() {
        let stop = concat!(
            r#"data: {"id":"c","created":1,"model":"m","choices":[{"index":0,"#,
            r#""delta":{"content":"Hi"},"finish_reason":"stop"}]}"#,
            "\n\ndata: [DONE]\n\n",
        );
        let length = concat!(
            r#"data: {"id":"c","created":1,"model":"m","choices":[{"index":0,"#,
            r#""delta":{"content":"Hi"},"finish_reason":"length"}]}"#,
            "\n\ndata: [DONE]\n\n",
        );
        // The upstream stops before its end: the translator fails the
        // response.
        let cut = concat!(
            r#"data: {"id":"c","created":1,"model":"m","choices":[{"index":0,"#,
            r#""delta":{"content":"Hi"},"finish_reason":null}]}"#,
            "\n\n",
        );
        for (chat, last_event, ending) in [
            (stop, "response.completed", Ending::Done),
            (length, "response.incomplete", Ending::Done),
            (cut, "response.failed", Ending::Failed),
        ] {
            let out = sent(Some(translated(chat))).await;
            let (ended, events) = out.split_last().unwrap();
            assert_eq!(*ended, Outgoing::Ended(ending), "{chat}");
            let Some(Outgoing::Text(last)) = events.last() else {
                panic!("no event before the end: {out:?}");
            };
            let last: serde_json::Value = serde_json::from_str(last).unwrap();
            assert_eq!(last["type"], last_event);
            assert_eq!(last["stream_id"], "l");
        }
    }

    #[tokio::test]
    async fn a_stream_whose_writer_wrote_no_end_did_not_end_well() {
        // Events that look complete, from a body no translator wrote.
        let unwritten = stream_reply(ResponseBody::passthrough(whole(
            r#"{"stream_id":"l","type":"response.completed","response":{}}"#,
        )));
        let out = sent(Some(unwritten)).await;
        assert_eq!(out.last(), Some(&Outgoing::Ended(Ending::Failed)));
    }

    #[tokio::test]
    async fn a_reply_not_written_for_the_turn_is_not_passed_on() {
        let mut sse = Response::new(ResponseBody::<Chunks>::full(
            "event: response.created\ndata: {}\n\n",
        ));
        sse.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("text/event-stream"),
        );
        let body = r#"{"id":"r","status":"completed","output":[]}"#;
        let mut json = Response::new(ResponseBody::<Chunks>::full(body));
        json.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        for (reply, content_type) in [(sse, "text/event-stream"), (json, "application/json")] {
            let message = format!(
                "the reply is not an event stream of this turn's (content type {content_type})"
            );
            assert_eq!(
                sent(Some(reply)).await,
                [failure(502, &message), Outgoing::Ended(Ending::Failed)]
            );
        }
    }

    #[tokio::test]
    async fn a_turn_answered_by_the_bridge_ends_done() {
        let mut events = Frames::new(framing(Some("l")));
        events.event(Some("response.created"), |out| {
            out.extend_from_slice(br#"{"type":"response.created"}"#)
        });
        let out: Vec<Outgoing> = answered(&events).collect().await;
        assert_eq!(
            out,
            [
                text(r#"{"stream_id":"l","type":"response.created"}"#),
                Outgoing::Ended(Ending::Done),
            ]
        );
    }
}
