//! `POST /v1/responses` bodies read in one pass.
//!
//! serde reads a request in layers: the body with `input` and `tools` kept
//! raw, then `input` again into items, each message's content again into
//! parts, and `tools` again, after a pass of its own that checks how deep
//! the body nests. Every byte of a message's text is looked at four or five
//! times. [`CreateResponse::read`] reads the same body once, with the
//! [`JsonCursor`], into the same types, and keeps what the later layers
//! would have parsed ([`CreateResponse::parsed_tools`],
//! [`InputItem::parsed_content`], [`InputItem::raw`]) beside the raw text
//! they are parsed from.
//!
//! It handles the bodies clients send, and gives up on anything else (an
//! escaped key, a field written twice, a value of a type the field does not
//! take, invalid JSON): the caller then parses with serde as before, which
//! gives the same result or the error. The tests mutate real requests and
//! check that whatever this reads, serde reads the same.

use super::{ContentPart, CreateResponse, Input, InputItem, InputItems, Tool};
use crate::cursor::{JsonCursor, SeenFields};

/// A request body read by [`CreateResponse::read`].
#[derive(Debug)]
pub struct ReadRequest<'a> {
    /// The request, as serde would parse it, with the parsed forms of its
    /// tools and of its items' content parts filled in.
    pub request: CreateResponse<'a>,
    /// Whether the body holds no whitespace outside its strings (as
    /// [`survey`](crate::depth::survey) tells), so that its raw values are
    /// compact as they are.
    pub compact: bool,
}

impl<'a> CreateResponse<'a> {
    /// Reads a request body in one pass; `None` when it holds anything the
    /// reader does not handle, to be parsed with serde instead (which also
    /// names the error, if there is one). A body read here nests no deeper
    /// than [`MAX_DEPTH`](crate::depth::MAX_DEPTH).
    ///
    /// ```
    /// use wirebridge_wire::responses::lenient::{CreateResponse, Input};
    ///
    /// let body = br#"{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]}"#;
    /// let read = CreateResponse::read(body).unwrap();
    /// assert!(read.compact);
    /// let Some(Input::Items(items)) = &read.request.input else { unreachable!() };
    /// assert_eq!(items[0].parsed_content.as_ref().unwrap()[0].kind(), "input_text");
    ///
    /// // serde's to read, and to report.
    /// assert!(CreateResponse::read(br#"{"model":"m","model":"n"}"#).is_none());
    /// ```
    pub fn read(body: &'a [u8]) -> Option<ReadRequest<'a>> {
        let text = std::str::from_utf8(body).ok()?;
        let mut cursor = JsonCursor::new(text);
        let mut request = CreateResponse::default();
        let mut seen = SeenFields::default();
        cursor.object(|c, key| request_field(c, key, &mut request, &mut seen))?;
        cursor.end()?;
        Some(ReadRequest {
            request,
            compact: !cursor.padded(),
        })
    }
}

/// Reads `null` into `slot` as serde does (absent), or a value with `read`.
fn set<'a, T>(
    slot: &mut Option<T>,
    c: &mut JsonCursor<'a>,
    read: impl FnOnce(&mut JsonCursor<'a>) -> Option<T>,
) -> Option<()> {
    *slot = c.nullable(read)?;
    Some(())
}

/// An array of objects, each read by `read` into a default value pushed
/// first: the values (a few hundred bytes each) are built where they are
/// kept, not moved there.
fn list<'a, T: Default>(
    c: &mut JsonCursor<'a>,
    read: impl Fn(&mut JsonCursor<'a>, &mut T) -> Option<()>,
) -> Option<Vec<T>> {
    let mut list = Vec::new();
    c.array(|c| {
        list.push(T::default());
        read(c, list.last_mut()?)
    })?;
    Some(list)
}

/// A count that fits a `u32`.
fn u32(c: &mut JsonCursor<'_>) -> Option<u32> {
    c.u64()?.try_into().ok()
}

/// Reads one field's value into the request.
type ReadField<'a> = fn(&mut JsonCursor<'a>, &mut CreateResponse<'a>) -> Option<()>;

fn request_field<'a>(
    c: &mut JsonCursor<'a>,
    key: &'a str,
    r: &mut CreateResponse<'a>,
    seen: &mut SeenFields,
) -> Option<()> {
    let (bit, read): (u8, ReadField<'a>) = match key {
        "model" => (0, |c, r| set(&mut r.model, c, JsonCursor::str)),
        "input" => (1, |c, r| set(&mut r.input, c, input)),
        "instructions" => (2, |c, r| set(&mut r.instructions, c, JsonCursor::json_str)),
        "tools" => (3, tools_field),
        "tool_choice" => (4, |c, r| set(&mut r.tool_choice, c, JsonCursor::raw)),
        "parallel_tool_calls" => (5, |c, r| {
            set(&mut r.parallel_tool_calls, c, JsonCursor::bool)
        }),
        "text" => (6, |c, r| set(&mut r.text, c, JsonCursor::raw)),
        "max_output_tokens" => (7, |c, r| set(&mut r.max_output_tokens, c, JsonCursor::u64)),
        "temperature" => (8, |c, r| set(&mut r.temperature, c, JsonCursor::f64)),
        "top_p" => (9, |c, r| set(&mut r.top_p, c, JsonCursor::f64)),
        "top_logprobs" => (10, |c, r| set(&mut r.top_logprobs, c, u32)),
        "presence_penalty" => (11, |c, r| set(&mut r.presence_penalty, c, JsonCursor::f64)),
        "frequency_penalty" => (12, |c, r| set(&mut r.frequency_penalty, c, JsonCursor::f64)),
        "reasoning" => (13, |c, r| set(&mut r.reasoning, c, JsonCursor::raw)),
        "user" => (14, |c, r| set(&mut r.user, c, JsonCursor::str)),
        "safety_identifier" => (15, |c, r| set(&mut r.safety_identifier, c, JsonCursor::str)),
        "stream" => (16, |c, r| set(&mut r.stream, c, JsonCursor::bool)),
        "stream_options" => (17, |c, r| set(&mut r.stream_options, c, JsonCursor::raw)),
        "store" => (18, |c, r| set(&mut r.store, c, JsonCursor::bool)),
        "metadata" => (19, |c, r| set(&mut r.metadata, c, JsonCursor::raw)),
        "include" => (20, |c, r| set(&mut r.include, c, include)),
        "prompt_cache_key" => (21, |c, r| set(&mut r.prompt_cache_key, c, JsonCursor::str)),
        "prompt_cache_retention" => (22, |c, r| {
            set(&mut r.prompt_cache_retention, c, JsonCursor::raw)
        }),
        "service_tier" => (23, |c, r| set(&mut r.service_tier, c, JsonCursor::str)),
        "truncation" => (24, |c, r| set(&mut r.truncation, c, JsonCursor::raw)),
        "previous_response_id" => (25, |c, r| {
            set(&mut r.previous_response_id, c, JsonCursor::str)
        }),
        "conversation" => (26, |c, r| set(&mut r.conversation, c, JsonCursor::raw)),
        "background" => (27, |c, r| set(&mut r.background, c, JsonCursor::raw)),
        "max_tool_calls" => (28, |c, r| set(&mut r.max_tool_calls, c, JsonCursor::u64)),
        "prompt" => (29, |c, r| set(&mut r.prompt, c, JsonCursor::raw)),
        "context_management" => (30, |c, r| {
            set(&mut r.context_management, c, JsonCursor::raw)
        }),
        "moderation" => (31, |c, r| set(&mut r.moderation, c, JsonCursor::raw)),
        "prompt_cache_options" => (32, |c, r| {
            set(&mut r.prompt_cache_options, c, JsonCursor::raw)
        }),
        "client_metadata" => (33, |c, r| set(&mut r.client_metadata, c, JsonCursor::raw)),
        _ => return c.skip_value(),
    };
    seen.once(bit)?;
    read(c, r)
}

/// `input`: a string, or an array of items.
fn input<'a>(c: &mut JsonCursor<'a>) -> Option<Input<'a>> {
    match c.peek()? {
        b'"' => c.json_str().map(Input::Text),
        b'[' => {
            let start = c.value_start()?;
            let items = list(c, item)?;
            Some(Input::Items(InputItems::read(items, c.raw_since(start))))
        }
        _ => None,
    }
}

/// `include`: an array of strings.
fn include<'a>(c: &mut JsonCursor<'a>) -> Option<Vec<crate::Str<'a>>> {
    let mut list = Vec::new();
    c.array(|c| {
        list.push(c.str()?);
        Some(())
    })?;
    Some(list)
}

/// `tools`, kept raw, and read into tools when every one of them reads.
fn tools_field<'a>(c: &mut JsonCursor<'a>, r: &mut CreateResponse<'a>) -> Option<()> {
    if c.null()? {
        return Some(());
    }
    let (raw, parsed) = raw_and_parsed(c, tool_list)?;
    r.tools = Some(raw);
    r.parsed_tools = parsed;
    Some(())
}

/// A value's text, and its parsed form when `read` reads it; when it does
/// not (a field of a type serde would refuse), the value is stepped over
/// and left for serde to parse, and to report.
fn raw_and_parsed<'a, T>(
    c: &mut JsonCursor<'a>,
    read: impl FnOnce(&mut JsonCursor<'a>) -> Option<T>,
) -> Option<(&'a serde_json::value::RawValue, Option<T>)> {
    let start = c.value_start()?;
    let before = c.clone();
    if let Some(parsed) = read(c) {
        return Some((c.raw_since(start), Some(parsed)));
    }
    *c = before;
    Some((c.raw()?, None))
}

fn tool_list<'a>(c: &mut JsonCursor<'a>) -> Option<Vec<Tool<'a>>> {
    list(c, tool)
}

fn tool<'a>(c: &mut JsonCursor<'a>, t: &mut Tool<'a>) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| set(&mut t.kind, c, JsonCursor::str)),
        "name" => seen
            .once(1)
            .and_then(|()| set(&mut t.name, c, JsonCursor::str)),
        "description" => seen
            .once(2)
            .and_then(|()| set(&mut t.description, c, JsonCursor::json_str)),
        "parameters" => seen
            .once(3)
            .and_then(|()| set(&mut t.parameters, c, JsonCursor::raw)),
        "strict" => seen
            .once(4)
            .and_then(|()| set(&mut t.strict, c, JsonCursor::bool)),
        "tools" => seen.once(5).and_then(|()| set(&mut t.tools, c, tool_list)),
        "format" => seen
            .once(6)
            .and_then(|()| set(&mut t.format, c, JsonCursor::raw)),
        "user_location" => seen
            .once(7)
            .and_then(|()| set(&mut t.user_location, c, JsonCursor::raw)),
        "search_context_size" => seen
            .once(8)
            .and_then(|()| set(&mut t.search_context_size, c, JsonCursor::raw)),
        "external_web_access" => seen
            .once(9)
            .and_then(|()| set(&mut t.external_web_access, c, JsonCursor::bool)),
        "defer_loading" => seen
            .once(10)
            .and_then(|()| set(&mut t.defer_loading, c, JsonCursor::bool)),
        "execution" => seen
            .once(11)
            .and_then(|()| set(&mut t.execution, c, JsonCursor::str)),
        _ => c.skip_value(),
    })
}

/// One input item, with its text and, when its content is an array of
/// parts, the parts.
fn item<'a>(c: &mut JsonCursor<'a>, it: &mut InputItem<'a>) -> Option<()> {
    let start = c.value_start()?;
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| set(&mut it.kind, c, JsonCursor::str)),
        "role" => seen
            .once(1)
            .and_then(|()| set(&mut it.role, c, JsonCursor::str)),
        "content" => seen.once(2).and_then(|()| content(c, it)),
        "id" => seen
            .once(3)
            .and_then(|()| set(&mut it.id, c, JsonCursor::str)),
        "status" => seen
            .once(4)
            .and_then(|()| set(&mut it.status, c, JsonCursor::str)),
        "call_id" => seen
            .once(5)
            .and_then(|()| set(&mut it.call_id, c, JsonCursor::str)),
        "name" => seen
            .once(6)
            .and_then(|()| set(&mut it.name, c, JsonCursor::str)),
        "namespace" => seen
            .once(7)
            .and_then(|()| set(&mut it.namespace, c, JsonCursor::str)),
        "arguments" => seen
            .once(8)
            .and_then(|()| set(&mut it.arguments, c, JsonCursor::raw)),
        "output" => seen
            .once(9)
            .and_then(|()| set(&mut it.output, c, JsonCursor::raw)),
        "input" => seen
            .once(10)
            .and_then(|()| set(&mut it.input, c, JsonCursor::raw)),
        "summary" => seen
            .once(11)
            .and_then(|()| set(&mut it.summary, c, JsonCursor::raw)),
        "encrypted_content" => seen
            .once(12)
            .and_then(|()| set(&mut it.encrypted_content, c, JsonCursor::raw)),
        "phase" => seen
            .once(13)
            .and_then(|()| set(&mut it.phase, c, JsonCursor::str)),
        "tools" => seen
            .once(14)
            .and_then(|()| set(&mut it.tools, c, JsonCursor::raw)),
        "execution" => seen
            .once(15)
            .and_then(|()| set(&mut it.execution, c, JsonCursor::str)),
        _ => c.skip_value(),
    })?;
    it.raw = Some(c.raw_since(start));
    Some(())
}

/// An item's `content`: kept raw, and read into parts when it is an array
/// of them (a string needs no parsing).
fn content<'a>(c: &mut JsonCursor<'a>, it: &mut InputItem<'a>) -> Option<()> {
    if c.null()? {
        return Some(());
    }
    if c.peek()? != b'[' {
        it.content = Some(c.raw()?);
        return Some(());
    }
    let (raw, parsed) = raw_and_parsed(c, parts)?;
    it.content = Some(raw);
    it.parsed_content = parsed;
    Some(())
}

fn parts<'a>(c: &mut JsonCursor<'a>) -> Option<Vec<ContentPart<'a>>> {
    list(c, part)
}

fn part<'a>(c: &mut JsonCursor<'a>, p: &mut ContentPart<'a>) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| set(&mut p.kind, c, JsonCursor::str)),
        "text" => seen
            .once(1)
            .and_then(|()| set(&mut p.text, c, JsonCursor::json_str)),
        "refusal" => seen
            .once(2)
            .and_then(|()| set(&mut p.refusal, c, JsonCursor::json_str)),
        "image_url" => seen
            .once(3)
            .and_then(|()| set(&mut p.image_url, c, JsonCursor::raw)),
        "file_id" => seen
            .once(4)
            .and_then(|()| set(&mut p.file_id, c, JsonCursor::json_str)),
        "detail" => seen
            .once(5)
            .and_then(|()| set(&mut p.detail, c, JsonCursor::str)),
        "file_data" => seen
            .once(6)
            .and_then(|()| set(&mut p.file_data, c, JsonCursor::json_str)),
        "file_url" => seen
            .once(7)
            .and_then(|()| set(&mut p.file_url, c, JsonCursor::json_str)),
        "filename" => seen
            .once(8)
            .and_then(|()| set(&mut p.filename, c, JsonCursor::json_str)),
        "input_audio" => seen
            .once(9)
            .and_then(|()| set(&mut p.input_audio, c, JsonCursor::raw)),
        "data" => seen
            .once(10)
            .and_then(|()| set(&mut p.data, c, JsonCursor::json_str)),
        "format" => seen
            .once(11)
            .and_then(|()| set(&mut p.format, c, JsonCursor::str)),
        "annotations" => seen
            .once(12)
            .and_then(|()| set(&mut p.annotations, c, JsonCursor::raw)),
        "logprobs" => seen
            .once(13)
            .and_then(|()| set(&mut p.logprobs, c, JsonCursor::raw)),
        _ => c.skip_value(),
    })
}

#[cfg(any(test, fuzzing))]
pub mod check;
#[cfg(test)]
mod tests;
