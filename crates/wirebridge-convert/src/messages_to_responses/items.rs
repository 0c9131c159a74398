//! Messages `messages` → Responses `input` items, in order.
//!
//! A user message becomes its tool results (`function_call_output` items)
//! and a `user` message of its other blocks, in the order they came. A
//! system message (a system turn in the middle of the conversation, as
//! Claude Code sends one) becomes a `system` message in its place. An
//! assistant message becomes one item per run of blocks: text runs as
//! assistant messages, thinking as `reasoning` items, `tool_use` as
//! `function_call` items. Items the conversation had no id for get one from
//! their position, the same from turn to turn, so the prompt prefix stays
//! the same for the backend's cache.

use std::borrow::Cow;
use std::collections::HashSet;

use wirebridge_wire::messages::lenient::{Block, Content, Message};
use wirebridge_wire::raw::{json_as_string_literal, JsonText};
use wirebridge_wire::responses::strict::{
    FunctionCall, InputItem, InputPart, Message as InputMessage, MessageContent, OutputPart,
    ReasoningInput, ReasoningPart, Role, ToolCallOutput, ToolOutput,
};
use wirebridge_wire::Str;

use super::compaction;
use super::content::{input_parts, is_text, parse_content, required_text, set_breakpoint};
use super::path::{position_id, Path};
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// The conversation as input items.
#[derive(Debug)]
pub(super) struct Conversation<'a> {
    /// The items, in order.
    pub(super) items: Vec<InputItem<'a>>,
    /// The path of the `compaction` block the items start from, if one
    /// stands for the turns before it.
    pub(super) compacted_at: Option<String>,
}

/// Translates the conversation into input items. Content the request
/// reader kept parsed is taken from the messages, not parsed again. A
/// conversation to be compacted (`compacts`) is summarized, not continued:
/// ending with the assistant's text prefills nothing.
pub(super) fn translate_messages<'a>(
    messages: &mut [Message<'a>],
    compacts: bool,
    losses: &mut LossRecorder<'_>,
) -> Result<Conversation<'a>, ConvertError> {
    let mut items = Vec::with_capacity(messages.len() + messages.len() / 2);
    // The ids of the calls so far, which a tool result must answer.
    let mut calls = HashSet::new();
    let count = messages.len();
    let mut compacted_at = None;
    let root = Path::root("messages");
    for (i, message) in messages.iter_mut().enumerate() {
        let path = root.index(i);
        let carried = match message.role.as_deref() {
            Some("user") => user(message, path, &calls, losses, &mut items)?,
            Some("assistant") => {
                let last = i + 1 == count && !compacts;
                assistant(message, i, path, last, &mut calls, losses, &mut items)?
            }
            Some("system") => {
                system(message, path, losses, &mut items)?;
                None
            }
            Some(other) => {
                return Err(ConvertError::invalid(
                    format!("{path}.role"),
                    format!("unknown role '{other}' (expected user, assistant or system)"),
                ))
            }
            None => return Err(ConvertError::MissingField(format!("{path}.role"))),
        };
        compacted_at = carried.or(compacted_at);
    }
    Ok(Conversation {
        items,
        compacted_at,
    })
}

/// Marks the last part of the last user content as a cache breakpoint: the
/// request-wide `cache_control`.
pub(super) fn mark_last_breakpoint(items: &mut [InputItem<'_>]) {
    for item in items.iter_mut().rev() {
        let parts = match item {
            InputItem::Message(InputMessage {
                content: MessageContent::Input(parts),
                ..
            }) => parts,
            InputItem::FunctionCallOutput(ToolCallOutput {
                output: ToolOutput::Parts(parts),
                ..
            }) => parts,
            _ => continue,
        };
        if let Some(part) = parts.last_mut() {
            set_breakpoint(part);
            return;
        }
    }
}

fn content<'a>(message: &mut Message<'a>, path: Path<'_>) -> Result<Content<'a>, ConvertError> {
    if let Some(parsed) = message.parsed_content.take() {
        return Ok(parsed);
    }
    let content_path = path.member("content");
    let missing = || ConvertError::MissingField(content_path.to_string());
    let raw = message.content.ok_or_else(missing)?;
    parse_content(raw, content_path)?.ok_or_else(missing)
}

/// A user message's items; the path of the last `compaction` block in it
/// that the conversation now starts from, if any.
fn user<'a>(
    message: &mut Message<'a>,
    path: Path<'_>,
    calls: &HashSet<Str<'a>>,
    losses: &mut LossRecorder<'_>,
    items: &mut Vec<InputItem<'a>>,
) -> Result<Option<String>, ConvertError> {
    let empty = || {
        ConvertError::invalid(
            format!("{path}.content"),
            "a user message must have content; this one is empty",
        )
    };
    let mut blocks = match content(message, path)? {
        Content::Text(text) if text.is_empty() => return Err(empty()),
        Content::Text(text) => {
            items.push(InputItem::Message(InputMessage::input(
                Role::User,
                MessageContent::Text(text.into()),
            )));
            return Ok(None);
        }
        Content::Blocks(blocks) if blocks.is_empty() => return Err(empty()),
        Content::Blocks(blocks) => blocks,
    };
    let mut parts = Vec::new();
    let flush = |parts: &mut Vec<InputPart<'a>>, items: &mut Vec<InputItem<'a>>| {
        if !parts.is_empty() {
            let content = MessageContent::Input(std::mem::take(parts));
            items.push(InputItem::Message(InputMessage::input(Role::User, content)));
        }
    };
    let mut carried = None;
    let blocks_path = path.member("content");
    for (j, block) in blocks.iter_mut().enumerate() {
        let block_path = blocks_path.index(j);
        match block.kind() {
            "text" | "input_text" | "image" | "document" | "search_result" => {
                input_parts(block, block_path, losses, &mut parts)?
            }
            "compaction" => {
                if compaction::carry(block, block_path, items)? {
                    parts.clear();
                    carried = Some(block_path.to_string());
                }
            }
            "tool_result" => {
                flush(&mut parts, items);
                items.push(tool_result(block, block_path, calls, losses)?);
            }
            kind @ ("tool_use" | "thinking" | "redacted_thinking") => {
                return Err(ConvertError::invalid(
                    format!("{block_path}.type"),
                    format!("'{kind}' blocks belong to assistant messages"),
                ))
            }
            "" => return Err(ConvertError::MissingField(format!("{block_path}.type"))),
            other => unsupported_block(other, block_path, losses)?,
        }
    }
    flush(&mut parts, items);
    Ok(carried)
}

/// A system turn as a `system` message: a string, or text blocks (each
/// `cache_control` a breakpoint, as on a user's). One with no text says
/// nothing and is left out, as an empty top-level `system` is.
fn system<'a>(
    message: &mut Message<'a>,
    path: Path<'_>,
    losses: &mut LossRecorder<'_>,
    items: &mut Vec<InputItem<'a>>,
) -> Result<(), ConvertError> {
    let content = match content(message, path)? {
        Content::Text(text) if text.is_empty() => return Ok(()),
        Content::Text(text) => MessageContent::Text(text.into()),
        Content::Blocks(blocks) => {
            let mut parts = Vec::with_capacity(blocks.len());
            let blocks_path = path.member("content");
            for (j, block) in blocks.iter().enumerate() {
                let block_path = blocks_path.index(j);
                match block.kind() {
                    kind if is_text(kind) => input_parts(block, block_path, losses, &mut parts)?,
                    "" => return Err(ConvertError::MissingField(format!("{block_path}.type"))),
                    other => {
                        return Err(ConvertError::invalid(
                            format!("{block_path}.type"),
                            format!("a system message holds text blocks only, not '{other}'"),
                        ))
                    }
                }
            }
            if parts.is_empty() {
                return Ok(());
            }
            MessageContent::Input(parts)
        }
    };
    items.push(InputItem::Message(InputMessage::input(
        Role::System,
        content,
    )));
    Ok(())
}

fn unsupported_block(
    kind: &str,
    path: Path<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    losses.record(
        LossKind::UnsupportedContent,
        path.to_string(),
        format!("'{kind}' blocks have no Responses equivalent"),
    )
}

/// A `tool_result` as a `function_call_output`, its `tool_use_id` kept as
/// the `call_id`. One text is sent as a string, several blocks (or any
/// image or document, or a cache breakpoint) as parts.
fn tool_result<'a>(
    block: &mut Block<'a>,
    path: Path<'_>,
    calls: &HashSet<Str<'a>>,
    losses: &mut LossRecorder<'_>,
) -> Result<InputItem<'a>, ConvertError> {
    let call_id = block
        .tool_use_id
        .clone()
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.tool_use_id")))?;
    // Refused here, as Anthropic's API does, naming the client's field: the
    // Responses request below would refuse it naming its own.
    if !calls.contains(&call_id) {
        return Err(ConvertError::invalid(
            path.member("tool_use_id").to_string(),
            format!("no tool_use block earlier in the conversation has the id '{call_id}': a tool result must answer a call"),
        ));
    }
    if block.is_error == Some(true) {
        losses.record(
            LossKind::UnsupportedContent,
            format!("{path}.is_error"),
            "Responses tool outputs have no error flag; the result's content is sent as it is",
        )?;
    }
    let content_path = path.member("content");
    let mut parts = Vec::new();
    let content = match block.parsed_content.take() {
        Some(parsed) => Some(Ok(Some(parsed))),
        None => block.content.map(|raw| parse_content(raw, content_path)),
    };
    match content {
        None | Some(Ok(None)) => {}
        Some(Err(e)) => return Err(e),
        Some(Ok(Some(Content::Text(text)))) => parts.push(InputPart::InputText {
            text: text.into(),
            prompt_cache_breakpoint: None,
        }),
        Some(Ok(Some(Content::Blocks(blocks)))) => {
            for (k, inner) in blocks.iter().enumerate() {
                let inner_path = content_path.index(k);
                match inner.kind() {
                    "text" | "input_text" | "image" | "document" | "search_result" => {
                        input_parts(inner, inner_path, losses, &mut parts)?
                    }
                    "" => return Err(ConvertError::MissingField(format!("{inner_path}.type"))),
                    other => unsupported_block(other, inner_path, losses)?,
                }
            }
        }
    }
    if block.is_cache_breakpoint() {
        if let Some(last) = parts.last_mut() {
            set_breakpoint(last);
        }
    }
    // One plain text is sent as a string, the form every backend takes;
    // anything more (or a cache breakpoint) as parts.
    let output = match parts.pop() {
        None => ToolOutput::Text(JsonText::from_text("")),
        Some(InputPart::InputText {
            text,
            prompt_cache_breakpoint: None,
        }) if parts.is_empty() => ToolOutput::Text(text),
        Some(last) => {
            parts.push(last);
            ToolOutput::Parts(parts)
        }
    };
    Ok(InputItem::FunctionCallOutput(ToolCallOutput {
        call_id: call_id.into_cow(),
        output,
    }))
}

/// An assistant message's items; the path of the last `compaction` block
/// in it that the conversation now starts from, if any.
fn assistant<'a>(
    message: &mut Message<'a>,
    i: usize,
    path: Path<'_>,
    last: bool,
    calls: &mut HashSet<Str<'a>>,
    losses: &mut LossRecorder<'_>,
    items: &mut Vec<InputItem<'a>>,
) -> Result<Option<String>, ConvertError> {
    let mut blocks = match content(message, path)? {
        Content::Text(text) => {
            if !text.is_empty() {
                let id = Cow::Owned(position_id("msg_", i, 0));
                let parts = vec![OutputPart::text(text.into())];
                items.push(InputItem::Message(InputMessage::assistant(id, parts)));
                prefill(path, last, losses)?;
            }
            return Ok(None);
        }
        Content::Blocks(blocks) => blocks,
    };
    // The text blocks since the last item, and where they started.
    let mut run: Vec<OutputPart<'a>> = Vec::new();
    let mut run_start = 0;
    let flush = |run: &mut Vec<OutputPart<'a>>, start: usize, items: &mut Vec<InputItem<'a>>| {
        if !run.is_empty() {
            let id = Cow::Owned(position_id("msg_", i, start));
            items.push(InputItem::Message(InputMessage::assistant(
                id,
                std::mem::take(run),
            )));
        }
    };
    let mut said = false;
    let mut carried = None;
    let blocks_path = path.member("content");
    for (j, block) in blocks.iter_mut().enumerate() {
        let block_path = blocks_path.index(j);
        if block.kind() != "text" {
            flush(&mut run, run_start, items);
        }
        match block.kind() {
            "text" => {
                if run.is_empty() {
                    run_start = j;
                }
                run.push(OutputPart::text(required_text(
                    block.text, block_path, "text",
                )?));
                said = true;
            }
            "tool_use" => {
                calls.extend(block.id.clone());
                items.push(tool_use(block, block_path)?)
            }
            "thinking" => items.push(InputItem::Reasoning(ReasoningInput {
                id: Cow::Owned(position_id("rs_", i, j)),
                summary: vec![ReasoningPart {
                    kind: "summary_text",
                    text: required_text(block.thinking, block_path, "thinking")?,
                }],
                encrypted_content: block
                    .signature
                    .filter(|s| !s.is_empty())
                    .map(JsonText::from),
            })),
            "redacted_thinking" => items.push(InputItem::Reasoning(ReasoningInput {
                id: Cow::Owned(position_id("rs_", i, j)),
                summary: Vec::new(),
                encrypted_content: Some(required_text(block.data, block_path, "data")?),
            })),
            "compaction" => {
                if compaction::carry(block, block_path, items)? {
                    // The calls it stands for are no longer answerable.
                    calls.clear();
                    said = false;
                    carried = Some(block_path.to_string());
                }
            }
            kind @ ("tool_result" | "image" | "document") => {
                return Err(ConvertError::invalid(
                    format!("{block_path}.type"),
                    format!("'{kind}' blocks belong to user messages"),
                ))
            }
            "" => return Err(ConvertError::MissingField(format!("{block_path}.type"))),
            other => unsupported_block(other, block_path, losses)?,
        }
    }
    flush(&mut run, run_start, items);
    let ends_in_text = blocks.last().is_some_and(|b| b.kind() == "text");
    if said && ends_in_text {
        prefill(path, last, losses)?;
    }
    Ok(carried)
}

/// A conversation ending with the assistant's text asks Anthropic's API to
/// continue that text; a Responses backend answers after it instead.
fn prefill(path: Path<'_>, last: bool, losses: &mut LossRecorder<'_>) -> Result<(), ConvertError> {
    if !last {
        return Ok(());
    }
    losses.record(
        LossKind::UnsupportedParameter,
        path.to_string(),
        "Responses cannot continue a prefilled assistant message: the reply follows it as a new message",
    )
}

/// A `tool_use` block as a `function_call`: its `id` kept verbatim as the
/// `call_id`, its `input` object written as the arguments text.
fn tool_use<'a>(block: &Block<'a>, path: Path<'_>) -> Result<InputItem<'a>, ConvertError> {
    let call_id = block
        .id
        .clone()
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.id")))?;
    let name = block
        .name
        .clone()
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?;
    let arguments = match block.input.filter(|r| r.get() != "null") {
        None => JsonText::from_text("{}"),
        Some(input) => JsonText::Owned(json_as_string_literal(&wirebridge_wire::compact(input))),
    };
    Ok(InputItem::FunctionCall(FunctionCall::new(
        call_id.into_cow(),
        name.into_cow(),
        arguments,
    )))
}
