//! `truncation: "auto"` in front of a Chat backend: the translated
//! messages, cut to the model's context window (see
//! [`truncation`](crate::truncation)).

use wirebridge_wire::chat::strict::{ChatMessage, ChatRequest, Role};

use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;
use crate::truncation::{estimate, plan, Entry, BYTES_PER_TOKEN};

/// What `truncation` asks of a translation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Truncation {
    /// Nothing (`disabled`, or unset).
    Off,
    /// Fit this many tokens, with `reserve` of them left for the answer.
    Fit { window: u64, reserve: u64 },
}

/// Whether the serialized request `body` leaves out messages of `chat` to
/// fit; the messages left out are gone from `chat`, reported in `losses`.
pub(super) fn fit(
    chat: &mut ChatRequest<'_>,
    body: &[u8],
    truncation: Truncation,
    losses: &mut LossRecorder<'_>,
) -> Result<bool, ConvertError> {
    let Truncation::Fit { window, reserve } = truncation else {
        return Ok(false);
    };
    let tokens = estimate(body);
    let Some(over) = (tokens + reserve)
        .checked_sub(window)
        .filter(|over| *over > 0)
    else {
        return Ok(false);
    };
    let entries: Vec<(Entry, usize)> = chat
        .messages
        .iter()
        .map(|message| (entry(message), size(message)))
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
        return Ok(false);
    }
    let total = chat.messages.len();
    let mut keep = plan.keep.iter();
    chat.messages.retain(|_| *keep.next().unwrap_or(&true));
    let still = match plan.fits {
        true => String::new(),
        false => "; what is left is still over it".to_owned(),
    };
    losses.record(
        LossKind::TruncatedInput,
        "input",
        format!(
            "the {} oldest of {total} messages were left out (truncation: auto): the \
             conversation, estimated at {tokens} tokens with {reserve} kept for the answer, \
             is over the context window of {window}{still}",
            plan.dropped
        ),
    )?;
    Ok(true)
}

fn entry(message: &ChatMessage<'_>) -> Entry {
    match message.role {
        Role::System | Role::Developer => Entry::Instruction,
        Role::User => Entry::User,
        Role::Assistant => Entry::Model,
        Role::Tool => Entry::Result,
    }
}

fn size(message: &ChatMessage<'_>) -> usize {
    serde_json::to_vec(message).map_or(0, |bytes| bytes.len() + 1)
}
