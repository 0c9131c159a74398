//! Responses requests written as JSON by hand ([`crate::write`]): the
//! bytes `serde_json::to_writer` writes for them, without escaping their
//! keys.

use super::{
    CustomFormat, CustomToolCall, FunctionCall, InputItem, InputPart, ItemStatus, Message,
    MessageContent, OutputPart, ReasoningInput, ReasoningPart, ResponsesRequest, Role, TextFormat,
    Tool, ToolCallOutput, ToolChoice, ToolOutput, ToolRef,
};
use std::ops::Range;

use crate::responses::written::{WrittenTool, WrittenTools};
use crate::write::{array, string, Object};
use copies::Copies;

impl ResponsesRequest<'_> {
    /// Appends the request to `out` as JSON: the same bytes as
    /// `serde_json::to_writer(out, self)`, written faster.
    ///
    /// ```
    /// use wirebridge_wire::responses::strict::{
    ///     InputItem, Message, MessageContent, ResponsesRequest, Role,
    /// };
    /// use wirebridge_wire::JsonText;
    ///
    /// let request = ResponsesRequest {
    ///     model: "m".into(),
    ///     input: vec![InputItem::Message(Message::input(
    ///         Role::User,
    ///         MessageContent::Text(JsonText::from_text("hi")),
    ///     ))],
    ///     stream: Some(true),
    ///     ..ResponsesRequest::default()
    /// };
    /// let mut out = Vec::new();
    /// request.write_json(&mut out);
    /// assert_eq!(out, serde_json::to_vec(&request).unwrap());
    /// ```
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let nowhere = Copies {
            ranges: None,
            strings_only: true,
            tools: None,
        };
        self.write(out, nowhere);
    }

    /// [`write_json`](Self::write_json), noting in `copies` where the
    /// values it copies whole were written, in order: the text of messages
    /// and their parts, calls' arguments and inputs, a tool output's text,
    /// a reasoning item's `encrypted_content`, `instructions`, and each
    /// function tool's `description` and `parameters`. A reader of the
    /// bytes that trusts them steps over those values rather than reading
    /// them again
    /// ([`CreateResponse::read_knowing`](crate::responses::lenient::CreateResponse::read_knowing)).
    /// With `strings_only`, only the strings among them: for a request
    /// copied from one that was not compact, whose other values may not be.
    pub fn write_json_noting_copies(
        &self,
        out: &mut Vec<u8>,
        copies: &mut Vec<Range<usize>>,
        strings_only: bool,
    ) {
        let noting = Copies {
            ranges: Some(copies),
            strings_only,
            tools: None,
        };
        self.write(out, noting);
    }

    /// [`write_json_noting_copies`](Self::write_json_noting_copies), also
    /// noting where each function tool's fields were written
    /// ([`WrittenTools`]), for a reader of the bytes to take them from
    /// ([`CreateResponse::read_written`](crate::responses::lenient::CreateResponse::read_written));
    /// `None` when the request has a tool of another type, or none, or
    /// with `strings_only` (a schema copied from a body that was not
    /// compact may not be, and a reader that steps over it would not see
    /// that).
    ///
    /// ```
    /// use wirebridge_wire::responses::strict::{FunctionTool, ResponsesRequest, Tool};
    ///
    /// let request = ResponsesRequest {
    ///     model: "m".into(),
    ///     tools: Some(vec![Tool::Function(FunctionTool {
    ///         name: "get_weather".into(),
    ///         description: None,
    ///         parameters: None,
    ///         strict: Some(false),
    ///     })]),
    ///     ..ResponsesRequest::default()
    /// };
    /// let (mut out, mut copies) = (Vec::new(), Vec::new());
    /// let tools = request.write_json_noting(&mut out, &mut copies, false).unwrap();
    /// assert_eq!(&out[tools.tools[0].name.clone()], br#""get_weather""#);
    /// assert_eq!(out[tools.array.start], b'[');
    /// ```
    pub fn write_json_noting(
        &self,
        out: &mut Vec<u8>,
        copies: &mut Vec<Range<usize>>,
        strings_only: bool,
    ) -> Option<WrittenTools> {
        let mut tools = (!strings_only).then(WrittenTools::default);
        let noting = Copies {
            ranges: Some(copies),
            strings_only,
            tools: Some(&mut tools),
        };
        self.write(out, noting);
        tools.filter(|t| !t.tools.is_empty())
    }

    fn write(&self, out: &mut Vec<u8>, mut copies: Copies<'_>) {
        #[cfg(any(debug_assertions, fuzzing))]
        let start = out.len();
        let mut object = Object::open(out);
        object.str("model", &self.model);
        array(object.key("input"), &self.input, |item, out| {
            item.write_json(out, &mut copies)
        });
        if let Some(instructions) = &self.instructions {
            object.text("instructions", instructions);
            copies.note(object.written(), instructions.raw());
        }
        if let Some(tools) = &self.tools {
            let out = object.key("tools");
            let start = out.len();
            array(out, tools, |tool, out| tool.write_json(out, &mut copies));
            copies.tools_written(start..object.written());
        }
        if let Some(choice) = &self.tool_choice {
            choice.write_json(object.key("tool_choice"));
        }
        if let Some(parallel) = self.parallel_tool_calls {
            object.bool("parallel_tool_calls", parallel);
        }
        if let Some(text) = &self.text {
            let mut inner = Object::open(object.key("text"));
            if let Some(format) = &text.format {
                format.write_json(inner.key("format"));
            }
            if let Some(verbosity) = &text.verbosity {
                inner.str("verbosity", verbosity);
            }
            inner.close();
        }
        if let Some(reasoning) = &self.reasoning {
            let mut inner = Object::open(object.key("reasoning"));
            if let Some(effort) = &reasoning.effort {
                inner.str("effort", effort);
            }
            if let Some(summary) = &reasoning.summary {
                inner.str("summary", summary);
            }
            inner.close();
        }
        if let Some(tokens) = self.max_output_tokens {
            object.value("max_output_tokens", &tokens);
        }
        if let Some(temperature) = self.temperature {
            object.value("temperature", &temperature);
        }
        if let Some(top_p) = self.top_p {
            object.value("top_p", &top_p);
        }
        if let Some(top) = self.top_logprobs {
            object.value("top_logprobs", &top);
        }
        if let Some(include) = &self.include {
            array(object.key("include"), include, |text, out| {
                string(out, text)
            });
        }
        for (key, text) in [
            ("user", &self.user),
            ("safety_identifier", &self.safety_identifier),
            ("prompt_cache_key", &self.prompt_cache_key),
        ] {
            if let Some(text) = text {
                object.str(key, text);
            }
        }
        for (key, raw) in [
            ("prompt_cache_retention", self.prompt_cache_retention),
            ("prompt_cache_options", self.prompt_cache_options),
            ("context_management", self.context_management),
            ("metadata", self.metadata),
        ] {
            if let Some(raw) = raw {
                object.raw(key, raw);
            }
        }
        if let Some(store) = self.store {
            object.bool("store", store);
        }
        if let Some(previous) = &self.previous_response_id {
            object.str("previous_response_id", previous);
        }
        if let Some(tier) = &self.service_tier {
            object.str("service_tier", tier);
        }
        if let Some(moderation) = self.moderation {
            object.raw("moderation", moderation);
        }
        if let Some(stream) = self.stream {
            object.bool("stream", stream);
        }
        if let Some(options) = self.stream_options {
            let mut inner = Object::open(object.key("stream_options"));
            if let Some(obfuscation) = options.include_obfuscation {
                inner.bool("include_obfuscation", obfuscation);
            }
            inner.close();
        }
        object.close();
        #[cfg(any(debug_assertions, fuzzing))]
        crate::write::agrees_with_serde(&out[start..], self);
    }
}

impl InputItem<'_> {
    fn write_json(&self, out: &mut Vec<u8>, copies: &mut Copies<'_>) {
        let mut object = Object::open(out);
        match self {
            InputItem::Message(message) => {
                object.name("type", "message");
                message.write_members(&mut object, copies);
            }
            InputItem::FunctionCall(call) => {
                object.name("type", "function_call");
                call.write_members(&mut object, copies);
            }
            InputItem::FunctionCallOutput(output) => {
                object.name("type", "function_call_output");
                output.write_members(&mut object, copies);
            }
            InputItem::CustomToolCall(call) => {
                object.name("type", "custom_tool_call");
                call.write_members(&mut object, copies);
            }
            InputItem::CustomToolCallOutput(output) => {
                object.name("type", "custom_tool_call_output");
                output.write_members(&mut object, copies);
            }
            InputItem::Reasoning(reasoning) => {
                object.name("type", "reasoning");
                reasoning.write_members(&mut object, copies);
            }
            InputItem::Compaction(compaction) => {
                object.name("type", "compaction");
                object.text("encrypted_content", &compaction.encrypted_content);
            }
            InputItem::CompactionTrigger => object.name("type", "compaction_trigger"),
        }
        object.close();
    }
}

impl Message<'_> {
    fn write_members(&self, object: &mut Object<'_>, copies: &mut Copies<'_>) {
        if let Some(id) = &self.id {
            object.str("id", id);
        }
        object.name("role", role(self.role));
        let out = object.key("content");
        match &self.content {
            MessageContent::Text(text) => {
                crate::write::raw(out, text.raw());
                copies.note(out.len(), text.raw());
            }
            MessageContent::Input(parts) => {
                array(out, parts, |part, out| part.write_json(out, copies))
            }
            MessageContent::Output(parts) => {
                array(out, parts, |part, out| part.write_json(out, copies))
            }
        }
        if let Some(status) = self.status {
            object.name("status", status);
        }
    }
}

impl FunctionCall<'_> {
    fn write_members(&self, object: &mut Object<'_>, copies: &mut Copies<'_>) {
        call_members(object, &self.id, self.status, &self.name, &self.namespace);
        object.str("call_id", &self.call_id);
        object.text("arguments", &self.arguments);
        copies.note(object.written(), self.arguments.raw());
    }
}

impl CustomToolCall<'_> {
    fn write_members(&self, object: &mut Object<'_>, copies: &mut Copies<'_>) {
        call_members(object, &self.id, self.status, &self.name, &self.namespace);
        object.str("call_id", &self.call_id);
        object.text("input", &self.input);
        copies.note(object.written(), self.input.raw());
    }
}

/// The members a function call and a custom tool call share, up to their
/// call id.
fn call_members(
    object: &mut Object<'_>,
    id: &Option<std::borrow::Cow<'_, str>>,
    status: Option<ItemStatus>,
    name: &str,
    namespace: &Option<std::borrow::Cow<'_, str>>,
) {
    if let Some(id) = id {
        object.str("id", id);
    }
    if let Some(status) = status {
        object.name("status", item_status(status));
    }
    object.str("name", name);
    if let Some(namespace) = namespace {
        object.str("namespace", namespace);
    }
}

impl ToolCallOutput<'_> {
    fn write_members(&self, object: &mut Object<'_>, copies: &mut Copies<'_>) {
        object.str("call_id", &self.call_id);
        let out = object.key("output");
        match &self.output {
            ToolOutput::Text(text) => {
                crate::write::raw(out, text.raw());
                copies.note(out.len(), text.raw());
            }
            ToolOutput::Parts(parts) => array(out, parts, |part, out| part.write_json(out, copies)),
        }
    }
}

impl ReasoningInput<'_> {
    fn write_members(&self, object: &mut Object<'_>, copies: &mut Copies<'_>) {
        object.str("id", &self.id);
        array(
            object.key("summary"),
            &self.summary,
            ReasoningPart::write_json,
        );
        if let Some(content) = &self.encrypted_content {
            object.text("encrypted_content", content);
            copies.note(object.written(), content.raw());
        }
    }
}

impl ReasoningPart<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = Object::open(out);
        object.name("type", self.kind);
        object.text("text", &self.text);
        object.close();
    }
}

impl OutputPart<'_> {
    fn write_json(&self, out: &mut Vec<u8>, copies: &mut Copies<'_>) {
        let mut object = Object::open(out);
        match self {
            OutputPart::OutputText {
                text,
                annotations,
                logprobs,
            } => {
                object.name("type", "output_text");
                object.text("text", text);
                copies.note(object.written(), text.raw());
                object.raw("annotations", annotations);
                object.raw("logprobs", logprobs);
            }
            OutputPart::Refusal { refusal } => {
                object.name("type", "refusal");
                object.text("refusal", refusal);
            }
        }
        object.close();
    }
}

impl InputPart<'_> {
    fn write_json(&self, out: &mut Vec<u8>, copies: &mut Copies<'_>) {
        let mut object = Object::open(out);
        let breakpoint = match self {
            InputPart::InputText {
                text,
                prompt_cache_breakpoint,
            } => {
                object.name("type", "input_text");
                object.text("text", text);
                copies.note(object.written(), text.raw());
                prompt_cache_breakpoint
            }
            InputPart::InputImage {
                image_url,
                file_id,
                detail,
                prompt_cache_breakpoint,
            } => {
                object.name("type", "input_image");
                for (key, value) in [("image_url", image_url), ("file_id", file_id)] {
                    if let Some(value) = value {
                        object.text(key, value);
                    }
                }
                object.str("detail", detail);
                prompt_cache_breakpoint
            }
            InputPart::InputFile {
                file_id,
                filename,
                file_data,
                file_url,
                prompt_cache_breakpoint,
            } => {
                object.name("type", "input_file");
                for (key, value) in [
                    ("file_id", file_id),
                    ("filename", filename),
                    ("file_data", file_data),
                    ("file_url", file_url),
                ] {
                    if let Some(value) = value {
                        object.text(key, value);
                    }
                }
                prompt_cache_breakpoint
            }
            InputPart::InputAudio { input_audio } => {
                object.name("type", "input_audio");
                object.raw("input_audio", input_audio);
                &None
            }
        };
        if let Some(breakpoint) = breakpoint {
            object.raw("prompt_cache_breakpoint", breakpoint);
        }
        object.close();
    }
}

impl Tool<'_> {
    fn write_json(&self, out: &mut Vec<u8>, copies: &mut Copies<'_>) {
        let mut object = Object::open(out);
        match self {
            Tool::Function(function) => {
                object.name("type", "function");
                let start = object.key("name").len();
                object.str_value(&function.name);
                let name = start..object.written();
                let mut description_at = None;
                if let Some(description) = &function.description {
                    object.text("description", description);
                    let end = object.written();
                    description_at = Some(end - description.raw().get().len()..end);
                    copies.note(end, description.raw());
                }
                let mut parameters_at = None;
                match function.parameters {
                    None => object.null("parameters"),
                    Some(parameters) => {
                        object.raw("parameters", parameters);
                        let end = object.written();
                        parameters_at = Some(end - parameters.get().len()..end);
                        copies.note(end, parameters);
                    }
                }
                match function.strict {
                    None => object.null("strict"),
                    Some(strict) => object.bool("strict", strict),
                }
                copies.tool(WrittenTool {
                    name,
                    description: description_at,
                    parameters: parameters_at,
                    strict: function.strict,
                });
            }
            Tool::Custom(custom) => {
                copies.tool_unnoted();
                object.name("type", "custom");
                object.str("name", &custom.name);
                if let Some(description) = &custom.description {
                    object.text("description", description);
                }
                if let Some(format) = &custom.format {
                    let mut inner = Object::open(object.key("format"));
                    match format {
                        CustomFormat::Text => inner.name("type", "text"),
                        CustomFormat::Grammar { syntax, definition } => {
                            inner.name("type", "grammar");
                            inner.str("syntax", syntax);
                            inner.text("definition", definition);
                        }
                    }
                    inner.close();
                }
            }
            Tool::WebSearch(search) => {
                copies.tool_unnoted();
                object.name("type", "web_search");
                if let Some(location) = &search.user_location {
                    let mut inner = Object::open(object.key("user_location"));
                    inner.name("type", location.kind);
                    for (key, value) in [
                        ("country", &location.country),
                        ("region", &location.region),
                        ("city", &location.city),
                        ("timezone", &location.timezone),
                    ] {
                        if let Some(value) = value {
                            inner.text(key, value);
                        }
                    }
                    inner.close();
                }
                if let Some(size) = &search.search_context_size {
                    object.str("search_context_size", size);
                }
            }
        }
        object.close();
    }
}

impl ToolChoice<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            ToolChoice::Mode(mode) => string(out, mode),
            ToolChoice::Tool(tool) => tool.write_json(out),
            ToolChoice::Allowed(allowed) => {
                let mut object = Object::open(out);
                object.name("type", allowed.kind);
                object.str("mode", &allowed.mode);
                array(object.key("tools"), &allowed.tools, ToolRef::write_json);
                object.close();
            }
        }
    }
}

impl ToolRef<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let (kind, name) = match self {
            ToolRef::Function { name } => ("function", name),
            ToolRef::Custom { name } => ("custom", name),
        };
        let mut object = Object::open(out);
        object.name("type", kind);
        object.str("name", name);
        object.close();
    }
}

impl TextFormat<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = Object::open(out);
        match self {
            TextFormat::Text => object.name("type", "text"),
            TextFormat::JsonObject => object.name("type", "json_object"),
            TextFormat::JsonSchema {
                name,
                schema,
                description,
                strict,
            } => {
                object.name("type", "json_schema");
                object.text("name", name);
                object.raw("schema", schema);
                if let Some(description) = description {
                    object.text("description", description);
                }
                if let Some(strict) = strict {
                    object.bool("strict", *strict);
                }
            }
        }
        object.close();
    }
}

fn role(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::Developer => "developer",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn item_status(status: ItemStatus) -> &'static str {
    match status {
        ItemStatus::InProgress => "in_progress",
        ItemStatus::Completed => "completed",
        ItemStatus::Incomplete => "incomplete",
    }
}

mod copies;
#[cfg(test)]
mod tests;
