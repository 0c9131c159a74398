//! History a client replays that has no Chat item of its own: reasoning
//! (sent back on the next assistant message, for backends with
//! interleaved thinking) and tool searches (a call and its result, like a
//! function's).

use std::borrow::Cow;

use serde::Deserialize;
use wirebridge_wire::chat::strict::{ChatMessage, FunctionCall, MessageContent, Role, ToolCall};
use wirebridge_wire::raw::{json_as_string_literal, JsonStr, JsonText};
use wirebridge_wire::responses::lenient::{Content, InputItem};
use wirebridge_wire::responses::strict::WithheldReason;

use super::builder::{call_id, Builder, ItemPath};
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::profile::ReasoningField;
use crate::recorder::LossRecorder;
use crate::seal::{OpenError, PREFIX};

impl<'a> Builder<'a, '_> {
    pub(super) fn reasoning(
        &mut self,
        item: &InputItem<'a>,
        path: &ItemPath,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        if !self.options.profile.replay_reasoning {
            // The backend's model takes no reasoning back.
            self.withhold(item, WithheldReason::ModelMismatch);
            return losses.record(
                LossKind::ReasoningHistory,
                path,
                "reasoning from earlier turns is not replayed to this backend",
            );
        }
        if !self.replay.all_turns && path.index < self.turn_start {
            // An earlier turn's, which the client did not ask to replay:
            // withheld as asked, so listed but not a loss.
            self.withhold(item, WithheldReason::TurnBoundary);
            return Ok(());
        }
        // What the bridge sealed is the whole text; raw reasoning text is
        // the next best, summaries the fallback.
        if let Some(sealed) = item
            .encrypted_content
            .and_then(JsonStr::new)
            .filter(|s| !s.is_empty())
        {
            let sealed = sealed.decode();
            let opened = match &self.options.seal {
                Some(seal) => seal.open_reasoning(&sealed),
                None if sealed.starts_with(PREFIX) => Err(OpenError::Unopenable),
                None => Err(OpenError::Foreign),
            };
            match opened {
                Ok(text) => {
                    self.pending_reasoning.push(text);
                    return Ok(());
                }
                Err(why) => {
                    // Listed even when its summary is replayed below: the
                    // reasoning itself does not reach the model.
                    let reason = match why {
                        OpenError::Foreign => WithheldReason::ModelMismatch,
                        OpenError::Unopenable => WithheldReason::OrganizationMismatch,
                    };
                    self.withhold(item, reason);
                    losses.record(
                        LossKind::ReasoningHistory,
                        format!("{path}.encrypted_content"),
                        format!("encrypted reasoning cannot be replayed: {why}"),
                    )?
                }
            }
        }
        let mut texts = Vec::new();
        for raw in [item.content, item.summary].into_iter().flatten() {
            if let Ok(Content::Parts(parts)) = Content::from_raw(raw) {
                texts.extend(
                    parts
                        .iter()
                        .filter_map(|p| p.text)
                        .filter(|t| !t.is_empty()),
                );
            }
            if !texts.is_empty() {
                break;
            }
        }
        self.pending_reasoning
            .extend(texts.into_iter().map(JsonText::from));
        Ok(())
    }

    pub(super) fn attach_reasoning(&mut self, message: &mut ChatMessage<'a>) {
        if self.pending_reasoning.is_empty() {
            return;
        }
        let text = if self.pending_reasoning.len() == 1 {
            self.pending_reasoning.pop().expect("one element")
        } else {
            let escaped: Vec<&str> = self
                .pending_reasoning
                .iter()
                .map(JsonText::escaped)
                .collect();
            let joined = JsonText::from_escaped(&escaped.join(r"\n\n"));
            self.pending_reasoning.clear();
            joined
        };
        match self.options.profile.reasoning_field {
            ReasoningField::ReasoningContent => message.reasoning_content = Some(text),
            ReasoningField::Reasoning => message.reasoning = Some(text),
        }
    }

    /// A search the model ran: a call of the tool search function.
    pub(super) fn tool_search_call(
        &mut self,
        item: &InputItem<'a>,
        path: &ItemPath,
    ) -> Result<(), ConvertError> {
        let call_id = call_id(item, path)?;
        let arguments = match item.arguments.filter(|a| a.get() != "null") {
            None => JsonText::from_text("{}"),
            Some(raw) => match JsonStr::new(raw) {
                Some(text) => text.into(),
                None => JsonText::Owned(json_as_string_literal(raw)),
            },
        };
        let name = self
            .names
            .chat_name(TOOL_SEARCH, None)
            .unwrap_or(TOOL_SEARCH)
            .to_owned();
        self.push_tool_call(ToolCall::Function {
            id: call_id,
            function: FunctionCall {
                name: Cow::Owned(name),
                arguments,
            },
        });
        Ok(())
    }

    /// What a search loaded: the result of the call, naming the tools (they
    /// are offered to the backend with the request's own).
    pub(super) fn tool_search_output(
        &mut self,
        item: &InputItem<'a>,
        path: &ItemPath,
    ) -> Result<(), ConvertError> {
        let call_id = call_id(item, path)?;
        let names = item
            .tools
            .map(|raw| loaded_names(raw.get()))
            .unwrap_or_default();
        let text = match names.len() {
            0 => "No tools matched the search.".to_owned(),
            1 => format!("Loaded 1 tool: {}.", names[0]),
            n => format!("Loaded {n} tools: {}.", names.join(", ")),
        };
        let mut message =
            ChatMessage::new(Role::Tool, MessageContent::Text(JsonText::from_text(&text)));
        message.tool_call_id = Some(call_id);
        self.push(message);
        Ok(())
    }
}

/// The name a client-executed tool search is offered under.
pub(super) const TOOL_SEARCH: &str = "tool_search";

/// The names of loaded tools, namespaced ones as `namespace.name`.
fn loaded_names(tools: &str) -> Vec<String> {
    #[derive(Deserialize)]
    struct Loaded {
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        tools: Option<Vec<Loaded>>,
    }
    let loaded: Vec<Loaded> = serde_json::from_str(tools).unwrap_or_default();
    let mut names = Vec::new();
    for tool in loaded {
        match (tool.tools, tool.name) {
            (Some(inner), namespace) => {
                for t in inner {
                    if let Some(name) = t.name {
                        names.push(match &namespace {
                            Some(ns) => format!("{ns}.{name}"),
                            None => name,
                        });
                    }
                }
            }
            (None, Some(name)) => names.push(name),
            (None, None) => {}
        }
    }
    names
}
