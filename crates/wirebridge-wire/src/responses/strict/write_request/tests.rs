//! The hand-written Responses request against serde's, for every field and
//! variant.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::super::{
    AllowedTools, CompactionInput, CustomFormat, CustomTool, CustomToolCall, FunctionCall,
    FunctionTool, InputItem, InputPart, ItemStatus, Message, MessageContent, OutputPart, Reasoning,
    ReasoningInput, ReasoningPart, ResponsesRequest, Role, StreamOptions, TextFormat, TextParam,
    Tool, ToolCallOutput, ToolChoice, ToolOutput, ToolRef, UserLocation, WebSearchTool,
};
use crate::JsonText;

fn raw(json: &str) -> &'static RawValue {
    Box::leak(RawValue::from_string(json.to_owned()).unwrap())
}

fn text(value: &str) -> JsonText<'static> {
    JsonText::from_text(value)
}

/// Strings that need escaping, in the places the writer escapes itself.
const AWKWARD: &str = "a \"quoted\" \\ name\n\u{1}\u{7f} é 😀";

fn assert_same(request: &ResponsesRequest<'_>) {
    let mut hand = Vec::new();
    request.write_json(&mut hand);
    let serde = serde_json::to_vec(request).unwrap();
    assert_eq!(
        String::from_utf8(hand).unwrap(),
        String::from_utf8(serde).unwrap()
    );
}

fn every_input_part() -> Vec<InputPart<'static>> {
    vec![
        InputPart::InputText {
            text: text(AWKWARD),
            prompt_cache_breakpoint: None,
        },
        InputPart::InputText {
            text: text("cached"),
            prompt_cache_breakpoint: Some(raw(r#"{"ttl":"5m"}"#)),
        },
        InputPart::InputImage {
            image_url: Some(text("https://example.com/a.png")),
            file_id: Some(text("file-1")),
            detail: AWKWARD.into(),
            prompt_cache_breakpoint: Some(raw("{}")),
        },
        InputPart::InputImage {
            image_url: None,
            file_id: None,
            detail: "auto".into(),
            prompt_cache_breakpoint: None,
        },
        InputPart::InputFile {
            file_id: Some(text("file-2")),
            filename: Some(text(AWKWARD)),
            file_data: Some(text("data:application/pdf;base64,AAAA")),
            file_url: Some(text("https://example.com/a.pdf")),
            prompt_cache_breakpoint: Some(raw("{}")),
        },
        InputPart::InputFile {
            file_id: None,
            filename: None,
            file_data: None,
            file_url: None,
            prompt_cache_breakpoint: None,
        },
        InputPart::InputAudio {
            input_audio: raw(r#"{"data":"AAAA","format":"wav"}"#),
        },
    ]
}

fn every_item() -> Vec<InputItem<'static>> {
    let mut call = FunctionCall::new(
        AWKWARD.into(),
        AWKWARD.into(),
        text(r#"{"command":["ls"]}"#),
    );
    call.id = Some("fc_1".into());
    call.status = Some(ItemStatus::Completed);
    call.namespace = Some(AWKWARD.into());
    let mut custom = CustomToolCall::new("call_2".into(), "apply_patch".into(), text("*** Begin"));
    custom.status = Some(ItemStatus::Incomplete);
    let mut in_progress = CustomToolCall::new("call_3".into(), "t".into(), text(""));
    in_progress.id = Some(AWKWARD.into());
    in_progress.status = Some(ItemStatus::InProgress);
    vec![
        InputItem::Message(Message::input(
            Role::System,
            MessageContent::Text(text(AWKWARD)),
        )),
        InputItem::Message(Message::input(
            Role::Developer,
            MessageContent::Input(Vec::new()),
        )),
        InputItem::Message(Message::input(
            Role::User,
            MessageContent::Input(every_input_part()),
        )),
        InputItem::Message(Message::assistant(
            AWKWARD.into(),
            vec![
                OutputPart::text(text("answer")),
                OutputPart::OutputText {
                    text: text(AWKWARD),
                    annotations: raw(r#"[{"type":"url_citation"}]"#),
                    logprobs: raw("[]"),
                },
                OutputPart::Refusal {
                    refusal: text("no"),
                },
            ],
        )),
        InputItem::FunctionCall(call),
        InputItem::FunctionCall(FunctionCall::new("call_1".into(), "f".into(), text("{}"))),
        InputItem::FunctionCallOutput(ToolCallOutput {
            call_id: AWKWARD.into(),
            output: ToolOutput::Text(text(AWKWARD)),
        }),
        InputItem::CustomToolCall(custom),
        InputItem::CustomToolCall(in_progress),
        InputItem::CustomToolCallOutput(ToolCallOutput {
            call_id: "call_2".into(),
            output: ToolOutput::Parts(every_input_part()),
        }),
        InputItem::Reasoning(ReasoningInput {
            id: AWKWARD.into(),
            summary: vec![
                ReasoningPart {
                    kind: "summary_text",
                    text: text(AWKWARD),
                },
                ReasoningPart {
                    kind: "summary_text",
                    text: text("second"),
                },
            ],
            encrypted_content: Some(text("gAAAA")),
        }),
        InputItem::Reasoning(ReasoningInput {
            id: "rs_2".into(),
            summary: Vec::new(),
            encrypted_content: None,
        }),
        InputItem::Compaction(CompactionInput {
            encrypted_content: text(AWKWARD),
        }),
        InputItem::CompactionTrigger,
    ]
}

fn every_tool() -> Vec<Tool<'static>> {
    vec![
        Tool::Function(FunctionTool {
            name: AWKWARD.into(),
            description: Some(text(AWKWARD)),
            parameters: Some(raw(r#"{"type":"object"}"#)),
            strict: Some(true),
        }),
        Tool::Function(FunctionTool {
            name: "bare".into(),
            description: None,
            parameters: None,
            strict: None,
        }),
        Tool::Custom(CustomTool {
            name: AWKWARD.into(),
            description: Some(text("patches")),
            format: Some(CustomFormat::Grammar {
                syntax: "lark".into(),
                definition: text(AWKWARD),
            }),
        }),
        Tool::Custom(CustomTool {
            name: "free".into(),
            description: None,
            format: Some(CustomFormat::Text),
        }),
        Tool::Custom(CustomTool {
            name: "plain".into(),
            description: None,
            format: None,
        }),
        Tool::WebSearch(WebSearchTool {
            user_location: Some(UserLocation {
                kind: "approximate",
                country: Some(text("FR")),
                region: Some(text(AWKWARD)),
                city: Some(text("Paris")),
                timezone: Some(text("Europe/Paris")),
            }),
            search_context_size: Some(AWKWARD.into()),
        }),
        Tool::WebSearch(WebSearchTool::default()),
        Tool::WebSearch(WebSearchTool {
            user_location: Some(UserLocation {
                kind: "approximate",
                ..UserLocation::default()
            }),
            search_context_size: None,
        }),
    ]
}

fn full_request() -> ResponsesRequest<'static> {
    ResponsesRequest {
        model: AWKWARD.into(),
        input: every_item(),
        instructions: Some(text(AWKWARD)),
        tools: Some(every_tool()),
        tool_choice: Some(ToolChoice::Mode("auto".into())),
        parallel_tool_calls: Some(false),
        text: Some(TextParam {
            format: Some(TextFormat::JsonSchema {
                name: text("answer"),
                schema: raw(r#"{"type":"object"}"#),
                description: Some(text(AWKWARD)),
                strict: Some(true),
            }),
            verbosity: Some(AWKWARD.into()),
        }),
        reasoning: Some(Reasoning {
            effort: Some("high".into()),
            summary: Some(AWKWARD.into()),
        }),
        max_output_tokens: Some(u64::MAX),
        temperature: Some(0.7),
        top_p: Some(f64::NAN),
        top_logprobs: Some(20),
        include: Some(vec![
            "reasoning.encrypted_content".into(),
            Cow::Owned(AWKWARD.into()),
        ]),
        user: Some(AWKWARD.into()),
        safety_identifier: Some("user-1".into()),
        prompt_cache_key: Some(AWKWARD.into()),
        prompt_cache_retention: Some(raw(r#""24h""#)),
        prompt_cache_options: Some(raw(r#"{"mode":"auto"}"#)),
        context_management: Some(raw(r#"[{"type":"compaction","compact_threshold":50000}]"#)),
        metadata: Some(raw(r#"{"k":"v"}"#)),
        store: Some(false),
        previous_response_id: Some(AWKWARD.into()),
        service_tier: Some("flex".into()),
        moderation: Some(raw(r#"{"enabled":true}"#)),
        stream: Some(true),
        stream_options: Some(StreamOptions {
            include_obfuscation: Some(false),
        }),
    }
}

#[test]
fn every_field_and_item_is_written_as_serde_writes_it() {
    assert_same(&full_request());
    assert_same(&ResponsesRequest::default());
}

#[test]
fn each_field_alone_is_written_as_serde_writes_it() {
    let full = serde_json::to_value(full_request()).unwrap();
    let keys: Vec<String> = full.as_object().unwrap().keys().cloned().collect();
    for key in keys {
        let mut request = full_request();
        let mut alone = ResponsesRequest {
            model: std::mem::take(&mut request.model),
            ..ResponsesRequest::default()
        };
        match key.as_str() {
            "model" => {}
            "input" => alone.input = request.input,
            "instructions" => alone.instructions = request.instructions,
            "tools" => alone.tools = request.tools,
            "tool_choice" => alone.tool_choice = request.tool_choice,
            "parallel_tool_calls" => alone.parallel_tool_calls = request.parallel_tool_calls,
            "text" => alone.text = request.text,
            "reasoning" => alone.reasoning = request.reasoning,
            "max_output_tokens" => alone.max_output_tokens = request.max_output_tokens,
            "temperature" => alone.temperature = request.temperature,
            "top_p" => alone.top_p = request.top_p,
            "top_logprobs" => alone.top_logprobs = request.top_logprobs,
            "include" => alone.include = request.include,
            "user" => alone.user = request.user,
            "safety_identifier" => alone.safety_identifier = request.safety_identifier,
            "prompt_cache_key" => alone.prompt_cache_key = request.prompt_cache_key,
            "prompt_cache_retention" => {
                alone.prompt_cache_retention = request.prompt_cache_retention
            }
            "prompt_cache_options" => alone.prompt_cache_options = request.prompt_cache_options,
            "context_management" => alone.context_management = request.context_management,
            "metadata" => alone.metadata = request.metadata,
            "store" => alone.store = request.store,
            "previous_response_id" => alone.previous_response_id = request.previous_response_id,
            "service_tier" => alone.service_tier = request.service_tier,
            "moderation" => alone.moderation = request.moderation,
            "stream" => alone.stream = request.stream,
            "stream_options" => alone.stream_options = request.stream_options,
            other => panic!("the test does not know the field {other}"),
        }
        assert_same(&alone);
    }
}

#[test]
fn every_choice_and_text_setting_is_written_as_serde_writes_it() {
    let choices = [
        ToolChoice::Mode(AWKWARD.into()),
        ToolChoice::Tool(ToolRef::Function {
            name: AWKWARD.into(),
        }),
        ToolChoice::Tool(ToolRef::Custom { name: "g".into() }),
        ToolChoice::Allowed(AllowedTools {
            kind: "allowed_tools",
            mode: "required".into(),
            tools: vec![
                ToolRef::Function { name: "f".into() },
                ToolRef::Custom {
                    name: AWKWARD.into(),
                },
            ],
        }),
        ToolChoice::Allowed(AllowedTools {
            kind: "allowed_tools",
            mode: "auto".into(),
            tools: Vec::new(),
        }),
    ];
    for choice in choices {
        assert_same(&ResponsesRequest {
            tool_choice: Some(choice),
            ..ResponsesRequest::default()
        });
    }
    let texts = [
        TextParam::default(),
        TextParam {
            format: Some(TextFormat::Text),
            verbosity: None,
        },
        TextParam {
            format: Some(TextFormat::JsonObject),
            verbosity: Some("low".into()),
        },
        TextParam {
            format: Some(TextFormat::JsonSchema {
                name: text("bare"),
                schema: raw("{}"),
                description: None,
                strict: None,
            }),
            verbosity: None,
        },
    ];
    for text in texts {
        assert_same(&ResponsesRequest {
            text: Some(text),
            reasoning: Some(Reasoning::default()),
            stream_options: Some(StreamOptions::default()),
            ..ResponsesRequest::default()
        });
    }
}

/// The values noted as copied are where the writer wrote them, in order,
/// the bytes are the same as unnoted, and a reader told where they lie
/// reads what a reader that looks at them reads.
#[test]
fn copies_are_noted_where_they_lie_and_read_back_alike() {
    use crate::responses::lenient::CreateResponse;

    let request = full_request();
    let mut plain = Vec::new();
    request.write_json(&mut plain);
    let (mut noted, mut copies) = (Vec::new(), Vec::new());
    request.write_json_noting_copies(&mut noted, &mut copies, false);
    assert_eq!(noted, plain);
    // Told to note strings only, the same less the schema.
    let (mut strings, mut string_copies) = (Vec::new(), Vec::new());
    request.write_json_noting_copies(&mut strings, &mut string_copies, true);
    assert_eq!(strings, plain);
    assert_eq!(string_copies, copies[..copies.len() - 1]);
    // In order and apart, each one whole JSON value.
    assert!(
        copies.windows(2).all(|w| w[0].end <= w[1].start),
        "{copies:?}"
    );
    let copied: Vec<&str> = copies
        .iter()
        .map(|range| std::str::from_utf8(&noted[range.clone()]).unwrap())
        .collect();
    for value in &copied {
        serde_json::from_str::<&RawValue>(value).unwrap_or_else(|e| panic!("{value}: {e}"));
    }
    // The instructions, then the one function tool with both: its
    // description, then its schema, last.
    let awkward = text(AWKWARD);
    let tail = &copied[copied.len() - 3..];
    assert_eq!(
        tail,
        [
            awkward.raw().get(),
            awkward.raw().get(),
            r#"{"type":"object"}"#
        ],
        "{copies:?}"
    );
    // And the items' texts before them.
    assert!(copied.len() > 6, "{copied:?}");
    let knowing = CreateResponse::read_knowing(&noted, &copies).expect("it reads");
    let looking = CreateResponse::read(&noted).expect("it reads");
    assert_reads_alike(&knowing, &looking);
}

/// Two reads of one body read the same request, members and flags.
fn assert_reads_alike(
    told: &crate::responses::lenient::ReadRequest<'_>,
    looking: &crate::responses::lenient::ReadRequest<'_>,
) {
    assert_eq!(
        format!("{:?}", told.request),
        format!("{:?}", looking.request)
    );
    assert_eq!(
        format!("{:?}", told.members),
        format!("{:?}", looking.members)
    );
    assert_eq!(
        (told.compact, told.unmodeled),
        (looking.compact, looking.unmodeled)
    );
}

/// The function tools noted where they lie: a reader told reads what a
/// reader that looks at them reads, escaped names and `null`s included;
/// a note that is not about these bytes is not used; a request with a
/// tool of another type, or written from a body that was not compact,
/// notes none.
#[test]
fn function_tools_are_noted_where_they_lie_and_read_back_alike() {
    use crate::responses::lenient::CreateResponse;
    use crate::responses::written::WrittenTools;

    let functions: Vec<Tool<'static>> = every_tool()
        .into_iter()
        .filter(|t| matches!(t, Tool::Function(_)))
        .collect();
    assert_eq!(functions.len(), 2);
    let request = ResponsesRequest {
        tools: Some(functions),
        ..full_request()
    };
    let mut plain = Vec::new();
    request.write_json(&mut plain);
    let (mut noted, mut copies) = (Vec::new(), Vec::new());
    let tools = request
        .write_json_noting(&mut noted, &mut copies, false)
        .expect("function tools alone are noted");
    assert_eq!(noted, plain);
    let text = |range: &std::ops::Range<usize>| std::str::from_utf8(&noted[range.clone()]).unwrap();
    let awkward = serde_json::to_string(AWKWARD).unwrap();
    assert!(text(&tools.array).starts_with(r#"[{"type":"function","name":"#));
    assert_eq!(text(&tools.tools[0].name), awkward);
    assert_eq!(
        tools.tools[0].description.as_ref().map(text),
        Some(&*awkward)
    );
    assert_eq!(
        tools.tools[0].parameters.as_ref().map(text),
        Some(r#"{"type":"object"}"#)
    );
    assert_eq!(tools.tools[0].strict, Some(true));
    assert_eq!(text(&tools.tools[1].name), r#""bare""#);
    assert_eq!(
        (&tools.tools[1].description, &tools.tools[1].parameters),
        (&None, &None)
    );
    assert_eq!(tools.tools[1].strict, None);

    let looking = CreateResponse::read(&noted).expect("it reads");
    let told = CreateResponse::read_written(&noted, &copies, Some(&tools)).expect("it reads");
    assert_reads_alike(&told, &looking);
    // A note about other bytes: read as if there were none.
    let elsewhere = WrittenTools {
        array: tools.array.start + 1..tools.array.end,
        ..tools.clone()
    };
    let misled = CreateResponse::read_written(&noted, &copies, Some(&elsewhere)).expect("it reads");
    assert_reads_alike(&misled, &looking);

    let (mut out, mut copies) = (Vec::new(), Vec::new());
    assert!(full_request()
        .write_json_noting(&mut out, &mut copies, false)
        .is_none());
    assert!(request
        .write_json_noting(&mut out, &mut copies, true)
        .is_none());
}
