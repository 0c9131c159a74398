//! What the reader hands the translator beneath it: most events as the
//! Responses JSON they stand for, and the deltas of a message's text, a
//! reasoning item's text and a function call's arguments (the bulk of a
//! stream) as values, which the translator writes without reading JSON
//! the bridge wrote.

pub(crate) use crate::responses_to_responses::{Delta, DeltaKind};

/// One Responses event, as the reader hands it on.
#[derive(Debug, Clone, Copy)]
pub(in crate::responses_to_messages) enum Emitted<'a> {
    /// An event written as JSON.
    Json(&'a str),
    /// A delta, as values.
    Delta(Delta<'a>),
}
