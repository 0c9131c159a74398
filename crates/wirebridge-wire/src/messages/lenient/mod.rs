//! What Messages clients send, parsed leniently.
//!
//! Content blocks, sources and tools are each one flat struct holding the
//! union of the fields their variants use, as in
//! [`crate::responses::lenient`]; fields whose shape depends on the block
//! type (`content`, `input`, `system`) stay raw until the translator knows
//! what to expect. Unknown fields are ignored and `null` reads as absent, so
//! a block or tool type this crate has never heard of still parses;
//! [`unmodeled_fields`] names the fields ignored, for the translator to
//! report.

mod block;
mod fields;
mod read;
mod request;

pub use block::{Block, BlockSource, Content, Source};
pub use fields::unmodeled_fields;
#[cfg(fuzzing)]
#[doc(hidden)]
pub use read::check as read_check;
pub use read::ReadMessage;
pub use request::{
    ContextEdit, ContextManagement, CreateMessage, Message, Metadata, OutputConfig, OutputFormat,
    Thinking, Thread, Tool, ToolChoice,
};
