//! Pieces shared by the body and stream translators.

use serde::Deserialize;
use serde_json::value::RawValue;
use wirebridge_wire::chat::lenient::{self as chat, ChoiceMessage};
use wirebridge_wire::raw::{JsonStr, JsonText};
use wirebridge_wire::responses::strict::{
    Annotation, IncompleteDetails, IncompleteReason, InputTokensDetails, OutputTokensDetails,
    ResponseStatus, Usage,
};
use wirebridge_wire::Str;

/// Chat usage in Responses terms.
pub(super) fn usage(chat: &chat::Usage) -> Usage {
    let input = chat.prompt_tokens.unwrap_or_default();
    let output = chat.completion_tokens.unwrap_or_default();
    let prompt = chat.prompt_tokens_details.unwrap_or_default();
    let reasoning = chat
        .completion_tokens_details
        .and_then(|d| d.reasoning_tokens)
        .or(chat.reasoning_tokens)
        .unwrap_or_default();
    Usage {
        input_tokens: input,
        input_tokens_details: InputTokensDetails {
            cached_tokens: prompt.cached_tokens.unwrap_or_default(),
            cache_write_tokens: prompt.cache_write_tokens.unwrap_or_default(),
        },
        output_tokens: output,
        output_tokens_details: OutputTokensDetails {
            reasoning_tokens: reasoning,
        },
        total_tokens: chat.total_tokens.unwrap_or(input.saturating_add(output)),
    }
}

/// Two usages added up: a reply's, and what was spent before it (a
/// compaction pass).
pub(crate) fn add_usage(reply: Usage, prior: Option<Usage>) -> Usage {
    let Some(prior) = prior else {
        return reply;
    };
    let mut sum = reply;
    sum.input_tokens += prior.input_tokens;
    sum.input_tokens_details.cached_tokens += prior.input_tokens_details.cached_tokens;
    sum.input_tokens_details.cache_write_tokens += prior.input_tokens_details.cache_write_tokens;
    sum.output_tokens += prior.output_tokens;
    sum.output_tokens_details.reasoning_tokens += prior.output_tokens_details.reasoning_tokens;
    sum.total_tokens += prior.total_tokens;
    sum
}

/// Responses usage in neutral terms, for summaries.
pub(crate) fn token_usage(u: &Usage) -> crate::summary::TokenUsage {
    crate::summary::TokenUsage {
        input: u.input_tokens,
        output: u.output_tokens,
        cached: u.input_tokens_details.cached_tokens,
        reasoning: u.output_tokens_details.reasoning_tokens,
    }
}

/// The response status a Chat `finish_reason` means. Empty, unknown and
/// missing reasons count as a normal end.
pub(super) fn status_for(
    finish_reason: Option<&str>,
) -> (ResponseStatus, Option<IncompleteDetails>) {
    let reason = match finish_reason {
        Some("length") => IncompleteReason::MaxOutputTokens,
        Some("content_filter") => IncompleteReason::ContentFilter,
        _ => return (ResponseStatus::Completed, None),
    };
    (
        ResponseStatus::Incomplete,
        Some(IncompleteDetails { reason }),
    )
}

/// Reasoning text of a message or delta: `reasoning_content`, or `reasoning`
/// as a string or as an object holding the text.
pub(super) fn reasoning_text<'a>(message: &ChoiceMessage<'a>) -> Option<JsonStr<'a>> {
    if let Some(text) = message.reasoning_content {
        return Some(text);
    }
    let raw = message.reasoning?;
    if let Some(text) = JsonStr::new(raw) {
        return Some(text);
    }
    #[derive(Deserialize)]
    struct Nested<'b> {
        #[serde(borrow, default)]
        text: Option<JsonStr<'b>>,
        #[serde(borrow, default)]
        content: Option<JsonStr<'b>>,
        #[serde(borrow, default)]
        summary: Option<JsonStr<'b>>,
    }
    let nested: Nested<'a> = serde_json::from_str(raw.get()).ok()?;
    nested.text.or(nested.content).or(nested.summary)
}

/// What a piece of message content is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Piece {
    /// Answer text.
    Text,
    /// Reasoning.
    Thinking,
}

/// The pieces of a message's or a delta's `content`, in order: a string is
/// one text piece; a part array (Mistral's reasoning models send one) gives
/// its `text` parts as text and its `thinking` parts as reasoning (a
/// thinking part holds text parts, or a string). Parts of other types (such
/// as Mistral's `reference`) carry no text and are skipped. `None` when the
/// content is neither a string nor a part array.
pub(super) fn content_pieces(raw: &RawValue) -> Option<Vec<(Piece, JsonStr<'_>)>> {
    if let Some(text) = JsonStr::new(raw) {
        return Some(vec![(Piece::Text, text)]);
    }
    #[derive(Deserialize)]
    struct Part<'b> {
        #[serde(rename = "type", borrow, default)]
        kind: Option<Str<'b>>,
        #[serde(borrow, default)]
        text: Option<JsonStr<'b>>,
        #[serde(borrow, default)]
        thinking: Option<&'b RawValue>,
    }
    let parts: Vec<Part<'_>> = serde_json::from_str(raw.get()).ok()?;
    let mut pieces = Vec::with_capacity(parts.len());
    for part in parts {
        match (part.kind.as_deref(), part.thinking) {
            (Some("thinking"), Some(thinking)) => match JsonStr::new(thinking) {
                Some(text) => pieces.push((Piece::Thinking, text)),
                None => {
                    let inner: Vec<Part<'_>> = serde_json::from_str(thinking.get()).ok()?;
                    pieces.extend(
                        inner
                            .into_iter()
                            .filter_map(|p| p.text)
                            .map(|t| (Piece::Thinking, t)),
                    );
                }
            },
            (None | Some("text" | "output_text"), _) => {
                pieces.extend(part.text.map(|t| (Piece::Text, t)));
            }
            _ => {}
        }
    }
    Some(pieces)
}

/// The `input` of a custom tool call, from the arguments of the function it
/// was offered as. Arguments that are not `{"input": string}` are taken as
/// the input itself: the model meant them as such.
pub(super) fn custom_input(arguments: &str) -> JsonText<'static> {
    #[derive(Deserialize)]
    struct Args {
        input: String,
    }
    match serde_json::from_str::<Args>(arguments) {
        Ok(args) => JsonText::from_text(&args.input),
        Err(_) => JsonText::from_text(arguments),
    }
}

/// The `arguments` object of a `tool_search_call`, from the arguments of
/// the function it was offered as; arguments that are not a JSON object
/// are taken as the query.
pub(super) fn tool_search_arguments(arguments: &str) -> Box<RawValue> {
    match serde_json::from_str::<Box<RawValue>>(arguments) {
        // Compact: the item ends up inside an SSE `data:` line.
        Ok(raw) if raw.get().starts_with('{') => wirebridge_wire::compact(&raw).into_owned(),
        _ => {
            #[derive(serde::Serialize)]
            struct Query<'a> {
                query: &'a str,
            }
            serde_json::value::to_raw_value(&Query { query: arguments })
                .expect("queries always serialize")
        }
    }
}

/// The JSON `{}`.
pub(super) fn empty_object() -> &'static RawValue {
    serde_json::from_str("{}").expect("constant")
}

/// Arguments as a JSON string literal: strings as sent, objects encoded.
pub(super) fn arguments_literal(raw: Option<&RawValue>) -> JsonText<'_> {
    match raw {
        None => JsonText::from_text(""),
        Some(raw) => match JsonStr::new(raw) {
            Some(text) => text.into(),
            None if raw.get() == "null" => JsonText::from_text(""),
            None => JsonText::Owned(wirebridge_wire::raw::json_as_string_literal(raw)),
        },
    }
}

/// Chat `url_citation` annotations in Responses shape (a JSON array).
pub(super) fn annotations(raw: Option<&RawValue>) -> Box<RawValue> {
    #[derive(Deserialize)]
    struct ChatAnnotation<'b> {
        #[serde(rename = "type", borrow)]
        kind: Str<'b>,
        #[serde(borrow, default)]
        url_citation: Option<UrlCitation<'b>>,
    }
    #[derive(Deserialize)]
    struct UrlCitation<'b> {
        #[serde(borrow)]
        url: JsonStr<'b>,
        #[serde(borrow, default)]
        title: Option<JsonStr<'b>>,
        #[serde(default)]
        start_index: u64,
        #[serde(default)]
        end_index: u64,
    }
    let parsed: Vec<ChatAnnotation<'_>> = raw
        .and_then(|r| serde_json::from_str(r.get()).ok())
        .unwrap_or_default();
    let out: Vec<Annotation<'_>> = parsed
        .into_iter()
        .filter(|a| a.kind == "url_citation")
        .filter_map(|a| a.url_citation)
        .map(|c| Annotation::UrlCitation {
            url: c.url.into(),
            title: c.title.map_or_else(|| JsonText::from_text(""), Into::into),
            start_index: c.start_index,
            end_index: c.end_index,
        })
        .collect();
    serde_json::value::to_raw_value(&out).expect("annotations always serialize")
}

/// The JSON `[]`.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_reasons_map_to_statuses() {
        assert_eq!(status_for(Some("stop")).0, ResponseStatus::Completed);
        assert_eq!(status_for(Some("")).0, ResponseStatus::Completed);
        assert_eq!(status_for(None).0, ResponseStatus::Completed);
        assert_eq!(status_for(Some("weird")).0, ResponseStatus::Completed);
        let (status, details) = status_for(Some("length"));
        assert_eq!(status, ResponseStatus::Incomplete);
        assert_eq!(details.unwrap().reason, IncompleteReason::MaxOutputTokens);
        assert_eq!(
            status_for(Some("content_filter")).1.unwrap().reason,
            IncompleteReason::ContentFilter
        );
    }

    #[test]
    fn custom_input_unwraps_or_keeps_text() {
        assert_eq!(
            custom_input(r#"{"input":"*** Begin Patch"}"#).raw().get(),
            r#""*** Begin Patch""#
        );
        assert_eq!(custom_input("plain").raw().get(), r#""plain""#);
    }

    #[test]
    fn content_pieces_of_every_shape() {
        let pieces = |json: &str| {
            let raw: Box<RawValue> = serde_json::from_str(json).unwrap();
            content_pieces(&raw).map(|p| {
                p.into_iter()
                    .map(|(kind, text)| (kind, text.decode().into_owned()))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(pieces(r#""hi""#), Some(vec![(Piece::Text, "hi".into())]));
        assert_eq!(
            pieces(
                r#"[{"type":"thinking","thinking":[{"type":"text","text":"hm"},{"type":"text","text":"m"}]},
                {"type":"text","text":"Yes"},{"type":"reference","reference_ids":[1]}]"#
            ),
            Some(vec![
                (Piece::Thinking, "hm".into()),
                (Piece::Thinking, "m".into()),
                (Piece::Text, "Yes".into())
            ])
        );
        assert_eq!(
            pieces(r#"[{"type":"thinking","thinking":"short"}]"#),
            Some(vec![(Piece::Thinking, "short".into())])
        );
        assert_eq!(pieces("7"), None);
    }

    #[test]
    fn reasoning_from_any_field() {
        let m: ChoiceMessage<'_> = serde_json::from_str(r#"{"reasoning":{"text":"hm"}}"#).unwrap();
        assert_eq!(reasoning_text(&m).unwrap().escaped(), "hm");
        let m: ChoiceMessage<'_> =
            serde_json::from_str(r#"{"reasoning_content":"a","reasoning":"b"}"#).unwrap();
        assert_eq!(reasoning_text(&m).unwrap().escaped(), "a");
    }
}
