//! Reasoning written inline in the content, between tags.
//!
//! Servers without a reasoning parser send a reasoning model's thinking as
//! ordinary content: `<think>…</think>` (DeepSeek-R1, Qwen3) or
//! `<reasoning>…</reasoning>` (gpt-oss on some hosts). The splitter
//! separates it, tolerating tags cut across chunks anywhere: it holds back
//! only what could still be the start of a tag, and releases it as soon as
//! it cannot. Blocks of one tag back to back are one reasoning: some hosts
//! wrap every reasoning chunk in its own pair of tags.

use crate::profile::ThinkTags;

/// Which side of a tag a piece of text is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// Inside a reasoning block.
    Reasoning,
    /// Everything else.
    Content,
}

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// The blocks [`ThinkTags::Leading`] recognises at the start of the
/// content: an opening tag and the closing tag that ends it.
const LEADING_BLOCKS: [(&str, &str); 2] = [(OPEN, CLOSE), ("<reasoning>", "</reasoning>")];

/// Where the splitter is in the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Nothing but whitespace so far, perhaps followed by the start of an
    /// opening tag ([`ThinkTags::Leading`] only).
    Opening,
    /// Inside a block, until its closing tag.
    Inside(&'static str),
    /// Just after a block ([`ThinkTags::Leading`] and
    /// [`ThinkTags::StartsInside`]): another block of the same tag may
    /// follow at once, after whitespace if any, and continues the same
    /// reasoning (gpt-oss on Bedrock wraps every reasoning chunk in its
    /// own pair of tags).
    After {
        open: &'static str,
        close: &'static str,
    },
    /// Outside any block: [`ThinkTags::Tags`] looks for the next `<think>`;
    /// the other modes have nothing more to find.
    Outside,
}

/// Splits streamed content into reasoning and content.
#[derive(Debug, Clone)]
pub(super) struct ThinkSplitter {
    mode: ThinkTags,
    place: Place,
    /// What arrived but cannot be sent yet: leading whitespace, or a suffix
    /// that may be the start of a tag.
    pending: String,
    /// Drop the blank lines models write right after a closing tag.
    trim_next_content: bool,
}

impl ThinkSplitter {
    /// A splitter for the mode, or `None` when content is only content.
    pub(super) fn new(mode: ThinkTags) -> Option<Self> {
        let place = match mode {
            ThinkTags::Off => return None,
            ThinkTags::Tags => Place::Outside,
            ThinkTags::StartsInside => Place::Inside(CLOSE),
            ThinkTags::Leading => Place::Opening,
        };
        Some(Self {
            mode,
            place,
            pending: String::new(),
            trim_next_content: false,
        })
    }

    /// Whether every fragment from now on is content, unchanged: the
    /// leading block is behind (or was never there) and nothing is held
    /// back. The caller can then send fragments as they arrived, escaped
    /// and with their log probabilities, without splitting them.
    pub(super) fn settled(&self) -> bool {
        self.mode != ThinkTags::Tags
            && self.place == Place::Outside
            && self.pending.is_empty()
            && !self.trim_next_content
    }

    /// Whether `fragment`, the next one, is content as it stands, which
    /// settles the splitter. True when the splitter is settled, or when the
    /// content's first non-blank character arrives in `fragment` with
    /// nothing held back and is not `<`: no leading block can follow.
    pub(super) fn passes_whole(&mut self, fragment: &str) -> bool {
        if self.place == Place::Opening && self.pending.is_empty() {
            let start = fragment.trim_start();
            if !start.is_empty() && !start.starts_with('<') {
                self.place = Place::Outside;
            }
        }
        self.settled()
    }

    /// Splits one fragment, calling `emit` for each non-empty piece in order.
    pub(super) fn push(&mut self, fragment: &str, emit: &mut dyn FnMut(Side, &str)) {
        let mut buf = std::mem::take(&mut self.pending);
        buf.push_str(fragment);
        let mut rest = buf.as_str();
        loop {
            match self.place {
                Place::Opening => {
                    let start = rest.trim_start();
                    match leading_tag(start) {
                        Opening::Undecided => {
                            self.pending = rest.to_owned();
                            return;
                        }
                        Opening::Tag { open, close } => {
                            // The whitespace before the tag goes with it.
                            self.place = Place::Inside(close);
                            rest = &start[open.len()..];
                        }
                        Opening::NotATag => self.place = Place::Outside,
                    }
                }
                Place::Inside(close) => match rest.find(close) {
                    Some(at) => {
                        self.emit(&rest[..at], emit);
                        self.place = match (self.mode, opening_of(close)) {
                            (ThinkTags::Tags, _) | (_, None) => Place::Outside,
                            (_, Some(open)) => Place::After { open, close },
                        };
                        self.trim_next_content = true;
                        rest = &rest[at + close.len()..];
                    }
                    None => return self.hold_partial(rest, close, emit),
                },
                Place::After { open, close } => {
                    let start = rest.trim_start();
                    if let Some(inside) = start.strip_prefix(open) {
                        // The whitespace between two blocks goes with them.
                        self.place = Place::Inside(close);
                        rest = inside;
                    } else if open.starts_with(start) {
                        self.pending = rest.to_owned();
                        return;
                    } else {
                        self.place = Place::Outside;
                    }
                }
                Place::Outside if self.mode == ThinkTags::Tags => match rest.find(OPEN) {
                    Some(at) => {
                        self.emit(&rest[..at], emit);
                        self.place = Place::Inside(CLOSE);
                        self.trim_next_content = false;
                        rest = &rest[at + OPEN.len()..];
                    }
                    None => return self.hold_partial(rest, OPEN, emit),
                },
                Place::Outside => return self.emit(rest, emit),
            }
        }
    }

    /// Emits `rest` but for a suffix that may be the start of `tag`, which
    /// is held back for the next fragment.
    fn hold_partial(&mut self, rest: &str, tag: &str, emit: &mut dyn FnMut(Side, &str)) {
        let keep = partial_tag_suffix(rest, tag);
        self.emit(&rest[..rest.len() - keep], emit);
        self.pending = rest[rest.len() - keep..].to_owned();
    }

    /// Emits what was held back: at the end of the content, or before
    /// something that is not content (a tool call, a refusal). Content that
    /// had not yet shown whether it opens with a tag is content.
    pub(super) fn finish(&mut self, emit: &mut dyn FnMut(Side, &str)) {
        if matches!(self.place, Place::Opening | Place::After { .. }) {
            self.place = Place::Outside;
        }
        let pending = std::mem::take(&mut self.pending);
        self.emit(&pending, emit);
    }

    fn emit(&mut self, text: &str, emit: &mut dyn FnMut(Side, &str)) {
        if let Place::Inside(_) = self.place {
            if !text.is_empty() {
                emit(Side::Reasoning, text);
            }
            return;
        }
        let text = if self.trim_next_content {
            text.trim_start_matches(['\n', '\r'])
        } else {
            text
        };
        if !text.is_empty() {
            self.trim_next_content = false;
            emit(Side::Content, text);
        }
    }
}

/// What the start of the content (leading whitespace removed) shows.
enum Opening {
    /// Too little to tell: empty, or a proper prefix of an opening tag.
    Undecided,
    /// It opens with a tag.
    Tag {
        open: &'static str,
        close: &'static str,
    },
    /// It cannot open with a tag.
    NotATag,
}

fn leading_tag(start: &str) -> Opening {
    if start.is_empty() {
        return Opening::Undecided;
    }
    for (open, close) in LEADING_BLOCKS {
        if start.starts_with(open) {
            return Opening::Tag { open, close };
        }
        if open.starts_with(start) {
            return Opening::Undecided;
        }
    }
    Opening::NotATag
}

/// The opening tag of the block `close` ends.
fn opening_of(close: &str) -> Option<&'static str> {
    LEADING_BLOCKS
        .iter()
        .find(|(_, c)| *c == close)
        .map(|(open, _)| *open)
}

/// Length of the longest suffix of `text` that is a proper prefix of `tag`.
fn partial_tag_suffix(text: &str, tag: &str) -> usize {
    (1..tag.len())
        .rev()
        .find(|&n| {
            text.len() >= n
                && text.is_char_boundary(text.len() - n)
                && tag.starts_with(&text[text.len() - n..])
        })
        .unwrap_or(0)
}

/// Splits a complete text (a non-streaming body).
pub(super) fn split_all(mode: ThinkTags, text: &str) -> Option<(String, String)> {
    let mut splitter = ThinkSplitter::new(mode)?;
    let (mut reasoning, mut content) = (String::new(), String::new());
    let mut collect = |side: Side, piece: &str| match side {
        Side::Reasoning => reasoning.push_str(piece),
        Side::Content => content.push_str(piece),
    };
    splitter.push(text, &mut collect);
    splitter.finish(&mut collect);
    Some((reasoning, content))
}

#[cfg(test)]
mod tests;
