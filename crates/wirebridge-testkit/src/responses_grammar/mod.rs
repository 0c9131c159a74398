//! The Responses stream grammar a translator must emit, checked strictly.
//!
//! ```text
//! response.created -> response.in_progress ->
//!   for each output item, in output_index order, never interleaved:
//!     response.output_item.added            (partial item: status in_progress, content [], arguments "")
//!       message:   content_part.added -> output_text.delta* [annotation.added*] -> output_text.done -> content_part.done
//!                  (refusal part: refusal.delta* -> refusal.done)
//!       reasoning: (reasoning_summary_part.added -> reasoning_summary_text.delta* ->
//!                   reasoning_summary_text.done -> reasoning_summary_part.done)*
//!                  (reasoning_text.delta* -> reasoning_text.done)*
//!       function_call:    function_call_arguments.delta* -> function_call_arguments.done
//!       custom_tool_call: custom_tool_call_input.delta* -> custom_tool_call_input.done
//!       other (hosted) items: any of their own events
//!     response.output_item.done             (the complete item)
//! -> exactly one of response.completed | response.incomplete | (error -> response.failed)
//! ```
//!
//! These are the rules enforced by the official SDKs' stream accumulators
//! (openai-python `ResponseStreamState`), plus stricter ones observed in every
//! real OpenAI stream (dense `sequence_number`, done texts equal to the
//! concatenated deltas, `response.completed.output` equal to the done items…).
//! See [`check`] for the full list.
//!
//! [`transcript_of_recorded`] is the lenient counterpart for recorded upstream
//! streams, and [`responses_body_transcript`] reads a non-streaming body.

mod checker;
mod fields;
mod items;
mod message;
mod options;
mod reasoning;
mod recorded;
mod state;
mod terminal;
mod tool_call;
mod vocabulary;

pub use options::CheckOptions;
pub use recorded::{responses_body_transcript, transcript_of_recorded};
pub use vocabulary::{KNOWN_EVENT_TYPES, REQUIRED_RESPONSE_KEYS};

use crate::sse::SseFrame;
use crate::transcript::ResponsesTranscript;
use crate::Violation;
use checker::Checker;

/// Check a stream a translator emitted against the strict grammar
/// (equivalent to [`check_with`]`(frames, &CheckOptions::strict())`).
///
/// Rules, each reported as a [`Violation`] naming the frame:
///
/// * every frame has `event:` equal to its JSON `type`; no `[DONE]`; only
///   event types of the spec's `ResponseStreamEvent` (no `response.queued`,
///   no audio events);
/// * `response.created` first, `response.in_progress` second;
///   `sequence_number` on every event, `0, 1, 2, …`;
/// * the same `response.id` in every lifecycle event; the lifecycle
///   `response` has `object: "response"` and every key of
///   [`REQUIRED_RESPONSE_KEYS`]; created / in_progress have status
///   `in_progress` and an empty `output`;
/// * `output_item.added` with `output_index` `0, 1, 2, …`; one item open at a
///   time (never interleaved); every sub-event's `output_index` and `item_id`
///   match the open item; the added item has a non-empty `id` and is partial
///   (message: `status: in_progress`, `role: assistant`, `content: []`;
///   function_call: `status: in_progress`, `arguments: ""`, non-empty
///   `call_id` and `name`; custom_tool_call: `input: ""`; reasoning:
///   `summary: []`, status in_progress when present);
/// * message parts: `content_part.added` (content_index `0, 1, …`, one part
///   at a time, empty part) before its deltas; `output_text.done.text` ==
///   concatenated deltas, `refusal.done.refusal` likewise; `logprobs` arrays
///   on `output_text.delta` / `done`; `annotation_index` `0, 1, …`;
///   `content_part.done` after the done event, with the same text;
/// * reasoning: summary parts per `summary_index` `0, 1, …` in the order
///   part.added → text.delta* → text.done (== concatenation) → part.done;
///   reasoning text per `content_index` delta* → done (== concatenation);
/// * function_call / custom_tool_call: deltas then exactly one done whose
///   `arguments` / `input` equals the concatenation; `name` on
///   `function_call_arguments.done` (see [`CheckOptions`]) equal to the item's;
/// * `output_item.done`: same `type` / `id` / `call_id` / `name` as added,
///   every part closed, the complete item (texts, summaries, arguments equal
///   to what the sub-events accumulated), status `completed` or `incomplete`
///   (message, function_call; reasoning and custom_tool_call when present);
///   hosted item types only need added/done pairing;
/// * exactly one terminal event, nothing after it, and none missing:
///   `response.completed` (status completed, no item open, no item
///   `incomplete`, `error` null) | `response.incomplete` (status incomplete,
///   `incomplete_details.reason`) | `response.failed` (status failed,
///   `response.error` with `code` and `message`, immediately preceded by an
///   `error` event whose payload nests `error: {type, code, message, param}`;
///   an `error` event must be immediately followed by `response.failed`);
/// * every terminal event: no item still open (a failure closes the open
///   item, usually as `incomplete`, so what was said is kept), and
///   `response.output` equals the `output_item.done` items in order (reasoning `encrypted_content` is opaque and may be
///   re-encrypted by OpenAI between events: only its presence is compared);
///   `usage`, when not null, has `input_tokens`, `output_tokens`,
///   `total_tokens`, `input_tokens_details.cached_tokens` and
///   `output_tokens_details.reasoning_tokens`.
pub fn check(frames: &[SseFrame]) -> Result<ResponsesTranscript, Violation> {
    check_with(frames, &CheckOptions::strict())
}

/// [`check`] with explicit [`CheckOptions`].
pub fn check_with(
    frames: &[SseFrame],
    opts: &CheckOptions,
) -> Result<ResponsesTranscript, Violation> {
    let mut c = Checker {
        opts,
        count: 0,
        response_id: None,
        terminal: false,
        pending_error: false,
        open: None,
        next_index: 0,
        done_items: Vec::new(),
        t: ResponsesTranscript::default(),
    };
    for (i, f) in frames.iter().enumerate() {
        c.event(i, f)?;
    }
    let end = frames.len();
    if c.count == 0 {
        return Err(Violation::new(end, "empty stream: no events"));
    }
    if !c.terminal {
        return Err(Violation::new(
            end,
            "stream ended without a terminal event (response.completed | response.incomplete | response.failed)",
        ));
    }
    Ok(c.t)
}
