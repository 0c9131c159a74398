//! Reasoning written inline as `<think>…</think>` in the content.
//!
//! Servers without a reasoning parser send a reasoning model's thinking as
//! ordinary content between tags. The splitter separates it, tolerating tags
//! cut across chunks: it holds back only what could be the start of a tag.

use crate::profile::ThinkTags;

/// Which side of a tag a piece of text is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// Between `<think>` and `</think>`.
    Reasoning,
    /// Everything else.
    Content,
}

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Splits streamed content into reasoning and content.
#[derive(Debug, Clone)]
pub(super) struct ThinkSplitter {
    inside: bool,
    /// A suffix of the last fragment that may be the start of a tag.
    pending: String,
    /// Drop the blank lines models write right after `</think>`.
    trim_next_content: bool,
}

impl ThinkSplitter {
    pub(super) fn new(mode: ThinkTags) -> Option<Self> {
        let inside = match mode {
            ThinkTags::Off => return None,
            ThinkTags::Tags => false,
            ThinkTags::StartsInside => true,
        };
        Some(Self {
            inside,
            pending: String::new(),
            trim_next_content: false,
        })
    }

    /// Splits one fragment, calling `emit` for each non-empty piece in order.
    pub(super) fn push(&mut self, fragment: &str, emit: &mut dyn FnMut(Side, &str)) {
        let mut buf = std::mem::take(&mut self.pending);
        buf.push_str(fragment);
        let mut rest = buf.as_str();
        loop {
            let tag = if self.inside { CLOSE } else { OPEN };
            if let Some(at) = rest.find(tag) {
                self.emit(&rest[..at], emit);
                self.inside = !self.inside;
                self.trim_next_content = !self.inside;
                rest = &rest[at + tag.len()..];
                continue;
            }
            let keep = partial_tag_suffix(rest, tag);
            self.emit(&rest[..rest.len() - keep], emit);
            self.pending = rest[rest.len() - keep..].to_owned();
            return;
        }
    }

    /// Emits what was held back, at the end of the content.
    pub(super) fn finish(&mut self, emit: &mut dyn FnMut(Side, &str)) {
        let pending = std::mem::take(&mut self.pending);
        self.emit(&pending, emit);
    }

    fn emit(&mut self, text: &str, emit: &mut dyn FnMut(Side, &str)) {
        if self.inside {
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
mod tests {
    use super::*;

    fn split(mode: ThinkTags, fragments: &[&str]) -> Vec<(Side, String)> {
        let mut splitter = ThinkSplitter::new(mode).unwrap();
        let mut out: Vec<(Side, String)> = Vec::new();
        let mut collect = |side: Side, piece: &str| match out.last_mut() {
            Some((last, text)) if *last == side => text.push_str(piece),
            _ => out.push((side, piece.to_owned())),
        };
        for f in fragments {
            splitter.push(f, &mut collect);
        }
        splitter.finish(&mut collect);
        out
    }

    #[test]
    fn tags_split_anywhere() {
        let whole = "<think>a < b</think>\n\nAnswer <thin";
        let expected = vec![
            (Side::Reasoning, "a < b".to_owned()),
            (Side::Content, "Answer <thin".to_owned()),
        ];
        for cut in 0..=whole.len() {
            if !whole.is_char_boundary(cut) {
                continue;
            }
            let got = split(ThinkTags::Tags, &[&whole[..cut], &whole[cut..]]);
            assert_eq!(got, expected, "cut at {cut}");
        }
        let bytes: Vec<String> = whole.chars().map(String::from).collect();
        let refs: Vec<&str> = bytes.iter().map(String::as_str).collect();
        assert_eq!(split(ThinkTags::Tags, &refs), expected);
    }

    #[test]
    fn starts_inside_when_the_template_opened_the_tag() {
        let got = split(ThinkTags::StartsInside, &["hmm", "</think>", "Hi"]);
        assert_eq!(
            got,
            vec![
                (Side::Reasoning, "hmm".into()),
                (Side::Content, "Hi".into())
            ]
        );
    }

    #[test]
    fn plain_content_passes_through() {
        assert_eq!(
            split(ThinkTags::Tags, &["no tags ", "here é"]),
            vec![(Side::Content, "no tags here é".into())]
        );
        assert_eq!(
            split_all(ThinkTags::Tags, "<think>x</think>y"),
            Some(("x".into(), "y".into()))
        );
        assert_eq!(split_all(ThinkTags::Off, "<think>x</think>y"), None);
    }
}
