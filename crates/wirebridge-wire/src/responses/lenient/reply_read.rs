//! `Response` bodies read in one pass.
//!
//! A Chat client over a Responses backend, and a Messages client over any
//! backend, read a `Response` body for every reply that is not streamed,
//! and every stream ends with one in its `response.completed` event.
//! serde reads it through its derived visitors, a generated function for
//! every key and a visitor for every optional field; for a body of a few
//! hundred bytes that cost more than writing the reply it becomes.
//! [`ResponseBody::read`] reads the same body with the [`JsonCursor`] into
//! the same types.
//!
//! It gives up on anything serde might read differently or reject (an
//! escaped key, a field written twice, a count written as a float or a
//! negative number, a value of the wrong type, invalid JSON): the caller
//! then parses with serde as before, which gives the same result or names
//! the error. The tests hold it to serde on recorded bodies and on edited
//! copies of them.

use super::shell::{incomplete_details, usage};
use super::{OutputItem, ResponseBody};
use crate::cursor::{JsonCursor, SeenFields};

impl<'a> ResponseBody<'a> {
    /// Reads a `Response` body in one pass; `None` when it holds anything
    /// the reader does not handle, to be parsed with serde instead.
    ///
    /// ```
    /// use wirebridge_wire::responses::lenient::ResponseBody;
    ///
    /// let body = br#"{"id":"resp_1","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"hi"}]}],"usage":{"input_tokens":3,"output_tokens":1}}"#;
    /// let response = ResponseBody::read(body).unwrap();
    /// assert_eq!(response.output.unwrap()[0].kind(), "message");
    /// assert_eq!(response.usage.unwrap().output_tokens, Some(1));
    ///
    /// // A count written as a float: serde's to read.
    /// assert!(ResponseBody::read(br#"{"created_at":1.0}"#).is_none());
    /// ```
    pub fn read(body: &'a [u8]) -> Option<Self> {
        let mut c = JsonCursor::new(std::str::from_utf8(body).ok()?);
        let out = response(&mut c)?;
        c.end()?;
        Some(out)
    }

    /// Parses a `Response` body: in one pass when [`read`](Self::read)
    /// can, else with serde, whose error names what is wrong.
    pub fn parse(body: &'a [u8]) -> serde_json::Result<Self> {
        match Self::read(body) {
            Some(response) => Ok(response),
            None => serde_json::from_slice(body),
        }
    }
}

fn response<'a>(c: &mut JsonCursor<'a>) -> Option<ResponseBody<'a>> {
    let mut out = ResponseBody::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "id" => seen.read(0, c, |c| c.set(&mut out.id, JsonCursor::str)),
        "created_at" => seen.read(1, c, |c| c.set(&mut out.created_at, JsonCursor::u64)),
        "model" => seen.read(2, c, |c| c.set(&mut out.model, JsonCursor::str)),
        "status" => seen.read(3, c, |c| c.set(&mut out.status, JsonCursor::str)),
        "output" => seen.read(4, c, |c| c.set(&mut out.output, |c| c.list(output_item))),
        "usage" => seen.read(5, c, |c| c.set(&mut out.usage, usage)),
        "error" => seen.read(6, c, |c| c.set(&mut out.error, JsonCursor::raw)),
        "incomplete_details" => seen.read(7, c, |c| {
            c.set(&mut out.incomplete_details, incomplete_details)
        }),
        _ => c.skip_value(),
    })?;
    Some(out)
}

fn output_item<'a>(c: &mut JsonCursor<'a>, out: &mut OutputItem<'a>) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen.read(0, c, |c| c.set(&mut out.kind, JsonCursor::str)),
        "id" => seen.read(1, c, |c| c.set(&mut out.id, JsonCursor::str)),
        "status" => seen.read(2, c, |c| c.set(&mut out.status, JsonCursor::str)),
        "content" => seen.read(3, c, |c| c.set(&mut out.content, JsonCursor::raw)),
        "summary" => seen.read(4, c, |c| c.set(&mut out.summary, JsonCursor::raw)),
        "call_id" => seen.read(5, c, |c| c.set(&mut out.call_id, JsonCursor::str)),
        "name" => seen.read(6, c, |c| c.set(&mut out.name, JsonCursor::str)),
        "namespace" => seen.read(7, c, |c| c.set(&mut out.namespace, JsonCursor::str)),
        "arguments" => seen.read(8, c, |c| c.set(&mut out.arguments, JsonCursor::raw)),
        "input" => seen.read(9, c, |c| c.set(&mut out.input, JsonCursor::json_str)),
        "encrypted_content" => seen.read(10, c, |c| {
            c.set(&mut out.encrypted_content, JsonCursor::json_str)
        }),
        _ => c.skip_value(),
    })
}

// Public for the fuzz targets; a test build reaches it only from here.
#[cfg(any(test, fuzzing))]
#[cfg_attr(test, allow(unreachable_pub))]
pub mod check;
#[cfg(test)]
mod tests;
