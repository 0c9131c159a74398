//! Messages stream events, as emitted. The SSE event name equals the
//! event's `type` ([`Event::name`]).

use serde::Serialize;

use super::{ContentBlock, ErrorObject, MessageBody, StopReason, Usage};
use crate::raw::JsonText;

/// One stream event.
///
/// ```
/// use wirebridge_wire::messages::strict::{Delta, Event};
/// use wirebridge_wire::JsonText;
///
/// let event = Event::ContentBlockDelta {
///     index: 0,
///     delta: Delta::TextDelta { text: JsonText::from_text("Hi") },
/// };
/// assert_eq!(event.name(), "content_block_delta");
/// assert_eq!(
///     serde_json::to_string(&event).unwrap(),
///     r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#
/// );
/// assert_eq!(serde_json::to_string(&Event::MessageStop).unwrap(), r#"{"type":"message_stop"}"#);
/// ```
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event<'a> {
    /// The message, empty: first.
    MessageStart {
        /// The message so far.
        message: MessageBody<'a>,
    },
    /// A block opens.
    ContentBlockStart {
        /// Its position in `content`.
        index: usize,
        /// The block, empty.
        content_block: ContentBlock<'a>,
    },
    /// A piece of the open block.
    ContentBlockDelta {
        /// The open block's position.
        index: usize,
        /// The piece.
        delta: Delta<'a>,
    },
    /// The open block closes.
    ContentBlockStop {
        /// Its position.
        index: usize,
    },
    /// How the message ended, and its usage.
    MessageDelta {
        /// Stop reason and sequence.
        delta: MessageDelta<'a>,
        /// Cumulative usage.
        usage: Usage,
    },
    /// The end of the stream.
    MessageStop,
    /// A keep-alive.
    Ping,
    /// A failure: the end of the stream.
    Error {
        /// The error.
        error: ErrorObject<'a>,
    },
}

impl Event<'_> {
    /// The event's `type`, also its SSE event name.
    pub fn name(&self) -> &'static str {
        match self {
            Event::MessageStart { .. } => "message_start",
            Event::ContentBlockStart { .. } => "content_block_start",
            Event::ContentBlockDelta { .. } => "content_block_delta",
            Event::ContentBlockStop { .. } => "content_block_stop",
            Event::MessageDelta { .. } => "message_delta",
            Event::MessageStop => "message_stop",
            Event::Ping => "ping",
            Event::Error { .. } => "error",
        }
    }
}

/// The `delta` of `content_block_delta`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Delta<'a> {
    /// More text, for a `text` block.
    TextDelta {
        /// The fragment.
        text: JsonText<'a>,
    },
    /// More of a `tool_use` block's input JSON text.
    InputJsonDelta {
        /// The fragment of JSON text.
        partial_json: JsonText<'a>,
    },
    /// More thinking, for a `thinking` block.
    ThinkingDelta {
        /// The fragment.
        thinking: JsonText<'a>,
    },
    /// A `thinking` block's signature, whole, before the block closes.
    SignatureDelta {
        /// The signature.
        signature: JsonText<'a>,
    },
    /// A `compaction` block's content, whole, in one delta.
    CompactionDelta {
        /// The carrier.
        content: JsonText<'a>,
    },
}

/// The `delta` of `message_delta`.
#[derive(Debug, Serialize)]
pub struct MessageDelta<'a> {
    /// Why generation stopped.
    pub stop_reason: Option<StopReason>,
    /// The stop sequence that ended it, if one did.
    pub stop_sequence: Option<&'a str>,
}
