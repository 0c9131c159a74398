//! Compaction items in a conversation: what each stands for, and which
//! part of the conversation the latest one replaces.

use wirebridge_wire::responses::lenient::{InputItem, ItemKind};

use super::super::Seal;
use super::carrier::{self, Unread};
use crate::error::ConvertError;

/// The compaction items of a conversation, opened.
#[derive(Debug, Default)]
pub(crate) struct Cut {
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
pub(crate) enum Place {
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
    pub(crate) fn new(
        items: &[InputItem<'_>],
        seal: Option<&Seal>,
        trailing: Option<&str>,
    ) -> Result<Self, ConvertError> {
        let mut opened = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let required = match item.classify() {
                ItemKind::Compaction => true,
                // Codex's record of a compaction: one with no carrier marks
                // where a compaction happened, and stands for nothing.
                ItemKind::ContextCompaction => false,
                _ => continue,
            };
            match carrier::open(item, seal) {
                Err(Unread::Missing) if required => {
                    return Err(ConvertError::MissingField(format!(
                        "input[{i}].encrypted_content"
                    )))
                }
                Err(Unread::Missing) => {}
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

    /// The summary of the compaction item at `index` when it is the one
    /// the conversation is read from (`Ok(None)`: an earlier one, which
    /// the latest stands for), or why it cannot be read.
    pub(crate) fn summary(&self, index: usize) -> Result<Option<&str>, &Unread> {
        match self.items.iter().find(|(i, _)| *i == index) {
            Some((_, Ok(summary))) if self.at == Some(index) => Ok(Some(summary)),
            Some((_, Err(why))) => Err(why),
            _ => Ok(None),
        }
    }

    /// The summary that stands after the last item, once.
    pub(crate) fn take_trailing(&mut self) -> Option<String> {
        self.trailing.take()
    }

    /// What becomes of the item at `index`.
    pub(crate) fn place(&self, index: usize, item: &InputItem<'_>) -> Place {
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
pub(crate) fn is_clients(item: &InputItem<'_>) -> bool {
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
