//! Chat completion body → `Response` body.

use std::borrow::Cow;

use serde_json::value::{to_raw_value, RawValue};
use wirebridge_wire::chat::lenient::{ChatCompletion, ChoiceMessage};
use wirebridge_wire::error::UpstreamError;
use wirebridge_wire::raw::{empty_array, JsonText};
use wirebridge_wire::responses::strict::{
    CustomToolCall, FunctionCall, ItemStatus, MessagePhase, OutputItem, OutputMessage, OutputPart,
    ReasoningItem, ReasoningPart, Response, ResponseStatus, ToolSearchCall,
};

use super::reply::{
    add_usage, annotations, arguments_literal, content_pieces, custom_input, reasoning_text,
    status_for, tool_search_arguments, usage, Piece,
};
use super::think::split_all;
use super::{Finished, ResponsesContext};
use crate::error::ConvertError;
use crate::ids::{unix_now, ResponseIds};
use crate::loss::{Loss, LossKind, LossReport};
use crate::tool_names::ToolKind;

/// A translated reply body.
#[derive(Debug)]
pub struct TranslatedBody {
    /// The `Response` JSON.
    pub body: Vec<u8>,
    /// The response id.
    pub response_id: String,
    /// Final status.
    pub status: ResponseStatus,
    /// Unix seconds.
    pub created_at: u64,
    /// The output items, each a JSON object.
    pub output: Vec<Box<RawValue>>,
    /// What was dropped.
    pub losses: LossReport,
    /// Outcome, usage and tool calls.
    pub summary: crate::summary::ReplySummary,
}

impl TranslatedBody {
    /// The response as a store keeps it.
    pub fn finished(&self) -> Finished<'_> {
        Finished {
            id: &self.response_id,
            created_at: self.created_at,
            status: self.status,
            output: &self.output,
            // Written by serde_json just above, or copied from a response
            // it wrote: always UTF-8.
            response: std::str::from_utf8(&self.body).unwrap_or_default(),
        }
    }
}

/// A `Response`'s own keys and values around its output and echo: id,
/// status, timestamps, model, usage (with room to spare).
const RESPONSE_ENVELOPE: usize = 512;

/// Translates a `chat.completion` body into a `Response`.
pub fn translate_body(body: &[u8], ctx: &ResponsesContext) -> Result<TranslatedBody, ConvertError> {
    let completion = match ChatCompletion::read(body) {
        Some(completion) => completion,
        // What the one-pass reader leaves, serde reads or names the error of.
        None => serde_json::from_slice(body).map_err(|e| {
            ConvertError::InvalidUpstream(format!("the Chat Completions body is not valid: {e}"))
        })?,
    };
    let ids = &ctx.ids;
    let response_id = ids.response();
    let mut losses = LossReport::default();
    // Items finished before the reply (a compaction) come first.
    let mut output: Vec<Box<RawValue>> = ctx.leading.clone();

    let choices = completion.choices.unwrap_or_default();
    if choices.len() > 1 {
        losses.push(Loss {
            kind: LossKind::ExtraChoices,
            path: "choices[1..]".into(),
            reason: format!(
                "a Response holds one answer; only choice 0 is translated ({} more dropped)",
                choices.len() - 1
            ),
        });
    }
    let choice = choices.into_iter().find(|c| c.index.unwrap_or(0) == 0);
    let finish_reason = choice.as_ref().and_then(|c| c.finish_reason.clone());
    let (status, incomplete_details) = status_for(finish_reason.as_deref());
    let item_status = match status {
        ResponseStatus::Incomplete => ItemStatus::Incomplete,
        _ => ItemStatus::Completed,
    };

    if let Some(choice) = &choice {
        if let Some(message) = &choice.message {
            let logprobs = choice
                .logprobs
                .as_ref()
                .and_then(|l| l.content)
                .filter(|r| r.get() != "null");
            push_items(message, logprobs, ctx, ids, item_status, &mut output)?;
        }
    }

    // An error in a successful reply (some servers answer 200 with an error
    // body) is the upstream's failure.
    if let Some(error) = completion.error.filter(|e| e.get() != "null") {
        let parsed = UpstreamError::parse(error).unwrap_or_default();
        return Err(ConvertError::UpstreamFailed {
            message: parsed
                .message
                .as_deref()
                .unwrap_or("the upstream reported an error")
                .to_owned(),
            error_type: parsed.kind.as_deref().map(str::to_owned),
            code: parsed.code_text().map(Cow::into_owned),
        });
    }
    if choice.is_none() {
        return Err(ConvertError::InvalidUpstream(
            "the Chat Completions body has no choices".into(),
        ));
    }

    let usage = match completion.usage.as_ref().map(usage) {
        Some(reply) => Some(add_usage(reply, ctx.prior_usage)),
        None => ctx.prior_usage,
    };
    let model = completion
        .model
        .as_deref()
        .filter(|m| !m.is_empty())
        .unwrap_or(&ctx.model);
    let created_at = completion
        .created
        .filter(|c| *c > 0)
        .unwrap_or_else(unix_now);
    let response = Response {
        id: &response_id,
        object: "response",
        created_at,
        status,
        completed_at: (status == ResponseStatus::Completed).then(unix_now),
        error: None,
        incomplete_details: if status == ResponseStatus::Incomplete {
            incomplete_details
        } else {
            None
        },
        model,
        output: &output,
        usage: usage.as_ref(),
        echo: &ctx.echo,
    };
    let tool_calls = choice
        .as_ref()
        .and_then(|c| c.message.as_ref())
        .map(|m| tool_call_summaries(m, ctx))
        .unwrap_or_default();
    let summary = crate::summary::ReplySummary {
        outcome: Some(status.as_str().to_owned()),
        usage: usage.as_ref().map(super::reply::token_usage),
        tool_calls,
    };
    // Sized for the whole `Response` at once: it repeats the request's
    // tools and instructions, and grown from empty it was copied six times
    // or more on its way there.
    let size = ctx.echo.size_hint()
        + output
            .iter()
            .map(|item| item.get().len() + 1)
            .sum::<usize>()
        + RESPONSE_ENVELOPE;
    let mut json = Vec::with_capacity(size);
    response.write_json(&mut json);
    Ok(TranslatedBody {
        body: json,
        response_id,
        status,
        created_at,
        output,
        losses,
        summary,
    })
}

fn push_items(
    message: &ChoiceMessage<'_>,
    logprobs: Option<&RawValue>,
    ctx: &ResponsesContext,
    ids: &ResponseIds,
    status: ItemStatus,
    output: &mut Vec<Box<RawValue>>,
) -> Result<(), ConvertError> {
    fn push(output: &mut Vec<Box<RawValue>>, item: &OutputItem<'_>) {
        output.push(to_raw_value(item).expect("items always serialize"));
    }

    let (mut text, thinking) = message_content(message.content)?;
    let field = reasoning_text(message).filter(|t| !t.is_empty());
    let mut reasoning = match (field, thinking) {
        (Some(field), Some(parts)) => Some(JsonText::from_escaped(&format!(
            "{}{}",
            field.escaped(),
            parts.escaped()
        ))),
        (field, parts) => field.map(JsonText::from).or(parts),
    };
    if let Some((thought, answer)) = text
        .as_ref()
        .and_then(|t| split_all(ctx.think_tags, &decode(t)))
    {
        if !thought.is_empty() {
            reasoning = Some(JsonText::from_text(&thought));
        }
        text = (!answer.is_empty()).then(|| JsonText::from_text(&answer));
    }
    if let Some(reasoning) = reasoning {
        let id = ids.item("rs", output.len());
        let part = |part_type| ReasoningPart {
            kind: part_type,
            text: reasoning.clone(),
        };
        let (summary, content) = if ctx.summary_output() {
            (vec![part("summary_text")], None)
        } else {
            (Vec::new(), Some(vec![part("reasoning_text")]))
        };
        let sealed = ctx.seal.as_ref().map(|seal| seal.reasoning(&reasoning));
        push(
            output,
            &OutputItem::Reasoning(ReasoningItem {
                id: &id,
                status,
                summary,
                content,
                encrypted_content: sealed.as_deref(),
            }),
        );
    }

    let annotations = annotations(message.annotations);
    let mut content = Vec::new();
    if let Some(text) = text {
        content.push(OutputPart::OutputText {
            text,
            annotations: &annotations,
            logprobs: logprobs.unwrap_or(empty_array()),
        });
    }
    if let Some(refusal) = message.refusal {
        content.push(OutputPart::Refusal {
            refusal: refusal.into(),
        });
    }
    if !content.is_empty() {
        let id = ids.item("msg", output.len());
        let has_calls = message.function_call.is_some()
            || message
                .tool_calls
                .iter()
                .flatten()
                .any(|c| c.function.is_some() || c.custom.is_some());
        push(
            output,
            &OutputItem::Message(OutputMessage {
                id: &id,
                status,
                role: "assistant",
                content,
                // The calls come after the message in the output.
                phase: Some(match has_calls {
                    true => MessagePhase::Commentary,
                    false => MessagePhase::FinalAnswer,
                }),
            }),
        );
    }

    let legacy = message.function_call.as_ref().map(|f| (None, f));
    let calls = message
        .tool_calls
        .iter()
        .flatten()
        .map(|c| (Some(c), c.function.as_ref()))
        .filter_map(|(c, f)| f.map(|f| (c, f)));
    for (n, (call, function)) in legacy.into_iter().chain(calls).enumerate() {
        let name = function
            .name
            .as_deref()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                ConvertError::InvalidUpstream(format!(
                    "tool call {n} of the Chat Completions body has no function name"
                ))
            })?;
        let call_id = call
            .and_then(|c| c.id.as_deref())
            .map(str::to_owned)
            .unwrap_or_else(|| ids.call(n));
        let arguments = arguments_literal(function.arguments);
        push_call(output, ctx, ids, status, name, &call_id, arguments);
    }
    for call in message.tool_calls.iter().flatten() {
        if let Some(custom) = &call.custom {
            let name = custom.name.as_deref().unwrap_or_default();
            let call_id = call
                .id
                .as_deref()
                .map(str::to_owned)
                .unwrap_or_else(|| ids.call(output.len()));
            let id = ids.item("ctc", output.len());
            let item = OutputItem::CustomToolCall(CustomToolCall {
                id: Some(id.as_str().into()),
                status: Some(status),
                name: name.into(),
                namespace: None,
                call_id: call_id.as_str().into(),
                input: custom
                    .input
                    .map(JsonText::from)
                    .unwrap_or_else(|| JsonText::from_text("")),
            });
            push(output, &item);
        }
    }
    Ok(())
}

fn tool_call_summaries(
    message: &ChoiceMessage<'_>,
    ctx: &ResponsesContext,
) -> Vec<crate::summary::ToolCallSummary> {
    message
        .tool_calls
        .iter()
        .flatten()
        .filter_map(|call| {
            let function = call.function.as_ref()?;
            let chat_name = function.name.as_deref()?;
            let name = ctx
                .tool_names
                .origin(chat_name)
                .map(|o| o.name.as_str())
                .unwrap_or(chat_name);
            Some(crate::summary::ToolCallSummary {
                name: name.to_owned(),
                call_id: call.id.as_deref().unwrap_or_default().to_owned(),
                argument_bytes: function
                    .arguments
                    .map(|a| a.get().len())
                    .unwrap_or_default(),
            })
        })
        .collect()
}

/// Adds a function call item, restored to the tool the client offered.
pub(super) fn push_call(
    output: &mut Vec<Box<RawValue>>,
    ctx: &ResponsesContext,
    ids: &ResponseIds,
    status: ItemStatus,
    chat_name: &str,
    call_id: &str,
    arguments: JsonText<'_>,
) {
    let origin = ctx.tool_names.origin(chat_name);
    let name = origin.map(|o| o.name.as_str()).unwrap_or(chat_name);
    let namespace = origin.and_then(|o| o.namespace.as_deref());
    let kind = origin.map(|o| o.kind).unwrap_or_default();
    let item = if kind == ToolKind::ToolSearch {
        let arguments = tool_search_arguments(&arguments_text(&arguments));
        let id = ids.item("tsc", output.len());
        to_raw_value(&OutputItem::ToolSearchCall(ToolSearchCall {
            id: &id,
            status,
            call_id,
            execution: "client",
            arguments: &arguments,
        }))
    } else if kind == ToolKind::Custom {
        let input = custom_input(&arguments_text(&arguments));
        let id = ids.item("ctc", output.len());
        to_raw_value(&OutputItem::CustomToolCall(CustomToolCall {
            id: Some(id.as_str().into()),
            status: Some(status),
            name: name.into(),
            namespace: namespace.map(Into::into),
            call_id: call_id.into(),
            input,
        }))
    } else {
        let id = ids.item("fc", output.len());
        to_raw_value(&OutputItem::FunctionCall(FunctionCall {
            id: Some(id.as_str().into()),
            status: Some(status),
            name: name.into(),
            namespace: namespace.map(Into::into),
            call_id: call_id.into(),
            arguments,
        }))
    };
    output.push(item.expect("items always serialize"));
}

fn decode(text: &JsonText<'_>) -> String {
    serde_json::from_str::<String>(text.raw().get()).unwrap_or_default()
}

fn arguments_text(arguments: &JsonText<'_>) -> String {
    serde_json::from_str::<String>(arguments.raw().get()).unwrap_or_default()
}

/// Message text and reasoning: a string is text; a part array gives its
/// text parts as text and its thinking parts as reasoning, each joined.
fn message_content(
    content: Option<&RawValue>,
) -> Result<(Option<JsonText<'_>>, Option<JsonText<'_>>), ConvertError> {
    let Some(raw) = content.filter(|r| r.get() != "null") else {
        return Ok((None, None));
    };
    let pieces = content_pieces(raw).ok_or_else(|| {
        ConvertError::InvalidUpstream("message content is neither a string nor a part array".into())
    })?;
    let join = |kind: Piece| {
        let texts: Vec<_> = pieces
            .iter()
            .filter(|(k, t)| *k == kind && !t.is_empty())
            .map(|(_, t)| *t)
            .collect();
        (!texts.is_empty()).then(|| JsonText::join(texts, ""))
    };
    Ok((join(Piece::Text), join(Piece::Thinking)))
}
