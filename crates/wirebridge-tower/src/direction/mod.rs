//! The two directions: which requests each intercepts, and how it
//! translates them and their replies.

use std::fmt;

use wirebridge_convert::cache_diagnostics::{CacheDiagnosis, Verdict};
use wirebridge_convert::responses_to_chat::{self, Finished, History, Turn, WarmUp};
use wirebridge_convert::{ConvertError, LossPolicy, LossReport, ReplySummary, StreamTranslate};

use crate::observer;
use crate::settings::ResponsesSettings;

/// A translation direction: [`ResponsesOverChat`], [`ChatOverResponses`],
/// [`ResponsesOverResponses`], [`ResponsesOverMessages`] or
/// [`MessagesOverResponses`].
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

/// Responses clients, an Anthropic Messages upstream (Anthropic's API,
/// Claude on other clouds, or a server that speaks Messages): the bridge
/// keeps the state, as over [`ResponsesOverResponses`], and each whole
/// request is written as Messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponsesOverMessages;

/// Anthropic Messages clients (Claude Code, the Anthropic SDKs), a
/// Responses upstream: usually the bridge's own Responses side, stacked
/// in front of [`ResponsesOverChat`] or [`ResponsesOverResponses`], so that
/// Responses is the hub every dialect meets at.
#[derive(Debug, Clone, Copy, Default)]
pub struct MessagesOverResponses;

impl Translation for ResponsesOverChat {}
impl Translation for ResponsesOverResponses {}
impl Translation for ResponsesOverMessages {}
impl Translation for ChatOverResponses {}
impl Translation for MessagesOverResponses {}

/// A translated request, ready to send.
#[derive(Debug)]
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
    /// What a prompt cache comparison the request asked for found: handed
    /// to a layer of this crate's stacked above (the Messages layer), as a
    /// value, with the reply.
    pub(crate) verdict: Option<Verdict>,
    /// Where in `body` values copied from the client's request lie, for
    /// the Responses side beneath to step over ([`HandedCopies`]).
    pub(crate) copies: Noted,
}

/// Whose request it is: the namespace of what is kept for it.
pub(crate) struct Tenant {
    /// The namespace (empty when nothing is kept per tenant).
    pub(crate) key: String,
    /// Whether the request's responses may be kept and continued (not for
    /// a request without credentials, unless an anonymous store is allowed).
    pub(crate) stores: bool,
}

/// A translated reply body, in parts.
#[derive(Debug)]
pub struct ReplyParts {
    pub(crate) body: Vec<u8>,
    pub(crate) losses: LossReport,
    pub(crate) summary: ReplySummary,
}

mod chat_over_responses;
mod copies;
pub(crate) use copies::{HandedCopies, Noted};
mod messages_over_responses;
mod responses_over_chat;
pub(crate) mod responses_over_messages;
mod responses_over_responses;
mod responses_side;
mod types;

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

    /// What a direction does: a codec between the client's API and the
    /// upstream's. Public in a private module: nameable by no one outside
    /// the crate, so [`Translation`] is sealed.
    ///
    /// What the types it names do for the exchange (the stored state a
    /// request continues, the response a reply leaves for the store) is
    /// theirs: see [`Settings`], [`ClientRequest`], [`ReplyContext`],
    /// [`TranslatedReply`] and [`KeptStream`].
    pub trait Direction: Send + Sync + 'static {
        /// Settings that exist in this direction only.
        type Settings: Settings;
        /// A parsed request, borrowing its body.
        type Parsed<'a>: ClientRequest<'a>;
        /// What translating the reply needs.
        type Context: ReplyContext;
        /// A translated reply body.
        type Reply: TranslatedReply;
        /// The stream translator.
        type Stream: KeptStream;

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

        /// Translates a parsed request, the stored history before it.
        fn translate<'a>(
            parsed: Self::Parsed<'a>,
            history: &History<'a>,
            settings: &Self::Settings,
            tenant: &str,
        ) -> Result<Prepared<Self::Context>, ConvertError>;

        /// Translates a reply that came whole: a body, or (`streamed`) a
        /// whole event stream, into the body a client that did not ask
        /// for a stream expects.
        fn translate_reply(
            body: &[u8],
            streamed: bool,
            context: &Self::Context,
        ) -> Result<Self::Reply, ConvertError>;

        /// A stream translator for a reply.
        fn stream(context: Self::Context) -> Self::Stream;

        /// The response the bridge answers a WebSocket warm-up
        /// (`generate: false`) with, the backend not called: `None` where
        /// clients have no WebSocket mode (they are not Responses clients).
        fn warm_up(context: &Self::Context) -> Option<WarmUp> {
            let _ = context;
            None
        }

        /// The `data` of each event of the stream that would have carried
        /// a reply that came as a body, in the upstream's dialect: for a
        /// client that asked for a stream, which is never answered with a
        /// body it did not ask for.
        fn body_events(body: &[u8]) -> Result<Vec<String>, ConvertError>;

        /// Adjusts the head of the request sent upstream to what the
        /// upstream's API reads (its key header, its version).
        fn upstream_head(_headers: &mut http::HeaderMap, _settings: &Self::Settings) {}

        /// Marks the request sent upstream with what the layer below (the
        /// Responses hub) must know of it that its body does not say: a
        /// Messages client's thread.
        fn mark_upstream(_context: &Self::Context, _extensions: &mut http::Extensions) {}

        /// The path of the backend's token-counting endpoint, after the
        /// prefix, where the profile names one (Chat backends).
        fn tokenize(_settings: &Self::Settings) -> Option<&str> {
            None
        }
    }

    /// A direction's settings.
    pub trait Settings: Clone + Default + fmt::Debug + Send + Sync + 'static {
        /// The loss policy.
        fn policy_mut(&mut self) -> &mut LossPolicy;

        /// The Responses side's settings (store, tenants, sealer,
        /// compaction, WebSocket mode), where the direction serves
        /// Responses clients and keeps their state; `None` elsewhere. What
        /// the exchange asks of them is in [`state`](super::state).
        fn responses(&self) -> Option<&ResponsesSettings> {
            None
        }

        /// [`responses`](Settings::responses), to change.
        fn responses_mut(&mut self) -> Option<&mut ResponsesSettings> {
            None
        }
    }

    /// A parsed client request.
    pub trait ClientRequest<'a>: Send + Sync + Sized {
        /// The stored state the request continues: a response, or a
        /// conversation (an error when it names one wrongly).
        fn continues(&self) -> Result<Continues<'_>, ConvertError> {
            Ok(Continues::Nothing)
        }

        /// The ids of stored items the request refers to (`item_reference`).
        fn item_references(&self) -> Vec<&str> {
            Vec::new()
        }

        /// The conversation the request names for itself (`conversation`,
        /// else `prompt_cache_key`), as an affinity key; `None` leaves the
        /// key to the translated request's prefix.
        fn named_affinity(&self) -> Option<crate::Affinity> {
            None
        }

        /// What the request asks of prompt cache diagnostics, its
        /// conversation before its own input being `history`'s; `None`
        /// when it takes no part (see `exchange/cache_diagnostics.rs`).
        fn cache_diagnosis(
            &self,
            history: &History<'_>,
        ) -> Result<Option<CacheDiagnosis>, ConvertError> {
            let _ = history;
            Ok(None)
        }

        /// The index in `input` of an item that asks for a compaction now
        /// (`compaction_trigger`), if there is one.
        fn compaction_trigger_at(&self) -> Option<usize> {
            None
        }

        /// The request, when it names compaction and the compacting
        /// exchanges take it over; itself back otherwise.
        fn compacting(self) -> Result<Box<responses_to_chat::ParsedRequest<'a>>, Self> {
            Err(self)
        }
    }

    /// What translating a reply needs.
    pub trait ReplyContext: Send + Sync + 'static {
        /// The reply is not kept, whatever the request asked: it says so.
        fn not_stored(&mut self) {}

        /// The reply goes only to a layer of this crate's above (the
        /// Messages hub), which reads no echo of the request, and is kept
        /// nowhere: its `Response` objects are written without the echo
        /// (the request's tools and instructions, often most of each
        /// lifecycle event), which the layer above would otherwise read
        /// through three or four times a stream.
        fn echo_unread(&mut self) {}

        /// The reply says what a prompt cache comparison found.
        fn diagnosed(&mut self, verdict: &Verdict) {
            let _ = verdict;
        }

        /// What the Responses layer below found for a comparison this
        /// request asked of it (it hands the verdict up with its reply).
        fn diagnosed_below(&mut self, verdict: Verdict) {
            let _ = verdict;
        }

        /// The id the reply will have, when it is known before the reply
        /// (the bridge names it): what a fingerprint is kept under.
        fn reply_id(&self) -> Option<String> {
            None
        }
    }

    /// A translated reply body.
    pub trait TranslatedReply: Send {
        /// Its parts.
        fn into_parts(self) -> ReplyParts;

        /// The finished response, as a store keeps it.
        fn kept(&self) -> Option<Finished<'_>> {
            None
        }
    }

    /// A stream translator.
    pub trait KeptStream: StreamTranslate + Send + 'static {
        /// The finished response, as a store keeps it, once the stream
        /// has ended.
        fn kept(&self) -> Option<Finished<'_>> {
            None
        }
    }
}
