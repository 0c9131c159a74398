//! Drawing a [`Plan`](crate::script::Plan) as Anthropic Messages output: a
//! `message` body or the Messages event stream, written with the strict
//! wire types the bridge writes its own Messages answers with.
//!
//! ```text
//! message_start                      (content [], stop_reason null, usage with the input tokens)
//!   [thinking:          content_block_start -> thinking_delta* -> signature_delta -> content_block_stop]
//!   [redacted_thinking: content_block_start (data) -> content_block_stop]        (demo:redacted)
//!   [text:              content_block_start -> text_delta* -> content_block_stop]
//!   [tool_use:          content_block_start (input {}) -> input_json_delta* -> content_block_stop]*
//! message_delta                      (stop_reason end_turn | tool_use | max_tokens, usage)
//! message_stop
//! ```
//!
//! One `ping` follows the first `content_block_start` (or `message_start`
//! when there is no block), as Anthropic sends it. Every event has its
//! `event:` line. A scripted failure ends the stream with an `error` event
//! and no `message_stop`.

use crate::error::ApiError;
use crate::frames::{Frame, Kind};
use crate::script::{Finish, Reply};
use crate::signature;
use serde_json::value::RawValue;
use std::borrow::Cow;
use wirebridge_wire::messages::strict::{
    ContentBlock, Delta, ErrorObject, Event, MessageBody, MessageDelta, StopReason, Usage,
};
use wirebridge_wire::JsonText;

/// One content block of a reply, with what its stream is made of.
enum Block<'p> {
    /// Thinking, streamed in fragments, then signed.
    Thinking {
        fragments: &'p [String],
        signature: String,
    },
    /// Thinking carried but not shown.
    Redacted { data: String },
    /// Text, streamed in fragments.
    Text { fragments: &'p [String] },
    /// A tool call, its input JSON streamed in fragments.
    ToolUse {
        id: String,
        name: &'p str,
        fragments: &'p [String],
    },
}

/// The blocks of a reply, in order.
fn blocks<'p>(r: &Reply<'p>) -> Vec<Block<'p>> {
    let plan = r.plan;
    let mut blocks = Vec::new();
    if !plan.reasoning.is_empty() {
        blocks.push(Block::Thinking {
            fragments: &plan.reasoning,
            signature: signature::sign(&plan.reasoning.concat()),
        });
    }
    if plan.triggers.redacted {
        blocks.push(Block::Redacted {
            data: signature::redacted_data(&r.ids.message()),
        });
    }
    if !plan.text.is_empty() {
        blocks.push(Block::Text {
            fragments: &plan.text,
        });
    }
    for (i, call) in plan.calls.iter().enumerate() {
        blocks.push(Block::ToolUse {
            id: r.ids.tool_use(i),
            name: &call.name,
            fragments: &call.fragments,
        });
    }
    blocks
}

impl Block<'_> {
    /// The block whole, as a body holds it.
    fn whole(&self) -> ContentBlock<'_> {
        match self {
            Block::Thinking {
                fragments,
                signature,
            } => ContentBlock::Thinking {
                thinking: JsonText::from_text(&fragments.concat()),
                signature: JsonText::from_text(signature),
            },
            Block::Redacted { data } => ContentBlock::RedactedThinking {
                data: JsonText::from_text(data),
            },
            Block::Text { fragments } => ContentBlock::Text {
                text: JsonText::from_text(&fragments.concat()),
            },
            Block::ToolUse {
                id,
                name,
                fragments,
            } => ContentBlock::ToolUse {
                id: Cow::Borrowed(id),
                name: Cow::Borrowed(name),
                input: Cow::Owned(input_object(&fragments.concat())),
            },
        }
    }

    /// The block as `content_block_start` opens it: empty text, thinking
    /// and signature, `input: {}`.
    fn opened(&self) -> ContentBlock<'_> {
        let empty = || JsonText::from_text("");
        match self {
            Block::Thinking { .. } => ContentBlock::Thinking {
                thinking: empty(),
                signature: empty(),
            },
            Block::Redacted { .. } => self.whole(),
            Block::Text { .. } => ContentBlock::Text { text: empty() },
            Block::ToolUse { id, name, .. } => ContentBlock::ToolUse {
                id: Cow::Borrowed(id),
                name: Cow::Borrowed(name),
                input: Cow::Owned(input_object("{}")),
            },
        }
    }

    /// The deltas of the block, in order.
    fn deltas(&self) -> Vec<(Kind, Delta<'static>)> {
        match self {
            Block::Thinking {
                fragments,
                signature,
            } => {
                let mut deltas: Vec<_> = fragments
                    .iter()
                    .map(|f| {
                        let thinking = JsonText::from_text(f);
                        (Kind::Delta, Delta::ThinkingDelta { thinking })
                    })
                    .collect();
                let signature = JsonText::from_text(signature);
                deltas.push((Kind::Other, Delta::SignatureDelta { signature }));
                deltas
            }
            Block::Redacted { .. } => Vec::new(),
            Block::Text { fragments } => fragments
                .iter()
                .map(|f| {
                    let text = JsonText::from_text(f);
                    (Kind::Delta, Delta::TextDelta { text })
                })
                .collect(),
            Block::ToolUse { fragments, .. } => fragments
                .iter()
                .map(|f| {
                    let partial_json = JsonText::from_text(f);
                    (Kind::Delta, Delta::InputJsonDelta { partial_json })
                })
                .collect(),
        }
    }
}

/// The input object of a call: its arguments, or `{}` when the token limit
/// cut them before they made an object.
fn input_object(arguments: &str) -> Box<RawValue> {
    let object = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(arguments)
        .is_ok()
        .then(|| RawValue::from_string(arguments.to_string()).ok())
        .flatten();
    object.unwrap_or_else(|| RawValue::from_string("{}".to_string()).expect("`{}` is JSON"))
}

/// The `stop_reason` of a plan's finish.
fn stop_reason(finish: Finish) -> StopReason {
    match finish {
        Finish::Stop => StopReason::EndTurn,
        Finish::ToolCalls => StopReason::ToolUse,
        Finish::Length => StopReason::MaxTokens,
    }
}

/// `usage` with these many output tokens (no cache in the demo).
fn usage(r: &Reply<'_>, output_tokens: u64) -> Usage {
    Usage {
        input_tokens: r.plan.usage.input,
        output_tokens,
        ..Usage::default()
    }
}

/// The non-streaming `message` body of a reply.
pub(crate) fn body(r: &Reply<'_>) -> String {
    let id = r.ids.message();
    let blocks = blocks(r);
    let message = MessageBody {
        id: &id,
        model: &r.prompt.model,
        content: blocks.iter().map(Block::whole).collect(),
        stop_reason: Some(stop_reason(r.plan.finish)),
        stop_sequence: None,
        usage: usage(r, r.plan.usage.output),
        ..MessageBody::default()
    };
    serde_json::to_string(&message).unwrap_or_default()
}

/// One SSE frame of an event: `event: TYPE` and its JSON.
fn frame(kind: Kind, event: &Event<'_>) -> Frame {
    let mut json = Vec::new();
    event.write_json(&mut json);
    Frame::event(kind, event.name(), &String::from_utf8_lossy(&json))
}

/// The event stream of a reply.
pub(crate) fn stream(r: &Reply<'_>) -> Vec<Frame> {
    let id = r.ids.message();
    let start = MessageBody {
        id: &id,
        model: &r.prompt.model,
        usage: usage(r, 0),
        ..MessageBody::default()
    };
    let mut frames = vec![frame(Kind::Head, &Event::MessageStart { message: start })];
    let blocks = blocks(r);
    if blocks.is_empty() {
        frames.push(frame(Kind::Head, &Event::Ping));
    }
    for (index, block) in blocks.iter().enumerate() {
        let content_block = block.opened();
        let kind = if index == 0 { Kind::Head } else { Kind::Other };
        frames.push(frame(
            kind,
            &Event::ContentBlockStart {
                index,
                content_block,
            },
        ));
        if index == 0 {
            frames.push(frame(Kind::Head, &Event::Ping));
        }
        for (kind, delta) in block.deltas() {
            frames.push(frame(kind, &Event::ContentBlockDelta { index, delta }));
        }
        frames.push(frame(Kind::Other, &Event::ContentBlockStop { index }));
    }
    let delta = MessageDelta {
        stop_reason: Some(stop_reason(r.plan.finish)),
        stop_sequence: None,
    };
    let usage = usage(r, r.plan.usage.output);
    frames.push(frame(Kind::Other, &Event::MessageDelta { delta, usage }));
    frames.push(frame(Kind::Other, &Event::MessageStop));
    frames
}

/// The frame a `demo:fail-midstream` stream ends with: an `error` event
/// (`api_error`), and no `message_stop`, as Anthropic ends a stream that
/// fails.
pub(crate) fn failure_tail() -> Vec<Frame> {
    let e = ApiError::midstream();
    let error = ErrorObject {
        kind: e.anthropic_kind().into(),
        message: e.message.into(),
        details: None,
    };
    vec![frame(Kind::Other, &Event::Error { error })]
}
