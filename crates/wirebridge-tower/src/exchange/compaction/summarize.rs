//! The upstream calls a compaction makes besides the reply: the summary
//! (one non-streaming Chat request), and counting the input's tokens.
//!
//! The summary request is written once, as Chat. An upstream that speaks
//! Responses is sent it through the Chat client's translator, and its
//! answer read back through the same; one that speaks Messages, through
//! that and then the Messages backend's: one place says how a summary is
//! asked for and read, whichever API the backend speaks.

use std::fmt;

use bytes::Bytes;
use http::{request, response, Request, Response};
use http_body::Body;
use http_body_util::{BodyExt, Limited};
use tower::{Service, ServiceExt};
use wirebridge_convert::profile::MessagesProfile;
use wirebridge_convert::responses_to_chat::compaction::{
    estimate_tokens, tokenize_count, tokenize_request,
};
use wirebridge_convert::responses_to_messages::{self, ExchangeContext};
use wirebridge_convert::{chat_to_responses, BackendProfile, ConvertError};
use wirebridge_wire::RawObject;

use crate::affinity::Affinity;
use crate::body::ResponseBody;
use crate::direction::responses_over_messages::backend_headers;
use crate::direction::sealed::Direction;
use crate::direction::ResponsesOverChat;
use crate::error_response::reshape_upstream_error;
use crate::headers::{is_event_stream, upstream_request};
use crate::refusal::request::Unwritable;
use crate::refusal::upstream::UnusableReply;
use crate::replies::{
    finish_error, finish_reply, read_limited, unreadable_encoding, unusable_status,
};
use crate::request_body::{BoxError, RequestBody};
use crate::settings::Common;
use crate::tracker::Tracker;

/// Largest upstream error body read.
const MAX_UPSTREAM_ERROR: usize = 1024 * 1024;

/// Largest tokenize answer read.
const MAX_TOKENIZE_ANSWER: usize = 8 * 1024 * 1024;

/// Where the upstream is called, and with which headers: the client's
/// request, and the prefix before its endpoint.
pub(crate) struct Upstream<'r> {
    pub(crate) parts: &'r request::Parts,
    pub(crate) prefix: &'r str,
    pub(crate) common: &'r Common,
    /// The API the upstream speaks.
    pub(crate) speaks: Speaks,
    /// What a Messages upstream takes (its limits, its key header).
    pub(crate) messages: Option<&'r MessagesProfile>,
}

/// The API an upstream speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Speaks {
    /// Chat Completions.
    Chat,
    /// Responses.
    Responses,
    /// Anthropic Messages.
    Messages,
}

/// A Responses request without `store`, which a backend that keeps no
/// state may refuse, as every request to it is sent.
fn stateless(body: Vec<u8>) -> Vec<u8> {
    let Ok(raw) = serde_json::from_slice::<&serde_json::value::RawValue>(&body) else {
        return body;
    };
    let Ok(mut object) = RawObject::parse(raw) else {
        return body;
    };
    object.remove("store");
    serde_json::to_vec(&object).unwrap_or(body)
}

impl Speaks {
    /// What the upstream of direction `D` speaks.
    pub(crate) fn upstream_of<D: Direction>() -> Self {
        match D::UPSTREAM_ENDPOINT {
            "/responses" => Speaks::Responses,
            "/messages" => Speaks::Messages,
            _ => Speaks::Chat,
        }
    }
}

/// How the summary's answer is read back into the Chat body it was asked
/// for in.
enum ReadBack {
    /// As it is.
    Chat,
    /// Through the Chat client's translator.
    Responses(chat_to_responses::ChatContext),
    /// Through the Messages backend's, then the Chat client's.
    Messages(
        chat_to_responses::ChatContext,
        responses_to_messages::BackendContext,
    ),
}

/// The Chat summary request as the Responses request a backend that keeps
/// no state takes, and what reading its answer back needs.
fn summary_as_responses(
    chat: &[u8],
) -> Result<(Vec<u8>, chat_to_responses::ChatContext), ConvertError> {
    // Written by the bridge: nothing in it is another API's.
    let options = chat_to_responses::Options::default();
    let t = chat_to_responses::translate_request(chat, &options)?;
    Ok((stateless(t.body), t.context))
}

/// A summary the upstream wrote: its head and body. `Err` is the reply the
/// client gets instead (an upstream error, in the client's shape).
pub(super) type Written<B> = Result<(response::Parts, Bytes), Response<ResponseBody<B>>>;

impl Upstream<'_> {
    /// The options a summary is written for a Messages upstream with.
    fn messages_options(&self) -> wirebridge_convert::responses_to_chat::Options {
        let profile = BackendProfile {
            messages: self.messages.cloned().unwrap_or_default(),
            ..BackendProfile::default()
        };
        wirebridge_convert::responses_to_chat::Options {
            profile,
            ..Default::default()
        }
    }

    /// Sends the summary request `body` and reads the whole reply. An
    /// upstream error status is the client's, re-shaped, as for any request;
    /// a reply that cannot be read is a 502.
    pub(super) async fn summarize<S, ReqB, ResB>(
        &self,
        inner: &mut S,
        body: Vec<u8>,
        tracker: &mut Tracker,
    ) -> Result<Written<ResB>, S::Error>
    where
        S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
        ResB: Body<Data = Bytes>,
        ResB::Error: fmt::Display + Into<BoxError>,
    {
        let written = match self.speaks {
            Speaks::Chat => Ok((ResponsesOverChat::UPSTREAM_ENDPOINT, body, ReadBack::Chat)),
            Speaks::Responses => summary_as_responses(&body)
                .map(|(body, chat)| ("/responses", body, ReadBack::Responses(chat))),
            Speaks::Messages => summary_as_responses(&body).and_then(|(body, chat)| {
                let options = self.messages_options();
                let t = responses_to_messages::translate_request(&body, &options)?;
                Ok(("/messages", t.body, ReadBack::Messages(chat, t.context)))
            }),
        };
        let (endpoint, body, read_back) = match written {
            Ok(written) => written,
            Err(e) => {
                let error = Unwritable {
                    what: "summary",
                    error: e.to_string(),
                };
                return Ok(Err(finish_error(tracker, error)));
            }
        };
        // The summary is asked after the conversation it sums up: keyed by
        // its prefix, it goes where that conversation is kept in cache.
        let affinity = Affinity::of_body(&body);
        let mut request = upstream_request(self.parts, self.prefix, endpoint, body, false);
        if let Some(affinity) = affinity {
            request.extensions_mut().insert(affinity);
        }
        if let (Speaks::Messages, Some(profile)) = (self.speaks, self.messages) {
            backend_headers(request.headers_mut(), profile);
        }
        let response = inner.ready().await?.call(request).await?;
        tracker.first_byte();
        let (head, body) = response.into_parts();
        if let Some(error) = unusable_status(head.status) {
            return Ok(Err(finish_error(tracker, error)));
        }
        if !head.status.is_success() {
            let bytes = read_limited(body, MAX_UPSTREAM_ERROR).await;
            let reshaped = reshape_upstream_error(head.status, &bytes);
            let body = ResponseBody::full(reshaped);
            return Ok(Err(finish_reply(
                tracker,
                head,
                body,
                "application/json",
                None,
            )));
        }
        if let Some(error) = unreadable_encoding(&head.headers) {
            return Ok(Err(finish_error(tracker, error)));
        }
        if is_event_stream(&head.headers) {
            let error = UnusableReply::Streamed { what: "summary" };
            return Ok(Err(finish_error(tracker, error)));
        }
        let limit = self.common.max_reply_size;
        let bytes = match Limited::new(body, limit).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => {
                let error = UnusableReply::unread("summary", limit, &*e);
                return Ok(Err(finish_error(tracker, error)));
            }
        };
        let read = match read_back {
            ReadBack::Chat => return Ok(Ok((head, bytes))),
            ReadBack::Responses(chat) => chat_to_responses::translate_body(&bytes, &chat),
            ReadBack::Messages(chat, backend) => {
                let context = ExchangeContext {
                    backend,
                    native: Default::default(),
                };
                responses_to_messages::translate_body(&bytes, &context)
                    .and_then(|responses| chat_to_responses::translate_body(&responses.body, &chat))
            }
        };
        match read {
            Ok(chat) => Ok(Ok((head, Bytes::from(chat.body)))),
            Err(e) => {
                let error = UnusableReply::Malformed {
                    what: "summary",
                    error: e.to_string(),
                };
                Ok(Err(finish_error(tracker, error)))
            }
        }
    }

    /// The tokens of the request `chat_body` (Chat, or the Messages
    /// request of a Messages upstream): counted at the backend's
    /// token-counting endpoint (`tokenize`) when it has one and it answers,
    /// else estimated; and whether they were counted.
    pub(crate) async fn count_tokens<S, ReqB, ResB>(
        &self,
        inner: &mut S,
        tokenize: Option<&str>,
        chat_body: &[u8],
    ) -> Result<(u64, bool), S::Error>
    where
        S: Service<Request<RequestBody<ReqB>>, Response = Response<ResB>>,
        ResB: Body<Data = Bytes>,
        ResB::Error: Into<BoxError>,
    {
        let written = match self.speaks {
            Speaks::Messages => responses_to_messages::count_tokens_request(chat_body),
            Speaks::Chat | Speaks::Responses => tokenize_request(chat_body),
        };
        let Some((path, body)) = tokenize.zip(written) else {
            return Ok((estimate_tokens(chat_body), false));
        };
        let mut request = upstream_request(self.parts, self.prefix, path, body, false);
        if let (Speaks::Messages, Some(profile)) = (self.speaks, self.messages) {
            backend_headers(request.headers_mut(), profile);
        }
        let response = inner.ready().await?.call(request).await?;
        let status = response.status();
        let answer = read_limited(response.into_body(), MAX_TOKENIZE_ANSWER).await;
        match tokenize_count(&answer).filter(|_| status.is_success()) {
            Some(count) => Ok((count, true)),
            None => {
                tracing::warn!(
                    %status,
                    path,
                    "the backend's tokenize endpoint gave no token count; estimating it"
                );
                Ok((estimate_tokens(chat_body), false))
            }
        }
    }
}
