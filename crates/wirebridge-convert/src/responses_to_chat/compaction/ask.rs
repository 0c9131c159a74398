//! What a `POST /responses` request asks of compaction: a final
//! `compaction_trigger`, or `context_management` with a threshold.

use wirebridge_wire::responses::lenient::{Input, ItemKind};

use super::super::compaction_items::entries;
use super::super::ParsedRequest;
use crate::error::ConvertError;

/// What a request asks of compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionAsk {
    /// The input ends with a `compaction_trigger`: the turn compacts the
    /// conversation, and its output is the `compaction` item alone.
    Trigger,
    /// `context_management: [{"type": "compaction", "compact_threshold": n}]`:
    /// when the input holds more than `n` tokens, it is compacted before
    /// the reply, and the `compaction` item comes first in the output.
    Threshold(u64),
}

impl ParsedRequest<'_> {
    /// Whether the request names compaction at all: a `context_management`
    /// value other than `null`, or a `compaction_trigger` input item. Read
    /// from what was parsed, nothing more: a caller that runs compactions
    /// hands these requests over to [`compaction`](Self::compaction), and
    /// translates the others as usual (for them both ways translate alike).
    pub fn names_compaction(&self) -> bool {
        let context_management = self
            .request
            .context_management
            .is_some_and(|raw| raw.get() != "null");
        context_management || self.compaction_trigger_at().is_some()
    }

    /// The index in `input` of the first `compaction_trigger` item: where
    /// the request asks for a compaction now, if it does.
    pub fn compaction_trigger_at(&self) -> Option<usize> {
        match &self.request.input {
            Some(Input::Items(items)) => items
                .iter()
                .position(|item| item.classify() == ItemKind::CompactionTrigger),
            _ => None,
        }
    }

    /// What the request asks of compaction, checked: a `compaction_trigger`
    /// that is not the last input item, or a `context_management` entry
    /// that is not a compaction with a threshold of at least 1000 (or
    /// `null`), is an error naming it. A trigger wins over a threshold; of
    /// several thresholds, the lowest counts. An entry whose threshold is
    /// `null` asks for nothing here (the translation reports it).
    pub fn compaction(&self) -> Result<Option<CompactionAsk>, ConvertError> {
        if let Some(Input::Items(items)) = &self.request.input {
            let last = items.len().saturating_sub(1);
            for (i, item) in items.iter().enumerate() {
                if item.classify() == ItemKind::CompactionTrigger {
                    if i != last {
                        return Err(ConvertError::invalid(
                            format!("input[{i}]"),
                            "a compaction_trigger must be the last input item",
                        ));
                    }
                    return Ok(Some(CompactionAsk::Trigger));
                }
            }
        }
        let threshold = entries(&self.request)?
            .iter()
            .filter_map(|(_, threshold)| *threshold)
            .min();
        Ok(threshold.map(CompactionAsk::Threshold))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(body: &str) -> bool {
        ParsedRequest::parse(body.as_bytes())
            .unwrap()
            .names_compaction()
    }

    #[test]
    fn requests_name_compaction_by_field_or_item_not_by_mention() {
        assert!(names(
            r#"{"model":"m","input":[{"type":"message","role":"user","content":"hi"},{"type":"compaction_trigger"}]}"#
        ));
        assert!(names(
            r#"{"model":"m","input":"hi","context_management":[{"type":"compaction","compact_threshold":null}]}"#
        ));
        // The key as the parser reads it, however it is spelled.
        assert!(names(
            r#"{"model":"m","input":"hi","context\u005fmanagement":[]}"#
        ));
        assert!(!names(
            r#"{"model":"m","input":"hi","context_management":null}"#
        ));
        assert!(!names(
            r#"{"model":"m","input":"what do context_management and a compaction_trigger do?"}"#
        ));
        assert!(!names(
            r#"{"model":"m","input":[{"type":"compaction","encrypted_content":"x"}]}"#
        ));
    }
}
