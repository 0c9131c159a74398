//! Responses clients over a Responses service that keeps no state: the
//! bridge keeps it.

use wirebridge_convert::responses_to_chat::{self, History, TranslatedBody, WarmUp};
use wirebridge_convert::responses_to_responses::{self, NativeContext, StreamTranslator};
use wirebridge_convert::ConvertError;

use super::copies::HandedCopies;
use super::{responses_side, sealed, Prepared, ResponsesOverResponses};
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
    ) -> Result<Prepared<NativeContext>, ConvertError> {
        let options = responses_side::options(settings, tenant);
        let t = responses_to_responses::translate_request(parsed, history, &options)?;
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
        context: &NativeContext,
    ) -> Result<TranslatedBody, ConvertError> {
        match streamed {
            true => responses_to_responses::translate_stream_body(body, context),
            false => responses_to_responses::translate_body(body, context),
        }
    }

    fn stream(context: NativeContext) -> StreamTranslator {
        StreamTranslator::new(context)
    }

    fn warm_up(context: &Self::Context) -> Option<WarmUp> {
        Some(WarmUp::new(&context.ids, &context.model, &context.echo))
    }

    fn body_events(body: &[u8]) -> Result<Vec<String>, ConvertError> {
        responses_to_responses::body_events(body)
    }
}
