//! What a `POST /responses` request asks of compaction: a final
//! `compaction_trigger`, or `context_management` with a threshold.

use wirebridge_wire::responses::lenient::{Input, ItemKind};

use super::super::compacted::entries;
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
