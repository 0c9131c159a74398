//! `POST /v1/messages` bodies read in one pass.
//!
//! serde reads a Messages request in layers: the body with every
//! message's content and the system prompt kept raw, then each content
//! again into blocks, and a tool result's content once more, after a pass
//! of its own that checks how deep the body nests. The tool schemas, most
//! of a coding agent's request, are scanned by serde's skipping of raw
//! values, which costs more a byte than the cursor's.
//! [`CreateMessage::read`] reads the same body once, with the
//! [`JsonCursor`], into the same types, and keeps the parsed content
//! ([`CreateMessage::parsed_system`], [`Message::parsed_content`],
//! [`Block::parsed_content`]) beside the raw text it is parsed from.
//!
//! As the Responses reader does, it handles the bodies clients send and
//! gives up on anything else (an escaped key, a field written twice, a
//! value of a type the field does not take, invalid JSON): the caller then
//! parses with serde as before, which gives the same result or the error.
//! The tests mutate real requests and check that whatever this reads,
//! serde reads the same.

use std::cell::Cell;

use serde_json::value::RawValue;

use super::{
    Block, BlockSource, Content, ContextEdit, ContextManagement, CreateMessage, Message, Metadata,
    OutputConfig, OutputFormat, Source, Thinking, Thread, Tool, ToolChoice,
};
use crate::cursor::{JsonCursor, SeenFields};

impl<'a> CreateMessage<'a> {
    /// Reads a request body in one pass; `None` when it holds anything the
    /// reader does not handle, to be parsed with serde instead (which also
    /// names the error, if there is one). A body read here nests no deeper
    /// than [`MAX_DEPTH`](crate::depth::MAX_DEPTH).
    ///
    /// ```
    /// use wirebridge_wire::messages::lenient::{Content, CreateMessage};
    ///
    /// let body = br#"{"model":"m","max_tokens":64,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}"#;
    /// let request = CreateMessage::read(body).unwrap();
    /// let messages = request.messages.unwrap();
    /// let Some(Content::Blocks(blocks)) = &messages[0].parsed_content else { unreachable!() };
    /// assert_eq!(blocks[0].kind(), "text");
    ///
    /// // serde's to read, and to report.
    /// assert!(CreateMessage::read(br#"{"model":"m","model":"n"}"#).is_none());
    /// ```
    pub fn read(body: &'a [u8]) -> Option<Self> {
        Self::read_noting_unmodeled(body).map(|(request, _)| request)
    }

    /// [`CreateMessage::read`], and whether the body may hold fields the
    /// types do not model: `false` when the reader met none (nor left any
    /// content for serde to parse later), which spares a caller the walk of
    /// [`unmodeled_fields`](super::unmodeled_fields), which would find
    /// none.
    ///
    /// ```
    /// use wirebridge_wire::messages::lenient::CreateMessage;
    ///
    /// let plain = br#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
    /// assert!(!CreateMessage::read_noting_unmodeled(plain).unwrap().1);
    /// let threaded = br#"{"model":"m","thread":{"id":"t"},"messages":[]}"#;
    /// assert!(CreateMessage::read_noting_unmodeled(threaded).unwrap().1);
    /// ```
    pub fn read_noting_unmodeled(body: &'a [u8]) -> Option<(Self, bool)> {
        Self::read_noting(body).map(|read| (read.request, read.unmodeled))
    }

    /// [`CreateMessage::read`], with what the reader noted on the way.
    pub fn read_noting(body: &'a [u8]) -> Option<ReadMessage<'a>> {
        let text = std::str::from_utf8(body).ok()?;
        let mut cursor = JsonCursor::new(text);
        let mut request = CreateMessage::default();
        let mut seen = SeenFields::default();
        let noted = Cell::new(false);
        cursor.object(|c, key| request_field(c, key, &mut request, &mut seen, &noted))?;
        cursor.end()?;
        Some(ReadMessage {
            request,
            unmodeled: noted.get(),
            compact: !cursor.padded(),
        })
    }
}

/// A request body read by [`CreateMessage::read_noting`].
#[derive(Debug)]
pub struct ReadMessage<'a> {
    /// The request, as serde would parse it.
    pub request: CreateMessage<'a>,
    /// Whether the body may hold fields the types do not model (see
    /// [`CreateMessage::read_noting_unmodeled`]).
    pub unmodeled: bool,
    /// Whether the body holds no whitespace outside its strings: every
    /// value copied from it is then compact.
    pub compact: bool,
}

/// Whether the reader met a field the types do not model, or left content
/// for serde to parse (which would skip any such field unseen).
type Noted = Cell<bool>;

/// Steps over the value of a field the types do not model, noting it.
fn unmodeled(c: &mut JsonCursor<'_>, noted: &Noted) -> Option<()> {
    noted.set(true);
    c.skip_value()
}

/// Reads one field's value into the request.
type ReadField<'a> = fn(&mut JsonCursor<'a>, &mut CreateMessage<'a>, &Noted) -> Option<()>;

fn request_field<'a>(
    c: &mut JsonCursor<'a>,
    key: &'a str,
    r: &mut CreateMessage<'a>,
    seen: &mut SeenFields,
    noted: &Noted,
) -> Option<()> {
    let (bit, read): (u8, ReadField<'a>) = match key {
        "model" => (0, |c, r, _| c.set(&mut r.model, JsonCursor::str)),
        "max_tokens" => (1, |c, r, _| c.set(&mut r.max_tokens, JsonCursor::u64)),
        "messages" => (2, |c, r, n| {
            c.set(&mut r.messages, |c| c.list(|c, m| message(c, m, n)))
        }),
        "system" => (3, |c, r, n| {
            content(c, &mut r.system, &mut r.parsed_system, n)
        }),
        "tools" => (4, |c, r, n| {
            c.set(&mut r.tools, |c| c.list(|c, t| tool(c, t, n)))
        }),
        "tool_choice" => (5, |c, r, n| {
            c.set(&mut r.tool_choice, |c| {
                c.record(|c, t| tool_choice(c, t, n))
            })
        }),
        "thinking" => (6, |c, r, n| {
            c.set(&mut r.thinking, |c| c.record(|c, t| thinking(c, t, n)))
        }),
        "temperature" => (7, |c, r, _| c.set(&mut r.temperature, JsonCursor::f64)),
        "top_p" => (8, |c, r, _| c.set(&mut r.top_p, JsonCursor::f64)),
        "top_k" => (9, |c, r, _| c.set(&mut r.top_k, JsonCursor::u64)),
        "stop_sequences" => (10, |c, r, _| c.set(&mut r.stop_sequences, strings)),
        "stream" => (11, |c, r, _| c.set(&mut r.stream, JsonCursor::bool)),
        "metadata" => (12, |c, r, n| {
            c.set(&mut r.metadata, |c| c.record(|c, m| metadata(c, m, n)))
        }),
        "output_config" => (13, |c, r, n| {
            c.set(&mut r.output_config, |c| {
                c.record(|c, o| output_config(c, o, n))
            })
        }),
        "output_format" => (14, |c, r, n| {
            c.set(&mut r.output_format, |c| {
                c.record(|c, o| output_format(c, o, n))
            })
        }),
        "context_management" => (15, |c, r, n| {
            c.set(&mut r.context_management, |c| {
                c.record(|c, m| context_management(c, m, n))
            })
        }),
        "service_tier" => (16, |c, r, _| c.set(&mut r.service_tier, JsonCursor::str)),
        "cache_control" => (17, |c, r, _| c.set(&mut r.cache_control, JsonCursor::raw)),
        "container" => (18, |c, r, _| c.set(&mut r.container, JsonCursor::raw)),
        "inference_geo" => (19, |c, r, _| c.set(&mut r.inference_geo, JsonCursor::str)),
        "mcp_servers" => (20, |c, r, _| c.set(&mut r.mcp_servers, JsonCursor::raw)),
        "thread" => (21, |c, r, n| {
            c.set(&mut r.thread, |c| c.record(|c, t| thread(c, t, n)))
        }),
        "diagnostics" => (22, |c, r, _| c.set(&mut r.diagnostics, JsonCursor::raw)),
        "compaction" => (23, |c, r, _| c.set(&mut r.compaction, JsonCursor::raw)),
        _ => return unmodeled(c, noted),
    };
    seen.once(bit)?;
    read(c, r, noted)
}

/// An array of strings.
fn strings<'a>(c: &mut JsonCursor<'a>) -> Option<Vec<crate::Str<'a>>> {
    let mut list = Vec::new();
    c.array(|c| {
        list.push(c.str()?);
        Some(())
    })?;
    Some(list)
}

fn message<'a>(c: &mut JsonCursor<'a>, m: &mut Message<'a>, noted: &Noted) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "role" => seen
            .once(0)
            .and_then(|()| c.set(&mut m.role, JsonCursor::str)),
        "content" => seen
            .once(1)
            .and_then(|()| content(c, &mut m.content, &mut m.parsed_content, noted)),
        _ => unmodeled(c, noted),
    })
}

/// A `content` (or `system`): kept raw, and read as text or as blocks when
/// it is a string or an array of blocks the reader reads; anything else is
/// kept raw for [`Content::from_raw`] to refuse.
fn content<'a>(
    c: &mut JsonCursor<'a>,
    raw: &mut Option<&'a RawValue>,
    parsed: &mut Option<Content<'a>>,
    noted: &Noted,
) -> Option<()> {
    if c.null()? {
        (*raw, *parsed) = (None, None);
        return Some(());
    }
    match c.peek()? {
        b'"' => {
            let text = c.json_str()?;
            (*raw, *parsed) = (Some(text.raw()), Some(Content::Text(text)));
        }
        b'[' => {
            let (text, blocks) = c.raw_and_parsed(|c| c.list(|c, b| block(c, b, noted)))?;
            // Blocks left for serde are parsed later, unseen by the reader.
            noted.set(noted.get() || blocks.is_none());
            (*raw, *parsed) = (Some(text), blocks.map(Content::Blocks));
        }
        _ => (*raw, *parsed) = (Some(c.raw()?), None),
    }
    Some(())
}

fn block<'a>(c: &mut JsonCursor<'a>, b: &mut Block<'a>, noted: &Noted) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| {
        let bit = match key {
            "type" => 0,
            "text" => 1,
            "source" => 2,
            "title" => 3,
            "context" => 4,
            "citations" => 5,
            "id" => 6,
            "name" => 7,
            "input" => 8,
            "tool_use_id" => 9,
            "content" => 10,
            "is_error" => 11,
            "thinking" => 12,
            "signature" => 13,
            "data" => 14,
            "cache_control" => 15,
            _ => return unmodeled(c, noted),
        };
        seen.once(bit)?;
        match bit {
            0 => c.set(&mut b.kind, JsonCursor::str),
            1 => c.set(&mut b.text, JsonCursor::json_str),
            2 => c.set(&mut b.source, |c| block_source(c, noted)),
            3 => c.set(&mut b.title, JsonCursor::json_str),
            4 => c.set(&mut b.context, JsonCursor::json_str),
            5 => c.set(&mut b.citations, JsonCursor::raw),
            6 => c.set(&mut b.id, JsonCursor::str),
            7 => c.set(&mut b.name, JsonCursor::str),
            8 => c.set(&mut b.input, JsonCursor::raw),
            9 => c.set(&mut b.tool_use_id, JsonCursor::str),
            10 => content(c, &mut b.content, &mut b.parsed_content, noted),
            11 => c.set(&mut b.is_error, JsonCursor::bool),
            12 => c.set(&mut b.thinking, JsonCursor::json_str),
            13 => c.set(&mut b.signature, JsonCursor::json_str),
            14 => c.set(&mut b.data, JsonCursor::json_str),
            _ => c.set(&mut b.cache_control, JsonCursor::raw),
        }
    })
}

/// An object for an image or a document, a URL for a search result.
fn block_source<'a>(c: &mut JsonCursor<'a>, noted: &Noted) -> Option<BlockSource<'a>> {
    match c.peek()? {
        b'"' => c.json_str().map(BlockSource::Url),
        _ => c
            .record(|c, s| source(c, s, noted))
            .map(BlockSource::Object),
    }
}

fn source<'a>(c: &mut JsonCursor<'a>, s: &mut Source<'a>, noted: &Noted) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| c.set(&mut s.kind, JsonCursor::str)),
        "media_type" => seen
            .once(1)
            .and_then(|()| c.set(&mut s.media_type, JsonCursor::str)),
        "data" => seen
            .once(2)
            .and_then(|()| c.set(&mut s.data, JsonCursor::json_str)),
        "url" => seen
            .once(3)
            .and_then(|()| c.set(&mut s.url, JsonCursor::json_str)),
        "file_id" => seen
            .once(4)
            .and_then(|()| c.set(&mut s.file_id, JsonCursor::json_str)),
        "content" => seen.once(5).and_then(|()| {
            // Kept raw, parsed by serde when the document is translated.
            noted.set(true);
            c.set(&mut s.content, JsonCursor::raw)
        }),
        _ => unmodeled(c, noted),
    })
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
        "input_schema" => seen
            .once(3)
            .and_then(|()| c.set(&mut t.input_schema, JsonCursor::raw)),
        "strict" => seen
            .once(4)
            .and_then(|()| c.set(&mut t.strict, JsonCursor::bool)),
        "cache_control" => seen
            .once(5)
            .and_then(|()| c.set(&mut t.cache_control, JsonCursor::raw)),
        "defer_loading" => seen
            .once(6)
            .and_then(|()| c.set(&mut t.defer_loading, JsonCursor::bool)),
        _ => unmodeled(c, noted),
    })
}

fn tool_choice<'a>(c: &mut JsonCursor<'a>, t: &mut ToolChoice<'a>, noted: &Noted) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| c.set(&mut t.kind, JsonCursor::str)),
        "name" => seen
            .once(1)
            .and_then(|()| c.set(&mut t.name, JsonCursor::str)),
        "disable_parallel_tool_use" => seen
            .once(2)
            .and_then(|()| c.set(&mut t.disable_parallel_tool_use, JsonCursor::bool)),
        _ => unmodeled(c, noted),
    })
}

fn thinking<'a>(c: &mut JsonCursor<'a>, t: &mut Thinking<'a>, noted: &Noted) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| c.set(&mut t.kind, JsonCursor::str)),
        "budget_tokens" => seen
            .once(1)
            .and_then(|()| c.set(&mut t.budget_tokens, JsonCursor::u64)),
        "display" => seen
            .once(2)
            .and_then(|()| c.set(&mut t.display, JsonCursor::str)),
        _ => unmodeled(c, noted),
    })
}

fn metadata<'a>(c: &mut JsonCursor<'a>, m: &mut Metadata<'a>, noted: &Noted) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "user_id" => seen
            .once(0)
            .and_then(|()| c.set(&mut m.user_id, JsonCursor::str)),
        _ => unmodeled(c, noted),
    })
}

fn thread<'a>(c: &mut JsonCursor<'a>, t: &mut Thread<'a>, noted: &Noted) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| c.set(&mut t.kind, JsonCursor::str)),
        "previous_message_id" => seen
            .once(1)
            .and_then(|()| c.set(&mut t.previous_message_id, JsonCursor::str)),
        _ => unmodeled(c, noted),
    })
}

fn output_config<'a>(
    c: &mut JsonCursor<'a>,
    o: &mut OutputConfig<'a>,
    noted: &Noted,
) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "effort" => seen
            .once(0)
            .and_then(|()| c.set(&mut o.effort, JsonCursor::str)),
        "format" => seen.once(1).and_then(|()| {
            c.set(&mut o.format, |c| {
                c.record(|c, f| output_format(c, f, noted))
            })
        }),
        _ => unmodeled(c, noted),
    })
}

fn output_format<'a>(
    c: &mut JsonCursor<'a>,
    o: &mut OutputFormat<'a>,
    noted: &Noted,
) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| c.set(&mut o.kind, JsonCursor::str)),
        "schema" => seen
            .once(1)
            .and_then(|()| c.set(&mut o.schema, JsonCursor::raw)),
        _ => unmodeled(c, noted),
    })
}

fn context_management<'a>(
    c: &mut JsonCursor<'a>,
    m: &mut ContextManagement<'a>,
    noted: &Noted,
) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "edits" => seen
            .once(0)
            .and_then(|()| c.set(&mut m.edits, |c| c.list(|c, e| context_edit(c, e, noted)))),
        _ => unmodeled(c, noted),
    })
}

fn context_edit<'a>(c: &mut JsonCursor<'a>, e: &mut ContextEdit<'a>, noted: &Noted) -> Option<()> {
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "type" => seen
            .once(0)
            .and_then(|()| c.set(&mut e.kind, JsonCursor::str)),
        "keep" => seen
            .once(1)
            .and_then(|()| c.set(&mut e.keep, JsonCursor::raw)),
        "trigger" => seen
            .once(2)
            .and_then(|()| c.set(&mut e.trigger, JsonCursor::raw)),
        "pause_after_compaction" => seen
            .once(3)
            .and_then(|()| c.set(&mut e.pause_after_compaction, JsonCursor::bool)),
        "instructions" => seen
            .once(4)
            .and_then(|()| c.set(&mut e.instructions, JsonCursor::raw)),
        _ => unmodeled(c, noted),
    })
}

// Public for the fuzz targets; a test build reaches it only from here.
#[cfg(any(test, fuzzing))]
#[cfg_attr(test, allow(unreachable_pub))]
pub mod check;
#[cfg(test)]
mod tests;
