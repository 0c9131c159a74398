//! Responses body → Chat completion body.

use serde_json::value::RawValue;
use wirebridge_wire::chat::strict::{
    BodyChoice, ChoiceLogprobs, CompletionBody, CustomCall, FunctionCall, ReplyMessage, ToolCall,
};
use wirebridge_wire::raw::{JsonStr, JsonText};
use wirebridge_wire::responses::lenient::ResponseBody;

use super::reply::{arguments_are_object, chat_annotation, finish_reason, usage, Failure};
use super::{server_call_loss, ChatContext, ChatReasoning};
use crate::error::ConvertError;
use crate::ids::{unix_now, ResponseIds};
use crate::loss::{Loss, LossKind, LossReport};

/// A translated reply body.
#[derive(Debug)]
pub struct TranslatedBody {
    /// The `chat.completion` JSON.
    pub body: Vec<u8>,
    /// What was dropped.
    pub losses: LossReport,
    /// Outcome, usage and tool calls.
    pub summary: crate::summary::ReplySummary,
}

/// Translates a `Response` body into a `chat.completion`.
///
/// A response whose status is `failed` is an error: the upstream's message
/// and code come back as [`ConvertError::UpstreamFailed`].
pub fn translate_body(body: &[u8], ctx: &ChatContext) -> Result<TranslatedBody, ConvertError> {
    let response = ResponseBody::parse(body).map_err(|e| {
        ConvertError::InvalidUpstream(format!("the Responses body is not valid: {e}"))
    })?;
    if response.status.as_deref() == Some("failed") || Failure::from_raw(response.error).is_some() {
        let failure = Failure::from_raw(response.error).unwrap_or_else(|| {
            Failure::server("the upstream response failed without an error message")
        });
        return Err(ConvertError::UpstreamFailed {
            message: failure.message,
            error_type: Some(failure.error_type),
            code: failure.code,
        });
    }
    let output = response
        .output
        .as_deref()
        .ok_or_else(|| ConvertError::InvalidUpstream("the Responses body has no output".into()))?;

    let mut losses = LossReport::default();
    let mut texts: Vec<JsonStr<'_>> = Vec::new();
    let mut refusals: Vec<JsonStr<'_>> = Vec::new();
    let mut reasoning: Vec<JsonStr<'_>> = Vec::new();
    let mut annotations = Vec::new();
    let mut logprobs = Vec::new();
    let mut tool_calls = Vec::new();
    let mut unfinished = false;
    for (i, item) in output.iter().enumerate() {
        let name = item.name.as_deref().unwrap_or_default();
        match item.kind() {
            kind @ ("function_call" | "custom_tool_call") if ctx.ran_by_backend(name) => {
                losses.push(server_call_loss(format!("output[{i}]"), kind, name));
            }
            "message" => {
                for part in item.parts() {
                    match part.kind() {
                        "output_text" => {
                            texts.extend(part.text);
                            let parsed: Vec<&RawValue> = part
                                .annotations
                                .and_then(|a| serde_json::from_str(a.get()).ok())
                                .unwrap_or_default();
                            annotations.extend(parsed.into_iter().filter_map(chat_annotation));
                            logprobs.extend(part.logprobs.filter(|l| l.get().starts_with('[')));
                        }
                        "refusal" => refusals.extend(part.refusal),
                        _ => {}
                    }
                }
            }
            "reasoning" => {
                let content: Vec<_> = item.parts().into_iter().filter_map(|p| p.text).collect();
                if content.is_empty() {
                    reasoning.extend(item.summary_parts().into_iter().filter_map(|p| p.text));
                } else {
                    reasoning.extend(content);
                }
            }
            // A call the backend left unfinished is no call to run: left
            // out, and the answer finishes for `length`.
            "function_call" | "custom_tool_call"
                if item.status.as_deref() == Some("incomplete") =>
            {
                unfinished = true;
                losses.push(unfinished_call_loss(i as u32, name));
            }
            kind @ ("function_call" | "custom_tool_call") => {
                let id = item.call_id.as_deref().unwrap_or_default().into();
                let text = match kind {
                    "custom_tool_call" => item
                        .input
                        .map(JsonText::from)
                        .unwrap_or_else(|| JsonText::from_text("")),
                    _ => arguments(item.arguments),
                };
                let custom = ctx.custom_call(name, kind);
                if !custom && !arguments_are_object(&text) {
                    // Cut short in a response cut short: unfinished.
                    if response.status.as_deref() == Some("incomplete") {
                        unfinished = true;
                        losses.push(unfinished_call_loss(i as u32, name));
                        continue;
                    }
                    // A finished call the client could not run.
                    return Err(ConvertError::InvalidUpstream(format!(
                        "output[{i}] ('{name}') has arguments that are not a JSON object"
                    )));
                }
                // The form the client declared the tool in.
                tool_calls.push(match custom {
                    true => ToolCall::Custom {
                        id,
                        custom: CustomCall {
                            name: name.into(),
                            input: text,
                        },
                    },
                    false => ToolCall::Function {
                        id,
                        function: FunctionCall {
                            name: name.into(),
                            arguments: text,
                        },
                    },
                });
            }
            other => losses.push(Loss {
                kind: LossKind::UnsupportedItem,
                path: format!("output[{i}]"),
                reason: format!("'{other}' items have no Chat Completions equivalent"),
            }),
        }
    }

    let reasoning_text = (!reasoning.is_empty()).then(|| JsonText::join(reasoning, r"\n\n"));
    if reasoning_text.is_some() && ctx.reasoning == ChatReasoning::Omit {
        losses.push(Loss {
            kind: LossKind::ReasoningSetting,
            path: "output[reasoning]".into(),
            reason:
                "Chat Completions has no reasoning field; ask for reasoning_content to receive it"
                    .into(),
        });
    }
    let joined_logprobs = ctx.logprobs.then(|| join_arrays(&logprobs));
    let message = ReplyMessage {
        role: "assistant",
        content: (!texts.is_empty()).then(|| JsonText::join(texts, "")),
        refusal: (!refusals.is_empty()).then(|| JsonText::join(refusals, "")),
        annotations,
        reasoning_content: reasoning_text
            .clone()
            .filter(|_| ctx.reasoning == ChatReasoning::ReasoningContent),
        reasoning: reasoning_text.filter(|_| ctx.reasoning == ChatReasoning::Reasoning),
        tool_calls,
    };
    let finish = finish_reason(
        response.status.as_deref(),
        response
            .incomplete_details
            .as_ref()
            .and_then(|d| d.reason.as_deref()),
        !message.tool_calls.is_empty(),
        unfinished,
    );
    let summary = crate::summary::ReplySummary {
        outcome: Some(finish.to_owned()),
        usage: response
            .usage
            .as_ref()
            .map(|u| super::reply::token_usage(&usage(u))),
        tool_calls: message
            .tool_calls
            .iter()
            .map(|call| {
                let (id, name, bytes) = match call {
                    ToolCall::Function { id, function } => {
                        (id, &function.name, function.arguments.escaped().len())
                    }
                    ToolCall::Custom { id, custom } => {
                        (id, &custom.name, custom.input.escaped().len())
                    }
                };
                crate::summary::ToolCallSummary {
                    name: name.as_ref().to_owned(),
                    call_id: id.as_ref().to_owned(),
                    argument_bytes: bytes,
                }
            })
            .collect(),
    };
    let id = ResponseIds::new().chat_completion();
    let completion = CompletionBody {
        id: &id,
        object: "chat.completion",
        created: response.created_at.unwrap_or_else(unix_now),
        model: response
            .model
            .as_deref()
            .filter(|m| !m.is_empty())
            .unwrap_or(&ctx.model),
        choices: [BodyChoice {
            index: 0,
            message,
            logprobs: joined_logprobs.as_deref().map(|content| ChoiceLogprobs {
                content: Some(content),
                refusal: None,
            }),
            finish_reason: finish,
        }],
        usage: response.usage.as_ref().map(usage),
    };
    Ok(TranslatedBody {
        body: serde_json::to_vec(&completion).expect("completions always serialize"),
        losses,
        summary,
    })
}

/// The loss of a call the backend left unfinished, at `output[index]`:
/// left out of a body, since it is no call to run.
pub(super) fn unfinished_call_loss(index: u32, name: &str) -> Loss {
    Loss {
        kind: LossKind::UnsupportedItem,
        path: format!("output[{index}]"),
        reason: format!(
            "the backend left its call to '{name}' unfinished: it is not a call to run, and the answer finishes for length"
        ),
    }
}

/// Arguments as a JSON string literal (objects from lenient servers encoded).
pub(super) fn arguments(raw: Option<&RawValue>) -> JsonText<'_> {
    match raw {
        Some(raw) => match JsonStr::new(raw) {
            Some(text) => text.into(),
            None if raw.get() == "null" => JsonText::from_text(""),
            None => JsonText::Owned(wirebridge_wire::raw::json_as_string_literal(raw)),
        },
        None => JsonText::from_text(""),
    }
}

/// Concatenates JSON arrays.
pub(super) fn join_arrays(arrays: &[&RawValue]) -> Box<RawValue> {
    let mut joined = String::from("[");
    for array in arrays {
        let compact = wirebridge_wire::compact(array);
        let inner = compact.get().trim();
        let inner = &inner[1..inner.len() - 1];
        if !inner.is_empty() {
            if joined.len() > 1 {
                joined.push(',');
            }
            joined.push_str(inner);
        }
    }
    joined.push(']');
    RawValue::from_string(joined)
        .unwrap_or_else(|_| RawValue::from_string("[]".into()).expect("constant"))
}
