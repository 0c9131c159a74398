//! `truncation: "auto"` in front of a Responses backend that keeps no
//! state: the whole conversation the bridge sends, cut to the model's
//! context window item by item (see [`truncation`](crate::truncation)).
//! Where the window is not known, `truncation` reaches the backend as the
//! client wrote it, for the backend to act on.

use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::{InputItem, ItemKind};

use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;
use crate::truncation::{estimate, plan, Entry, BYTES_PER_TOKEN};

/// The `input` of `body` with its oldest items left out when the body is
/// over `window` tokens with `reserve` kept for the answer: the items
/// kept, or `None` when nothing was left out.
pub(super) fn fit(
    input: &str,
    body: &[u8],
    window: u64,
    reserve: u64,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<Box<RawValue>>, ConvertError> {
    let tokens = estimate(body);
    let Some(over) = (tokens + reserve)
        .checked_sub(window)
        .filter(|over| *over > 0)
    else {
        return Ok(None);
    };
    let items: Vec<&RawValue> =
        serde_json::from_str(input).map_err(|e| ConvertError::UnreadableHistory(e.to_string()))?;
    let entries: Vec<(Entry, usize)> = items
        .iter()
        .map(|raw| (entry(raw), raw.get().len() + 1))
        .collect();
    let plan = plan(&entries, over as usize * BYTES_PER_TOKEN);
    if plan.dropped == 0 {
        losses.record(
            LossKind::TruncatedInput,
            "input",
            format!(
                "the conversation is estimated at {tokens} tokens, over the context window of \
                 {window}, and has no earlier turn to leave out"
            ),
        )?;
        return Ok(None);
    }
    let kept: Vec<&RawValue> = items
        .iter()
        .zip(&plan.keep)
        .filter_map(|(raw, keep)| keep.then_some(*raw))
        .collect();
    let still = match plan.fits {
        true => String::new(),
        false => "; what is left is still over it".to_owned(),
    };
    losses.record(
        LossKind::TruncatedInput,
        "input",
        format!(
            "the {} oldest of {} items were left out (truncation: auto): the conversation, \
             estimated at {tokens} tokens with {reserve} kept for the answer, is over the \
             context window of {window}{still}",
            plan.dropped,
            items.len()
        ),
    )?;
    Ok(Some(
        serde_json::value::to_raw_value(&kept).expect("raw items serialize"),
    ))
}

fn entry(raw: &RawValue) -> Entry {
    let Ok(item) = serde_json::from_str::<InputItem<'_>>(raw.get()) else {
        return Entry::Model;
    };
    match item.classify() {
        ItemKind::Message => match item.role.as_deref() {
            Some("user") => Entry::User,
            Some("system" | "developer") => Entry::Instruction,
            _ => Entry::Model,
        },
        ItemKind::FunctionCallOutput
        | ItemKind::CustomToolCallOutput
        | ItemKind::ToolSearchOutput => Entry::Result,
        _ => Entry::Model,
    }
}
