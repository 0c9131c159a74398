//! Anthropic Messages clients (Claude Code, the Anthropic SDKs) over a
//! Responses service: the bridge's own Responses side, or a backend's.

use http::{header, HeaderValue};
use wirebridge_convert::messages_to_responses::{
    self, MessagesContext, StreamTranslator, TranslatedBody,
};
use wirebridge_convert::responses_to_chat::History;
use wirebridge_convert::ConvertError;

use super::{sealed, MessagesOverResponses, Noted, Prepared};
use crate::observer;
use crate::settings::MessagesSettings;

/// Whether a header is one of Anthropic's API (`x-api-key`,
/// `anthropic-version`, `anthropic-beta`, …), which means nothing to a
/// Responses service.
fn is_anthropic(name: &http::HeaderName) -> bool {
    name == "x-api-key" || name.as_str().starts_with("anthropic-")
}

/// The client's `anthropic-beta` values, kept from the head (whose
/// Anthropic headers go no further) for the translation to read.
#[derive(Debug, Clone, Default)]
struct ClientBetas(Vec<String>);

/// A Messages request body, with the betas its head turned on.
#[derive(Debug)]
pub struct MessagesRequest<'a> {
    body: &'a [u8],
    betas: Vec<&'a str>,
}

impl sealed::Direction for MessagesOverResponses {
    type Settings = MessagesSettings;
    type Parsed<'a> = MessagesRequest<'a>;
    type Context = MessagesContext;
    type Reply = TranslatedBody;
    type Stream = StreamTranslator;

    const KIND: observer::Direction = observer::Direction::MessagesToResponses;
    const CLIENT_ENDPOINT: &'static str = "/messages";
    const UPSTREAM_ENDPOINT: &'static str = "/responses";
    const HANDS_ON: bool = true;

    fn parse<'a>(
        head: &'a http::request::Parts,
        body: &'a [u8],
    ) -> Result<Self::Parsed<'a>, ConvertError> {
        // Nothing to resolve before translating: parsed once, there.
        let betas = head
            .extensions
            .get::<ClientBetas>()
            .map(|b| b.0.iter().map(String::as_str).collect())
            .unwrap_or_default();
        Ok(MessagesRequest { body, betas })
    }

    fn client_head(parts: &mut http::request::Parts) {
        // Anthropic's clients send their key as `x-api-key`; a Responses
        // service (and the state kept for a tenant under it) reads
        // `authorization`. A client that sends both keeps its own bearer.
        let key = parts.headers.get("x-api-key").cloned();
        if let Some(key) = key.filter(|_| !parts.headers.contains_key(header::AUTHORIZATION)) {
            let mut bearer = b"Bearer ".to_vec();
            bearer.extend_from_slice(key.as_bytes());
            if let Ok(value) = HeaderValue::from_bytes(&bearer) {
                let mut value = value;
                value.set_sensitive(true);
                parts.headers.insert(header::AUTHORIZATION, value);
            }
        }
        let betas: Vec<String> = parts
            .headers
            .get_all("anthropic-beta")
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        if !betas.is_empty() {
            parts.extensions.insert(ClientBetas(betas));
        }
        let anthropic: Vec<_> = parts
            .headers
            .keys()
            .filter(|n| is_anthropic(n))
            .cloned()
            .collect();
        for name in anthropic {
            parts.headers.remove(name);
        }
        // Claude Code asks `POST /v1/messages?beta=true`: Anthropic's query
        // means nothing to the Responses leg.
        if parts.uri.query().is_some() {
            let mut uri = parts.uri.clone().into_parts();
            uri.path_and_query = uri.path_and_query.and_then(|pq| pq.path().parse().ok());
            if let Ok(uri) = http::Uri::from_parts(uri) {
                parts.uri = uri;
            }
        }
    }

    fn translate<'a>(
        request: MessagesRequest<'a>,
        _history: &History<'a>,
        settings: &MessagesSettings,
        _tenant: &str,
    ) -> Result<Prepared<Self::Context>, ConvertError> {
        let t = messages_to_responses::translate_request_with_betas(
            request.body,
            &request.betas,
            &settings.convert,
        )?;
        Ok(Prepared {
            verdict: None,
            stream: t.context.stream,
            model: t.context.model.clone(),
            body: t.body,
            context: t.context,
            losses: t.losses,
            turn: None,
            background: None,
            copies: Noted {
                copies: t.copies,
                tools: t.tools,
            },
        })
    }

    fn translate_reply(
        body: &[u8],
        streamed: bool,
        context: &Self::Context,
    ) -> Result<Self::Reply, ConvertError> {
        match streamed {
            true => messages_to_responses::translate_stream_body(body, context),
            false => messages_to_responses::translate_body(body, context),
        }
    }

    fn mark_upstream(context: &MessagesContext, extensions: &mut http::Extensions) {
        // The hub keeps the thread: it checks the store keeps it for this
        // credential, and gives a continue what the thread holds.
        if let Some(thread) = &context.thread {
            extensions.insert(thread.clone());
        }
        // The hub holds the seal key: it opens the block's carrier.
        if let Some(at) = &context.compacted_at {
            extensions.insert(messages_to_responses::CompactedAt(at.clone()));
        }
    }

    fn stream(context: Self::Context) -> Self::Stream {
        StreamTranslator::new(context)
    }

    fn body_events(body: &[u8]) -> Result<Vec<String>, ConvertError> {
        wirebridge_convert::responses_to_responses::body_events(body)
    }
}
