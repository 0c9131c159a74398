//! Responses `input` items → Chat `messages`: messages and their content
//! parts, function and custom tool calls, and tool outputs.

use std::borrow::Cow;

use serde_json::value::RawValue;
use wirebridge_wire::chat::strict::{
    ChatMessage, ChatPart, FileRef, FunctionCall, ImageUrl, MessageContent, Role, ToolCall,
};
use wirebridge_wire::raw::{json_as_string_literal, JsonStr, JsonText};
use wirebridge_wire::responses::lenient::{Content, ContentPart, InputItem, ItemKind};
use wirebridge_wire::Str;

use super::builder::{call_id, empty_user_message, Builder, ItemPath};
use super::compaction_items::{summary_message, Place};
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

impl<'a> Builder<'a, '_> {
    pub(super) fn item(
        &mut self,
        item: &InputItem<'a>,
        i: usize,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        let path = ItemPath {
            index: i,
            field: "",
        };
        match self.cut.place(i, item) {
            Place::Kept => {}
            Place::Superseded => return Ok(()),
            Place::Orphaned => {
                return losses.record(
                    LossKind::UnsupportedItem,
                    path,
                    "the call this result answers was compacted away, and Chat takes no tool \
                     result without its call",
                )
            }
        }
        match item.classify() {
            ItemKind::Message => self.message(item, &path, losses),
            ItemKind::FunctionCall => self.function_call(item, &path),
            ItemKind::CustomToolCall => self.custom_tool_call(item, &path),
            ItemKind::FunctionCallOutput | ItemKind::CustomToolCallOutput => {
                self.tool_output(item, &path, losses)
            }
            ItemKind::Reasoning => self.reasoning(item, &path, losses),
            // Its tools were offered with the request's.
            ItemKind::AdditionalTools => Ok(()),
            ItemKind::ToolSearchCall => self.tool_search_call(item, &path),
            ItemKind::ToolSearchOutput => self.tool_search_output(item, &path),
            // Codex's record of a compaction reads as one when it carries
            // a summary; without one it stands for nothing (see `Cut`).
            ItemKind::Compaction | ItemKind::ContextCompaction => self.compaction(&path, losses),
            // Acted on before translating (`ParsedRequest::compaction`), or
            // reported; in stored history, it says nothing.
            ItemKind::CompactionTrigger => Ok(()),
            // Client-side bookkeeping: the settings it records are the
            // request's own to give (`reasoning`, `text`), and the model
            // reads nothing in it. Left out, not lost.
            ItemKind::ConfigurationUpdate => Ok(()),
            ItemKind::AgentMessage => self.agent_message(item, &path, losses),
            ItemKind::ItemReference => losses.record(
                LossKind::StatefulFeature,
                path,
                "item references point at stored items, and this bridge stores none",
            ),
            ItemKind::Other => losses.record(
                LossKind::UnsupportedItem,
                path,
                format!(
                    "'{}' items have no Chat Completions equivalent",
                    item.type_name()
                ),
            ),
        }
    }

    fn message(
        &mut self,
        item: &InputItem<'a>,
        path: &ItemPath,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        let role = match item.role.as_deref() {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("system") => Role::System,
            Some("developer") if self.options.profile.developer_role => Role::Developer,
            Some("developer") => Role::System,
            Some(other) => {
                return Err(ConvertError::invalid(
                    format!("{path}.role"),
                    format!(
                        "unknown role '{other}' (expected user, assistant, system or developer)"
                    ),
                ))
            }
            None => return Err(ConvertError::MissingField(format!("{path}.role"))),
        };
        let content = item
            .parse_content()
            .ok_or_else(|| ConvertError::MissingField(format!("{path}.content")))?
            .map_err(|e| ConvertError::from_parse_at(&format!("{path}.content"), e))?;
        let content_path = ItemPath {
            index: path.index,
            field: ".content",
        };
        // An assistant message's `phase` (`commentary`, `final_answer`, or
        // Codex's `partial_answer`) is left behind without a loss: Chat has
        // no such field and its models read none, and the phase says how the
        // text stood to the calls after it, which the history itself shows.
        let mut message = match role {
            Role::Assistant => assistant_message(content, &content_path, losses)?,
            _ => ChatMessage::new(role, self.content(content, role, &content_path, losses)?),
        };
        if role == Role::User && is_empty(&message.content) {
            return Err(empty_user_message(content_path.to_string()));
        }
        if role == Role::Assistant {
            self.attach_reasoning(&mut message);
        }
        self.push(message);
        Ok(())
    }

    /// A message from another agent, as a `user` message with its content
    /// (as Codex itself sends one to a provider that has no such item). Its
    /// `encrypted_content` parts open only on the server that sealed them:
    /// lost, each reported; with nothing readable left the item is left
    /// out rather than sent empty.
    fn agent_message(
        &mut self,
        item: &InputItem<'a>,
        path: &ItemPath,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        let content_path = ItemPath {
            index: path.index,
            field: ".content",
        };
        // Without content it says nothing: nothing to send, nothing lost.
        let Some(content) = item.parse_content() else {
            return Ok(());
        };
        let content =
            content.map_err(|e| ConvertError::from_parse_at(&content_path.to_string(), e))?;
        let content = self.content(content, Role::User, &content_path, losses)?;
        if !is_empty(&content) {
            self.push(ChatMessage::new(Role::User, content));
        }
        Ok(())
    }

    fn content(
        &self,
        content: Content<'a>,
        role: Role,
        path: &ItemPath,
        losses: &mut LossRecorder<'_>,
    ) -> Result<MessageContent<'a>, ConvertError> {
        let parts = match content {
            Content::Text(text) => return Ok(MessageContent::Text(text.into())),
            Content::Parts(parts) => parts,
        };
        let mut out = Vec::with_capacity(parts.len());
        for (i, part) in parts.into_iter().enumerate() {
            let part_path = || format!("{path}[{i}]");
            if let Some(converted) = input_part(part, &part_path, losses)? {
                if role != Role::User && !matches!(converted, ChatPart::Text { .. }) {
                    losses.record(
                        LossKind::UnsupportedContent,
                        part_path(),
                        "Chat system and developer messages carry only text",
                    )?;
                    continue;
                }
                out.push(converted);
            }
        }
        Ok(self.text_or_parts(out))
    }

    /// Text-only part lists become one string when there is one part, or when
    /// the backend wants strings; anything else stays a part list.
    fn text_or_parts(&self, parts: Vec<ChatPart<'a>>) -> MessageContent<'a> {
        let all_text = parts.iter().all(|p| matches!(p, ChatPart::Text { .. }));
        if all_text && (parts.len() == 1 || self.options.profile.text_parts_as_string) {
            let texts = parts.into_iter().map(|p| match p {
                ChatPart::Text { text } => text,
                _ => unreachable!("checked above"),
            });
            return MessageContent::Text(join_texts(texts, r"\n\n"));
        }
        MessageContent::Parts(parts)
    }

    fn function_call(&mut self, item: &InputItem<'a>, path: &ItemPath) -> Result<(), ConvertError> {
        let name = item
            .name
            .as_deref()
            .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?;
        let call_id = call_id(item, path)?;
        let arguments = match item.arguments {
            None => JsonText::from_text("{}"),
            Some(raw) => match JsonStr::new(raw) {
                Some(text) => text.into(),
                // Some clients send the arguments as an object; Chat wants text.
                None => JsonText::Owned(json_as_string_literal(raw)),
            },
        };
        let chat_name = self
            .names
            .chat_name(name, item.namespace.as_deref())
            .map(|n| Cow::Owned(n.to_owned()))
            .unwrap_or_else(|| item.name.clone().unwrap_or_default().into());
        self.push_tool_call(ToolCall::Function {
            id: call_id,
            function: FunctionCall {
                name: chat_name,
                arguments,
            },
        });
        Ok(())
    }

    fn custom_tool_call(
        &mut self,
        item: &InputItem<'a>,
        path: &ItemPath,
    ) -> Result<(), ConvertError> {
        let name = item
            .name
            .as_deref()
            .ok_or_else(|| ConvertError::MissingField(format!("{path}.name")))?;
        let call_id = call_id(item, path)?;
        let input = item.input.map(|r| r.get()).unwrap_or(JsonStr::EMPTY);
        // The custom tool was offered as a function taking {"input": string}.
        let arguments_json = format!("{{\"input\":{input}}}");
        let arguments = RawValue::from_string(arguments_json)
            .map_err(|_| ConvertError::invalid(format!("{path}.input"), "must be a string"))?;
        let chat_name = self
            .names
            .chat_name(name, item.namespace.as_deref())
            .unwrap_or(name)
            .to_owned();
        self.push_tool_call(ToolCall::Function {
            id: call_id,
            function: FunctionCall {
                name: Cow::Owned(chat_name),
                arguments: JsonText::Owned(json_as_string_literal(&arguments)),
            },
        });
        Ok(())
    }

    fn tool_output(
        &mut self,
        item: &InputItem<'a>,
        path: &ItemPath,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        let call_id = call_id(item, path)?;
        let output_path = ItemPath {
            index: path.index,
            field: ".output",
        };
        let raw = item
            .output
            .ok_or_else(|| ConvertError::MissingField(output_path.to_string()))?;
        let content = Content::from_raw(raw)
            .map_err(|e| ConvertError::from_parse_at(&output_path.to_string(), e))?;
        let mut texts = Vec::new();
        let mut attachments = Vec::new();
        match content {
            Content::Text(text) => texts.push(JsonText::from(text)),
            Content::Parts(parts) => {
                for (i, part) in parts.into_iter().enumerate() {
                    match input_part(part, &|| format!("{output_path}[{i}]"), losses)? {
                        Some(ChatPart::Text { text }) => texts.push(text),
                        Some(other) => attachments.push(other),
                        None => {}
                    }
                }
            }
        }
        let mut message =
            ChatMessage::new(Role::Tool, MessageContent::Text(join_texts(texts, r"\n")));
        message.tool_call_id = Some(call_id.clone());
        self.push(message);
        if !attachments.is_empty() {
            // Chat tool messages carry only text: images and files the tool
            // returned reach the model as a user message right after the turn's
            // tool results, introduced so the model knows where they came from.
            let intro =
                JsonText::from_text(&format!("Attachments returned by tool call {call_id}:"));
            let mut parts = vec![ChatPart::Text { text: intro }];
            parts.append(&mut attachments);
            self.deferred
                .push(ChatMessage::new(Role::User, MessageContent::Parts(parts)));
        }
        Ok(())
    }
}

impl Builder<'_, '_> {
    /// A `compaction` item: its summary where it is the latest, a loss
    /// where it cannot be opened.
    fn compaction(
        &mut self,
        path: &ItemPath,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        match self.cut.summary(path.index) {
            Ok(Some(summary)) => {
                let message = summary_message(summary);
                self.push(message);
                Ok(())
            }
            // An earlier one: the latest stands for it.
            Ok(None) => Ok(()),
            Err(why) => {
                let reason = format!(
                    "the compaction cannot be read ({why}), so the conversation it summarized is \
                     not sent"
                );
                losses.record(
                    LossKind::UnsupportedItem,
                    format!("{path}.encrypted_content"),
                    reason,
                )
            }
        }
    }

    /// After the last item: the summary of a conversation compacted for
    /// this request.
    pub(super) fn trailing_summary(&mut self) {
        if let Some(summary) = self.cut.take_trailing() {
            self.push(summary_message(&summary));
        }
    }
}

/// Whether message content says nothing: no parts, or only empty text.
fn is_empty(content: &MessageContent<'_>) -> bool {
    match content {
        MessageContent::Text(text) => text.is_empty(),
        MessageContent::Parts(parts) => parts
            .iter()
            .all(|p| matches!(p, ChatPart::Text { text } if text.is_empty())),
        _ => false,
    }
}

fn join_texts<'a>(
    texts: impl IntoIterator<Item = JsonText<'a>>,
    escaped_separator: &str,
) -> JsonText<'a> {
    let mut texts: Vec<JsonText<'a>> = texts.into_iter().collect();
    match texts.len() {
        0 => JsonText::from_text(""),
        1 => texts.pop().expect("one element"),
        _ => {
            let escaped: Vec<&str> = texts.iter().map(JsonText::escaped).collect();
            JsonText::from_escaped(&escaped.join(escaped_separator))
        }
    }
}

/// An assistant message from history: text parts joined, refusal apart.
fn assistant_message<'a>(
    content: Content<'a>,
    path: &ItemPath,
    losses: &mut LossRecorder<'_>,
) -> Result<ChatMessage<'a>, ConvertError> {
    let parts = match content {
        Content::Text(text) => {
            return Ok(ChatMessage::new(
                Role::Assistant,
                MessageContent::Text(text.into()),
            ))
        }
        Content::Parts(parts) => parts,
    };
    let mut texts = Vec::new();
    let mut refusals = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        match (part.kind(), part.text, part.refusal) {
            ("output_text" | "input_text" | "text", Some(text), _) => {
                texts.push(JsonText::from(text))
            }
            ("refusal", _, Some(refusal)) => refusals.push(JsonText::from(refusal)),
            (kind, _, _) => losses.record(
                LossKind::UnsupportedContent,
                format!("{path}[{i}]"),
                format!("'{kind}' parts cannot appear in a Chat assistant message"),
            )?,
        }
    }
    let content = if texts.is_empty() {
        MessageContent::Null
    } else {
        MessageContent::Text(join_texts(texts, ""))
    };
    let mut message = ChatMessage::new(Role::Assistant, content);
    if !refusals.is_empty() {
        message.refusal = Some(join_texts(refusals, ""));
    }
    Ok(message)
}

/// One input content part as a Chat part, or `None` if it was dropped.
///
/// `path` names the part; it is built only when a loss or an error needs it.
fn input_part<'a>(
    part: ContentPart<'a>,
    path: &dyn Fn() -> String,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<ChatPart<'a>>, ConvertError> {
    let kind = part.kind();
    Ok(Some(match kind {
        "input_text" | "output_text" | "text" => {
            let text = part
                .text
                .ok_or_else(|| ConvertError::MissingField(format!("{}.text", path())))?;
            ChatPart::Text { text: text.into() }
        }
        "input_image" | "image_url" => {
            let Some(url) = image_url(part.image_url) else {
                let reason = if part.file_id.is_some() {
                    "images referenced by file_id cannot be sent to a Chat backend; send the image as a URL or data URL"
                } else {
                    "the image has no image_url"
                };
                losses.record(LossKind::UnsupportedContent, path(), reason)?;
                return Ok(None);
            };
            ChatPart::ImageUrl {
                image_url: ImageUrl {
                    url: url.into(),
                    detail: part.detail.clone().map(Str::into_cow),
                },
            }
        }
        "input_file" | "file" => {
            if part.file_data.is_none() && part.file_id.is_none() {
                losses.record(
                    LossKind::UnsupportedContent,
                    path(),
                    "Chat file parts take file_data or file_id; a file_url cannot be sent",
                )?;
                return Ok(None);
            }
            ChatPart::File {
                file: FileRef {
                    file_data: part.file_data.map(Into::into),
                    file_id: part.file_id.map(Into::into),
                    filename: part.filename.map(Into::into),
                },
            }
        }
        "input_audio" => {
            let audio = match (part.input_audio, part.data) {
                (Some(raw), _) if raw.get().starts_with('{') => Cow::Borrowed(raw),
                (_, Some(data)) => {
                    // The audio, base64 and often large, is copied as sent.
                    #[derive(serde::Serialize)]
                    struct Audio<'a> {
                        data: JsonText<'a>,
                        format: &'a str,
                    }
                    let audio = Audio {
                        data: data.into(),
                        format: part.format.as_deref().unwrap_or("wav"),
                    };
                    Cow::Owned(serde_json::value::to_raw_value(&audio).expect("audio serializes"))
                }
                _ => {
                    return Err(ConvertError::MissingField(format!(
                        "{}.input_audio",
                        path()
                    )))
                }
            };
            ChatPart::InputAudio { input_audio: audio }
        }
        "refusal" => {
            let refusal = part
                .refusal
                .ok_or_else(|| ConvertError::MissingField(format!("{}.refusal", path())))?;
            ChatPart::Text {
                text: refusal.into(),
            }
        }
        other => {
            losses.record(
                LossKind::UnsupportedContent,
                path(),
                format!("'{other}' content parts have no Chat Completions equivalent"),
            )?;
            return Ok(None);
        }
    }))
}

/// `image_url` as a string, or as `{url}` (some clients send the Chat shape).
fn image_url(raw: Option<&RawValue>) -> Option<JsonStr<'_>> {
    let raw = raw?;
    if let Some(url) = JsonStr::new(raw) {
        return Some(url);
    }
    #[derive(serde::Deserialize)]
    struct Nested<'b> {
        #[serde(borrow)]
        url: JsonStr<'b>,
    }
    serde_json::from_str::<Nested<'_>>(raw.get())
        .ok()
        .map(|n| n.url)
}
