//! The fields the Messages request types model, and a walk over a body
//! that finds every other one.
//!
//! serde ignores the keys a type does not declare, and so does the
//! single-pass reader: a field Anthropic adds to its API (a `thread`, a
//! `diagnostics` request, a new block field) would otherwise vanish
//! without a word. [`unmodeled_fields`] names each of them by its JSON
//! path, for the translator to report as its loss policy says. The lists
//! here are the types' own: a test compares each with the fields serde
//! derives for the type, so a field added to one and not the other fails.
//!
//! The walk is a second pass over the body, about as long as the read;
//! [`CreateMessage::read_noting_unmodeled`](super::CreateMessage::read_noting_unmodeled)
//! tells when the read met nothing for it to find, as in every request
//! Claude Code sends by default, so that it can be left out.

use serde_json::Value;

use crate::cursor::JsonCursor;

/// What a field holds, as far as the walk looks into it.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// A value read whole (a scalar, or kept raw): not looked into.
    Whole,
    /// An object with these fields.
    Object(&'static [Field]),
    /// An array of objects with these fields.
    Objects(&'static [Field]),
    /// A `content` (or `system`): a string, or an array of blocks.
    Content,
    /// A block's `source`: a string (a search result's URL), or a source
    /// object.
    Source,
}

/// One field a type models: its name and what it holds.
pub type Field = (&'static str, Shape);

/// The fields of [`CreateMessage`](super::CreateMessage).
pub const REQUEST: &[Field] = &[
    ("model", Shape::Whole),
    ("max_tokens", Shape::Whole),
    ("messages", Shape::Objects(MESSAGE)),
    ("system", Shape::Content),
    ("tools", Shape::Objects(TOOL)),
    ("tool_choice", Shape::Object(TOOL_CHOICE)),
    ("thinking", Shape::Object(THINKING)),
    ("temperature", Shape::Whole),
    ("top_p", Shape::Whole),
    ("top_k", Shape::Whole),
    ("stop_sequences", Shape::Whole),
    ("stream", Shape::Whole),
    ("metadata", Shape::Object(METADATA)),
    ("output_config", Shape::Object(OUTPUT_CONFIG)),
    ("output_format", Shape::Object(OUTPUT_FORMAT)),
    ("context_management", Shape::Object(CONTEXT_MANAGEMENT)),
    ("service_tier", Shape::Whole),
    ("cache_control", Shape::Whole),
    ("container", Shape::Whole),
    ("inference_geo", Shape::Whole),
    ("mcp_servers", Shape::Whole),
    ("thread", Shape::Object(THREAD)),
];

/// The fields of [`Message`](super::Message).
pub const MESSAGE: &[Field] = &[("role", Shape::Whole), ("content", Shape::Content)];

/// The fields of [`Block`](super::Block).
pub const BLOCK: &[Field] = &[
    ("type", Shape::Whole),
    ("text", Shape::Whole),
    ("source", Shape::Source),
    ("title", Shape::Whole),
    ("context", Shape::Whole),
    ("citations", Shape::Whole),
    ("id", Shape::Whole),
    ("name", Shape::Whole),
    ("input", Shape::Whole),
    ("tool_use_id", Shape::Whole),
    ("content", Shape::Content),
    ("is_error", Shape::Whole),
    ("thinking", Shape::Whole),
    ("signature", Shape::Whole),
    ("data", Shape::Whole),
    ("cache_control", Shape::Whole),
];

/// The fields of [`Source`](super::Source).
pub const SOURCE: &[Field] = &[
    ("type", Shape::Whole),
    ("media_type", Shape::Whole),
    ("data", Shape::Whole),
    ("url", Shape::Whole),
    ("file_id", Shape::Whole),
    ("content", Shape::Content),
];

/// The fields of [`Tool`](super::Tool).
pub const TOOL: &[Field] = &[
    ("type", Shape::Whole),
    ("name", Shape::Whole),
    ("description", Shape::Whole),
    ("input_schema", Shape::Whole),
    ("strict", Shape::Whole),
    ("cache_control", Shape::Whole),
    ("defer_loading", Shape::Whole),
];

/// The fields of [`ToolChoice`](super::ToolChoice).
pub const TOOL_CHOICE: &[Field] = &[
    ("type", Shape::Whole),
    ("name", Shape::Whole),
    ("disable_parallel_tool_use", Shape::Whole),
];

/// The fields of [`Thinking`](super::Thinking).
pub const THINKING: &[Field] = &[
    ("type", Shape::Whole),
    ("budget_tokens", Shape::Whole),
    ("display", Shape::Whole),
];

/// The fields of [`Metadata`](super::Metadata).
pub const METADATA: &[Field] = &[("user_id", Shape::Whole)];

/// The fields of [`Thread`](super::Thread).
pub const THREAD: &[Field] = &[
    ("type", Shape::Whole),
    ("previous_message_id", Shape::Whole),
];

/// The fields of [`OutputConfig`](super::OutputConfig).
pub const OUTPUT_CONFIG: &[Field] = &[
    ("effort", Shape::Whole),
    ("format", Shape::Object(OUTPUT_FORMAT)),
];

/// The fields of [`OutputFormat`](super::OutputFormat).
pub const OUTPUT_FORMAT: &[Field] = &[("type", Shape::Whole), ("schema", Shape::Whole)];

/// The fields of [`ContextManagement`](super::ContextManagement).
pub const CONTEXT_MANAGEMENT: &[Field] = &[("edits", Shape::Objects(CONTEXT_EDIT))];

/// The fields of [`ContextEdit`](super::ContextEdit).
pub const CONTEXT_EDIT: &[Field] = &[("type", Shape::Whole), ("keep", Shape::Whole)];

/// The JSON paths of the fields in a request body that the request types
/// do not model (`thread`, `messages[0].content[1].extra`), in the order
/// they come. A field set to `null` is absent, as everywhere in the
/// reader. A value of a shape the types do not take (a number where
/// messages go) is not looked into: parsing the body refuses it.
///
/// ```
/// use wirebridge_wire::messages::lenient::unmodeled_fields;
///
/// let body = br#"{"model":"m","thread":{"id":"t"},"diagnostics":null,
///   "messages":[{"role":"user","content":[{"type":"text","text":"Hi","lang":"en"}]}]}"#;
/// assert_eq!(unmodeled_fields(body), ["thread", "messages[0].content[0].lang"]);
/// ```
pub fn unmodeled_fields(body: &[u8]) -> Vec<String> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Vec::new();
    };
    let mut walk = Walk::default();
    let mut cursor = JsonCursor::new(text);
    if walk
        .object(&mut cursor, REQUEST)
        .and_then(|()| cursor.end())
        .is_some()
    {
        return walk.found;
    }
    // The cursor gives up on what it does not handle (an escaped key);
    // serde's tree takes anything that is JSON. What is not is refused
    // when the body is parsed.
    let mut walk = Walk::default();
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        walk.value_object(&value, REQUEST);
    }
    walk.found
}

/// A walk's place in the body, and what it found. The path is one buffer
/// grown and cut back as the walk goes in and out, so that a body with
/// nothing to report allocates no path.
#[derive(Default)]
struct Walk {
    path: String,
    found: Vec<String>,
}

impl Walk {
    /// Runs `inside` with `.key` (or `key` at the top) added to the path.
    fn member<T>(&mut self, key: &str, inside: impl FnOnce(&mut Self) -> T) -> T {
        let len = self.path.len();
        if len > 0 {
            self.path.push('.');
        }
        self.path.push_str(key);
        let out = inside(self);
        self.path.truncate(len);
        out
    }

    /// Runs `inside` with `[index]` added to the path.
    fn element<T>(&mut self, index: usize, inside: impl FnOnce(&mut Self) -> T) -> T {
        use std::fmt::Write;
        let len = self.path.len();
        write!(self.path, "[{index}]").expect("writing to a String cannot fail");
        let out = inside(self);
        self.path.truncate(len);
        out
    }

    fn object(&mut self, c: &mut JsonCursor<'_>, fields: &'static [Field]) -> Option<()> {
        c.object(
            |c, key| match fields.iter().find(|(name, _)| *name == key) {
                // Most of a body: stepped over without touching the path.
                Some((_, Shape::Whole)) => c.skip_value(),
                Some((_, shape)) => self.member(key, |walk| walk.value(c, *shape)),
                None => {
                    if !c.null()? {
                        self.member(key, |walk| walk.found.push(walk.path.clone()));
                        c.skip_value()?;
                    }
                    Some(())
                }
            },
        )
    }

    fn value(&mut self, c: &mut JsonCursor<'_>, shape: Shape) -> Option<()> {
        match (shape, c.peek()?) {
            (Shape::Object(fields), b'{') => self.object(c, fields),
            (Shape::Source, b'{') => self.object(c, SOURCE),
            (Shape::Objects(fields), b'[') => self.objects(c, fields),
            (Shape::Content, b'[') => self.objects(c, BLOCK),
            _ => c.skip_value(),
        }
    }

    fn objects(&mut self, c: &mut JsonCursor<'_>, fields: &'static [Field]) -> Option<()> {
        let mut index = 0;
        c.array(|c| {
            index += 1;
            match c.peek()? {
                b'{' => self.element(index - 1, |walk| walk.object(c, fields)),
                _ => c.skip_value(),
            }
        })
    }

    fn value_object(&mut self, value: &Value, fields: &'static [Field]) {
        let Value::Object(map) = value else { return };
        for (key, inner) in map {
            match fields.iter().find(|(name, _)| name == key) {
                Some((_, shape)) => self.member(key, |walk| walk.value_shaped(inner, *shape)),
                None if inner.is_null() => {}
                None => self.member(key, |walk| walk.found.push(walk.path.clone())),
            }
        }
    }

    fn value_shaped(&mut self, value: &Value, shape: Shape) {
        let fields = match shape {
            Shape::Whole => return,
            Shape::Object(fields) => return self.value_object(value, fields),
            Shape::Source => return self.value_object(value, SOURCE),
            Shape::Objects(fields) => fields,
            Shape::Content => BLOCK,
        };
        if let Value::Array(list) = value {
            for (i, element) in list.iter().enumerate() {
                self.element(i, |walk| walk.value_object(element, fields));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::de::{value::Error, Deserialize, Deserializer, Error as _, Visitor};

    use super::*;
    use crate::messages::lenient::{
        Block, ContextEdit, ContextManagement, CreateMessage, Message, Metadata, OutputConfig,
        OutputFormat, Source, Thinking, Tool, ToolChoice,
    };

    /// A deserializer that only asks a type for the fields it declares:
    /// what serde's derive hands `deserialize_struct`.
    struct Probe<'f>(&'f mut &'static [&'static str]);

    impl<'de> Deserializer<'de> for Probe<'_> {
        type Error = Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
            Err(Error::custom("a struct was expected"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Error> {
            *self.0 = fields;
            Err(Error::custom("probed"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
            enum identifier ignored_any
        }
    }

    fn declared<'de, T: Deserialize<'de>>() -> Vec<&'static str> {
        let mut fields: &'static [&'static str] = &[];
        let _ = T::deserialize(Probe(&mut fields));
        let mut fields = fields.to_vec();
        fields.sort_unstable();
        fields
    }

    fn listed(fields: &[Field]) -> Vec<&'static str> {
        let mut names: Vec<_> = fields.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names
    }

    /// Every request type declares the fields its list names, no more and
    /// no fewer: a field added to a type and not to the walk (or the other
    /// way round) would be dropped unreported, or reported though read.
    #[test]
    fn each_types_fields_are_the_walks() {
        let pairs: [(&str, Vec<&str>, &[Field]); 12] = [
            ("CreateMessage", declared::<CreateMessage<'_>>(), REQUEST),
            ("Message", declared::<Message<'_>>(), MESSAGE),
            ("Block", declared::<Block<'_>>(), BLOCK),
            ("Source", declared::<Source<'_>>(), SOURCE),
            ("Tool", declared::<Tool<'_>>(), TOOL),
            ("ToolChoice", declared::<ToolChoice<'_>>(), TOOL_CHOICE),
            ("Thinking", declared::<Thinking<'_>>(), THINKING),
            ("Metadata", declared::<Metadata<'_>>(), METADATA),
            (
                "OutputConfig",
                declared::<OutputConfig<'_>>(),
                OUTPUT_CONFIG,
            ),
            (
                "OutputFormat",
                declared::<OutputFormat<'_>>(),
                OUTPUT_FORMAT,
            ),
            (
                "ContextManagement",
                declared::<ContextManagement<'_>>(),
                CONTEXT_MANAGEMENT,
            ),
            ("ContextEdit", declared::<ContextEdit<'_>>(), CONTEXT_EDIT),
        ];
        for (name, declared, fields) in pairs {
            assert!(!declared.is_empty(), "{name} declares no fields");
            assert_eq!(declared, listed(fields), "{name}");
        }
    }

    /// The single-pass reader reads each top-level field the walk knows
    /// (its nested records are held to serde's by the reader's own tests).
    #[test]
    fn the_reader_reads_every_listed_top_level_field() {
        let body = br#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"x"}],
            "system":"s","tools":[{"name":"f"}],"tool_choice":{"type":"auto"},
            "thinking":{"type":"adaptive"},"temperature":1,"top_p":1,"top_k":1,
            "stop_sequences":["x"],"stream":true,"metadata":{"user_id":"u"},
            "output_config":{"effort":"low"},"output_format":{"type":"json_schema"},
            "context_management":{"edits":[]},"service_tier":"auto","cache_control":{},
            "container":"c","inference_geo":"us","mcp_servers":[],"thread":{"type":"create"}}"#;
        let read = CreateMessage::read(body).expect("the reader reads it");
        let debug = format!("{read:?}");
        for (name, _) in REQUEST {
            assert!(
                debug.contains(&format!(" {name}: Some(")),
                "{name}: {debug}"
            );
        }
        assert!(unmodeled_fields(body).is_empty());
    }

    #[test]
    fn unmodeled_fields_are_named_by_path_at_every_level() {
        let body = br#"{"model":"m","thread":{"id":"t"},"compaction":true,"diagnostics":null,
            "system":[{"type":"text","text":"s","why":1}],
            "messages":[{"role":"user","name":"ann","content":[
                {"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"ok","x":[]}]},
                {"type":"document","source":{"type":"content","content":[{"type":"text","text":"d","y":0}],"z":1}}]}],
            "tools":[{"name":"f","input_schema":{"properties":{"anything":{}}},"eager_input_streaming":true}],
            "thinking":{"type":"adaptive","display":"updates","extra":"e"},
            "context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all","w":2}]}}"#;
        let expected = [
            "thread.id",
            "compaction",
            "system[0].why",
            "messages[0].name",
            "messages[0].content[0].content[0].x",
            "messages[0].content[1].source.content[0].y",
            "messages[0].content[1].source.z",
            "tools[0].eager_input_streaming",
            "thinking.extra",
            "context_management.edits[0].w",
        ];
        assert_eq!(unmodeled_fields(body), expected);
        // A key the cursor does not read (escaped) takes serde's tree,
        // which finds the same fields (in its own order).
        let escaped = String::from_utf8(body.to_vec())
            .unwrap()
            .replace(r#""model""#, r#""mod\u0065l""#);
        let mut found = unmodeled_fields(escaped.as_bytes());
        found.sort();
        let mut expected = expected.to_vec();
        expected.sort();
        assert_eq!(found, expected);
    }

    #[test]
    fn bodies_of_another_shape_name_nothing() {
        for body in [
            &b"[]"[..],
            b"not json",
            b"{\"messages\":3,\"system\":{\"a\":1}}",
            b"\xff",
        ] {
            assert!(unmodeled_fields(body).is_empty(), "{body:?}");
        }
    }
}
