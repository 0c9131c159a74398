//! What the reader hands the translator beneath it: most events as the
//! Responses JSON they stand for, and a message's text deltas (the bulk of
//! a stream) as values, which the translator writes without reading JSON
//! the bridge wrote.

use serde_json::value::RawValue;

/// One Responses event, as the reader hands it on.
#[derive(Debug, Clone, Copy)]
pub(in crate::responses_to_messages) enum Emitted<'a> {
    /// An event written as JSON.
    Json(&'a str),
    /// `response.output_text.delta`, as values.
    TextDelta(TextDelta<'a>),
}

/// A message's text delta: the item it belongs to, where, and the text as
/// the backend escaped it.
#[derive(Debug, Clone, Copy)]
pub(in crate::responses_to_messages) struct TextDelta<'a> {
    /// The message item's id (the reader's own, unquoted).
    pub(in crate::responses_to_messages) item_id: &'a str,
    /// The item's place in the reader's output.
    pub(in crate::responses_to_messages) output_index: usize,
    /// The text part's place in the item.
    pub(in crate::responses_to_messages) content_index: usize,
    /// The text, a JSON string as the backend wrote it.
    pub(in crate::responses_to_messages) delta: &'a RawValue,
}

impl TextDelta<'_> {
    /// The event as JSON, for a translator that cannot take it as values
    /// at this point of its stream.
    pub(in crate::responses_to_messages) fn to_json(self) -> String {
        format!(
            r#"{{"type":"response.output_text.delta","item_id":"{}","output_index":{},"content_index":{},"delta":{}}}"#,
            self.item_id,
            self.output_index,
            self.content_index,
            self.delta.get()
        )
    }
}
