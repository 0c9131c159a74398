//! Compaction items in the conversation a backend that keeps no state is
//! sent: read in place of what they summarize, as for a Chat backend.
//!
//! The backend cannot open the bridge's sealed `compaction` items, and
//! would refuse or misread them. The latest one that opens is sent as a
//! `user` message, [`SUMMARY_INTRO`] then its summary, in its place; the
//! items before it are left out but the client's own messages (which the
//! API's compaction keeps), and a tool result whose call it stands for is
//! left out after it. What the Chat translator does message by message
//! ([`Cut`]), done here on the items themselves.

use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::{InputItem, ItemKind};

use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;
use crate::responses_to_chat::compaction::SUMMARY_INTRO;
use crate::responses_to_chat::{Cut, Place, Seal};

/// How a translation treats compaction.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Mode<'s> {
    /// The caller runs compactions: `context_management` is acted on (and
    /// not sent on), and a final `compaction_trigger` never reaches here.
    pub(super) compacts: bool,
    /// The conversation was just compacted into this summary, which stands
    /// after it.
    pub(super) compacted: Option<&'s str>,
}

/// Whether an input array may hold something to read here: a compaction
/// item, Codex's record of one, or a trigger. A cheap look at the text
/// first, so that the usual conversation is not parsed item by item.
fn may_compact(input: &str) -> bool {
    input.contains("compaction")
}

/// The whole input array `input` (history, then the request's own items,
/// `own`), with its compaction items read, and the summary `mode` says was
/// just written after it.
pub(super) fn read(
    input: String,
    own: &str,
    seal: Option<&Seal>,
    mode: Mode<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<String, ConvertError> {
    if mode.compacted.is_none() && !may_compact(&input) {
        return Ok(input);
    }
    let raws: Vec<&RawValue> =
        serde_json::from_str(&input).map_err(|e| ConvertError::UnreadableHistory(e.to_string()))?;
    let own_len = serde_json::from_str::<Vec<&RawValue>>(own).map_or(0, |own| own.len());
    let own_start = raws.len().saturating_sub(own_len);
    let path = |n: usize| match n < own_start {
        true => format!("previous_response_id:{n}"),
        false => format!("input[{}]", n - own_start),
    };
    let mut items = Vec::with_capacity(raws.len());
    for (n, raw) in raws.iter().enumerate() {
        let item: InputItem<'_> = serde_json::from_str(raw.get())
            .map_err(|e| ConvertError::from_parse_at(&path(n), e))?;
        items.push(item);
    }
    let cut = Cut::new(&items, seal, mode.compacted)?;
    let mut out: Vec<Box<RawValue>> = Vec::with_capacity(raws.len() + 1);
    for (n, (raw, item)) in raws.iter().zip(&items).enumerate() {
        match cut.place(n, item) {
            Place::Kept => {}
            Place::Superseded => continue,
            Place::Orphaned => {
                losses.record(
                    LossKind::UnsupportedItem,
                    path(n),
                    "the call this result answers was compacted away, and a tool result \
                     without its call is refused",
                )?;
                continue;
            }
        }
        match item.classify() {
            ItemKind::Compaction | ItemKind::ContextCompaction => match cut.summary(n) {
                Ok(Some(summary)) => out.push(summary_item(summary)),
                // An earlier one: the latest stands for it.
                Ok(None) => {}
                Err(why) => losses.record(
                    LossKind::UnsupportedItem,
                    format!("{}.encrypted_content", path(n)),
                    format!(
                        "the compaction cannot be read ({why}), so the conversation it \
                         summarized is not sent"
                    ),
                )?,
            },
            // Acted on by a caller that compacts; in stored history it
            // says nothing; a request's own one is reported.
            ItemKind::CompactionTrigger => {
                if n >= own_start && !mode.compacts {
                    losses.record(
                        LossKind::UnsupportedItem,
                        path(n),
                        "compaction needs the bridge's layer and a seal key; the request is \
                         answered without compacting",
                    )?;
                }
            }
            _ => out.push((*raw).to_owned()),
        }
    }
    if let Some(summary) = mode.compacted {
        out.push(summary_item(summary));
    }
    Ok(serde_json::to_string(&out).expect("raw items serialize"))
}

/// The `user` message that stands for a compaction item.
fn summary_item(summary: &str) -> Box<RawValue> {
    let mut text = String::with_capacity(SUMMARY_INTRO.len() + summary.len());
    text.push_str(SUMMARY_INTRO);
    text.push_str(summary);
    let item = serde_json::json!({
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
    });
    serde_json::value::to_raw_value(&item).expect("messages serialize")
}
