//! Messages request → Responses request: the top-level parameters.

use std::borrow::Cow;

use serde_json::value::RawValue;

use wirebridge_wire::messages::lenient::{Content, CreateMessage};
use wirebridge_wire::raw::{JsonStr, JsonText};
use wirebridge_wire::responses::strict::{InputItem, ResponsesRequest};
use wirebridge_wire::responses::written::WrittenTools;

use super::content::{is_text, parse_content};
use super::items::{mark_last_breakpoint, translate_messages};
use super::path::Path;
use super::thinking::{plan, text};
use super::tools::translate_tools;
use super::{MessagesContext, Options, ThinkingDisplay, ThreadTurn};
use crate::error::ConvertError;
use crate::loss::{LossKind, LossReport};
use crate::recorder::LossRecorder;
use std::ops::Range;

/// A translated request.
#[derive(Debug)]
pub struct TranslatedRequest {
    /// The Responses request body.
    pub body: Vec<u8>,
    /// What translating the reply needs.
    pub context: MessagesContext,
    /// What was dropped.
    pub losses: LossReport,
    /// Where in `body` values copied as the client sent them lie (the
    /// instructions, each function tool's description and schema), for a reader in this
    /// process to step over rather than read again
    /// ([`ParsedRequest::parse_knowing`](crate::responses_to_chat::ParsedRequest::parse_knowing));
    /// only the strings among them when the client's body was not
    /// compact, as another value then may not be.
    pub copies: Vec<Range<usize>>,
    /// Where in `body` each function tool's fields lie, for the same
    /// reader to take rather than read
    /// ([`ParsedRequest::parse_written`](crate::responses_to_chat::ParsedRequest::parse_written));
    /// `None` unless the client's body was compact and every tool is a
    /// function.
    pub tools: Option<WrittenTools>,
}

/// The smallest `max_output_tokens` the Responses API accepts.
const MIN_OUTPUT_TOKENS: u64 = 16;

/// The longest `safety_identifier` the Responses API accepts.
const MAX_SAFETY_IDENTIFIER: usize = 64;

/// The `include` value that asks for the reasoning's carrier.
const INCLUDE_ENCRYPTED: &str = "reasoning.encrypted_content";

/// Translates a `POST /v1/messages` body into a `POST /v1/responses` body.
///
/// ```
/// use wirebridge_convert::messages_to_responses::{translate_request, Options};
///
/// let messages = br#"{"model":"claude-sonnet-4-5","max_tokens":4096,
///   "system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],
///   "tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}],
///   "tool_choice":{"type":"any","disable_parallel_tool_use":true},
///   "thinking":{"type":"enabled","budget_tokens":2048},
///   "messages":[{"role":"user","content":"Weather in Paris?"}],"stream":true}"#;
/// let translated = translate_request(messages, &Options::default()).unwrap();
/// let responses: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
/// assert_eq!(responses["instructions"], "You are terse.");
/// assert_eq!(responses["tools"][0]["parameters"]["properties"]["city"]["type"], "string");
/// assert_eq!(responses["tool_choice"], "required");
/// assert_eq!(responses["parallel_tool_calls"], false);
/// assert_eq!(responses["reasoning"]["effort"], "low");
/// assert_eq!(responses["include"][0], "reasoning.encrypted_content");
/// assert_eq!(responses["store"], false);
/// assert!(translated.context.stream);
/// assert!(translated.losses.is_empty());
/// ```
pub fn translate_request(
    body: &[u8],
    options: &Options,
) -> Result<TranslatedRequest, ConvertError> {
    translate_request_with_betas(body, &[], options)
}

/// Translates a `POST /v1/messages` body sent with these `anthropic-beta`
/// header values (each a comma-separated list): betas the bridge does not
/// know are losses, named in the report (or refused, as the policy says).
///
/// ```
/// use wirebridge_convert::messages_to_responses::{translate_request_with_betas, Options};
///
/// let request = br#"{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"Hi"}]}"#;
/// let betas = ["interleaved-thinking-2025-05-14,dreaming-2026-04-21"];
/// let translated = translate_request_with_betas(request, &betas, &Options::default()).unwrap();
/// let loss = translated.losses.iter().next().unwrap();
/// assert_eq!(loss.path, "anthropic-beta");
/// assert!(loss.reason.contains("dreaming-2026-04-21"));
/// ```
pub fn translate_request_with_betas(
    body: &[u8],
    betas: &[&str],
    options: &Options,
) -> Result<TranslatedRequest, ConvertError> {
    let request_len = body.len();
    // Whether the body may hold fields the request types do not model:
    // the reader tells, and serde, which skips them unseen, cannot.
    let (mut request, may_hold_unmodeled, compact) = match CreateMessage::read_noting(body) {
        Some(read) => (read.request, read.unmodeled, read.compact),
        None => {
            ConvertError::check_depth(body)?;
            let request = serde_json::from_slice(body)
                .map_err(|e| ConvertError::from_parse::<CreateMessage<'_>>(body, e))?;
            (request, true, false)
        }
    };
    let mut losses = LossRecorder::new(&options.policy);

    let model = request
        .model
        .clone()
        .ok_or_else(|| ConvertError::MissingField("model".into()))?;
    let max_tokens = request
        .max_tokens
        .ok_or_else(|| ConvertError::MissingField("max_tokens".into()))?;
    let mut messages = request
        .messages
        .take()
        .ok_or_else(|| ConvertError::MissingField("messages".into()))?;

    let betas = super::betas::plan(betas, &mut losses)?;
    let thread = super::thread::read(&request)?;
    // A thread's compaction may send nothing new: the thread holds the
    // conversation it summarizes.
    let compacts_thread = || {
        matches!(thread, Some(ThreadTurn::Continue { .. }))
            && request.compaction.is_some_and(|c| c.get() != "null")
    };
    if messages.is_empty() && !compacts_thread() {
        return Err(ConvertError::invalid(
            "messages",
            "must contain at least one message",
        ));
    }
    unsupported(&request, &mut losses)?;
    let tools = translate_tools(&request, &mut losses)?;
    let compacts = super::compaction::asked(&request, &mut losses)?;
    let threshold = super::compaction::threshold(&request, &mut losses)?
        .and_then(|json| RawValue::from_string(json).ok());
    let conversation = translate_messages(&mut messages, compacts, &mut losses)?;
    let mut input = conversation.items;
    if input.is_empty() && !compacts_thread() {
        // Refused here, naming the client's field, rather than by the
        // Responses request below, which would name its own `input`.
        return Err(ConvertError::invalid(
            "messages",
            "nothing in the conversation can be sent to the backend: every block of it has no Responses equivalent",
        ));
    }
    if request.cache_control.is_some_and(|c| c.get() != "null") {
        mark_last_breakpoint(&mut input);
    }
    if compacts {
        // The engine answers a trigger with the compaction item alone.
        input.push(InputItem::CompactionTrigger);
    }
    let thinking = plan(&request)?;
    // After the fields that are read: what lies inside a part already
    // reported is not reported again.
    if may_hold_unmodeled {
        super::unmodeled::record(body, &mut losses)?;
    }
    let (safety_identifier, user) = match request.metadata.as_ref().and_then(|m| m.user_id.clone())
    {
        Some(id) if id.chars().count() <= MAX_SAFETY_IDENTIFIER => (Some(id.into_cow()), None),
        Some(id) => (None, Some(id.into_cow())),
        None => (None, None),
    };
    let stream = request.stream == Some(true);
    let diagnostics = super::diagnostics::asked(request.diagnostics, &mut losses)?;
    let out = ResponsesRequest {
        model: model.clone().into_cow(),
        input,
        instructions: instructions(request.system, request.parsed_system.take())?,
        tools: (!tools.tools.is_empty()).then_some(tools.tools),
        tool_choice: tools.choice,
        parallel_tool_calls: tools.parallel,
        text: text(&request)?,
        max_output_tokens: Some(max_output_tokens(max_tokens, &mut losses)?),
        temperature: request.temperature,
        top_p: request.top_p,
        include: (thinking.display != ThinkingDisplay::Off)
            .then(|| vec![Cow::Borrowed(INCLUDE_ENCRYPTED)]),
        reasoning: thinking.reasoning,
        user,
        safety_identifier,
        // A Messages client sends the whole conversation every time,
        // unless it keeps a thread: only then is there something to
        // refer to later.
        store: Some(thread.is_some()),
        previous_response_id: thread
            .as_ref()
            .and_then(ThreadTurn::previous_response_id)
            .map(|id| Cow::Owned(id.to_owned())),
        service_tier: service_tier(&request)?,
        stream: stream.then_some(true),
        prompt_cache_options: diagnostics.as_ref().map(|(_, options)| &**options),
        context_management: threshold.as_deref(),
        ..ResponsesRequest::default()
    };

    let mut body = Vec::with_capacity(request_len + request_len / 4);
    let mut copies = Vec::new();
    let written_tools = out.write_json_noting(&mut body, &mut copies, !compact);
    let context = MessagesContext {
        model: model.into_owned(),
        stream,
        thinking: thinking.display,
        // A continue's tools are the thread's, which the request does not
        // name: every call is let through.
        declared_tools: match thread {
            Some(ThreadTurn::Continue { .. }) => None,
            _ => Some(tools.declared),
        },
        count_thinking: betas.count_thinking,
        thread,
        diagnostics: diagnostics.map(|(asked, _)| asked),
        compacted_at: conversation.compacted_at,
    };
    Ok(TranslatedRequest {
        body,
        context,
        losses: losses.finish(),
        copies,
        tools: written_tools,
    })
}

/// `system`, a string or text blocks, as `instructions`: blocks joined by
/// a blank line. `parsed` is the content the request reader parsed, if it
/// did.
fn instructions<'a>(
    raw: Option<&'a serde_json::value::RawValue>,
    parsed: Option<Content<'a>>,
) -> Result<Option<JsonText<'a>>, ConvertError> {
    let content = match (parsed, raw) {
        (Some(parsed), _) => Some(parsed),
        (None, Some(raw)) => parse_content(raw, Path::root("system"))?,
        (None, None) => None,
    };
    let texts: Vec<JsonStr<'_>> = match content {
        None => return Ok(None),
        Some(Content::Text(text)) => vec![text],
        Some(Content::Blocks(blocks)) => blocks
            .iter()
            .enumerate()
            .map(|(i, block)| match (block.kind(), block.text) {
                (kind, Some(text)) if is_text(kind) => Ok(text),
                (kind, None) if is_text(kind) => {
                    Err(ConvertError::MissingField(format!("system[{i}].text")))
                }
                ("", _) => Err(ConvertError::MissingField(format!("system[{i}].type"))),
                (other, _) => Err(ConvertError::invalid(
                    format!("system[{i}].type"),
                    format!("the system prompt holds text blocks only, not '{other}'"),
                )),
            })
            .collect::<Result<_, _>>()?,
    };
    let texts: Vec<_> = texts.into_iter().filter(|t| !t.is_empty()).collect();
    Ok((!texts.is_empty()).then(|| JsonText::join(texts, r"\n\n")))
}

/// `max_tokens`, raised to the Responses minimum when below it.
fn max_output_tokens(limit: u64, losses: &mut LossRecorder<'_>) -> Result<u64, ConvertError> {
    if limit < MIN_OUTPUT_TOKENS {
        losses.record(
            LossKind::UnsupportedParameter,
            "max_tokens",
            format!("Responses accepts max_output_tokens of {MIN_OUTPUT_TOKENS} or more; {limit} was raised to {MIN_OUTPUT_TOKENS}"),
        )?;
        return Ok(MIN_OUTPUT_TOKENS);
    }
    Ok(limit)
}

/// `auto` is `auto`; `standard_only` is the `default` tier.
fn service_tier<'a>(request: &CreateMessage<'a>) -> Result<Option<Cow<'a, str>>, ConvertError> {
    Ok(match request.service_tier.as_deref() {
        None => None,
        Some("auto") => Some(Cow::Borrowed("auto")),
        Some("standard_only") => Some(Cow::Borrowed("default")),
        Some(other) => {
            return Err(ConvertError::invalid(
                "service_tier",
                format!("unknown service tier '{other}' (expected auto or standard_only)"),
            ))
        }
    })
}

/// Parameters Responses cannot express, through the loss policy. Values
/// that change nothing (no stop sequences, a context edit that keeps
/// everything) are no loss.
fn unsupported(
    request: &CreateMessage<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    if request.top_k.is_some() {
        losses.record(
            LossKind::SamplingParameter,
            "top_k",
            "Responses has no top-k sampling",
        )?;
    }
    if request
        .stop_sequences
        .as_ref()
        .is_some_and(|s| !s.is_empty())
    {
        losses.record(
            LossKind::SamplingParameter,
            "stop_sequences",
            "Responses has no stop sequences; the reply never stops at one",
        )?;
    }
    let present = |raw: Option<&serde_json::value::RawValue>| {
        raw.is_some_and(|r| !matches!(r.get(), "null" | "[]"))
    };
    if present(request.container) {
        losses.record(
            LossKind::HostedTool,
            "container",
            "code-execution containers are Anthropic's",
        )?;
    }
    if present(request.mcp_servers) {
        losses.record(
            LossKind::HostedTool,
            "mcp_servers",
            "Anthropic's API calls MCP servers itself; this backend does not",
        )?;
    }
    if request.inference_geo.is_some() {
        losses.record(
            LossKind::UnsupportedParameter,
            "inference_geo",
            "the backend chooses where it runs",
        )?;
    }
    let edits = request
        .context_management
        .as_ref()
        .and_then(|c| c.edits.as_deref())
        .unwrap_or_default();
    for (i, edit) in edits.iter().enumerate() {
        let keeps_all = edit.kind.as_deref() == Some("clear_thinking_20251015")
            && edit.keep.is_some_and(|k| k.get() == r#""all""#);
        // The engine compacts: see `compaction::threshold`.
        let compacts = edit.kind.as_deref() == Some("compact_20260112");
        if !keeps_all && !compacts {
            losses.record(
                LossKind::UnsupportedParameter,
                format!("context_management.edits[{i}]"),
                "the bridge does not edit the conversation: the backend is sent every turn as the client sent it",
            )?;
        }
    }
    Ok(())
}
