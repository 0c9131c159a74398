//! The two directions, as one interface the service is generic over.

use wirebridge_convert::{
    chat_to_responses, responses_to_chat, ConvertError, LossReport, ReplySummary, StreamTranslate,
};

use crate::observer::Direction;
use crate::options::Options;

/// A translated request, as the service needs it.
#[derive(Debug)]
pub struct TranslatedRequest<C> {
    /// Upstream request body.
    pub body: Vec<u8>,
    /// What translating the reply needs.
    pub context: C,
    /// What was dropped.
    pub losses: LossReport,
    /// Whether the client asked for a stream.
    pub stream: bool,
    /// The model the client asked for.
    pub model: String,
}

/// A translated reply body.
#[derive(Debug)]
pub struct TranslatedReply {
    /// Client response body.
    pub body: Vec<u8>,
    /// What was dropped.
    pub losses: LossReport,
    /// Outcome, usage and tool calls.
    pub summary: ReplySummary,
}

/// One translation direction: which requests it intercepts and how it
/// translates them and their replies.
///
/// Implemented by [`ResponsesOverChat`] and [`ChatOverResponses`]; the trait
/// is public only so the service types can name it.
pub trait Translation: Send + Sync + 'static {
    /// What translating the reply needs.
    type Context: Send + Sync + 'static;
    /// The stream translator.
    type Stream: StreamTranslate + Send + 'static;
    /// For observers and logs.
    const DIRECTION: Direction;
    /// The endpoint the client calls (`/responses`, `/chat/completions`).
    const CLIENT_ENDPOINT: &'static str;
    /// The endpoint the upstream is called on.
    const UPSTREAM_ENDPOINT: &'static str;

    /// Translates a request body for a tenant (see
    /// [`tenant_header`](crate::TranslateLayer::tenant_header)).
    fn translate_request(
        body: &[u8],
        options: &Options,
        tenant: &str,
    ) -> Result<TranslatedRequest<Self::Context>, ConvertError>;
    /// Translates a non-streaming reply body.
    fn translate_reply(
        body: &[u8],
        context: &Self::Context,
    ) -> Result<TranslatedReply, ConvertError>;
    /// Translates a whole event stream into the body a client that did not
    /// ask for a stream expects.
    fn translate_stream_reply(
        body: &[u8],
        context: &Self::Context,
    ) -> Result<TranslatedReply, ConvertError>;
    /// A stream translator for a reply.
    fn stream(context: Self::Context) -> Self::Stream;

    /// Whether the client asked for the response to be stored (Responses
    /// clients: `store`, true by default).
    fn wants_store(_context: &Self::Context) -> bool {
        false
    }

    /// Sets the `previous_response_id` the reply repeats, after the store
    /// replaced it with the history it stands for.
    fn set_previous_response_id(_context: &mut Self::Context, _id: &str) {}
}

/// Responses clients, Chat Completions upstream.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponsesOverChat;

/// Chat Completions clients, Responses upstream.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatOverResponses;

impl Translation for ResponsesOverChat {
    type Context = responses_to_chat::ResponsesContext;
    type Stream = responses_to_chat::StreamTranslator;
    const DIRECTION: Direction = Direction::ResponsesToChat;
    const CLIENT_ENDPOINT: &'static str = "/responses";
    const UPSTREAM_ENDPOINT: &'static str = "/chat/completions";

    fn translate_request(
        body: &[u8],
        options: &Options,
        tenant: &str,
    ) -> Result<TranslatedRequest<Self::Context>, ConvertError> {
        let convert_options = responses_to_chat::Options {
            profile: options.profile.clone(),
            policy: options.policy.clone(),
            reasoning_output: options.reasoning_output,
            seal: options
                .sealer
                .clone()
                .map(|sealer| responses_to_chat::Seal {
                    sealer,
                    scope: tenant.to_owned(),
                }),
        };
        let t = responses_to_chat::translate_request(body, &convert_options)?;
        Ok(TranslatedRequest {
            stream: t.context.stream,
            model: t.context.model.clone(),
            body: t.body,
            context: t.context,
            losses: t.losses,
        })
    }

    fn translate_reply(
        body: &[u8],
        context: &Self::Context,
    ) -> Result<TranslatedReply, ConvertError> {
        let t = responses_to_chat::translate_body(body, context)?;
        Ok(TranslatedReply {
            body: t.body,
            losses: t.losses,
            summary: t.summary,
        })
    }

    fn translate_stream_reply(
        body: &[u8],
        context: &Self::Context,
    ) -> Result<TranslatedReply, ConvertError> {
        let t = responses_to_chat::translate_stream_body(body, context)?;
        Ok(TranslatedReply {
            body: t.body,
            losses: t.losses,
            summary: t.summary,
        })
    }

    fn stream(context: Self::Context) -> Self::Stream {
        responses_to_chat::StreamTranslator::new(context)
    }

    fn wants_store(context: &Self::Context) -> bool {
        context.echo.store
    }

    fn set_previous_response_id(context: &mut Self::Context, id: &str) {
        context.echo.previous_response_id = Some(id.to_owned());
    }
}

impl Translation for ChatOverResponses {
    type Context = chat_to_responses::ChatContext;
    type Stream = chat_to_responses::StreamTranslator;
    const DIRECTION: Direction = Direction::ChatToResponses;
    const CLIENT_ENDPOINT: &'static str = "/chat/completions";
    const UPSTREAM_ENDPOINT: &'static str = "/responses";

    fn translate_request(
        body: &[u8],
        options: &Options,
        _tenant: &str,
    ) -> Result<TranslatedRequest<Self::Context>, ConvertError> {
        let convert_options = chat_to_responses::Options {
            policy: options.policy.clone(),
            reasoning: options.chat_reasoning,
        };
        let t = chat_to_responses::translate_request(body, &convert_options)?;
        Ok(TranslatedRequest {
            stream: t.context.stream,
            model: t.context.model.clone(),
            body: t.body,
            context: t.context,
            losses: t.losses,
        })
    }

    fn translate_reply(
        body: &[u8],
        context: &Self::Context,
    ) -> Result<TranslatedReply, ConvertError> {
        let t = chat_to_responses::translate_body(body, context)?;
        Ok(TranslatedReply {
            body: t.body,
            losses: t.losses,
            summary: t.summary,
        })
    }

    fn translate_stream_reply(
        body: &[u8],
        context: &Self::Context,
    ) -> Result<TranslatedReply, ConvertError> {
        let t = chat_to_responses::translate_stream_body(body, context)?;
        Ok(TranslatedReply {
            body: t.body,
            losses: t.losses,
            summary: t.summary,
        })
    }

    fn stream(context: Self::Context) -> Self::Stream {
        chat_to_responses::StreamTranslator::new(context)
    }
}
