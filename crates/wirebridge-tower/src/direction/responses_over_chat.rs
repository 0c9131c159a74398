//! Responses clients over a Chat Completions service.

use wirebridge_convert::responses_to_chat::{self, Finished, History};
use wirebridge_convert::{ConvertError, LossPolicy};

use super::{responses_side, sealed, Continues, Prepared, ReplyParts, ResponsesOverChat, Way};
use crate::observer;
use crate::settings::ResponsesSettings;

impl sealed::Direction for ResponsesOverChat {
    type Settings = ResponsesSettings;
    type Parsed<'a> = responses_to_chat::ParsedRequest<'a>;
    type Context = responses_to_chat::ResponsesContext;
    type Reply = responses_to_chat::TranslatedBody;
    type Stream = responses_to_chat::StreamTranslator;

    const KIND: observer::Direction = observer::Direction::ResponsesToChat;
    const CLIENT_ENDPOINT: &'static str = "/responses";
    const UPSTREAM_ENDPOINT: &'static str = "/chat/completions";
    const REASONING_INCLUDED: bool = true;

    fn policy_mut(settings: &mut ResponsesSettings) -> &mut LossPolicy {
        &mut settings.convert.policy
    }

    fn parse<'a>(
        _head: &'a http::request::Parts,
        body: &'a [u8],
    ) -> Result<Self::Parsed<'a>, ConvertError> {
        responses_to_chat::ParsedRequest::parse(body)
    }

    fn way<'s, 'a>(
        settings: &'s ResponsesSettings,
        parsed: Self::Parsed<'a>,
    ) -> Way<'s, 'a, Self::Parsed<'a>> {
        match parsed.names_compaction() {
            true => Way::Compacting(settings, Box::new(parsed)),
            false => Way::Usual(parsed),
        }
    }

    fn continues<'p>(parsed: &'p Self::Parsed<'_>) -> Result<Continues<'p>, ConvertError> {
        Ok(
            match (parsed.conversation()?, parsed.previous_response_id()) {
                (Some(conversation), _) => Continues::Conversation(conversation),
                (None, Some(previous)) => Continues::Response(previous),
                (None, None) => Continues::Nothing,
            },
        )
    }

    fn item_references<'p>(parsed: &'p Self::Parsed<'_>) -> Vec<&'p str> {
        parsed.item_references()
    }

    fn translate<'a>(
        parsed: Self::Parsed<'a>,
        history: &History<'a>,
        settings: &ResponsesSettings,
        tenant: &str,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        let options = responses_side::options(settings, tenant);
        let t = parsed.translate(history, &options)?;
        Ok(Prepared {
            stream: t.context.stream,
            model: t.context.model.clone(),
            body: t.body,
            context: t.context,
            losses: t.losses,
            turn: t.turn,
            background: t.background,
        })
    }

    fn translate_reply(body: &[u8], context: &Self::Context) -> Result<Self::Reply, ConvertError> {
        responses_to_chat::translate_body(body, context)
    }

    fn translate_stream_reply(
        body: &[u8],
        context: &Self::Context,
    ) -> Result<Self::Reply, ConvertError> {
        responses_to_chat::translate_stream_body(body, context)
    }

    fn stream(context: Self::Context) -> Self::Stream {
        responses_to_chat::StreamTranslator::new(context)
    }

    fn into_parts(reply: Self::Reply) -> ReplyParts {
        ReplyParts {
            body: reply.body,
            losses: reply.losses,
            summary: reply.summary,
        }
    }

    fn finished_reply(reply: &Self::Reply) -> Option<Finished<'_>> {
        Some(reply.finished())
    }

    fn finished_stream(stream: &Self::Stream) -> Option<Finished<'_>> {
        stream.finished()
    }

    fn responses(settings: &ResponsesSettings) -> Option<&ResponsesSettings> {
        Some(settings)
    }

    fn responses_mut(settings: &mut ResponsesSettings) -> Option<&mut ResponsesSettings> {
        Some(settings)
    }

    fn not_stored(context: &mut Self::Context) {
        context.echo.store = false;
    }

    fn tokenize(settings: &ResponsesSettings) -> Option<&str> {
        settings.convert.profile.tokenize.as_deref()
    }
}
