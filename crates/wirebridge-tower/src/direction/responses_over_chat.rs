//! Responses clients over a Chat Completions service.

use wirebridge_convert::responses_to_chat::{self, History, WarmUp};
use wirebridge_convert::ConvertError;

use super::copies::HandedCopies;
use super::{responses_side, sealed, Prepared, ResponsesOverChat};
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

    fn parse<'a>(
        head: &'a http::request::Parts,
        body: &'a [u8],
    ) -> Result<Self::Parsed<'a>, ConvertError> {
        HandedCopies::parse(head, body)
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
            copies: Default::default(),
            verdict: None,
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
        streamed: bool,
        context: &Self::Context,
    ) -> Result<Self::Reply, ConvertError> {
        match streamed {
            true => responses_to_chat::translate_stream_body(body, context),
            false => responses_to_chat::translate_body(body, context),
        }
    }

    fn stream(context: Self::Context) -> Self::Stream {
        responses_to_chat::StreamTranslator::new(context)
    }

    fn warm_up(context: &Self::Context) -> Option<WarmUp> {
        Some(WarmUp::new(&context.ids, &context.model, &context.echo))
    }

    fn body_events(body: &[u8]) -> Result<Vec<String>, ConvertError> {
        responses_to_chat::body_chunks(body)
    }

    fn tokenize(settings: &ResponsesSettings) -> Option<&str> {
        settings.convert.profile.tokenize.as_deref()
    }
}
