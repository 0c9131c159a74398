//! Chat `messages` → Responses `input` items.
//!
//! Each message becomes items in order, roles kept. An assistant message
//! becomes its text and refusal as one message item, then one item per tool
//! call; a `tool` message becomes the output item matching its call's kind.

use std::borrow::Cow;

use wirebridge_wire::chat::lenient::{Content, Message, ToolCall};
use wirebridge_wire::responses::strict::{
    CustomToolCall, FunctionCall, InputItem, Message as InputMessage, MessageContent, OutputPart,
    Role, ToolCallOutput,
};

use super::content::{arguments, input_parts, parse_content, required_text, tool_output};
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// Translates the conversation into input items.
pub(super) fn translate_messages<'a>(
    messages: &[Message<'a>],
    losses: &mut LossRecorder<'_>,
) -> Result<Vec<InputItem<'a>>, ConvertError> {
    let mut builder = Builder {
        items: Vec::with_capacity(messages.len() + messages.len() / 2),
        custom_calls: Vec::new(),
        legacy_calls: Vec::new(),
    };
    for (i, message) in messages.iter().enumerate() {
        builder.message(message, i, losses)?;
    }
    Ok(builder.items)
}

/// A legacy `function_call` waiting for its `function` message.
struct LegacyCall<'a> {
    name: Cow<'a, str>,
    call_id: String,
    answered: bool,
}

struct Builder<'a> {
    items: Vec<InputItem<'a>>,
    /// Ids of custom tool calls: their results are `custom_tool_call_output`.
    custom_calls: Vec<Cow<'a, str>>,
    /// Legacy function calls, in order, with the ids generated for them.
    legacy_calls: Vec<LegacyCall<'a>>,
}

impl<'a> Builder<'a> {
    fn message(
        &mut self,
        message: &Message<'a>,
        i: usize,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        let path = format!("messages[{i}]");
        let role = match message.role.as_deref() {
            Some("system") => Role::System,
            Some("developer") => Role::Developer,
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("tool") => return self.tool(message, &path, losses),
            Some("function") => return self.function(message, &path, losses),
            Some(other) => {
                return Err(ConvertError::invalid(
                    format!("{path}.role"),
                    format!("unknown role '{other}' (expected system, developer, user, assistant, tool or function)"),
                ))
            }
            None => return Err(ConvertError::MissingField(format!("{path}.role"))),
        };
        if message.name.is_some() {
            losses.record(
                LossKind::UnsupportedParameter,
                format!("{path}.name"),
                "Responses messages have no participant name",
            )?;
        }
        if role == Role::Assistant {
            return self.assistant(message, i, &path, losses);
        }
        let content_path = format!("{path}.content");
        let raw = message
            .content
            .ok_or_else(|| ConvertError::MissingField(content_path.clone()))?;
        let content = match parse_content(raw, &content_path)? {
            Some(Content::Text(text)) => MessageContent::Text(text.into()),
            Some(Content::Parts(parts)) => {
                MessageContent::Input(input_parts(parts, &content_path, losses)?)
            }
            None => return Err(ConvertError::MissingField(content_path)),
        };
        if role == Role::User && is_empty(&content) {
            return Err(ConvertError::invalid(
                content_path,
                "a user message must have content; this one is empty (or holds only empty text)",
            ));
        }
        self.items
            .push(InputItem::Message(InputMessage::input(role, content)));
        Ok(())
    }

    fn assistant(
        &mut self,
        message: &Message<'a>,
        i: usize,
        path: &str,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        let has_calls = message.tool_calls.as_ref().is_some_and(|c| !c.is_empty())
            || message.function_call.is_some();
        let content_path = format!("{path}.content");
        let mut parts = Vec::new();
        match message.content.map(|raw| parse_content(raw, &content_path)) {
            None | Some(Ok(None)) => {}
            Some(Err(e)) => return Err(e),
            // An empty string next to tool calls is how many clients write "no text".
            Some(Ok(Some(Content::Text(text)))) if text.is_empty() && has_calls => {}
            Some(Ok(Some(Content::Text(text)))) => parts.push(OutputPart::text(text.into())),
            Some(Ok(Some(Content::Parts(list)))) => {
                for (j, part) in list.into_iter().enumerate() {
                    let part_path = format!("{content_path}[{j}]");
                    match part.kind() {
                        "text" => parts.push(OutputPart::text(required_text(
                            part.text, &part_path, "text",
                        )?)),
                        "refusal" => parts.push(OutputPart::Refusal {
                            refusal: required_text(part.refusal, &part_path, "refusal")?,
                        }),
                        other => losses.record(
                            LossKind::UnsupportedContent,
                            part_path,
                            format!("'{other}' parts cannot appear in an assistant message"),
                        )?,
                    }
                }
            }
        }
        if let Some(refusal) = message.refusal {
            parts.push(OutputPart::Refusal {
                refusal: refusal.into(),
            });
        }
        if message.audio.is_some() {
            losses.record(
                LossKind::UnsupportedParameter,
                format!("{path}.audio"),
                "Responses cannot refer to an earlier audio answer",
            )?;
        }
        for (field, value) in [
            ("reasoning_content", message.reasoning_content),
            ("reasoning", message.reasoning),
        ] {
            if value.is_some_and(|r| r.get() != "null") {
                losses.record(
                    LossKind::ReasoningHistory,
                    format!("{path}.{field}"),
                    "Responses replays only its own reasoning items, not reasoning text",
                )?;
            }
        }
        if !parts.is_empty() {
            // The spec's input union takes assistant history in the
            // `OutputMessage` shape, which requires an id; a stable one keeps
            // the prompt prefix identical from turn to turn.
            let id = Cow::Owned(format!("msg_chat_{i}"));
            self.items
                .push(InputItem::Message(InputMessage::assistant(id, parts)));
        }
        for (j, call) in message.tool_calls.iter().flatten().enumerate() {
            self.tool_call(call, &format!("{path}.tool_calls[{j}]"))?;
        }
        if let Some(call) = &message.function_call {
            let call_path = format!("{path}.function_call");
            let name = call
                .name
                .clone()
                .ok_or_else(|| ConvertError::MissingField(format!("{call_path}.name")))?;
            // Legacy calls have no id; one derived from the position links
            // the call with the `function` message that answers it.
            let call_id = format!("call_fn_{i}");
            self.items.push(InputItem::FunctionCall(FunctionCall::new(
                Cow::Owned(call_id.clone()),
                name.clone().into(),
                arguments(call.arguments),
            )));
            self.legacy_calls.push(LegacyCall {
                name: name.into(),
                call_id,
                answered: false,
            });
        }
        Ok(())
    }

    fn tool_call(&mut self, call: &ToolCall<'a>, path: &str) -> Result<(), ConvertError> {
        let call_id = call
            .id
            .clone()
            .ok_or_else(|| ConvertError::MissingField(format!("{path}.id")))?;
        match call.kind() {
            "function" => {
                let function = call
                    .function
                    .as_ref()
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.function")))?;
                let name = function
                    .name
                    .clone()
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.function.name")))?;
                self.items.push(InputItem::FunctionCall(FunctionCall::new(
                    call_id.into(),
                    name.into(),
                    arguments(function.arguments),
                )));
            }
            "custom" => {
                let custom = call
                    .custom
                    .as_ref()
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.custom")))?;
                let name = custom
                    .name
                    .clone()
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.custom.name")))?;
                let input = custom
                    .input
                    .ok_or_else(|| ConvertError::MissingField(format!("{path}.custom.input")))?;
                self.custom_calls.push(call_id.clone().into());
                self.items
                    .push(InputItem::CustomToolCall(CustomToolCall::new(
                        call_id.into(),
                        name.into(),
                        input.into(),
                    )));
            }
            other => {
                return Err(ConvertError::invalid(
                    format!("{path}.type"),
                    format!("unknown tool call type '{other}' (expected function or custom)"),
                ))
            }
        }
        Ok(())
    }

    fn tool(
        &mut self,
        message: &Message<'a>,
        path: &str,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        let call_id = message
            .tool_call_id
            .clone()
            .ok_or_else(|| ConvertError::MissingField(format!("{path}.tool_call_id")))?;
        let output = tool_output(message.content, &format!("{path}.content"), losses)?;
        let result = ToolCallOutput {
            call_id: call_id.into(),
            output,
        };
        let custom = self.custom_calls.contains(&result.call_id);
        self.items.push(if custom {
            InputItem::CustomToolCallOutput(result)
        } else {
            InputItem::FunctionCallOutput(result)
        });
        Ok(())
    }

    fn function(
        &mut self,
        message: &Message<'a>,
        path: &str,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        let name = message
            .name
            .as_deref()
            .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?;
        let call = self
            .legacy_calls
            .iter_mut()
            .find(|c| !c.answered && c.name == name)
            .ok_or_else(|| {
                ConvertError::invalid(
                    format!("{path}.name"),
                    format!(
                        "no earlier assistant function_call to '{name}' is waiting for this result"
                    ),
                )
            })?;
        call.answered = true;
        let call_id = Cow::Owned(call.call_id.clone());
        let output = tool_output(message.content, &format!("{path}.content"), losses)?;
        self.items
            .push(InputItem::FunctionCallOutput(ToolCallOutput {
                call_id,
                output,
            }));
        Ok(())
    }
}

/// Whether message content says nothing: no parts, or only empty text.
fn is_empty(content: &MessageContent<'_>) -> bool {
    match content {
        MessageContent::Text(text) => text.is_empty(),
        MessageContent::Input(parts) => parts.iter().all(|p| {
            matches!(p, wirebridge_wire::responses::strict::InputPart::InputText { text, .. } if text.is_empty())
        }),
        MessageContent::Output(parts) => parts.is_empty(),
    }
}
