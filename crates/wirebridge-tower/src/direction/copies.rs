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
//! that wrote the body again) is not used. It also says where each
//! function tool's fields were written, which the Responses side takes
//! from there rather than reading the tools at all.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use wirebridge_convert::responses_to_chat::ParsedRequest;
use wirebridge_convert::ConvertError;
use wirebridge_wire::responses::written::WrittenTools;

/// What a layer of this crate noted of a request body it wrote: where it
/// copied values from the client's request, and where it wrote each
/// function tool's fields.
#[derive(Debug, Default)]
pub(crate) struct Noted {
    pub(crate) copies: Vec<Range<usize>>,
    pub(crate) tools: Option<WrittenTools>,
}

/// What a layer of this crate noted of a request body it wrote
/// ([`Noted`]), and that body: a request extension.
#[derive(Debug, Clone)]
pub(crate) struct HandedCopies {
    /// The body the note is about, held so that its bytes stay where they
    /// are for as long as the note can be read.
    body: Bytes,
    noted: Arc<Noted>,
}

impl HandedCopies {
    /// A note about `body`, or `None` when it notes nothing.
    pub(crate) fn new(body: &Bytes, noted: Noted) -> Option<Self> {
        (!noted.copies.is_empty() || noted.tools.is_some()).then(|| Self {
            body: body.clone(),
            noted: Arc::new(noted),
        })
    }

    /// What the request's note says of `body`, if the note is about these
    /// very bytes; nothing otherwise.
    pub(crate) fn of<'a>(head: &'a http::request::Parts, body: &[u8]) -> Option<&'a Noted> {
        match head.extensions.get::<HandedCopies>() {
            Some(note) if note.body.as_ptr() == body.as_ptr() && note.body.len() == body.len() => {
                Some(&note.noted)
            }
            _ => None,
        }
    }

    /// Parses a Responses request body, stepping over what its note
    /// says was copied and taking the tools from where it says they were
    /// written.
    pub(crate) fn parse<'a>(
        head: &'a http::request::Parts,
        body: &'a [u8],
    ) -> Result<ParsedRequest<'a>, ConvertError> {
        match Self::of(head, body) {
            Some(noted) => ParsedRequest::parse_written(body, &noted.copies, noted.tools.as_ref()),
            None => ParsedRequest::parse(body),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_read_only_for_the_bytes_it_is_about() {
        let body = Bytes::from_static(br#"{"tools":[{"parameters":{}}]}"#);
        let noted = Noted {
            copies: vec![11..22, 24..26],
            tools: None,
        };
        let note = HandedCopies::new(&body, noted).unwrap();
        let (mut head, ()) = http::Request::new(()).into_parts();
        head.extensions.insert(note);
        assert_eq!(
            HandedCopies::of(&head, &body).unwrap().copies,
            [11..22, 24..26]
        );
        // The same text elsewhere is other bytes.
        let copy = body.to_vec();
        assert!(HandedCopies::of(&head, &copy).is_none());
        assert!(HandedCopies::of(&head, &body[..10]).is_none());
        assert!(HandedCopies::new(&body, Noted::default()).is_none());
    }

    /// The Messages direction hands on what it noted of the Responses
    /// request it wrote, its function tools included, and the Responses
    /// side reads that request with the note as it would without.
    #[test]
    fn the_messages_direction_hands_its_notes_on() {
        use crate::direction::sealed::Direction;
        use crate::direction::MessagesOverResponses;
        use crate::settings::MessagesSettings;
        use wirebridge_convert::responses_to_chat::History;

        let messages = br#"{"model":"m","max_tokens":64,"system":"Be terse.","tools":[{"name":"get_weather","description":"Weather now.","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"Paris?"}]}"#;
        let (mut head, ()) = http::Request::new(()).into_parts();
        let parsed = MessagesOverResponses::parse(&head, messages).unwrap();
        let settings = MessagesSettings::default();
        let prepared =
            MessagesOverResponses::translate(parsed, &History::default(), &settings, "").unwrap();
        let tools = prepared.copies.tools.as_ref().expect("the tools are noted");
        assert_eq!(tools.tools.len(), 1);
        assert!(!prepared.copies.copies.is_empty());
        let body = Bytes::from(prepared.body);
        head.extensions
            .insert(HandedCopies::new(&body, prepared.copies).unwrap());
        let noted = HandedCopies::parse(&head, &body).unwrap();
        let plain = ParsedRequest::parse(&body).unwrap();
        assert_eq!(format!("{noted:?}"), format!("{plain:?}"));
    }
}
