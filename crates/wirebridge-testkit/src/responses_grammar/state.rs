//! The state the checker keeps of the output item open between its
//! `output_item.added` and `output_item.done`.

use serde_json::Value;

/// The item types whose sub-events have rules of their own; hosted items
/// (`web_search_call`, …) are `Other` and only need added/done pairing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Message,
    Reasoning,
    FunctionCall,
    CustomToolCall,
    Other,
}

/// The item between its `output_item.added` and `output_item.done`, with
/// what its sub-events have accumulated so far.
#[derive(Debug)]
pub(super) struct OpenItem {
    pub(super) output_index: u64,
    pub(super) id: String,
    pub(super) item_type: String,
    pub(super) kind: Kind,
    /// The item as added, which the done item must agree with.
    pub(super) added: Value,
    pub(super) parts: Vec<Part>,
    pub(super) summaries: Vec<TextPart>,
    pub(super) reasoning_texts: Vec<TextPart>,
    /// Function call arguments or custom tool call input so far.
    pub(super) args: String,
    pub(super) args_done: bool,
}

/// The two content part types a message item streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PartKind {
    OutputText,
    Refusal,
}

impl PartKind {
    /// The part's `type`.
    pub(super) fn type_name(self) -> &'static str {
        match self {
            PartKind::OutputText => "output_text",
            PartKind::Refusal => "refusal",
        }
    }
    /// The key that holds the part's text.
    pub(super) fn text_key(self) -> &'static str {
        match self {
            PartKind::OutputText => "text",
            PartKind::Refusal => "refusal",
        }
    }
}

/// A message content part: its deltas so far, its done text and
/// annotations, and whether `content_part.done` closed it.
#[derive(Debug)]
pub(super) struct Part {
    pub(super) kind: PartKind,
    pub(super) acc: String,
    pub(super) done: Option<String>,
    pub(super) annotations: Vec<Value>,
    pub(super) closed: bool,
}

/// A reasoning summary part or reasoning text: its deltas so far, its done
/// text, and whether its part was closed.
#[derive(Debug, Default)]
pub(super) struct TextPart {
    pub(super) acc: String,
    pub(super) done: Option<String>,
    pub(super) closed: bool,
}
