//! The conversation: Responses input items as Messages `system` blocks and
//! alternating `user` and `assistant` messages.
//!
//! Items of one speaker in a row make one message (a reply's reasoning,
//! text and calls are one assistant message; the outputs of its calls and
//! the user's next words one user message, the results first, as Messages
//! requires). System and developer messages before the conversation start
//! are the `system` prompt; one later on is said to the model where it
//! stands, as user text, since Messages has no system turn.

use std::borrow::Cow;

use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::{Content, ContentPart, InputItem, ItemKind};
use wirebridge_wire::JsonStr;

use super::at::At;
use super::carrier;
use super::content::Parts;
use super::tools::Declared;
use super::write::{string, Block, Built, Json, Message, Role, ToolResultContent};
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;
use crate::responses_to_chat::Seal;

/// The `system` blocks and the messages.
#[derive(Debug, Default)]
pub(super) struct Conversation<'a> {
    pub system: Vec<Block<'a>>,
    pub messages: Vec<Message<'a>>,
}

impl<'a> Conversation<'a> {
    /// Appends a block to the last message when `role` spoke last, else
    /// starts a message.
    fn push(&mut self, role: Role, block: Block<'a>) {
        match self.messages.last_mut() {
            Some(last) if last.role == role => last.content.push(block),
            _ => self.messages.push(Message {
                role,
                content: vec![block],
            }),
        }
    }

    /// Tool results open their user message: Messages reads them first.
    fn finish(mut self) -> Self {
        for message in &mut self.messages {
            if message.role == Role::User {
                let (mut results, others): (Vec<_>, Vec<_>) =
                    message.content.drain(..).partition(Block::is_tool_result);
                results.extend(others);
                message.content = results;
            }
        }
        self
    }
}

/// What reading the items needs.
pub(super) struct Reader<'r, 'p> {
    pub tools: &'r Declared,
    pub seal: Option<&'r Seal>,
    pub losses: &'r mut LossRecorder<'p>,
}

impl Reader<'_, '_> {
    /// Reads `instructions` and the items, in order.
    pub(super) fn read<'a>(
        &mut self,
        instructions: Option<JsonStr<'a>>,
        items: &[InputItem<'a>],
    ) -> Result<Conversation<'a>, ConvertError> {
        let mut conversation = Conversation::default();
        if let Some(text) = instructions.filter(|t| !t.is_empty()) {
            conversation
                .system
                .push(Block::text(Cow::Borrowed(text.raw())));
        }
        for (n, item) in items.iter().enumerate() {
            self.item(&mut conversation, item, At::Item(n))?;
        }
        Ok(conversation.finish())
    }

    fn item<'a>(
        &mut self,
        conversation: &mut Conversation<'a>,
        item: &InputItem<'a>,
        at: At<'_>,
    ) -> Result<(), ConvertError> {
        match item.classify() {
            ItemKind::Message => self.message(conversation, item, at),
            ItemKind::FunctionCall => {
                let call = self.call(item, at, false)?;
                conversation.push(Role::Assistant, call);
                Ok(())
            }
            ItemKind::CustomToolCall => {
                let call = self.call(item, at, true)?;
                conversation.push(Role::Assistant, call);
                Ok(())
            }
            ItemKind::FunctionCallOutput | ItemKind::CustomToolCallOutput => {
                let result = self.result(item, at)?;
                conversation.push(Role::User, result);
                Ok(())
            }
            ItemKind::Reasoning => {
                if let Some(block) = self.reasoning(item, at)? {
                    conversation.push(Role::Assistant, block);
                }
                Ok(())
            }
            // Nothing for the model to read.
            ItemKind::ConfigurationUpdate => Ok(()),
            _ => self.losses.record(
                LossKind::UnsupportedItem,
                at.to_string(),
                format!(
                    "a `{}` item has no Messages form and is not sent",
                    item.type_name()
                ),
            ),
        }
    }

    fn message<'a>(
        &mut self,
        conversation: &mut Conversation<'a>,
        item: &InputItem<'a>,
        at: At<'_>,
    ) -> Result<(), ConvertError> {
        let role = item.role.as_deref().unwrap_or("user");
        let content = match item.parse_content() {
            Some(Ok(content)) => content,
            Some(Err(e)) => {
                return Err(ConvertError::invalid(
                    at.field("content").to_string(),
                    e.to_string(),
                ))
            }
            None => return Ok(()),
        };
        let blocks = self.content(content, at.field("content"))?;
        match role {
            "assistant" => {
                for block in blocks {
                    conversation.push(Role::Assistant, block);
                }
            }
            "system" | "developer" if conversation.messages.is_empty() => {
                for (n, block) in blocks.into_iter().enumerate() {
                    if is_text(&block) {
                        conversation.system.push(block);
                    } else {
                        self.losses.record(
                            LossKind::UnsupportedContent,
                            at.field("content").index(n).to_string(),
                            "a Messages system prompt holds only text",
                        )?;
                    }
                }
            }
            "user" | "system" | "developer" => {
                for block in blocks {
                    conversation.push(Role::User, block);
                }
            }
            other => {
                return Err(ConvertError::invalid(
                    at.field("role").to_string(),
                    format!("`{other}` is not a role a message can have"),
                ))
            }
        }
        Ok(())
    }

    fn content<'a>(
        &mut self,
        content: Content<'a>,
        at: At<'_>,
    ) -> Result<Vec<Block<'a>>, ConvertError> {
        let parts: Vec<ContentPart<'a>> = match content {
            Content::Text(text) if text.is_empty() => return Ok(Vec::new()),
            Content::Text(text) => return Ok(vec![Block::text(Cow::Borrowed(text.raw()))]),
            Content::Parts(parts) => parts,
        };
        let mut blocks = Vec::with_capacity(parts.len());
        for (n, part) in parts.iter().enumerate() {
            if let Some(block) = Parts::new(self.losses).block(part, at.index(n))? {
                blocks.push(block);
            }
        }
        Ok(blocks)
    }

    /// A call as `tool_use`, under the name the backend was offered.
    fn call<'a>(
        &mut self,
        item: &InputItem<'a>,
        at: At<'_>,
        custom: bool,
    ) -> Result<Block<'a>, ConvertError> {
        let id = item.call_id.as_ref().ok_or_else(|| {
            ConvertError::invalid(
                at.field("call_id").to_string(),
                "a call needs its `call_id`",
            )
        })?;
        let name = item.name.as_deref().ok_or_else(|| {
            ConvertError::invalid(
                at.field("name").to_string(),
                "a call needs its tool's `name`",
            )
        })?;
        let name = self.tools.backend_name(name, item.namespace.as_deref());
        let input: Json<'a> =
            if custom {
                let text = item.input.map_or("\"\"", RawValue::get);
                let wrapped = format!(r#"{{"input":{text}}}"#);
                Cow::Owned(RawValue::from_string(wrapped).map_err(|e| {
                    ConvertError::invalid(at.field("input").to_string(), e.to_string())
                })?)
            } else {
                arguments(item.arguments, at, self.losses)?
            };
        Ok(Block::Built(Built::ToolUse {
            id: string(id.as_str()),
            name,
            input,
            cache_control: None,
        }))
    }

    fn result<'a>(&mut self, item: &InputItem<'a>, at: At<'_>) -> Result<Block<'a>, ConvertError> {
        let id = item.call_id.as_ref().ok_or_else(|| {
            ConvertError::invalid(
                at.field("call_id").to_string(),
                "a call's output needs its `call_id`",
            )
        })?;
        let output = item.output.unwrap_or_else(|| empty_string());
        let content = match Content::from_raw(output) {
            Ok(Content::Text(text)) => ToolResultContent::Text(Cow::Borrowed(text.raw())),
            Ok(parts) => ToolResultContent::Blocks(self.content(parts, at.field("output"))?),
            Err(e) => {
                return Err(ConvertError::invalid(
                    at.field("output").to_string(),
                    e.to_string(),
                ))
            }
        };
        Ok(Block::Built(Built::ToolResult {
            tool_use_id: string(id.as_str()),
            content,
            cache_control: None,
        }))
    }

    /// The thinking block a reasoning item carries; `None` for reasoning
    /// that a Messages backend did not write, which it cannot read back
    /// (it takes only thinking it signed).
    fn reasoning(
        &mut self,
        item: &InputItem<'_>,
        at: At<'_>,
    ) -> Result<Option<Block<'static>>, ConvertError> {
        let carried = item
            .encrypted_content
            .and_then(JsonStr::new)
            .map(|c| c.decode())
            .filter(|c| carrier::is_carrier(c));
        let Some(carried) = carried else {
            let said = item.summary.is_some_and(|s| s.get() != "[]")
                || item
                    .content
                    .is_some_and(|c| c.get() != "[]" && c.get() != "null");
            if said || item.encrypted_content.is_some() {
                self.losses.record(
                    LossKind::ReasoningHistory,
                    at.to_string(),
                    "reasoning a Messages backend did not write cannot be replayed to it (it reads only thinking it signed)",
                )?;
            }
            return Ok(None);
        };
        match carrier::open(&carried, self.seal) {
            Ok(block) => Ok(Some(Block::Kept(block))),
            Err(why) => Err(ConvertError::invalid(
                at.field("encrypted_content").to_string(),
                format!("the thinking it carries cannot be replayed: {why}"),
            )),
        }
    }
}

fn is_text(block: &Block<'_>) -> bool {
    matches!(block, Block::Built(Built::Text { .. }))
}

fn empty_string() -> &'static RawValue {
    static EMPTY: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| RawValue::from_string("\"\"".into()).expect("valid JSON"))
}

/// A function call's `arguments` (a JSON text in a string, or from some
/// clients an object) as the object `tool_use.input` takes.
fn arguments<'a>(
    arguments: Option<&'a RawValue>,
    at: At<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<Json<'a>, ConvertError> {
    let Some(raw) = arguments else {
        return Ok(Cow::Owned(
            RawValue::from_string("{}".into()).expect("valid JSON"),
        ));
    };
    if raw.get().starts_with('{') {
        return Ok(Cow::Borrowed(raw));
    }
    let text = JsonStr::new(raw).map(JsonStr::decode).unwrap_or_default();
    let text = text.trim();
    match serde_json::from_str::<Box<RawValue>>(if text.is_empty() { "{}" } else { text }) {
        Ok(object) if object.get().starts_with('{') => Ok(Cow::Owned(object)),
        _ => {
            losses.record(
                LossKind::UnsupportedContent,
                at.field("arguments").to_string(),
                "arguments that are not a JSON object cannot be a Messages `tool_use` input; sent as {}",
            )?;
            Ok(Cow::Owned(
                RawValue::from_string("{}".into()).expect("valid JSON"),
            ))
        }
    }
}
