//! Content blocks: opened one at a time, streamed, closed; text and
//! thinking deltas.

use crate::frames::Frames;
use serde_json::value::RawValue;
use wirebridge_wire::messages::strict::{ContentBlock, Delta, Event};
use wirebridge_wire::raw::{JsonStr, JsonText};

use super::StreamTranslator;
use crate::messages_to_responses::ThinkingDisplay;

/// The block open now.
#[derive(Debug)]
pub(super) struct OpenBlock {
    pub(super) kind: BlockKind,
    /// The output item it comes from.
    pub(super) output_index: u32,
    /// The item's part it comes from (content or summary index).
    pub(super) part: u32,
    /// Its index in the message's `content`.
    pub(super) index: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockKind {
    Text,
    /// Thinking, fed by summary text (`true`) or reasoning text: whichever
    /// the item streams first.
    Thinking {
        summary: bool,
    },
    ToolUse,
    /// A compaction, whole in one delta.
    Compaction,
}

impl StreamTranslator {
    /// Closes the open block and opens `block` after it, returning its
    /// index; the first block is followed by a `ping`, as Anthropic's
    /// streams have it. The message starts first if it has not: an upstream
    /// may send a complete item before any other event.
    ///
    /// An open tool_use block closes as a finished call, its item reported
    /// done or not: arguments that are no JSON object fail the stream
    /// there, and nothing opens (`None`).
    pub(super) fn open_block(
        &mut self,
        kind: BlockKind,
        output_index: u32,
        part: u32,
        block: ContentBlock<'_>,
        out: &mut Frames,
    ) -> Option<usize> {
        self.start(out);
        self.close_call(false, out);
        if self.finished {
            return None;
        }
        self.close(None, out);
        let index = self.blocks;
        self.blocks += 1;
        self.emit(
            out,
            &Event::ContentBlockStart {
                index,
                content_block: block,
            },
        );
        self.open = Some(OpenBlock {
            kind,
            output_index,
            part,
            index,
        });
        if !self.pinged {
            self.pinged = true;
            self.emit(out, &Event::Ping);
        }
        Some(index)
    }

    /// Closes the open block, if any. A thinking block gets its signature
    /// first (`signature`, or an empty one).
    pub(super) fn close(&mut self, signature: Option<JsonText<'_>>, out: &mut Frames) {
        let Some(open) = self.open.take() else {
            return;
        };
        if let BlockKind::Thinking { .. } = open.kind {
            let signature = signature.unwrap_or_else(|| JsonText::from_text(""));
            self.delta(open.index, Delta::SignatureDelta { signature }, out);
        }
        self.emit(out, &Event::ContentBlockStop { index: open.index });
    }

    pub(super) fn delta(&self, index: usize, delta: Delta<'_>, out: &mut Frames) {
        self.emit(out, &Event::ContentBlockDelta { index, delta });
    }

    /// Whether the open block is the `kind` block of item `output_index`.
    pub(super) fn is_open(&self, kind: fn(BlockKind) -> bool, output_index: u32) -> bool {
        self.open
            .as_ref()
            .is_some_and(|o| kind(o.kind) && o.output_index == output_index)
    }

    pub(super) fn mark_streamed(&mut self, output_index: u32) {
        if !self.streamed.contains(&output_index) {
            self.streamed.push(output_index);
        }
    }

    /// A fragment of text (or of a refusal) of part `part` of message item
    /// `output_index`: sent in that part's text block.
    pub(super) fn text(
        &mut self,
        output_index: u32,
        part: u32,
        delta: Option<&RawValue>,
        out: &mut Frames,
    ) {
        let Some(text) = delta.and_then(JsonStr::new).filter(|t| !t.is_empty()) else {
            return;
        };
        self.start(out);
        let index = match &self.open {
            Some(o)
                if o.kind == BlockKind::Text
                    && o.output_index == output_index
                    && o.part == part =>
            {
                o.index
            }
            _ => {
                let empty = ContentBlock::Text {
                    text: JsonText::from_text(""),
                };
                match self.open_block(BlockKind::Text, output_index, part, empty, out) {
                    Some(index) => index,
                    None => return,
                }
            }
        };
        self.mark_streamed(output_index);
        self.delta(index, Delta::TextDelta { text: text.into() }, out);
    }

    /// A fragment of reasoning of item `output_index`: summary text
    /// (`summary`) or reasoning text of part `part`, sent in the item's
    /// thinking block when the client shows thinking. Parts are a blank
    /// line apart, as in a body.
    pub(super) fn thinking(
        &mut self,
        output_index: u32,
        part: u32,
        summary: bool,
        delta: Option<&RawValue>,
        out: &mut Frames,
    ) {
        if self.ctx.thinking != ThinkingDisplay::Summarized {
            return;
        }
        let Some(text) = delta.and_then(JsonStr::new).filter(|t| !t.is_empty()) else {
            return;
        };
        self.start(out);
        let kind = BlockKind::Thinking { summary };
        let (index, separate) = match &mut self.open {
            Some(o)
                if o.output_index == output_index
                    && matches!(o.kind, BlockKind::Thinking { .. }) =>
            {
                if o.kind != kind {
                    // The item's other kind of text came first, and is the
                    // one shown.
                    return;
                }
                let separate = o.part != part;
                o.part = part;
                (o.index, separate)
            }
            _ if self.streamed.contains(&output_index) => return,
            _ => {
                let empty = ContentBlock::Thinking {
                    thinking: JsonText::from_text(""),
                    signature: JsonText::from_text(""),
                };
                match self.open_block(kind, output_index, part, empty, out) {
                    Some(index) => (index, false),
                    None => return,
                }
            }
        };
        self.mark_streamed(output_index);
        let thinking = match separate {
            true => JsonText::from_escaped(&format!(r"\n\n{}", text.escaped())),
            false => text.into(),
        };
        self.delta(index, Delta::ThinkingDelta { thinking }, out);
    }
}
