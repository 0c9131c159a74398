//! The two directions: which requests each intercepts, and how it
//! translates them and their replies.

use std::fmt;

use wirebridge_convert::responses_to_chat::{self, Finished, History, Turn};
use wirebridge_convert::{ConvertError, LossPolicy, LossReport, ReplySummary, StreamTranslate};

use crate::observer;
use crate::settings::ResponsesSettings;

/// A translation direction: [`ResponsesOverChat`], [`ChatOverResponses`],
/// [`ResponsesOverResponses`] or [`MessagesOverResponses`].
///
/// The layer and service types are generic over it; it cannot be
/// implemented outside this crate.
pub trait Translation: sealed::Direction {}

/// Responses clients, a Chat Completions upstream.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponsesOverChat;

/// Chat Completions clients, a Responses upstream.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatOverResponses;

/// Responses clients, a Responses upstream that keeps no state (vLLM,
/// SGLang, llama.cpp, Ollama, DeepSeek): the bridge keeps the responses,
/// continues conversations, and re-sends the upstream's replies in the
/// API's grammar.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponsesOverResponses;

/// Anthropic Messages clients (Claude Code, the Anthropic SDKs), a
/// Responses upstream: usually the bridge's own Responses side, stacked
/// in front of [`ResponsesOverChat`] or [`ResponsesOverResponses`], so that
/// Responses is the hub every dialect meets at.
#[derive(Debug, Clone, Copy, Default)]
pub struct MessagesOverResponses;

impl Translation for ResponsesOverChat {}
impl Translation for ResponsesOverResponses {}
impl Translation for ChatOverResponses {}
impl Translation for MessagesOverResponses {}

/// A translated request, ready to send.
pub struct Prepared<C> {
    /// The upstream request body.
    pub(crate) body: Vec<u8>,
    /// What translating the reply needs.
    pub(crate) context: C,
    /// What was dropped.
    pub(crate) losses: LossReport,
    /// Whether the client asked for a stream.
    pub(crate) stream: bool,
    /// The model the client asked for.
    pub(crate) model: String,
    /// The turn to store once the response is done.
    pub(crate) turn: Option<Turn>,
    /// The `Response` to answer at once when the request runs in the
    /// background.
    pub(crate) background: Option<Vec<u8>>,
}

/// Whose request it is: the namespace of what is kept for it.
pub struct Tenant {
    /// The namespace (empty when nothing is kept per tenant).
    pub(crate) key: String,
    /// Whether the request's responses may be kept and continued (not for
    /// a request without credentials, unless an anonymous store is allowed).
    pub(crate) stores: bool,
}

/// Where a parsed request goes: translated as usual, or handed to the
/// compacting exchanges, which run their own steps (it names compaction,
/// and compaction runs here).
pub enum Way<'s, 'a, P> {
    /// Translated as usual.
    Usual(P),
    /// Compacted, with these settings (boxed: rare, and large).
    Compacting(
        &'s ResponsesSettings,
        Box<responses_to_chat::ParsedRequest<'a>>,
    ),
}

/// A translated reply body, in parts.
pub struct ReplyParts {
    pub(crate) body: Vec<u8>,
    pub(crate) losses: LossReport,
    pub(crate) summary: ReplySummary,
}

mod chat_over_responses;
mod messages_over_responses;
mod responses_over_chat;
mod responses_over_responses;
mod responses_side;

/// What stored state a request continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Continues<'p> {
    /// None: the request is whole.
    Nothing,
    /// The response `previous_response_id` names.
    Response(&'p str),
    /// The conversation `conversation` names.
    Conversation(std::borrow::Cow<'p, str>),
}
pub(crate) mod state;

pub(crate) mod sealed {
    use super::*;

    /// What a direction does. Public in a private module: nameable by no
    /// one outside the crate, so [`Translation`] is sealed.
    pub trait Direction: Send + Sync + 'static {
        /// Settings that exist in this direction only.
        type Settings: Clone + Default + fmt::Debug + Send + Sync + 'static;
        /// A parsed request, borrowing its body.
        type Parsed<'a>: Send;
        /// What translating the reply needs.
        type Context: Send + Sync + 'static;
        /// A translated reply body.
        type Reply: Send;
        /// The stream translator.
        type Stream: StreamTranslate + Send + 'static;

        /// For observers and logs.
        const KIND: observer::Direction;
        /// The endpoint the client calls.
        const CLIENT_ENDPOINT: &'static str;
        /// The endpoint the upstream is called on.
        const UPSTREAM_ENDPOINT: &'static str;
        /// Whether the upstream is usually a layer of this crate (the
        /// Responses hub): the request handed on is marked, so that its
        /// exchange is reported as the inner leg.
        const HANDS_ON: bool = false;
        /// Whether successful replies say
        /// [`REASONING_INCLUDED_HEADER`](crate::REASONING_INCLUDED_HEADER):
        /// Responses replies, whose usage is the backend's.
        const REASONING_INCLUDED: bool = false;

        /// The loss policy in the settings.
        fn policy_mut(settings: &mut Self::Settings) -> &mut LossPolicy;

        /// Adjusts the head of the client's request before anything reads
        /// it: its credentials, the headers and query of its own API that
        /// the upstream's does not have.
        fn client_head(_parts: &mut http::request::Parts) {}

        /// Parses a request body.
        ///
        /// `head` is the client's request head after [`client_head`]
        /// adjusted it: what a translation reads from a header is there.
        ///
        /// [`client_head`]: Direction::client_head
        fn parse<'a>(
            head: &'a http::request::Parts,
            body: &'a [u8],
        ) -> Result<Self::Parsed<'a>, ConvertError>;

        /// Where a parsed request goes: as usual, unless it names
        /// compaction and compaction runs here.
        fn way<'s, 'a>(
            _settings: &'s Self::Settings,
            parsed: Self::Parsed<'a>,
        ) -> Way<'s, 'a, Self::Parsed<'a>> {
            Way::Usual(parsed)
        }

        /// The stored state the request continues: a response, or a
        /// conversation (an error when it names one wrongly).
        fn continues<'p>(_parsed: &'p Self::Parsed<'_>) -> Result<Continues<'p>, ConvertError> {
            Ok(Continues::Nothing)
        }

        /// The ids of stored items the request refers to (`item_reference`).
        fn item_references<'p>(_parsed: &'p Self::Parsed<'_>) -> Vec<&'p str> {
            Vec::new()
        }

        /// Translates a parsed request, the stored history before it.
        fn translate<'a>(
            parsed: Self::Parsed<'a>,
            history: &History<'a>,
            settings: &Self::Settings,
            tenant: &str,
        ) -> Result<Prepared<Self::Context>, ConvertError>;

        /// Translates a non-streaming reply body.
        fn translate_reply(
            body: &[u8],
            context: &Self::Context,
        ) -> Result<Self::Reply, ConvertError>;

        /// Translates a whole event stream into the body a client that did
        /// not ask for a stream expects.
        fn translate_stream_reply(
            body: &[u8],
            context: &Self::Context,
        ) -> Result<Self::Reply, ConvertError>;

        /// A stream translator for a reply.
        fn stream(context: Self::Context) -> Self::Stream;

        /// A reply body's parts.
        fn into_parts(reply: Self::Reply) -> ReplyParts;

        /// A finished reply body, as a store keeps it.
        fn finished_reply(_reply: &Self::Reply) -> Option<Finished<'_>> {
            None
        }

        /// A finished stream, as a store keeps it.
        fn finished_stream(_stream: &Self::Stream) -> Option<Finished<'_>> {
            None
        }

        /// The Responses side's settings (store, tenants, sealer,
        /// compaction, WebSocket mode), where this direction serves
        /// Responses clients and keeps their state; `None` elsewhere. What
        /// the exchange asks of them is in [`state`](super::state).
        fn responses(_settings: &Self::Settings) -> Option<&ResponsesSettings> {
            None
        }

        /// [`responses`](Direction::responses), to change.
        fn responses_mut(_settings: &mut Self::Settings) -> Option<&mut ResponsesSettings> {
            None
        }

        /// The reply is not kept, whatever the request asked: it says so.
        fn not_stored(_context: &mut Self::Context) {}

        /// The path of the backend's token-counting endpoint, after the
        /// prefix, where the profile names one (Chat backends).
        fn tokenize(_settings: &Self::Settings) -> Option<&str> {
            None
        }
    }
}
