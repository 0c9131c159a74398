//! The Chat conversation under construction, and the Responses
//! conversation it is built from.
//!
//! Chat backends insist on a shape Responses does not: the tool calls of one
//! turn in ONE assistant message, directly followed by one `tool` message per
//! call. The [`Builder`] keeps that shape while walking the items in order;
//! `items` translates each kind of item, `replayed_items` the history that
//! has no Chat item of its own.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use wirebridge_wire::chat::strict::{ChatMessage, MessageContent, Role, ToolCall};
use wirebridge_wire::raw::{JsonStr, JsonText};
use wirebridge_wire::responses::lenient::{Input, InputItem, ItemKind};
use wirebridge_wire::responses::strict::{InputTransformation, WithheldReason};
use wirebridge_wire::Str;

use super::compaction_items::{prompt_message, Cut, Mode};
use super::{History, Options};
use crate::error::ConvertError;
use crate::recorder::LossRecorder;
use crate::tool_names::ToolNameMap;

/// What the model is to read: the stored history (when the request continues
/// a stored response) and the request's own `input`.
pub(super) struct Conversation<'a> {
    /// A string `input`, with no history before it.
    pub(super) text: Option<JsonStr<'a>>,
    /// The items: the history's, then the request's own. Error paths index
    /// into this list.
    pub(super) items: Vec<InputItem<'a>>,
}

impl<'a> Conversation<'a> {
    pub(super) fn new(
        input: Option<Input<'a>>,
        history: &History<'a>,
    ) -> Result<Self, ConvertError> {
        let own_len = match &input {
            Some(Input::Items(own)) => own.len(),
            _ => 1,
        };
        let mut items = history.items_with_room(own_len)?;
        let text = match input {
            None => None,
            Some(Input::Items(own)) => {
                let start = items.len();
                if items.is_empty() {
                    items = own.into_vec();
                } else {
                    items.extend(own.into_vec());
                }
                resolve_references(&mut items[start..], history)?;
                check_results(&items, start)?;
                None
            }
            Some(Input::Text(text)) if items.is_empty() => Some(text),
            Some(Input::Text(text)) => {
                if text.is_empty() {
                    return Err(empty_user_message("input".into()));
                }
                items.push(InputItem {
                    role: Some("user".into()),
                    content: Some(text.raw()),
                    ..InputItem::default()
                });
                None
            }
        };
        Ok(Self { text, items })
    }
}

/// Replaces each `item_reference` among `items` (the request's own) with the
/// stored item it names.
fn resolve_references<'a>(
    items: &mut [InputItem<'a>],
    history: &History<'a>,
) -> Result<(), ConvertError> {
    for (i, item) in items.iter_mut().enumerate() {
        if item.classify() != ItemKind::ItemReference {
            continue;
        }
        let id = item.id.clone().unwrap_or_default();
        // The client's own index: the history before it is not its to count.
        let path = format!("input[{i}].id");
        if let Some((_, stored)) = history.referenced(&id, &path)? {
            *item = stored;
        }
    }
    Ok(())
}

/// Refuses a tool result among the request's own items (from `own_start`)
/// that answers no call of the conversation, its stored history included:
/// a Chat backend takes no `tool` message without its call, and would
/// refuse the request with less to go on, or answer something else.
///
/// A result after a `compaction` item may answer a call the compaction
/// summarized, and one after an `item_reference` no store resolved may
/// answer the item it names: those are left to the translation.
fn check_results(items: &[InputItem<'_>], own_start: usize) -> Result<(), ConvertError> {
    let is_result = |item: &InputItem<'_>| {
        matches!(
            item.classify(),
            ItemKind::FunctionCallOutput | ItemKind::CustomToolCallOutput
        )
    };
    if !items[own_start..].iter().any(is_result) {
        return Ok(());
    }
    let mut calls = HashSet::with_capacity(items.len());
    let call_ids = items
        .iter()
        .filter(|item| {
            matches!(
                item.classify(),
                ItemKind::FunctionCall | ItemKind::CustomToolCall
            )
        })
        .filter_map(|item| item.call_id.as_deref());
    calls.extend(call_ids);
    let mut calls_unknown = false;
    for (i, item) in items.iter().enumerate() {
        match item.classify() {
            ItemKind::Compaction | ItemKind::ItemReference => calls_unknown = true,
            _ if calls_unknown || i < own_start || !is_result(item) => {}
            _ => {
                // A missing call_id is the translation's to report.
                let Some(id) = item.call_id.as_deref() else {
                    continue;
                };
                if !calls.contains(id) {
                    return Err(ConvertError::invalid(
                        format!("input[{}].call_id", i - own_start),
                        format!(
                            "no function_call or custom_tool_call of the conversation has \
                             call_id '{id}': a tool result must answer a call sent in input, \
                             or in the stored response previous_response_id continues"
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The conversation as Chat messages.
pub(super) struct Translated<'a> {
    pub(super) messages: Vec<ChatMessage<'a>>,
    /// The reasoning items withheld from the backend, in input order: the
    /// response's `input_transformations`.
    pub(super) withheld: Vec<InputTransformation>,
}

/// Translates `instructions` and the conversation into messages.
pub(super) fn translate_input<'a>(
    instructions: Option<JsonStr<'a>>,
    input: &Conversation<'a>,
    names: &ToolNameMap,
    options: &Options,
    replay: Replay,
    mode: Mode<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<Translated<'a>, ConvertError> {
    let mut builder = Builder {
        messages: Vec::new(),
        deferred: Vec::new(),
        pending_reasoning: Vec::new(),
        withheld: Vec::new(),
        options,
        names,
        replay,
        turn_start: 0,
        cut: Cut::new(&input.items, options.seal.as_ref(), mode.compacted)?,
    };
    if let Some(instructions) = instructions {
        builder.push(ChatMessage::new(
            Role::System,
            MessageContent::Text(instructions.into()),
        ));
    }
    if let Some(text) = input.text {
        if text.is_empty() {
            return Err(empty_user_message("input".into()));
        }
        builder.push(ChatMessage::new(
            Role::User,
            MessageContent::Text(text.into()),
        ));
    }
    builder.turn_start = current_turn_start(&input.items);
    for (i, item) in input.items.iter().enumerate() {
        builder.item(item, i, losses)?;
    }
    builder.trailing_summary();
    builder.flush_deferred();
    if builder.messages.is_empty() {
        if input.items.is_empty() {
            return Err(ConvertError::MissingField("input".into()));
        }
        // Every item was dropped as untranslatable: say so, rather than
        // that `input` is missing when the client sent it.
        return Err(ConvertError::InvalidBody {
            param: Some("input".into()),
            message: format!(
                "none of its {} item(s) has a Chat Completions equivalent",
                input.items.len()
            ),
        });
    }
    if mode.summarize {
        builder.push(prompt_message());
    }
    Ok(Translated {
        messages: builder.messages,
        withheld: builder.withheld,
    })
}

pub(super) struct Builder<'a, 'o> {
    pub(super) messages: Vec<ChatMessage<'a>>,
    /// User messages carrying tool-output images, held back until the run of
    /// `tool` messages they belong to has ended.
    pub(super) deferred: Vec<ChatMessage<'a>>,
    /// Reasoning text to replay on the next assistant message.
    pub(super) pending_reasoning: Vec<JsonText<'a>>,
    /// Reasoning items withheld from the backend, in input order.
    pub(super) withheld: Vec<InputTransformation>,
    pub(super) options: &'o Options,
    pub(super) names: &'o ToolNameMap,
    /// Which reasoning is replayed.
    pub(super) replay: Replay,
    /// Where the current turn starts: the last user message.
    pub(super) turn_start: usize,
    /// The conversation's compaction items, opened.
    pub(super) cut: Cut,
}

impl<'a> Builder<'a, '_> {
    pub(super) fn push(&mut self, message: ChatMessage<'a>) {
        if message.role != Role::Tool {
            self.flush_deferred();
        }
        self.messages.push(message);
    }

    pub(super) fn flush_deferred(&mut self) {
        self.messages.append(&mut self.deferred);
    }

    /// Lists a reasoning item as withheld from the backend, for `reason`.
    /// One without an id cannot be named, and is not listed (its loss, if
    /// it is one, still is).
    pub(super) fn withhold(&mut self, item: &InputItem<'_>, reason: WithheldReason) {
        if let Some(id) = item.id.as_deref().filter(|id| !id.is_empty()) {
            self.withheld
                .push(InputTransformation::removed_reasoning(id, reason));
        }
    }

    /// Adds a call to the assistant message right before it (its text, or the
    /// calls of the same turn), or starts a new assistant message.
    pub(super) fn push_tool_call(&mut self, call: ToolCall<'a>) {
        match self.messages.last_mut() {
            Some(last) if last.role == Role::Assistant && self.deferred.is_empty() => {
                if last.content.is_absent() {
                    last.content = MessageContent::Null;
                }
                last.tool_calls.push(call);
            }
            _ => {
                let mut message = ChatMessage::new(Role::Assistant, MessageContent::Null);
                message.tool_calls.push(call);
                self.attach_reasoning(&mut message);
                self.push(message);
            }
        }
    }
}

/// Which reasoning of the history is replayed (when the profile replays
/// reasoning at all).
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::responses_to_chat) struct Replay {
    /// Every turn's (`reasoning.context: all_turns`), not only the current
    /// turn's (after the last user message): backends with interleaved
    /// thinking need the reasoning of the tool loop under way.
    pub(in crate::responses_to_chat) all_turns: bool,
}

/// Where the current turn starts: the index of the last user message.
pub(in crate::responses_to_chat) fn current_turn_start(items: &[InputItem<'_>]) -> usize {
    items
        .iter()
        .rposition(|item| {
            item.classify() == ItemKind::Message && item.role.as_deref() == Some("user")
        })
        .unwrap_or(0)
}

pub(super) fn empty_user_message(param: String) -> ConvertError {
    ConvertError::invalid(
        param,
        "a user message must have content; this one is empty (or holds only empty text)",
    )
}

pub(super) fn call_id<'a>(
    item: &InputItem<'a>,
    path: &ItemPath,
) -> Result<Cow<'a, str>, ConvertError> {
    item.call_id
        .clone()
        .map(Str::into_cow)
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.call_id")))
}

/// Where an item (or one of its fields) is in `input`: `input[3].content`.
///
/// Written out only when a loss or an error names it, so translating an
/// item costs no string formatting.
#[derive(Debug, Clone, Copy)]
pub(super) struct ItemPath {
    pub(super) index: usize,
    pub(super) field: &'static str,
}

impl fmt::Display for ItemPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "input[{}]{}", self.index, self.field)
    }
}

impl From<ItemPath> for String {
    fn from(path: ItemPath) -> String {
        path.to_string()
    }
}

impl From<&ItemPath> for String {
    fn from(path: &ItemPath) -> String {
        path.to_string()
    }
}
