//! The fields the Responses request types model, and a walk over a body
//! that finds every other one.
//!
//! serde ignores the keys a type does not declare, and so does the
//! single-pass reader: a key inside an input item, a content part or a
//! tool that the bridge does not know would otherwise vanish without a
//! word. [`unmodeled_fields`] names each of them by its JSON path, for the
//! translator to report as its loss policy says. The lists here are the
//! types' own: a test compares each with the fields serde derives for the
//! type, so a field added to one and not the other fails.
//!
//! The walk is a second pass over the body;
//! [`ReadRequest::unmodeled`](super::ReadRequest::unmodeled) tells when
//! the single-pass read met nothing for it to find, as in the requests
//! Codex and the SDKs send, so that it can be left out.

use crate::unmodeled::{Field, Shape};

/// The fields of [`CreateResponse`](super::CreateResponse).
pub(crate) const REQUEST: &[Field] = &[
    ("model", Shape::Whole),
    ("input", Shape::Objects(ITEM)),
    ("instructions", Shape::Whole),
    ("tools", Shape::Objects(TOOL)),
    ("tool_choice", Shape::Object(TOOL_CHOICE)),
    ("parallel_tool_calls", Shape::Whole),
    ("text", Shape::Object(TEXT)),
    ("max_output_tokens", Shape::Whole),
    ("temperature", Shape::Whole),
    ("top_p", Shape::Whole),
    ("top_logprobs", Shape::Whole),
    ("presence_penalty", Shape::Whole),
    ("frequency_penalty", Shape::Whole),
    ("reasoning", Shape::Object(REASONING)),
    ("user", Shape::Whole),
    ("safety_identifier", Shape::Whole),
    ("stream", Shape::Whole),
    // Read key by key by the translators, which name any other option.
    ("stream_options", Shape::Whole),
    ("store", Shape::Whole),
    ("metadata", Shape::Whole),
    ("include", Shape::Whole),
    ("prompt_cache_key", Shape::Whole),
    ("prompt_cache_retention", Shape::Whole),
    ("service_tier", Shape::Whole),
    ("truncation", Shape::Whole),
    ("previous_response_id", Shape::Whole),
    ("conversation", Shape::Whole),
    ("background", Shape::Whole),
    ("max_tool_calls", Shape::Whole),
    ("prompt", Shape::Whole),
    ("context_management", Shape::Whole),
    ("moderation", Shape::Whole),
    ("prompt_cache_options", Shape::Whole),
    ("client_metadata", Shape::Whole),
];

/// The fields of [`InputItem`](super::InputItem).
pub(crate) const ITEM: &[Field] = &[
    ("type", Shape::Whole),
    ("role", Shape::Whole),
    ("content", Shape::Objects(PART)),
    ("id", Shape::Whole),
    ("status", Shape::Whole),
    ("call_id", Shape::Whole),
    ("name", Shape::Whole),
    ("namespace", Shape::Whole),
    ("arguments", Shape::Whole),
    ("output", Shape::Objects(PART)),
    ("input", Shape::Whole),
    ("summary", Shape::Objects(SUMMARY_PART)),
    ("encrypted_content", Shape::Whole),
    ("phase", Shape::Whole),
    ("tools", Shape::Objects(TOOL)),
    ("execution", Shape::Whole),
    ("author", Shape::Whole),
    ("recipient", Shape::Whole),
];

/// The fields of [`ContentPart`](super::ContentPart).
pub(crate) const PART: &[Field] = &[
    ("type", Shape::Whole),
    ("text", Shape::Whole),
    ("refusal", Shape::Whole),
    ("image_url", Shape::Whole),
    ("file_id", Shape::Whole),
    ("detail", Shape::Whole),
    ("file_data", Shape::Whole),
    ("file_url", Shape::Whole),
    ("filename", Shape::Whole),
    ("input_audio", Shape::Whole),
    ("data", Shape::Whole),
    ("format", Shape::Whole),
    ("annotations", Shape::Whole),
    ("logprobs", Shape::Whole),
    ("prompt_cache_breakpoint", Shape::Whole),
];

/// The fields of [`Tool`](super::Tool).
pub(crate) const TOOL: &[Field] = &[
    ("type", Shape::Whole),
    ("name", Shape::Whole),
    ("description", Shape::Whole),
    ("parameters", Shape::Whole),
    ("strict", Shape::Whole),
    // A namespace's tools are tools.
    ("tools", Shape::ObjectsOf(|| TOOL)),
    ("format", Shape::Object(CUSTOM_TOOL_FORMAT)),
    ("user_location", Shape::Whole),
    ("search_context_size", Shape::Whole),
    ("external_web_access", Shape::Whole),
    ("defer_loading", Shape::Whole),
    ("execution", Shape::Whole),
];

/// The keys of an object `tool_choice` the translators read (it is kept
/// raw, and read by each): `type`; the tool's `name` (and `namespace`),
/// or a Chat-style `function.name`; an `allowed_tools` choice's `mode` and
/// `tools`, each a choice of its own. A hosted tool's choice (an `mcp`
/// one's `server_label`, …) is reported whole as lost, keys and all.
pub(crate) const TOOL_CHOICE: &[Field] = &[
    ("type", Shape::Whole),
    ("name", Shape::Whole),
    ("namespace", Shape::Whole),
    ("function", Shape::Object(NAMED_FUNCTION)),
    ("mode", Shape::Whole),
    ("tools", Shape::ObjectsOf(|| TOOL_CHOICE)),
];

/// The keys of a Chat-style `{"function": {"name": …}}` in a tool choice.
pub(crate) const NAMED_FUNCTION: &[Field] = &[("name", Shape::Whole)];

/// The keys of a reasoning item's `summary` parts the translators read
/// (the summary is kept raw): a `summary_text` part's `type` and `text`.
pub(crate) const SUMMARY_PART: &[Field] = &[("type", Shape::Whole), ("text", Shape::Whole)];

/// The keys of a custom tool's `format` the translators read (it is kept
/// raw): `type` (`text` or `grammar`), and a grammar's `syntax` and
/// `definition`.
pub(crate) const CUSTOM_TOOL_FORMAT: &[Field] = &[
    ("type", Shape::Whole),
    ("syntax", Shape::Whole),
    ("definition", Shape::Whole),
];

/// The fields of [`TextParam`](super::TextParam).
pub(crate) const TEXT: &[Field] = &[
    ("format", Shape::Object(TEXT_FORMAT)),
    ("verbosity", Shape::Whole),
];

/// The fields of [`TextFormat`](super::TextFormat).
pub(crate) const TEXT_FORMAT: &[Field] = &[
    ("type", Shape::Whole),
    ("name", Shape::Whole),
    ("schema", Shape::Whole),
    ("strict", Shape::Whole),
    ("description", Shape::Whole),
];

/// The fields of [`Reasoning`](super::Reasoning).
pub(crate) const REASONING: &[Field] = &[
    ("effort", Shape::Whole),
    ("summary", Shape::Whole),
    ("generate_summary", Shape::Whole),
    ("context", Shape::Whole),
];

/// The JSON paths of the fields in a `POST /v1/responses` body that the
/// request types do not model (`input[3].foo`, `tools[1].bar`,
/// `input[0].content[2].baz`), in the order they come. A field set to
/// `null` is absent, as everywhere in the reader; a value of a shape the
/// types do not take is not looked into (parsing the body refuses it).
///
/// ```
/// use wirebridge_wire::responses::lenient::unmodeled_fields;
///
/// let body = br#"{"model":"m","seed":1,"cache":null,
///   "input":[{"role":"user","content":[{"type":"input_text","text":"Hi","lang":"en"}]}]}"#;
/// assert_eq!(unmodeled_fields(body), ["seed", "input[0].content[0].lang"]);
/// ```
pub fn unmodeled_fields(body: &[u8]) -> Vec<String> {
    crate::unmodeled::unmodeled_fields(body, REQUEST)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::responses::lenient::{
        ContentPart, CreateResponse, InputItem, Reasoning, TextFormat, TextParam, Tool,
    };
    use crate::unmodeled::probe::{assert_lists, declared};

    /// Every request type declares the fields its list names, no more and
    /// no fewer: a field added to a type and not to the walk (or the other
    /// way round) would be dropped unreported, or reported though read.
    #[test]
    fn each_types_fields_are_the_walks() {
        assert_lists(&[
            ("CreateResponse", declared::<CreateResponse<'_>>(), REQUEST),
            ("InputItem", declared::<InputItem<'_>>(), ITEM),
            ("ContentPart", declared::<ContentPart<'_>>(), PART),
            ("Tool", declared::<Tool<'_>>(), TOOL),
            ("TextParam", declared::<TextParam<'_>>(), TEXT),
            ("TextFormat", declared::<TextFormat<'_>>(), TEXT_FORMAT),
            ("Reasoning", declared::<Reasoning<'_>>(), REASONING),
        ]);
    }

    #[test]
    fn unmodeled_fields_are_named_by_path_at_every_level() {
        let body = br#"{"model":"m","seed":7,"cache":null,
            "input":[{"role":"user","content":"hi","lang":"en"},
                {"type":"message","role":"user","content":[{"type":"input_text","text":"a"},
                    {"type":"input_image","image_url":"u","crop":{"x":1}}]},
                {"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"o","w":2}]},
                {"type":"additional_tools","tools":[{"type":"function","name":"f","cache":true}]}],
            "tools":[{"type":"function","name":"g","parameters":{"properties":{"anything":{}}}},
                {"type":"namespace","name":"n","tools":[{"type":"function","name":"h","eager":1}]}],
            "text":{"verbosity":"low","format":{"type":"json_schema","name":"s","y":0},"z":1},
            "reasoning":{"effort":"low","budget":9}}"#;
        let expected = [
            "seed",
            "input[0].lang",
            "input[1].content[1].crop",
            "input[2].output[0].w",
            "input[3].tools[0].cache",
            "tools[1].tools[0].eager",
            "text.format.y",
            "text.z",
            "reasoning.budget",
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
    fn bodies_with_nothing_unmodeled_or_of_another_shape_name_nothing() {
        for body in [
            &br#"{"model":"m","input":"hi","text":{"format":{"type":"text"}}}"#[..],
            b"[]",
            b"not json",
            b"{\"input\":3,\"tools\":{\"a\":1}}",
            b"\xff",
        ] {
            assert!(unmodeled_fields(body).is_empty(), "{body:?}");
        }
    }
}
