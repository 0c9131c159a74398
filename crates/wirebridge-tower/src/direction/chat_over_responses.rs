//! Chat Completions clients over a Responses service.

use wirebridge_convert::responses_to_chat::History;
use wirebridge_convert::{chat_to_responses, ConvertError};

use super::{sealed, ChatOverResponses, Prepared};
use crate::observer;
use crate::settings::ChatSettings;

impl sealed::Direction for ChatOverResponses {
    type Settings = ChatSettings;
    type Parsed<'a> = &'a [u8];
    type Context = chat_to_responses::ChatContext;
    type Reply = chat_to_responses::TranslatedBody;
    type Stream = chat_to_responses::StreamTranslator;

    const KIND: observer::Direction = observer::Direction::ChatToResponses;
    const CLIENT_ENDPOINT: &'static str = "/chat/completions";
    const UPSTREAM_ENDPOINT: &'static str = "/responses";

    fn parse<'a>(
        _head: &'a http::request::Parts,
        body: &'a [u8],
    ) -> Result<Self::Parsed<'a>, ConvertError> {
        // Nothing to resolve before translating: parsed once, there.
        Ok(body)
    }

    fn translate<'a>(
        body: &'a [u8],
        _history: &History<'a>,
        settings: &ChatSettings,
        _tenant: &str,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        let t = chat_to_responses::translate_request(body, &settings.convert)?;
        Ok(Prepared {
            copies: Default::default(),
            verdict: None,
            stream: t.context.stream,
            model: t.context.model.clone(),
            body: t.body,
            context: t.context,
            losses: t.losses,
            turn: None,
            background: None,
        })
    }

    fn translate_reply(
        body: &[u8],
        streamed: bool,
        context: &Self::Context,
    ) -> Result<Self::Reply, ConvertError> {
        match streamed {
            true => chat_to_responses::translate_stream_body(body, context),
            false => chat_to_responses::translate_body(body, context),
        }
    }

    fn stream(context: Self::Context) -> Self::Stream {
        chat_to_responses::StreamTranslator::new(context)
    }

    fn body_events(body: &[u8]) -> Result<Vec<String>, ConvertError> {
        wirebridge_convert::responses_to_responses::body_events(body)
    }
}
