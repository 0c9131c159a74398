//! Compaction items in a conversation: what each stands for, and which
//! part of the conversation the latest one replaces.

use wirebridge_wire::responses::lenient::{InputItem, ItemKind};

use super::super::builder::{Builder, ItemPath};
use super::super::Seal;
use super::carrier::{self, Unread};
use super::prompt::summary_message;
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// The compaction items of a conversation, opened.
#[derive(Debug, Default)]
pub(in crate::responses_to_chat) struct Cut {
    /// Each compaction item's summary, or why it has none, by item index.
    items: Vec<(usize, Result<String, Unread>)>,
    /// Where the latest summary stands: the items before it are its, but
    /// the client's own messages.
    at: Option<usize>,
    /// A summary standing after the last item: the conversation was just
    /// compacted for this request.
    trailing: Option<String>,
    /// The calls the summary stands for.
    calls: Vec<String>,
}

/// What becomes of an item of a compacted conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::responses_to_chat) enum Place {
    /// Translated as usual.
    Kept,
    /// Before the latest summary, which stands for it.
    Superseded,
    /// A tool result after the summary, whose call the summary stands
    /// for: Chat takes no result without its call.
    Orphaned,
}

impl Cut {
    /// Opens the compaction items among `items` with `seal`; `trailing` is
    /// a summary that stands after them all.
    pub(in crate::responses_to_chat) fn new(
        items: &[InputItem<'_>],
        seal: Option<&Seal>,
        trailing: Option<&str>,
    ) -> Result<Self, ConvertError> {
        let mut opened = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if item.classify() != ItemKind::Compaction {
                continue;
            }
            match carrier::open(item, seal) {
                Err(Unread::Missing) => {
                    return Err(ConvertError::MissingField(format!(
                        "input[{i}].encrypted_content"
                    )))
                }
                result => opened.push((i, result)),
            }
        }
        let at = match trailing {
            Some(_) => Some(items.len()),
            None => opened
                .iter()
                .rev()
                .find(|(_, summary)| summary.is_ok())
                .map(|(i, _)| *i),
        };
        let calls = match at {
            Some(at) => items[..at]
                .iter()
                .filter(|item| is_call(item.classify()))
                .filter_map(|item| item.call_id.as_deref().map(str::to_owned))
                .collect(),
            None => Vec::new(),
        };
        Ok(Self {
            items: opened,
            at,
            trailing: trailing.map(str::to_owned),
            calls,
        })
    }

    /// What becomes of the item at `index`.
    pub(in crate::responses_to_chat) fn place(&self, index: usize, item: &InputItem<'_>) -> Place {
        let Some(at) = self.at else {
            return Place::Kept;
        };
        let kind = item.classify();
        if index > at {
            let orphan = is_result(kind)
                && item
                    .call_id
                    .as_deref()
                    .is_some_and(|id| self.calls.iter().any(|c| c == id));
            return match orphan {
                true => Place::Orphaned,
                false => Place::Kept,
            };
        }
        if index == at {
            return Place::Kept;
        }
        match kind {
            ItemKind::Message if is_clients(item) => Place::Kept,
            // It declares tools, which stay offered; it says nothing.
            ItemKind::AdditionalTools => Place::Kept,
            _ => Place::Superseded,
        }
    }
}

/// A message the client wrote (not the assistant's): kept through a
/// compaction.
pub(super) fn is_clients(item: &InputItem<'_>) -> bool {
    matches!(item.role.as_deref(), Some("user" | "system" | "developer"))
}

fn is_call(kind: ItemKind) -> bool {
    matches!(
        kind,
        ItemKind::FunctionCall | ItemKind::CustomToolCall | ItemKind::ToolSearchCall
    )
}

fn is_result(kind: ItemKind) -> bool {
    matches!(
        kind,
        ItemKind::FunctionCallOutput | ItemKind::CustomToolCallOutput | ItemKind::ToolSearchOutput
    )
}

impl Builder<'_, '_> {
    /// A `compaction` item: its summary where it is the latest, a loss
    /// where it cannot be opened.
    pub(in crate::responses_to_chat) fn compaction(
        &mut self,
        path: &ItemPath,
        losses: &mut LossRecorder<'_>,
    ) -> Result<(), ConvertError> {
        let Some((_, opened)) = self.cut.items.iter().find(|(i, _)| *i == path.index) else {
            return Ok(());
        };
        match opened {
            Ok(summary) if self.cut.at == Some(path.index) => {
                let message = summary_message(summary);
                self.push(message);
                Ok(())
            }
            // An earlier one: the latest stands for it.
            Ok(_) => Ok(()),
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
    pub(in crate::responses_to_chat) fn trailing_summary(&mut self) {
        if let Some(summary) = self.cut.trailing.take() {
            self.push(summary_message(&summary));
        }
    }
}
