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

use std::cell::Cell;
use std::ops::Range;

use serde_json::value::RawValue;

use super::fields::{CUSTOM_TOOL_FORMAT, PART, REASONING, SUMMARY_PART, TEXT, TOOL, TOOL_CHOICE};
use super::{ContentPart, CreateResponse, Input, InputItem, InputItems, Tool};
use crate::cursor::{raw_written, JsonCursor, SeenFields};
use crate::raw::JsonStr;
use crate::responses::written::WrittenTools;
use crate::unmodeled::{skip_noting, Shape};
use crate::RawObject;

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
    /// The body's own fields, each as its raw text, in the order written
    /// (unknown ones and repeats included): what a backend that reads the
    /// same API gets, patched, without the body being read again.
    pub members: RawObject<'a>,
    /// Whether the body may hold fields the request types do not model:
    /// `false` when the reader met none (nor left a value for serde to
    /// parse later, which would skip any such field unseen), which spares
    /// the caller the walk of
    /// [`unmodeled_fields`](super::unmodeled_fields), which would find
    /// none.
    pub unmodeled: bool,
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
        Self::read_knowing(body, &[])
    }

    /// [`read`](Self::read), stepping over the values at `known` without
    /// reading them ([`JsonCursor::knowing`]): for a body this process
    /// wrote from a request it had read already, told where it copied
    /// that request's values. Gives what `read` gives, if `known` is told
    /// right.
    pub fn read_knowing(body: &'a [u8], known: &'a [Range<usize>]) -> Option<ReadRequest<'a>> {
        Self::read_written(body, known, None)
    }

    /// [`read_knowing`](Self::read_knowing), taking the function tools
    /// from where the writer noted them
    /// ([`ResponsesRequest::write_json_noting`](crate::responses::strict::ResponsesRequest::write_json_noting))
    /// rather than reading them. Gives what `read` gives, if `known` and
    /// `tools` are told right; a note that does not match the bytes (the
    /// array not where it says) is not used.
    pub fn read_written(
        body: &'a [u8],
        known: &'a [Range<usize>],
        tools: Option<&'a WrittenTools>,
    ) -> Option<ReadRequest<'a>> {
        let text = std::str::from_utf8(body).ok()?;
        let mut cursor = JsonCursor::knowing(text, known);
        let mut request = CreateResponse::default();
        let mut seen = SeenFields::default();
        // Kept for every request, though only a Responses backend is sent
        // them: keeping them only when asked measured no gain for the
        // translation to Chat (callgrind, the 3 KB turn, two builds each:
        // 180.6 K and 180.8 K instructions a request always kept, 181.1 K
        // and 180.3 K kept when asked).
        let mut members = RawObject::with_capacity(16);
        let noted = Cell::new(false);
        cursor.object(|c, key| {
            let start = c.value_start()?;
            match (key, tools) {
                ("tools", Some(written)) if written_tools(c, written, &mut request) => {
                    seen.once(TOOLS_BIT)?
                }
                _ => request_field(c, key, &mut request, &mut seen, &noted)?,
            }
            members.push(key, c.raw_since(start));
            Some(())
        })?;
        cursor.end()?;
        Some(ReadRequest {
            request,
            compact: !cursor.padded(),
            members,
            unmodeled: noted.get(),
        })
    }
}

/// Whether the reader met a field the types do not model, or left a value
/// for serde to parse (which would skip any such field unseen).
type Noted = Cell<bool>;

/// Steps over the value of a field the types do not model, noting it.
fn unmodeled(c: &mut JsonCursor<'_>, noted: &Noted) -> Option<()> {
    noted.set(true);
    c.skip_value()
}

/// A value kept raw, looked through for fields `shape`'s types do not
/// model (noted when there are).
fn raw_noting<'a>(c: &mut JsonCursor<'a>, shape: Shape, noted: &Noted) -> Option<&'a RawValue> {
    let start = c.value_start()?;
    // A value this process wrote holds no field its types do not model.
    if c.step_over_known(start) {
        return Some(c.raw_since(start));
    }
    if skip_noting(c, shape)? {
        noted.set(true);
    }
    Some(c.raw_since(start))
}

/// A count that fits a `u32`.
fn u32(c: &mut JsonCursor<'_>) -> Option<u32> {
    c.u64()?.try_into().ok()
}

/// Reads one field's value into the request.
type ReadField<'a> = fn(&mut JsonCursor<'a>, &mut CreateResponse<'a>, &Noted) -> Option<()>;

fn request_field<'a>(
    c: &mut JsonCursor<'a>,
    key: &'a str,
    r: &mut CreateResponse<'a>,
    seen: &mut SeenFields,
    noted: &Noted,
) -> Option<()> {
    let (bit, read): (u8, ReadField<'a>) = match key {
        "model" => (0, |c, r, _| c.set(&mut r.model, JsonCursor::str)),
        "input" => (1, |c, r, n| c.set(&mut r.input, |c| input(c, n))),
        "instructions" => (2, |c, r, _| {
            c.set(&mut r.instructions, JsonCursor::json_str)
        }),
        "tools" => (TOOLS_BIT, tools_field),
        "tool_choice" => (4, |c, r, n| {
            c.set(&mut r.tool_choice, |c| {
                raw_noting(c, Shape::Object(TOOL_CHOICE), n)
            })
        }),
        "parallel_tool_calls" => (5, |c, r, _| {
            c.set(&mut r.parallel_tool_calls, JsonCursor::bool)
        }),
        "text" => (6, |c, r, n| {
            c.set(&mut r.text, |c| raw_noting(c, Shape::Object(TEXT), n))
        }),
        "max_output_tokens" => (7, |c, r, _| {
            c.set(&mut r.max_output_tokens, JsonCursor::u64)
        }),
        "temperature" => (8, |c, r, _| c.set(&mut r.temperature, JsonCursor::f64)),
        "top_p" => (9, |c, r, _| c.set(&mut r.top_p, JsonCursor::f64)),
        "top_logprobs" => (10, |c, r, _| c.set(&mut r.top_logprobs, u32)),
        "presence_penalty" => (11, |c, r, _| {
            c.set(&mut r.presence_penalty, JsonCursor::f64)
        }),
        "frequency_penalty" => (12, |c, r, _| {
            c.set(&mut r.frequency_penalty, JsonCursor::f64)
        }),
        "reasoning" => (13, |c, r, n| {
            c.set(&mut r.reasoning, |c| {
                raw_noting(c, Shape::Object(REASONING), n)
            })
        }),
        "user" => (14, |c, r, _| c.set(&mut r.user, JsonCursor::str)),
        "safety_identifier" => (15, |c, r, _| {
            c.set(&mut r.safety_identifier, JsonCursor::str)
        }),
        "stream" => (16, |c, r, _| c.set(&mut r.stream, JsonCursor::bool)),
        "stream_options" => (17, |c, r, _| c.set(&mut r.stream_options, JsonCursor::raw)),
        "store" => (18, |c, r, _| c.set(&mut r.store, JsonCursor::bool)),
        "metadata" => (19, |c, r, _| c.set(&mut r.metadata, JsonCursor::raw)),
        "include" => (20, |c, r, _| c.set(&mut r.include, include)),
        "prompt_cache_key" => (21, |c, r, _| {
            c.set(&mut r.prompt_cache_key, JsonCursor::str)
        }),
        "prompt_cache_retention" => (22, |c, r, _| {
            c.set(&mut r.prompt_cache_retention, JsonCursor::raw)
        }),
        "service_tier" => (23, |c, r, _| c.set(&mut r.service_tier, JsonCursor::str)),
        "truncation" => (24, |c, r, _| c.set(&mut r.truncation, JsonCursor::raw)),
        "previous_response_id" => (25, |c, r, _| {
            c.set(&mut r.previous_response_id, JsonCursor::str)
        }),
        "conversation" => (26, |c, r, _| c.set(&mut r.conversation, JsonCursor::raw)),
        "background" => (27, |c, r, _| c.set(&mut r.background, JsonCursor::raw)),
        "max_tool_calls" => (28, |c, r, _| c.set(&mut r.max_tool_calls, JsonCursor::u64)),
        "prompt" => (29, |c, r, _| c.set(&mut r.prompt, JsonCursor::raw)),
        "context_management" => (30, |c, r, _| {
            c.set(&mut r.context_management, JsonCursor::raw)
        }),
        "moderation" => (31, |c, r, _| c.set(&mut r.moderation, JsonCursor::raw)),
        "prompt_cache_options" => (32, |c, r, _| {
            c.set(&mut r.prompt_cache_options, JsonCursor::raw)
        }),
        "client_metadata" => (33, |c, r, _| c.set(&mut r.client_metadata, JsonCursor::raw)),
        _ => return unmodeled(c, noted),
    };
    seen.once(bit)?;
    read(c, r, noted)
}

/// `input`: a string, or an array of items.
fn input<'a>(c: &mut JsonCursor<'a>, noted: &Noted) -> Option<Input<'a>> {
    match c.peek()? {
        b'"' => c.json_str().map(Input::Text),
        b'[' => {
            let start = c.value_start()?;
            let items = c.list(|c, it| item(c, it, noted))?;
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

/// The bit of `tools` among the fields seen.
const TOOLS_BIT: u8 = 3;

/// Takes `tools` from the writer's note, when the array it notes starts
/// at the cursor and every range in it lies in the text: the tools then
/// read as the writer wrote them, each a function tool, and the cursor is
/// past the array (`true`). Reads nothing otherwise (`false`).
fn written_tools<'a>(
    c: &mut JsonCursor<'a>,
    written: &'a WrittenTools,
    request: &mut CreateResponse<'a>,
) -> bool {
    let text = c.text();
    let literal = |range: &Range<usize>| text.get(range.clone());
    let fits = c.value_start() == Some(written.array.start)
        && literal(&written.array).is_some_and(|a| a.starts_with('[') && a.ends_with(']'))
        && written.tools.iter().all(|t| {
            literal(&t.name).is_some()
                && t.description.as_ref().is_none_or(|d| literal(d).is_some())
                && t.parameters.as_ref().is_none_or(|p| literal(p).is_some())
        });
    if !fits {
        return false;
    }
    let mut tools = Vec::with_capacity(written.tools.len());
    for tool in &written.tools {
        let Some(name) = JsonCursor::new(&text[tool.name.clone()]).str() else {
            return false;
        };
        let description = match &tool.description {
            None => None,
            Some(d) => match JsonStr::new(raw_written(&text[d.clone()])) {
                Some(description) => Some(description),
                None => return false,
            },
        };
        tools.push(Tool {
            kind: Some("function".into()),
            name: Some(name),
            description,
            parameters: tool
                .parameters
                .as_ref()
                .map(|p| raw_written(&text[p.clone()])),
            strict: tool.strict,
            ..Tool::default()
        });
    }
    c.skip_to(written.array.end);
    request.tools = Some(raw_written(&text[written.array.clone()]));
    request.parsed_tools = Some(tools);
    true
}

/// `tools`, kept raw, and read into tools when every one of them reads.
fn tools_field<'a>(
    c: &mut JsonCursor<'a>,
    r: &mut CreateResponse<'a>,
    noted: &Noted,
) -> Option<()> {
    if c.null()? {
        return Some(());
    }
    let (raw, parsed) = c.raw_and_parsed(|c| tool_list(c, noted))?;
    // Left to serde, which would skip an unknown key unseen.
    noted.set(noted.get() || parsed.is_none());
    r.tools = Some(raw);
    r.parsed_tools = parsed;
    Some(())
}

fn tool_list<'a>(c: &mut JsonCursor<'a>, noted: &Noted) -> Option<Vec<Tool<'a>>> {
    c.list(|c, t| tool(c, t, noted))
}

fn tool<'a>(c: &mut JsonCursor<'a>, t: &mut Tool<'a>, noted: &Noted) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| c.set(&mut t.kind, JsonCursor::str)),
        "name" => seen
            .once(1)
            .and_then(|()| c.set(&mut t.name, JsonCursor::str)),
        "description" => seen
            .once(2)
            .and_then(|()| c.set(&mut t.description, JsonCursor::json_str)),
        "parameters" => seen
            .once(3)
            .and_then(|()| c.set(&mut t.parameters, JsonCursor::raw)),
        "strict" => seen
            .once(4)
            .and_then(|()| c.set(&mut t.strict, JsonCursor::bool)),
        "tools" => seen
            .once(5)
            .and_then(|()| c.set(&mut t.tools, |c| tool_list(c, noted))),
        "format" => seen.once(6).and_then(|()| {
            c.set(&mut t.format, |c| {
                raw_noting(c, Shape::Object(CUSTOM_TOOL_FORMAT), noted)
            })
        }),
        "user_location" => seen
            .once(7)
            .and_then(|()| c.set(&mut t.user_location, JsonCursor::raw)),
        "search_context_size" => seen
            .once(8)
            .and_then(|()| c.set(&mut t.search_context_size, JsonCursor::raw)),
        "external_web_access" => seen
            .once(9)
            .and_then(|()| c.set(&mut t.external_web_access, JsonCursor::bool)),
        "defer_loading" => seen
            .once(10)
            .and_then(|()| c.set(&mut t.defer_loading, JsonCursor::bool)),
        "execution" => seen
            .once(11)
            .and_then(|()| c.set(&mut t.execution, JsonCursor::str)),
        _ => unmodeled(c, noted),
    })
}

/// One input item, with its text and, when its content is an array of
/// parts, the parts.
fn item<'a>(c: &mut JsonCursor<'a>, it: &mut InputItem<'a>, noted: &Noted) -> Option<()> {
    let start = c.value_start()?;
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| c.set(&mut it.kind, JsonCursor::str)),
        "role" => seen
            .once(1)
            .and_then(|()| c.set(&mut it.role, JsonCursor::str)),
        "content" => seen.once(2).and_then(|()| content(c, it, noted)),
        "id" => seen
            .once(3)
            .and_then(|()| c.set(&mut it.id, JsonCursor::str)),
        "status" => seen
            .once(4)
            .and_then(|()| c.set(&mut it.status, JsonCursor::str)),
        "call_id" => seen
            .once(5)
            .and_then(|()| c.set(&mut it.call_id, JsonCursor::str)),
        "name" => seen
            .once(6)
            .and_then(|()| c.set(&mut it.name, JsonCursor::str)),
        "namespace" => seen
            .once(7)
            .and_then(|()| c.set(&mut it.namespace, JsonCursor::str)),
        "arguments" => seen
            .once(8)
            .and_then(|()| c.set(&mut it.arguments, JsonCursor::raw)),
        "output" => seen.once(9).and_then(|()| {
            c.set(&mut it.output, |c| {
                raw_noting(c, Shape::Objects(PART), noted)
            })
        }),
        "input" => seen
            .once(10)
            .and_then(|()| c.set(&mut it.input, JsonCursor::raw)),
        "summary" => seen.once(11).and_then(|()| {
            c.set(&mut it.summary, |c| {
                raw_noting(c, Shape::Objects(SUMMARY_PART), noted)
            })
        }),
        "encrypted_content" => seen
            .once(12)
            .and_then(|()| c.set(&mut it.encrypted_content, JsonCursor::raw)),
        "phase" => seen
            .once(13)
            .and_then(|()| c.set(&mut it.phase, JsonCursor::str)),
        "tools" => seen.once(14).and_then(|()| {
            c.set(&mut it.tools, |c| {
                raw_noting(c, Shape::Objects(TOOL), noted)
            })
        }),
        "execution" => seen
            .once(15)
            .and_then(|()| c.set(&mut it.execution, JsonCursor::str)),
        "author" => seen
            .once(16)
            .and_then(|()| c.set(&mut it.author, JsonCursor::raw)),
        "recipient" => seen
            .once(17)
            .and_then(|()| c.set(&mut it.recipient, JsonCursor::raw)),
        _ => unmodeled(c, noted),
    })?;
    it.raw = Some(c.raw_since(start));
    Some(())
}

/// An item's `content`: kept raw, and read into parts when it is an array
/// of them (a string needs no parsing).
fn content<'a>(c: &mut JsonCursor<'a>, it: &mut InputItem<'a>, noted: &Noted) -> Option<()> {
    if c.null()? {
        return Some(());
    }
    if c.peek()? != b'[' {
        it.content = Some(c.raw()?);
        return Some(());
    }
    let (raw, parsed) = c.raw_and_parsed(|c| c.list(|c, p| part(c, p, noted)))?;
    // Left to serde, which would skip an unknown key unseen.
    noted.set(noted.get() || parsed.is_none());
    it.content = Some(raw);
    it.parsed_content = parsed;
    Some(())
}

fn part<'a>(c: &mut JsonCursor<'a>, p: &mut ContentPart<'a>, noted: &Noted) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| c.set(&mut p.kind, JsonCursor::str)),
        "text" => seen
            .once(1)
            .and_then(|()| c.set(&mut p.text, JsonCursor::json_str)),
        "refusal" => seen
            .once(2)
            .and_then(|()| c.set(&mut p.refusal, JsonCursor::json_str)),
        "image_url" => seen
            .once(3)
            .and_then(|()| c.set(&mut p.image_url, JsonCursor::raw)),
        "file_id" => seen
            .once(4)
            .and_then(|()| c.set(&mut p.file_id, JsonCursor::json_str)),
        "detail" => seen
            .once(5)
            .and_then(|()| c.set(&mut p.detail, JsonCursor::str)),
        "file_data" => seen
            .once(6)
            .and_then(|()| c.set(&mut p.file_data, JsonCursor::json_str)),
        "file_url" => seen
            .once(7)
            .and_then(|()| c.set(&mut p.file_url, JsonCursor::json_str)),
        "filename" => seen
            .once(8)
            .and_then(|()| c.set(&mut p.filename, JsonCursor::json_str)),
        "input_audio" => seen
            .once(9)
            .and_then(|()| c.set(&mut p.input_audio, JsonCursor::raw)),
        "data" => seen
            .once(10)
            .and_then(|()| c.set(&mut p.data, JsonCursor::json_str)),
        "format" => seen
            .once(11)
            .and_then(|()| c.set(&mut p.format, JsonCursor::str)),
        "annotations" => seen
            .once(12)
            .and_then(|()| c.set(&mut p.annotations, JsonCursor::raw)),
        "logprobs" => seen
            .once(13)
            .and_then(|()| c.set(&mut p.logprobs, JsonCursor::raw)),
        "prompt_cache_breakpoint" => seen
            .once(14)
            .and_then(|()| c.set(&mut p.prompt_cache_breakpoint, JsonCursor::raw)),
        _ => unmodeled(c, noted),
    })
}

// Public for the fuzz targets; a test build reaches it only from here.
#[cfg(any(test, fuzzing))]
#[cfg_attr(test, allow(unreachable_pub))]
pub mod check;
#[cfg(test)]
mod tests;
