//! Responses clients over a Messages service (Anthropic's API, or a server
//! that speaks it): the bridge keeps the state, as over a Responses
//! backend that keeps none, and writes each whole request as Messages.

use http::{header, HeaderMap, HeaderValue};
use wirebridge_convert::profile::MessagesProfile;
use wirebridge_convert::responses_to_chat::{self, History, TranslatedBody, WarmUp};
use wirebridge_convert::responses_to_messages::{self, ExchangeContext, StreamTranslator};
use wirebridge_convert::{responses_to_responses, ConvertError};

use super::copies::HandedCopies;
use super::{responses_side, sealed, Prepared, ResponsesOverMessages};
use crate::observer;
use crate::settings::ResponsesSettings;

impl sealed::Direction for ResponsesOverMessages {
    type Settings = ResponsesSettings;
    type Parsed<'a> = responses_to_chat::ParsedRequest<'a>;
    type Context = ExchangeContext;
    type Reply = TranslatedBody;
    type Stream = StreamTranslator;

    const KIND: observer::Direction = observer::Direction::ResponsesToMessages;
    const CLIENT_ENDPOINT: &'static str = "/responses";
    const UPSTREAM_ENDPOINT: &'static str = "/messages";
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
    ) -> Result<Prepared<ExchangeContext>, ConvertError> {
        let options = responses_side::options(settings, tenant);
        let whole = responses_to_responses::translate_request(parsed, history, &options)?;
        messages(whole, &options)
    }

    fn translate_reply(
        body: &[u8],
        streamed: bool,
        context: &ExchangeContext,
    ) -> Result<TranslatedBody, ConvertError> {
        match streamed {
            true => responses_to_messages::translate_stream_body(body, context),
            false => responses_to_messages::translate_body(body, context),
        }
    }

    fn stream(context: ExchangeContext) -> StreamTranslator {
        StreamTranslator::new(context)
    }

    fn warm_up(context: &Self::Context) -> Option<WarmUp> {
        let native = &context.native;
        Some(WarmUp::new(&native.ids, &native.model, &native.echo))
    }

    fn body_events(body: &[u8]) -> Result<Vec<String>, ConvertError> {
        responses_to_messages::body_events(body)
    }

    fn tokenize(_settings: &ResponsesSettings) -> Option<&str> {
        Some("/messages/count_tokens")
    }

    fn upstream_head(headers: &mut HeaderMap, settings: &ResponsesSettings) {
        backend_headers(headers, &settings.convert.profile.messages);
    }
}

/// A whole Responses request (the stateless path's), written as Messages.
pub(crate) fn messages(
    whole: responses_to_responses::TranslatedRequest,
    options: &responses_to_chat::Options,
) -> Result<Prepared<ExchangeContext>, ConvertError> {
    let written = responses_to_messages::translate_request(&whole.body, options)?;
    let mut losses = whole.losses;
    losses.extend(written.losses);
    Ok(Prepared {
        copies: Default::default(),
        verdict: None,
        stream: whole.context.stream,
        model: whole.context.model.clone(),
        body: written.body,
        context: ExchangeContext {
            backend: written.context,
            native: whole.context,
        },
        losses,
        turn: whole.turn,
        background: whole.background,
    })
}

/// The headers a Messages backend reads: the key as `x-api-key` where the
/// profile says so (a client's own `x-api-key` wins), an
/// `anthropic-version` unless the client sent one, and the profile's betas
/// in `anthropic-beta` (each once).
pub(crate) fn backend_headers(headers: &mut HeaderMap, profile: &MessagesProfile) {
    if profile.api_key_header && !headers.contains_key("x-api-key") {
        let key = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.as_bytes().strip_prefix(b"Bearer "))
            .and_then(|key| HeaderValue::from_bytes(key).ok());
        if let Some(mut key) = key {
            key.set_sensitive(true);
            headers.remove(header::AUTHORIZATION);
            headers.insert("x-api-key", key);
        }
    }
    if !headers.contains_key("anthropic-version") {
        if let Ok(version) = HeaderValue::from_str(&profile.version) {
            headers.insert("anthropic-version", version);
        }
    }
    for beta in &profile.betas {
        let asked = headers
            .get_all("anthropic-beta")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|asked| asked.trim() == beta);
        if let (false, Ok(value)) = (asked, HeaderValue::from_str(beta)) {
            headers.append("anthropic-beta", value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_moves_where_the_profile_says_and_a_version_is_named() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer sk-ant-1"),
        );
        backend_headers(&mut headers, &MessagesProfile::anthropic());
        assert!(headers.get(header::AUTHORIZATION).is_none());
        assert_eq!(headers["x-api-key"], "sk-ant-1");
        assert!(headers["x-api-key"].is_sensitive());
        assert_eq!(headers["anthropic-version"], "2023-06-01");

        // A local server reads the bearer; a client's version is its own.
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer local"),
        );
        headers.insert("anthropic-version", HeaderValue::from_static("2099-01-01"));
        backend_headers(&mut headers, &MessagesProfile::default());
        assert_eq!(headers[header::AUTHORIZATION], "Bearer local");
        assert!(headers.get("x-api-key").is_none());
        assert_eq!(headers["anthropic-version"], "2099-01-01");

        // The profile's betas, each once, beside the client's.
        let profile = MessagesProfile {
            betas: vec![
                "context-1m-2025-08-07".into(),
                "interleaved-thinking-2025-05-14".into(),
            ],
            ..MessagesProfile::default()
        };
        let mut headers = HeaderMap::new();
        headers.insert(
            "anthropic-beta",
            HeaderValue::from_static("interleaved-thinking-2025-05-14"),
        );
        backend_headers(&mut headers, &profile);
        let betas: Vec<_> = headers.get_all("anthropic-beta").iter().collect();
        assert_eq!(
            betas,
            ["interleaved-thinking-2025-05-14", "context-1m-2025-08-07"]
        );
    }
}
