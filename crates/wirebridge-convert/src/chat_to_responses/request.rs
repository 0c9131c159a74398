//! Chat request → Responses request: the top-level parameters.

use std::borrow::Cow;

use serde_json::value::RawValue;
use wirebridge_wire::chat::lenient::{CreateChatCompletion, ResponseFormat};
use wirebridge_wire::responses::strict::{
    Reasoning, ResponsesRequest, StreamOptions, TextFormat, TextParam, Tool,
};
use wirebridge_wire::Str;

use super::messages::translate_messages;
use super::tools::translate_tools;
use super::{ChatContext, ChatReasoning, Options};
use crate::error::ConvertError;
use crate::loss::{LossKind, LossReport};
use crate::recorder::LossRecorder;

/// A translated request.
#[derive(Debug)]
pub struct TranslatedRequest {
    /// The Responses request body.
    pub body: Vec<u8>,
    /// What translating the reply needs.
    pub context: ChatContext,
    /// What was dropped.
    pub losses: LossReport,
}

/// The include value that asks for output-text log probabilities.
const INCLUDE_LOGPROBS: &str = "message.output_text.logprobs";

/// The smallest `max_output_tokens` the Responses API accepts.
const MIN_OUTPUT_TOKENS: u64 = 16;

/// Translates a `POST /v1/chat/completions` body into a `POST /v1/responses`
/// body.
///
/// ```
/// use wirebridge_convert::chat_to_responses::{translate_request, Options};
///
/// let chat = br#"{"model":"gpt-5","messages":[{"role":"system","content":"Be brief."},
///   {"role":"user","content":"Hi"}],"max_tokens":100,"stream":true,
///   "stream_options":{"include_usage":true}}"#;
/// let translated = translate_request(chat, &Options::default()).unwrap();
/// let responses: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
/// assert_eq!(responses["input"][0]["role"], "system");
/// assert_eq!(responses["input"][1]["content"], "Hi");
/// assert_eq!(responses["max_output_tokens"], 100);
/// assert!(translated.context.stream && translated.context.include_usage);
/// ```
pub fn translate_request(
    body: &[u8],
    options: &Options,
) -> Result<TranslatedRequest, ConvertError> {
    let request_len = body.len();
    ConvertError::check_depth(body)?;
    let request: CreateChatCompletion<'_> = serde_json::from_slice(body)
        .map_err(|e| ConvertError::from_parse::<CreateChatCompletion<'_>>(body, e))?;
    let mut losses = LossRecorder::new(&options.policy);

    let model = request
        .model
        .clone()
        .ok_or_else(|| ConvertError::MissingField("model".into()))?;
    let messages = request
        .messages
        .as_deref()
        .ok_or_else(|| ConvertError::MissingField("messages".into()))?;
    if messages.is_empty() {
        return Err(ConvertError::invalid(
            "messages",
            "must contain at least one message",
        ));
    }

    unsupported(&request, &mut losses)?;
    let tools = translate_tools(&request, &mut losses)?;
    let input = translate_messages(messages, &mut losses)?;
    let declared_tools = tools
        .tools
        .iter()
        .filter_map(|tool| match tool {
            Tool::Function(f) => Some(f.name.clone().into_owned()),
            Tool::Custom(c) => Some(c.name.clone().into_owned()),
            _ => None,
        })
        .collect();
    let declared_custom = tools
        .tools
        .iter()
        .filter_map(|tool| match tool {
            Tool::Custom(c) => Some(c.name.clone().into_owned()),
            _ => None,
        })
        .collect();

    let logprobs = request.logprobs == Some(true);
    let mut out = ResponsesRequest {
        model: model.clone().into(),
        input,
        tools: (!tools.tools.is_empty()).then_some(tools.tools),
        tool_choice: tools.choice,
        parallel_tool_calls: request.parallel_tool_calls,
        temperature: request.temperature,
        top_p: request.top_p,
        top_logprobs: request.top_logprobs,
        include: logprobs.then(|| vec![Cow::Borrowed(INCLUDE_LOGPROBS)]),
        user: request.user.clone().map(Str::into_cow),
        safety_identifier: request.safety_identifier.clone().map(Str::into_cow),
        prompt_cache_key: request.prompt_cache_key.clone().map(Str::into_cow),
        prompt_cache_retention: non_null(request.prompt_cache_retention),
        prompt_cache_options: non_null(request.prompt_cache_options),
        metadata: non_null(request.metadata),
        // Chat stores nothing unless asked; Responses stores by default.
        store: Some(request.store.unwrap_or(false)),
        service_tier: request.service_tier.clone().map(Str::into_cow),
        moderation: non_null(request.moderation),
        ..ResponsesRequest::default()
    };
    out.max_output_tokens = max_output_tokens(&request, &mut losses)?;
    out.text = text(&request)?;
    out.reasoning = request.reasoning_effort.clone().map(|effort| {
        // Responses returns reasoning text only as summaries, and only when
        // asked: ask when the client wants reasoning and uses a reasoning model.
        let summary = (options.reasoning != ChatReasoning::Omit && effort != "none")
            .then_some(Cow::Borrowed("auto"));
        Reasoning {
            effort: Some(effort.into()),
            summary,
        }
    });

    let stream = request.stream == Some(true);
    let stream_options = request.stream_options.unwrap_or_default();
    if stream {
        out.stream = Some(true);
        if let Some(obfuscation) = stream_options.include_obfuscation {
            out.stream_options = Some(StreamOptions {
                include_obfuscation: Some(obfuscation),
            });
        }
    }

    // serde cannot tell whether it skipped a field, so every request is
    // walked; a walk that finds nothing allocates nothing.
    let paths = wirebridge_wire::chat::lenient::unmodeled_fields(body);
    crate::unmodeled::record(paths, |_| false, &mut losses)?;

    // The translation is about as long as the request: one allocation.
    let mut body = Vec::with_capacity(request_len + request_len / 4);
    out.write_json(&mut body);
    let context = ChatContext {
        model: model.into_owned(),
        stream,
        include_usage: stream_options.include_usage == Some(true),
        logprobs,
        reasoning: options.reasoning,
        declared_tools: Some(declared_tools),
        declared_custom,
    };
    Ok(TranslatedRequest {
        body,
        context,
        losses: losses.finish(),
    })
}

/// `max_completion_tokens` (or the legacy `max_tokens`), raised to the
/// Responses minimum when below it.
fn max_output_tokens(
    request: &CreateChatCompletion<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<u64>, ConvertError> {
    let (field, limit) = match (request.max_completion_tokens, request.max_tokens) {
        (Some(limit), _) => ("max_completion_tokens", limit),
        (None, Some(limit)) => ("max_tokens", limit),
        (None, None) => return Ok(None),
    };
    if limit < MIN_OUTPUT_TOKENS {
        losses.record(
            LossKind::UnsupportedParameter,
            field,
            format!("Responses accepts max_output_tokens of {MIN_OUTPUT_TOKENS} or more; {limit} was raised to {MIN_OUTPUT_TOKENS}"),
        )?;
        return Ok(Some(MIN_OUTPUT_TOKENS));
    }
    Ok(Some(limit))
}

/// `response_format` and `verbosity` as `text`.
fn text<'a>(request: &CreateChatCompletion<'a>) -> Result<Option<TextParam<'a>>, ConvertError> {
    let format = match &request.response_format {
        Some(format) => Some(text_format(format)?),
        None => None,
    };
    let verbosity = request.verbosity.clone().map(Str::into_cow);
    Ok((format.is_some() || verbosity.is_some()).then_some(TextParam { format, verbosity }))
}

/// Chat nests a JSON schema under `json_schema`; Responses has it flat.
fn text_format<'a>(format: &ResponseFormat<'a>) -> Result<TextFormat<'a>, ConvertError> {
    Ok(match format.kind.as_deref() {
        Some("text") => TextFormat::Text,
        Some("json_object") => TextFormat::JsonObject,
        Some("json_schema") => {
            let path = "response_format.json_schema";
            let schema = format
                .json_schema
                .as_ref()
                .ok_or_else(|| ConvertError::MissingField(path.into()))?;
            TextFormat::JsonSchema {
                name: schema
                    .name
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?
                    .into(),
                schema: non_null(schema.schema)
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.schema")))?,
                description: schema.description.map(Into::into),
                strict: schema.strict,
            }
        }
        Some(other) => {
            return Err(ConvertError::invalid(
                "response_format.type",
                format!(
                    "unknown format type '{other}' (expected text, json_object or json_schema)"
                ),
            ))
        }
        None => return Err(ConvertError::MissingField("response_format.type".into())),
    })
}

/// Chat parameters Responses cannot express, through the loss policy. Values
/// that change nothing (`n: 1`, zero penalties, empty `stop`) are no loss.
fn unsupported(
    request: &CreateChatCompletion<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    if let Some(n) = request.n.filter(|n| *n > 1) {
        losses.record(
            LossKind::MultipleChoices,
            "n",
            format!("Responses returns one answer; {n} were asked for"),
        )?;
    }
    let sampling: [(&str, bool, &str); 5] = [
        (
            "stop",
            non_empty(request.stop).is_some(),
            "Responses has no stop sequences",
        ),
        ("seed", request.seed.is_some(), "Responses has no seed"),
        (
            "presence_penalty",
            request.presence_penalty.is_some_and(|p| p != 0.0),
            "Responses has no presence penalty",
        ),
        (
            "frequency_penalty",
            request.frequency_penalty.is_some_and(|p| p != 0.0),
            "Responses has no frequency penalty",
        ),
        (
            "logit_bias",
            non_empty(request.logit_bias).is_some(),
            "Responses has no logit bias",
        ),
    ];
    for (field, present, reason) in sampling {
        if present {
            losses.record(LossKind::SamplingParameter, field, reason)?;
        }
    }
    if non_null(request.audio).is_some() {
        losses.record(
            LossKind::UnsupportedParameter,
            "audio",
            "Responses cannot answer with audio",
        )?;
    }
    if let Some(i) = request
        .modalities
        .iter()
        .flatten()
        .position(|m| m == "audio")
    {
        losses.record(
            LossKind::UnsupportedParameter,
            format!("modalities[{i}]"),
            "Responses answers with text only",
        )?;
    }
    if non_null(request.prediction).is_some() {
        losses.record(
            LossKind::UnsupportedParameter,
            "prediction",
            "Responses has no predicted outputs",
        )?;
    }
    Ok(())
}

fn non_null(raw: Option<&RawValue>) -> Option<&RawValue> {
    raw.filter(|r| r.get() != "null")
}

/// A value other than `null`, `""`, `[]` or `{}`.
fn non_empty(raw: Option<&RawValue>) -> Option<&RawValue> {
    non_null(raw).filter(|r| {
        let text = r.get();
        match text.as_bytes().first() {
            Some(b'"') => text.len() > 2,
            Some(b'[' | b'{') => text[1..]
                .bytes()
                .any(|b| !b.is_ascii_whitespace() && b != b']' && b != b'}'),
            _ => true,
        }
    })
}
