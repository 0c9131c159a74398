//! Values the Messages layer copied into the Responses request it hands
//! on, told to the Responses side beneath it, which steps over them rather
//! than reading them again.
//!
//! The Messages leg reads the client's request whole, and copies much of
//! it into the Responses request as it came (texts, tool results, the
//! system prompt, each function tool's description and schema); the
//! Responses leg, reading that request, would scan them a second time
//! (most of a Claude Code request's bytes). The Messages layer notes
//! where it wrote them, and the request it hands on carries the note with
//! the bytes it describes: a note about other bytes (a layer between them
//! that wrote the body again) is not used.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

/// Where values copied from the client's request lie in a request body
/// this crate wrote, and that body: a request extension.
#[derive(Debug, Clone)]
pub(crate) struct HandedCopies {
    /// The body the note is about, held so that its bytes stay where they
    /// are for as long as the note can be read.
    body: Bytes,
    copies: Arc<[Range<usize>]>,
}

impl HandedCopies {
    /// A note about `body`, or `None` when it notes nothing.
    pub(crate) fn new(body: &Bytes, copies: Vec<Range<usize>>) -> Option<Self> {
        (!copies.is_empty()).then(|| Self {
            body: body.clone(),
            copies: copies.into(),
        })
    }

    /// What the request's note says of `body`: the copies, if the note is
    /// about these very bytes; none otherwise.
    pub(crate) fn of<'a>(head: &'a http::request::Parts, body: &[u8]) -> &'a [Range<usize>] {
        match head.extensions.get::<HandedCopies>() {
            Some(note) if note.body.as_ptr() == body.as_ptr() && note.body.len() == body.len() => {
                &note.copies
            }
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_read_only_for_the_bytes_it_is_about() {
        let body = Bytes::from_static(br#"{"tools":[{"parameters":{}}]}"#);
        let note = HandedCopies::new(&body, vec![11..22, 24..26]).unwrap();
        let (mut head, ()) = http::Request::new(()).into_parts();
        head.extensions.insert(note);
        assert_eq!(HandedCopies::of(&head, &body), [11..22, 24..26]);
        // The same text elsewhere is other bytes.
        let copy = body.to_vec();
        assert!(HandedCopies::of(&head, &copy).is_empty());
        assert!(HandedCopies::of(&head, &body[..10]).is_empty());
        assert!(HandedCopies::new(&body, Vec::new()).is_none());
    }
}
