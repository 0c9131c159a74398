//! Responses body → Messages `message` body.

use wirebridge_wire::messages::strict::{ContentBlock, MessageBody, StopReason};
use wirebridge_wire::raw::JsonText;
use wirebridge_wire::responses::lenient::{OutputItem, ResponseBody};

use super::reply::{
    arguments_text, stop_reason, thinking_text, token_usage, tool_input, usage, Failure,
};
use super::{MessagesContext, ThinkingDisplay};
use crate::error::ConvertError;
use crate::ids::ResponseIds;
use crate::loss::{Loss, LossKind, LossReport};
use crate::summary::{ReplySummary, ToolCallSummary};

/// A translated reply body.
#[derive(Debug)]
pub struct TranslatedBody {
    /// The `message` JSON.
    pub body: Vec<u8>,
    /// What was dropped.
    pub losses: LossReport,
    /// Outcome (the stop reason), usage and tool calls.
    pub summary: ReplySummary,
}

/// Translates a `Response` body into a `message`.
///
/// A response whose status is `failed` is an error: the upstream's message
/// and code come back as [`ConvertError::UpstreamFailed`], which
/// [`error_body`](super::error_body) shapes for the client.
pub fn translate_body(body: &[u8], ctx: &MessagesContext) -> Result<TranslatedBody, ConvertError> {
    let response = ResponseBody::parse(body).map_err(|e| {
        ConvertError::InvalidUpstream(format!("the Responses body is not valid: {e}"))
    })?;
    if response.status.as_deref() == Some("failed") || Failure::from_raw(response.error).is_some() {
        let failure = Failure::from_raw(response.error).unwrap_or_else(|| {
            Failure::api("the upstream response failed without an error message")
        });
        return Err(ConvertError::UpstreamFailed {
            message: failure.message,
            error_type: failure.upstream_type,
            code: failure.code,
        });
    }
    let output = response
        .output
        .as_deref()
        .ok_or_else(|| ConvertError::InvalidUpstream("the Responses body has no output".into()))?;

    let mut losses = LossReport::default();
    let mut content = Vec::with_capacity(output.len());
    let mut calls = Vec::new();
    let mut refused = false;
    let mut unfinished = false;
    for (i, item) in output.iter().enumerate() {
        let path = format!("output[{i}]");
        match item.kind() {
            "message" => refused |= message(item, &path, &mut content, &mut losses),
            "reasoning" => {
                if let Some(block) = thinking(item, ctx.thinking) {
                    content.push(block);
                }
            }
            "compaction" => {
                let carrier = item.encrypted_content;
                let carrier = carrier.filter(|c| !c.is_empty()).ok_or_else(|| {
                    ConvertError::InvalidUpstream(format!(
                        "{path} is a compaction without its encrypted_content"
                    ))
                })?;
                content.push(ContentBlock::Compaction {
                    content: Some(carrier.into()),
                });
            }
            "function_call" => {
                let name = item.name.as_deref().unwrap_or_default();
                if ctx.ran_by_backend(name) {
                    losses.push(server_call_loss(path, name));
                    continue;
                }
                let call_id = item.call_id.as_deref().unwrap_or_default();
                if name.is_empty() || call_id.is_empty() {
                    return Err(ConvertError::InvalidUpstream(format!(
                        "{path} is a function call without a name or call_id"
                    )));
                }
                let input = match tool_input(item.arguments) {
                    // A call the backend left unfinished is no call to run,
                    // whole arguments or not: left out, and the message
                    // stops for `max_tokens` (see `stop_reason`).
                    _ if item.status.as_deref() == Some("incomplete") => {
                        unfinished = true;
                        losses.push(unfinished_call_loss(path, name));
                        continue;
                    }
                    Ok(input) => input,
                    // Arguments cut short in a response cut short.
                    Err(_) if response.status.as_deref() == Some("incomplete") => {
                        unfinished = true;
                        losses.push(unfinished_call_loss(path, name));
                        continue;
                    }
                    Err(why) => {
                        return Err(ConvertError::InvalidUpstream(format!(
                            "{path} ('{name}') has {why}"
                        )))
                    }
                };
                calls.push(ToolCallSummary {
                    name: name.to_owned(),
                    call_id: call_id.to_owned(),
                    argument_bytes: arguments_text(item.arguments).escaped().len(),
                });
                content.push(ContentBlock::ToolUse {
                    id: call_id.into(),
                    name: name.into(),
                    input,
                });
            }
            other => losses.push(Loss {
                kind: LossKind::UnsupportedItem,
                path,
                reason: format!("'{other}' items have no Messages equivalent"),
            }),
        }
    }

    // A compaction's reply is its block alone.
    let compacted = !content.is_empty()
        && content
            .iter()
            .all(|b| matches!(b, ContentBlock::Compaction { .. }));
    let stop = stop_reason(
        response.status.as_deref(),
        response
            .incomplete_details
            .as_ref()
            .and_then(|d| d.reason.as_deref()),
        refused,
        !calls.is_empty(),
        unfinished,
    );
    let stop = match compacted {
        true => StopReason::Compaction,
        false => stop,
    };
    let summary = ReplySummary {
        outcome: Some(stop.as_str().to_owned()),
        usage: response.usage.as_ref().map(token_usage),
        tool_calls: calls,
    };
    let id = reply_id(response.id.as_deref(), ctx);
    let diagnostics = super::diagnostics::reply(ctx);
    let message = MessageBody {
        id: &id,
        model: response
            .model
            .as_deref()
            .filter(|m| !m.is_empty())
            .unwrap_or(&ctx.model),
        content,
        stop_reason: Some(stop),
        usage: usage(&response.usage.unwrap_or_default(), ctx.count_thinking),
        diagnostics: diagnostics.as_deref(),
        ..MessageBody::default()
    };
    Ok(TranslatedBody {
        body: serde_json::to_vec(&message).expect("messages always serialize"),
        losses,
        summary,
    })
}

/// Translates a whole Responses event stream into a `message` body, for a
/// client that did not ask for a stream (some backends stream whatever the
/// request said).
///
/// The stream is first folded into the `Response` it describes, as
/// [`responses_to_responses::translate_stream_body`] folds it (the items
/// as their `output_item.done` events have them, and a stream that breaks
/// the Responses grammar refused), then translated as a body. A stream that
/// fails is the upstream's failure.
///
/// ```
/// use wirebridge_convert::messages_to_responses::{translate_stream_body, MessagesContext};
///
/// let events = concat!(
///     "event: response.output_item.added\n",
///     "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n",
///     "event: response.output_text.delta\n",
///     "data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hi\"}\n\n",
///     "event: response.output_item.done\n",
///     "data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Hi\"}]}}\n\n",
///     "event: response.completed\n",
///     "data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n",
/// );
/// let reply = translate_stream_body(events.as_bytes(), &MessagesContext::default()).unwrap();
/// let body: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
/// assert_eq!(body["content"][0]["text"], "Hi");
/// assert_eq!(body["stop_reason"], "end_turn");
/// ```
///
/// [`responses_to_responses::translate_stream_body`]: crate::responses_to_responses::translate_stream_body
pub fn translate_stream_body(
    events: &[u8],
    ctx: &MessagesContext,
) -> Result<TranslatedBody, ConvertError> {
    let native = crate::responses_to_responses::NativeContext {
        model: ctx.model.clone(),
        ..Default::default()
    };
    let folded = crate::responses_to_responses::translate_stream_body(events, &native)?;
    let mut translated = translate_body(&folded.body, ctx)?;
    let mut losses = folded.losses;
    losses.extend(translated.losses);
    translated.losses = losses;
    Ok(translated)
}

/// A message item's parts as text blocks; returns whether it refused.
fn message<'a>(
    item: &'a OutputItem<'_>,
    path: &str,
    content: &mut Vec<ContentBlock<'a>>,
    losses: &mut LossReport,
) -> bool {
    let mut refused = false;
    for (j, part) in item.parts().into_iter().enumerate() {
        let text = match part.kind() {
            "output_text" => part.text,
            "refusal" => {
                refused = true;
                part.refusal
            }
            _ => None,
        };
        if part
            .annotations
            .is_some_and(|a| !matches!(a.get().trim(), "null" | "[]"))
        {
            losses.push(Loss {
                kind: LossKind::UnsupportedContent,
                path: format!("{path}.content[{j}].annotations"),
                reason: "Messages citations point into Anthropic's own search results and documents; the backend's annotations have no such form".into(),
            });
        }
        if let Some(text) = text.filter(|t| !t.is_empty()) {
            content.push(ContentBlock::Text { text: text.into() });
        }
    }
    refused
}

/// A reasoning item as a thinking block, when the client shows thinking
/// and the item has something to show or to carry.
fn thinking<'a>(item: &'a OutputItem<'_>, display: ThinkingDisplay) -> Option<ContentBlock<'a>> {
    let text = match display {
        ThinkingDisplay::Off => return None,
        ThinkingDisplay::Summarized => thinking_text(item),
        ThinkingDisplay::Omitted => None,
    };
    let signature = item.encrypted_content.filter(|s| !s.is_empty());
    if text.is_none() && signature.is_none() {
        return None;
    }
    Some(ContentBlock::Thinking {
        thinking: text.unwrap_or_else(|| JsonText::from_text("")),
        signature: signature
            .map(JsonText::from)
            .unwrap_or_else(|| JsonText::from_text("")),
    })
}

/// The loss of a call the backend left unfinished, at `path`: a
/// `tool_use` block holds an input object, and an input cut short is none,
/// nor one to run.
fn unfinished_call_loss(path: String, name: &str) -> Loss {
    Loss {
        kind: LossKind::UnsupportedItem,
        path,
        reason: format!(
            "the backend left its call to '{name}' unfinished: it is not a call to run, and the message stops for max_tokens"
        ),
    }
}

/// The loss of a call the backend ran itself, at `path`.
pub(super) fn server_call_loss(path: String, name: &str) -> Loss {
    Loss {
        kind: LossKind::UnsupportedItem,
        path,
        reason: format!(
            "a call to '{name}', a tool the request did not declare: the backend ran it itself, and a Messages reply holds only calls for the client to run"
        ),
    }
}

/// The `id` of the reply to the response `response_id`: for a turn of a
/// thread, the one its next turn continues from, and for a turn that asked
/// for cache diagnostics, the one a later turn compares itself with (the
/// response's stem, either way); otherwise a fresh one.
pub(super) fn reply_id(response_id: Option<&str>, ctx: &MessagesContext) -> String {
    let named = ctx.thread.is_some() || ctx.diagnostics.is_some();
    named
        .then_some(response_id)
        .flatten()
        .and_then(super::message_id_of)
        .unwrap_or_else(|| ResponseIds::new().message())
}
