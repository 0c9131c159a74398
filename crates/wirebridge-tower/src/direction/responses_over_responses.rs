//! Responses clients over a Responses service that keeps no state: the
//! bridge keeps it.

use wirebridge_convert::responses_to_chat::{self, Finished, History, TranslatedBody};
use wirebridge_convert::responses_to_responses::{self, NativeContext, StreamTranslator};
use wirebridge_convert::{ConvertError, LossPolicy};

use super::{responses_side, sealed, Continues, Prepared, ReplyParts, ResponsesOverResponses, Way};
use crate::observer;
use crate::settings::ResponsesSettings;

impl sealed::Direction for ResponsesOverResponses {
    type Settings = ResponsesSettings;
    type Parsed<'a> = responses_to_chat::ParsedRequest<'a>;
    type Context = NativeContext;
    type Reply = TranslatedBody;
    type Stream = StreamTranslator;

    const KIND: observer::Direction = observer::Direction::ResponsesToResponses;
    const CLIENT_ENDPOINT: &'static str = "/responses";
    const UPSTREAM_ENDPOINT: &'static str = "/responses";
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
    ) -> Result<Prepared<NativeContext>, ConvertError> {
        let options = responses_side::options(settings, tenant);
        let t = responses_to_responses::translate_request(parsed, history, &options)?;
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

    fn translate_reply(
        body: &[u8],
        context: &NativeContext,
    ) -> Result<TranslatedBody, ConvertError> {
        responses_to_responses::translate_body(body, context)
    }

    fn translate_stream_reply(
        body: &[u8],
        context: &NativeContext,
    ) -> Result<TranslatedBody, ConvertError> {
        responses_to_responses::translate_stream_body(body, context)
    }

    fn stream(context: NativeContext) -> StreamTranslator {
        StreamTranslator::new(context)
    }

    fn into_parts(reply: TranslatedBody) -> ReplyParts {
        ReplyParts {
            body: reply.body,
            losses: reply.losses,
            summary: reply.summary,
        }
    }

    fn finished_reply(reply: &TranslatedBody) -> Option<Finished<'_>> {
        Some(reply.finished())
    }

    fn finished_stream(stream: &StreamTranslator) -> Option<Finished<'_>> {
        stream.finished()
    }

    fn responses(settings: &ResponsesSettings) -> Option<&ResponsesSettings> {
        Some(settings)
    }

    fn responses_mut(settings: &mut ResponsesSettings) -> Option<&mut ResponsesSettings> {
        Some(settings)
    }

    fn not_stored(context: &mut NativeContext) {
        context.echo.store = false;
    }
}
