//! The fields the Chat Completions request types model, and a walk over a
//! body that finds every other one.
//!
//! serde ignores the keys a type does not declare: a key a client adds to
//! a message, a content part, a tool or a tool call would otherwise vanish
//! without a word. [`unmodeled_fields`] names each of them by its JSON
//! path, for the translator to report as its loss policy says. The lists
//! here are the types' own: a test compares each with the fields serde
//! derives for the type, so a field added to one and not the other fails.
//!
//! Requests are parsed by serde alone, which cannot tell whether it met
//! such a key, so every request is walked; the walk allocates nothing
//! when it finds nothing.

use crate::unmodeled::{Field, Shape};

/// The fields of [`CreateChatCompletion`](super::CreateChatCompletion).
pub(crate) const REQUEST: &[Field] = &[
    ("model", Shape::Whole),
    ("messages", Shape::Objects(MESSAGE)),
    ("tools", Shape::Objects(TOOL)),
    ("tool_choice", Shape::Object(TOOL_CHOICE)),
    ("parallel_tool_calls", Shape::Whole),
    ("functions", Shape::Objects(FUNCTION_DEF)),
    ("function_call", Shape::Object(NAMED)),
    ("response_format", Shape::Object(RESPONSE_FORMAT)),
    ("verbosity", Shape::Whole),
    ("max_completion_tokens", Shape::Whole),
    ("max_tokens", Shape::Whole),
    ("temperature", Shape::Whole),
    ("top_p", Shape::Whole),
    ("reasoning_effort", Shape::Whole),
    ("logprobs", Shape::Whole),
    ("top_logprobs", Shape::Whole),
    ("user", Shape::Whole),
    ("safety_identifier", Shape::Whole),
    ("prompt_cache_key", Shape::Whole),
    ("prompt_cache_retention", Shape::Whole),
    ("prompt_cache_options", Shape::Whole),
    ("metadata", Shape::Whole),
    ("store", Shape::Whole),
    ("service_tier", Shape::Whole),
    ("moderation", Shape::Whole),
    ("stream", Shape::Whole),
    ("stream_options", Shape::Object(STREAM_OPTIONS)),
    ("web_search_options", Shape::Object(WEB_SEARCH_OPTIONS)),
    ("n", Shape::Whole),
    ("stop", Shape::Whole),
    ("seed", Shape::Whole),
    ("presence_penalty", Shape::Whole),
    ("frequency_penalty", Shape::Whole),
    ("logit_bias", Shape::Whole),
    ("audio", Shape::Whole),
    ("modalities", Shape::Whole),
    ("prediction", Shape::Whole),
];

/// The fields of [`Message`](super::Message).
pub(crate) const MESSAGE: &[Field] = &[
    ("role", Shape::Whole),
    ("content", Shape::Objects(PART)),
    ("name", Shape::Whole),
    ("refusal", Shape::Whole),
    ("tool_calls", Shape::Objects(TOOL_CALL)),
    ("tool_call_id", Shape::Whole),
    ("function_call", Shape::Object(FUNCTION_CALL)),
    ("audio", Shape::Whole),
    ("reasoning_content", Shape::Whole),
    ("reasoning", Shape::Whole),
    ("annotations", Shape::Whole),
];

/// The fields of [`ContentPart`](super::ContentPart).
pub(crate) const PART: &[Field] = &[
    ("type", Shape::Whole),
    ("text", Shape::Whole),
    ("refusal", Shape::Whole),
    ("image_url", Shape::Object(IMAGE_URL)),
    ("input_audio", Shape::Whole),
    ("file", Shape::Object(FILE_REF)),
    ("prompt_cache_breakpoint", Shape::Whole),
];

/// The fields of [`ImageUrl`](super::ImageUrl).
pub(crate) const IMAGE_URL: &[Field] = &[("url", Shape::Whole), ("detail", Shape::Whole)];

/// The fields of [`FileRef`](super::FileRef).
pub(crate) const FILE_REF: &[Field] = &[
    ("filename", Shape::Whole),
    ("file_data", Shape::Whole),
    ("file_id", Shape::Whole),
];

/// The fields of [`ToolCall`](super::ToolCall).
pub(crate) const TOOL_CALL: &[Field] = &[
    ("index", Shape::Whole),
    ("id", Shape::Whole),
    ("type", Shape::Whole),
    ("function", Shape::Object(FUNCTION_CALL)),
    ("custom", Shape::Object(CUSTOM_CALL)),
];

/// The fields of [`FunctionCall`](super::FunctionCall).
pub(crate) const FUNCTION_CALL: &[Field] = &[("name", Shape::Whole), ("arguments", Shape::Whole)];

/// The fields of [`CustomCall`](super::CustomCall).
pub(crate) const CUSTOM_CALL: &[Field] = &[("name", Shape::Whole), ("input", Shape::Whole)];

/// The fields of [`Tool`](super::Tool).
pub(crate) const TOOL: &[Field] = &[
    ("type", Shape::Whole),
    ("function", Shape::Object(FUNCTION_DEF)),
    ("custom", Shape::Object(CUSTOM_DEF)),
];

/// The fields of [`FunctionDef`](super::FunctionDef).
pub(crate) const FUNCTION_DEF: &[Field] = &[
    ("name", Shape::Whole),
    ("description", Shape::Whole),
    ("parameters", Shape::Whole),
    ("strict", Shape::Whole),
];

/// The fields of [`CustomDef`](super::CustomDef).
pub(crate) const CUSTOM_DEF: &[Field] = &[
    ("name", Shape::Whole),
    ("description", Shape::Whole),
    ("format", Shape::Object(CUSTOM_FORMAT)),
];

/// The fields of [`CustomFormat`](super::CustomFormat).
pub(crate) const CUSTOM_FORMAT: &[Field] = &[
    ("type", Shape::Whole),
    ("grammar", Shape::Object(GRAMMAR)),
    ("definition", Shape::Whole),
    ("syntax", Shape::Whole),
];

/// The fields of [`Grammar`](super::Grammar).
pub(crate) const GRAMMAR: &[Field] = &[("definition", Shape::Whole), ("syntax", Shape::Whole)];

/// The fields of [`ToolChoiceObject`](super::ToolChoiceObject).
pub(crate) const TOOL_CHOICE: &[Field] = &[
    ("type", Shape::Whole),
    ("function", Shape::Object(NAMED)),
    ("custom", Shape::Object(NAMED)),
    ("name", Shape::Whole),
    ("allowed_tools", Shape::Object(ALLOWED_TOOLS)),
];

/// The fields of [`Named`](super::Named).
pub(crate) const NAMED: &[Field] = &[("name", Shape::Whole)];

/// The fields of [`AllowedTools`](super::AllowedTools).
pub(crate) const ALLOWED_TOOLS: &[Field] = &[
    ("mode", Shape::Whole),
    // The allowed tools are written as choices are.
    ("tools", Shape::ObjectsOf(|| TOOL_CHOICE)),
];

/// The fields of [`ResponseFormat`](super::ResponseFormat).
pub(crate) const RESPONSE_FORMAT: &[Field] = &[
    ("type", Shape::Whole),
    ("json_schema", Shape::Object(JSON_SCHEMA)),
];

/// The fields of [`JsonSchema`](super::JsonSchema).
pub(crate) const JSON_SCHEMA: &[Field] = &[
    ("name", Shape::Whole),
    ("description", Shape::Whole),
    ("schema", Shape::Whole),
    ("strict", Shape::Whole),
];

/// The fields of [`StreamOptions`](super::StreamOptions).
pub(crate) const STREAM_OPTIONS: &[Field] = &[
    ("include_usage", Shape::Whole),
    ("include_obfuscation", Shape::Whole),
];

/// The fields of [`WebSearchOptions`](super::WebSearchOptions).
pub(crate) const WEB_SEARCH_OPTIONS: &[Field] = &[
    ("user_location", Shape::Object(USER_LOCATION)),
    ("search_context_size", Shape::Whole),
];

/// The fields of [`UserLocation`](super::UserLocation).
pub(crate) const USER_LOCATION: &[Field] = &[
    ("type", Shape::Whole),
    ("approximate", Shape::Object(APPROXIMATE_LOCATION)),
];

/// The fields of [`ApproximateLocation`](super::ApproximateLocation).
pub(crate) const APPROXIMATE_LOCATION: &[Field] = &[
    ("country", Shape::Whole),
    ("region", Shape::Whole),
    ("city", Shape::Whole),
    ("timezone", Shape::Whole),
];

/// The JSON paths of the fields in a `POST /v1/chat/completions` body
/// that the request types do not model (`messages[1].foo`,
/// `messages[0].content[2].bar`, `tools[0].function.baz`), in the order
/// they come. A field set to `null` is absent, as serde reads it; a value
/// of a shape the types do not take is not looked into (parsing the body
/// refuses it).
///
/// ```
/// use wirebridge_wire::chat::lenient::unmodeled_fields;
///
/// let body = br#"{"model":"m","top_k":5,"thinking":null,
///   "messages":[{"role":"user","content":[{"type":"text","text":"Hi","lang":"en"}]}]}"#;
/// assert_eq!(unmodeled_fields(body), ["top_k", "messages[0].content[0].lang"]);
/// ```
pub fn unmodeled_fields(body: &[u8]) -> Vec<String> {
    crate::unmodeled::unmodeled_fields(body, REQUEST)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::lenient::{
        AllowedTools, ApproximateLocation, ContentPart, CreateChatCompletion, CustomCall,
        CustomDef, CustomFormat, FileRef, FunctionCall, FunctionDef, Grammar, ImageUrl, JsonSchema,
        Message, Named, ResponseFormat, StreamOptions, Tool, ToolCall, ToolChoiceObject,
        UserLocation, WebSearchOptions,
    };
    use crate::unmodeled::probe::{assert_lists, declared};

    /// Every request type declares the fields its list names, no more and
    /// no fewer: a field added to a type and not to the walk (or the other
    /// way round) would be dropped unreported, or reported though read.
    #[test]
    fn each_types_fields_are_the_walks() {
        assert_lists(&[
            (
                "CreateChatCompletion",
                declared::<CreateChatCompletion<'_>>(),
                REQUEST,
            ),
            ("Message", declared::<Message<'_>>(), MESSAGE),
            ("ContentPart", declared::<ContentPart<'_>>(), PART),
            ("ImageUrl", declared::<ImageUrl<'_>>(), IMAGE_URL),
            ("FileRef", declared::<FileRef<'_>>(), FILE_REF),
            ("ToolCall", declared::<ToolCall<'_>>(), TOOL_CALL),
            (
                "FunctionCall",
                declared::<FunctionCall<'_>>(),
                FUNCTION_CALL,
            ),
            ("CustomCall", declared::<CustomCall<'_>>(), CUSTOM_CALL),
            ("Tool", declared::<Tool<'_>>(), TOOL),
            ("FunctionDef", declared::<FunctionDef<'_>>(), FUNCTION_DEF),
            ("CustomDef", declared::<CustomDef<'_>>(), CUSTOM_DEF),
            (
                "CustomFormat",
                declared::<CustomFormat<'_>>(),
                CUSTOM_FORMAT,
            ),
            ("Grammar", declared::<Grammar<'_>>(), GRAMMAR),
            (
                "ToolChoiceObject",
                declared::<ToolChoiceObject<'_>>(),
                TOOL_CHOICE,
            ),
            ("Named", declared::<Named<'_>>(), NAMED),
            (
                "AllowedTools",
                declared::<AllowedTools<'_>>(),
                ALLOWED_TOOLS,
            ),
            (
                "ResponseFormat",
                declared::<ResponseFormat<'_>>(),
                RESPONSE_FORMAT,
            ),
            ("JsonSchema", declared::<JsonSchema<'_>>(), JSON_SCHEMA),
            ("StreamOptions", declared::<StreamOptions>(), STREAM_OPTIONS),
            (
                "WebSearchOptions",
                declared::<WebSearchOptions<'_>>(),
                WEB_SEARCH_OPTIONS,
            ),
            (
                "UserLocation",
                declared::<UserLocation<'_>>(),
                USER_LOCATION,
            ),
            (
                "ApproximateLocation",
                declared::<ApproximateLocation<'_>>(),
                APPROXIMATE_LOCATION,
            ),
        ]);
    }

    #[test]
    fn unmodeled_fields_are_named_by_path_at_every_level() {
        let body = br#"{"model":"m","top_k":5,"thinking":null,
            "messages":[{"role":"system","content":"s","cache":true},
                {"role":"user","content":[{"type":"text","text":"a","lang":"en"},
                    {"type":"image_url","image_url":{"url":"u","crop":1}},
                    {"type":"file","file":{"file_id":"f","pages":[1]}}]},
                {"role":"assistant","tool_calls":[{"id":"c","type":"function","extra":0,
                    "function":{"name":"f","arguments":"{}","thought":"t"}}],
                    "function_call":{"name":"g","why":1}}],
            "tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"x":{}}},"examples":[]},"cache_control":{}},
                {"type":"custom","custom":{"name":"p","format":{"type":"grammar","grammar":{"syntax":"lark","definition":"d","flags":""}}}}],
            "tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"f","z":1}}]}},
            "response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{},"w":2}},
            "stream_options":{"include_usage":true,"continuous_usage_stats":true},
            "web_search_options":{"user_location":{"type":"approximate","approximate":{"city":"Lisbon","street":"x"}}}}"#;
        let expected = [
            "top_k",
            "messages[0].cache",
            "messages[1].content[0].lang",
            "messages[1].content[1].image_url.crop",
            "messages[1].content[2].file.pages",
            "messages[2].tool_calls[0].extra",
            "messages[2].tool_calls[0].function.thought",
            "messages[2].function_call.why",
            "tools[0].function.examples",
            "tools[0].cache_control",
            "tools[1].custom.format.grammar.flags",
            "tool_choice.allowed_tools.tools[0].function.z",
            "response_format.json_schema.w",
            "stream_options.continuous_usage_stats",
            "web_search_options.user_location.approximate.street",
        ];
        assert_eq!(unmodeled_fields(body), expected);
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
            &br#"{"model":"m","messages":[{"role":"user","content":"hi"}],"tool_choice":"auto",
                "function_call":"none","stream_options":{"include_usage":true}}"#[..],
            b"[]",
            b"not json",
            b"{\"messages\":3,\"tools\":{\"a\":1}}",
            b"\xff",
        ] {
            assert!(unmodeled_fields(body).is_empty(), "{body:?}");
        }
    }
}
