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

use crate::unmodeled::{Field, Shape};

/// A `content` (or `system`): a string, not looked into, or an array of
/// blocks; a block's `content` is one too, so the list is given by a
/// function, which lets [`BLOCK`] name itself.
const CONTENT: Shape = Shape::ObjectsOf(|| BLOCK);

/// A block's `source`: a string (a search result's URL), not looked into,
/// or a source object.
const SOURCE_OBJECT: Shape = Shape::Object(SOURCE);

/// The fields of [`CreateMessage`](super::CreateMessage).
pub(crate) const REQUEST: &[Field] = &[
    ("model", Shape::Whole),
    ("max_tokens", Shape::Whole),
    ("messages", Shape::Objects(MESSAGE)),
    ("system", CONTENT),
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
    ("diagnostics", Shape::Whole),
    ("compaction", Shape::Whole),
];

/// The fields of [`Message`](super::Message).
pub(crate) const MESSAGE: &[Field] = &[("role", Shape::Whole), ("content", CONTENT)];

/// The fields of [`Block`](super::Block).
pub(crate) const BLOCK: &[Field] = &[
    ("type", Shape::Whole),
    ("text", Shape::Whole),
    ("source", SOURCE_OBJECT),
    ("title", Shape::Whole),
    ("context", Shape::Whole),
    ("citations", Shape::Whole),
    ("id", Shape::Whole),
    ("name", Shape::Whole),
    ("input", Shape::Whole),
    ("tool_use_id", Shape::Whole),
    ("content", CONTENT),
    ("is_error", Shape::Whole),
    ("thinking", Shape::Whole),
    ("signature", Shape::Whole),
    ("data", Shape::Whole),
    ("cache_control", Shape::Whole),
];

/// The fields of [`Source`](super::Source).
pub(crate) const SOURCE: &[Field] = &[
    ("type", Shape::Whole),
    ("media_type", Shape::Whole),
    ("data", Shape::Whole),
    ("url", Shape::Whole),
    ("file_id", Shape::Whole),
    ("content", CONTENT),
];

/// The fields of [`Tool`](super::Tool).
pub(crate) const TOOL: &[Field] = &[
    ("type", Shape::Whole),
    ("name", Shape::Whole),
    ("description", Shape::Whole),
    ("input_schema", Shape::Whole),
    ("strict", Shape::Whole),
    ("cache_control", Shape::Whole),
    ("defer_loading", Shape::Whole),
];

/// The fields of [`ToolChoice`](super::ToolChoice).
pub(crate) const TOOL_CHOICE: &[Field] = &[
    ("type", Shape::Whole),
    ("name", Shape::Whole),
    ("disable_parallel_tool_use", Shape::Whole),
];

/// The fields of [`Thinking`](super::Thinking).
pub(crate) const THINKING: &[Field] = &[
    ("type", Shape::Whole),
    ("budget_tokens", Shape::Whole),
    ("display", Shape::Whole),
];

/// The fields of [`Metadata`](super::Metadata).
pub(crate) const METADATA: &[Field] = &[("user_id", Shape::Whole)];

/// The fields of [`Thread`](super::Thread).
pub(super) const THREAD: &[Field] = &[
    ("type", Shape::Whole),
    ("previous_message_id", Shape::Whole),
];

/// The fields of [`OutputConfig`](super::OutputConfig).
pub(crate) const OUTPUT_CONFIG: &[Field] = &[
    ("effort", Shape::Whole),
    ("format", Shape::Object(OUTPUT_FORMAT)),
];

/// The fields of [`OutputFormat`](super::OutputFormat).
pub(crate) const OUTPUT_FORMAT: &[Field] = &[("type", Shape::Whole), ("schema", Shape::Whole)];

/// The fields of [`ContextManagement`](super::ContextManagement).
pub(crate) const CONTEXT_MANAGEMENT: &[Field] = &[("edits", Shape::Objects(CONTEXT_EDIT))];

/// The fields of [`ContextEdit`](super::ContextEdit).
pub(crate) const CONTEXT_EDIT: &[Field] = &[
    ("type", Shape::Whole),
    ("keep", Shape::Whole),
    ("trigger", Shape::Whole),
    ("pause_after_compaction", Shape::Whole),
    ("instructions", Shape::Whole),
];

/// The JSON paths of the fields in a request body that the request types
/// do not model (`routing`, `thread.id`, `messages[0].content[1].extra`),
/// in the order they come. A field set to `null` is absent, as everywhere
/// in the reader. A value of a shape the types do not take (a number where
/// messages go) is not looked into: parsing the body refuses it.
///
/// ```
/// use wirebridge_wire::messages::lenient::unmodeled_fields;
///
/// let body = br#"{"model":"m","routing":{"region":"eu"},"thread":{"id":"t"},"diagnostics":null,
///   "messages":[{"role":"user","content":[{"type":"text","text":"Hi","lang":"en"}]}]}"#;
/// assert_eq!(
///     unmodeled_fields(body),
///     ["routing", "thread.id", "messages[0].content[0].lang"]
/// );
/// ```
pub fn unmodeled_fields(body: &[u8]) -> Vec<String> {
    crate::unmodeled::unmodeled_fields(body, REQUEST)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::lenient::{
        Block, ContextEdit, ContextManagement, CreateMessage, Message, Metadata, OutputConfig,
        OutputFormat, Source, Thinking, Tool, ToolChoice,
    };
    use crate::unmodeled::probe::{assert_lists, declared};

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
        assert_lists(&pairs);
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
            "container":"c","inference_geo":"us","mcp_servers":[],"thread":{"type":"create"},"diagnostics":{},
            "compaction":{"type":"summarize"}}"#;
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
        let body = br#"{"model":"m","thread":{"id":"t"},"safeguards":true,"diagnostics":null,
            "system":[{"type":"text","text":"s","why":1}],
            "messages":[{"role":"user","name":"ann","content":[
                {"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"ok","x":[]}]},
                {"type":"document","source":{"type":"content","content":[{"type":"text","text":"d","y":0}],"z":1}}]}],
            "tools":[{"name":"f","input_schema":{"properties":{"anything":{}}},"eager_input_streaming":true}],
            "thinking":{"type":"adaptive","display":"updates","extra":"e"},
            "context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all","w":2}]}}"#;
        let expected = [
            "thread.id",
            "safeguards",
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
