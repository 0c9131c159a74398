//! One output item as the translator follows it: where the backend had
//! it, where the client has it, and what of it is still open.

use serde_json::value::RawValue;

use super::end::PartKind;
use super::item_id;
use super::summary::NativeSummary;

/// One output item: where the backend had it, and where the client has it.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) upstream_id: Option<String>,
    pub(super) upstream_index: Option<u64>,
    pub(super) kind: String,
    /// The item as announced, rewritten.
    pub(super) added: Box<RawValue>,
    /// Its id, as the JSON string every event about it names it by.
    pub(super) item_id: String,
    pub(super) done: bool,
    /// Whether any event about its content came: an item finished
    /// without one has its content streamed by the bridge.
    pub(super) content_seen: bool,
    /// The text of the open content part.
    pub(super) text: String,
    pub(super) part_open: bool,
    /// The open content part's type.
    pub(super) part_kind: PartKind,
    /// Whether the open part's `response.output_text.done` was sent (its
    /// text is then the part's).
    pub(super) text_done: bool,
    /// The open part's annotations, from `output_text.annotation.added`.
    pub(super) annotations: Vec<Box<RawValue>>,
    /// The parts closed so far, as the item's `content` lists them: what
    /// an item the stream leaves unfinished still holds.
    pub(super) parts_done: Vec<String>,
    /// The arguments so far, of a tool call.
    pub(super) arguments: String,
    /// Whether the call's arguments (or input) done event was sent.
    pub(super) arguments_done: bool,
    /// Reasoning shown as a summary: whether its summary part is open
    /// (its text is `text`).
    pub(super) summary_open: bool,
    /// How many summary parts reasoning text became.
    pub(super) text_summaries: usize,
    /// Where in `text` the reasoning text part being streamed began.
    pub(super) reasoning_part_from: usize,
    /// The backend's own summary part still open, passed on as it came.
    pub(super) native_summary: Option<NativeSummary>,
    /// The texts of the summary parts closed so far, the backend's and
    /// those reasoning text became, in the order they were sent.
    pub(super) summaries: Vec<String>,
}

impl Slot {
    pub(super) fn new(
        upstream_id: Option<String>,
        upstream_index: Option<u64>,
        kind: &str,
        added: Box<RawValue>,
    ) -> Self {
        Self {
            upstream_id,
            upstream_index,
            kind: kind.to_owned(),
            item_id: item_id(&added),
            added,
            done: false,
            content_seen: false,
            text: String::new(),
            part_open: false,
            part_kind: PartKind::OutputText,
            text_done: false,
            annotations: Vec::new(),
            parts_done: Vec::new(),
            native_summary: None,
            summaries: Vec::new(),
            arguments: String::new(),
            arguments_done: false,
            summary_open: false,
            reasoning_part_from: 0,
            text_summaries: 0,
        }
    }
}
