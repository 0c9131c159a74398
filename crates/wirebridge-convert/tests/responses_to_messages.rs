//! Responses clients on a Messages backend: the request written as
//! Messages, the reply read back as the Responses grammar, and thinking
//! replayed on the next turn exactly as the backend wrote it.

mod common;

use std::sync::Arc;

use common::{drive, sse};
use serde_json::{json, Value};
use wirebridge_convert::responses_to_chat::{Options, Seal};
use wirebridge_convert::responses_to_messages::{
    body_events, translate_body, translate_request, ExchangeContext, StreamTranslator,
};
use wirebridge_convert::seal::{SealKey, Sealer};
use wirebridge_convert::{BackendProfile, LossKind, LossPolicy, StreamTranslate};
use wirebridge_testkit::{parse_sse, responses_grammar};

fn options() -> Options {
    Options::default()
}

fn sealed(scope: &str, sealer: &Arc<Sealer>) -> Options {
    Options {
        seal: Some(Seal {
            sealer: Arc::clone(sealer),
            scope: scope.into(),
        }),
        ..Options::default()
    }
}

fn write(
    request: Value,
    options: &Options,
) -> (
    Value,
    wirebridge_convert::responses_to_messages::TranslatedRequest,
) {
    let t = translate_request(request.to_string().as_bytes(), options).unwrap();
    (serde_json::from_slice(&t.body).unwrap(), t)
}

#[test]
fn a_codex_turn_is_written_as_messages() {
    let request = json!({
        "model": "claude-sonnet",
        "instructions": "You are a coding agent.",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Sandbox: read-only."}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List the files."}]},
            {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": "{\"cmd\":\"ls\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "a.txt\nb.txt"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "And now?"}]}
        ],
        "tools": [
            {"type": "function", "name": "shell", "description": "Runs a command.", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
            {"type": "custom", "name": "apply_patch", "description": "Patches files."},
            {"type": "namespace", "name": "agents", "tools": [{"type": "function", "name": "spawn", "parameters": null}]},
            {"type": "web_search"}
        ],
        "tool_choice": "required",
        "parallel_tool_calls": false,
        "max_output_tokens": 4000,
        "stream": true,
        "prompt_cache_key": "session-1"
    });
    let (sent, t) = write(request, &options());
    // Read by eye: this is what a Messages backend is sent.
    let expected = json!({
        "model": "claude-sonnet",
        "max_tokens": 4000,
        "system": [
            {"type": "text", "text": "You are a coding agent."},
            {"type": "text", "text": "Sandbox: read-only."}
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "List the files."}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "shell", "input": {"cmd": "ls"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "a.txt\nb.txt"},
                {"type": "text", "text": "And now?"}
            ]}
        ],
        "tools": [
            {"name": "shell", "description": "Runs a command.", "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
            {"name": "apply_patch", "description": "Patches files.", "input_schema": {"type": "object", "properties": {"input": {"type": "string", "description": "The tool's input, as free-form text."}}, "required": ["input"]}},
            {"name": "agents__spawn", "input_schema": {"type": "object", "properties": {}}}
        ],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
        "stream": true
    });
    assert_eq!(sent, expected);
    assert_eq!(t.losses.paths(), "tools[3]");
}

#[test]
fn what_messages_cannot_say_is_reported_and_a_strict_policy_refuses_it() {
    let request = json!({
        "model": "m", "input": "Hi", "top_logprobs": 3, "text": {"verbosity": "low"},
        "include": ["message.output_text.logprobs"], "metadata": {"k": "v"},
        "reasoning": {"effort": "high"}, "max_output_tokens": 500,
    });
    let (sent, t) = write(request.clone(), &options());
    assert_eq!(
        t.losses.paths(),
        "top_logprobs, reasoning.effort, text.verbosity, metadata, include[0]"
    );
    // 500 tokens leave no room for the least thinking budget.
    assert!(sent.get("thinking").is_none());
    let strict = Options {
        policy: LossPolicy::strict(),
        ..Options::default()
    };
    let refused = translate_request(request.to_string().as_bytes(), &strict).unwrap_err();
    assert_eq!(refused.param(), Some("top_logprobs"));
}

#[test]
fn effort_becomes_a_thinking_budget_and_the_anthropic_profile_marks_the_cache() {
    let options = Options {
        profile: BackendProfile::anthropic(),
        ..Options::default()
    };
    let request = json!({
        "model": "m", "instructions": "Be brief.", "reasoning": {"effort": "medium"},
        "tools": [{"type": "function", "name": "a"}, {"type": "function", "name": "b"}],
        "input": [
            {"role": "user", "content": "one"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "two"}]},
            {"role": "user", "content": [{"type": "input_text", "text": "three"}, {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]}
        ],
        "prompt_cache_retention": "24h"
    });
    let (sent, t) = write(request, &options);
    assert!(t.losses.is_empty(), "{:?}", t.losses);
    // No limit from the client: the profile's; the budget fits below it.
    assert_eq!(sent["max_tokens"], 32000);
    assert_eq!(
        sent["thinking"],
        json!({"type": "enabled", "budget_tokens": 8192})
    );
    let mark = json!({"type": "ephemeral", "ttl": "1h"});
    assert!(sent["tools"][0].get("cache_control").is_none());
    assert_eq!(sent["tools"][1]["cache_control"], mark);
    assert_eq!(sent["system"][0]["cache_control"], mark);
    let last = &sent["messages"][2]["content"];
    assert!(last[0].get("cache_control").is_none());
    assert_eq!(
        last[1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}, "cache_control": mark})
    );
}

/// A Messages stream with every kind of block Responses carries, as
/// Anthropic's API sends one.
fn thinking_tool_stream() -> Vec<u8> {
    sse(&[
        r#"{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":20,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type":"ping"}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user wants "}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"the weather.\n"}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Let me \"check\"."}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{}}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Pa"}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"ris\"}"}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}"#,
        r#"{"type":"message_stop"}"#,
    ])
}

#[test]
fn a_stream_is_read_as_the_responses_grammar_at_every_split() {
    let upstream = thinking_tool_stream();
    for seed in [0, 1, 2, 7, 99, u64::MAX] {
        let (out, translator) = drive(
            StreamTranslator::new(ExchangeContext::default()),
            &upstream,
            seed,
        );
        let transcript = responses_grammar::check(&parse_sse(&out))
            .unwrap_or_else(|v| panic!("seed {seed}: {v}"));
        assert_eq!(transcript.text, "Let me \"check\".");
        assert_eq!(transcript.reasoning, "The user wants the weather.\n");
        assert_eq!(transcript.function_calls.len(), 1);
        let call = &transcript.function_calls[0];
        assert_eq!(
            (call.name.as_str(), call.call_id.as_str()),
            ("get_weather", "toolu_01")
        );
        assert_eq!(call.arguments, r#"{"city": "Paris"}"#);
        assert_eq!(transcript.status, "completed");
        let usage = transcript.usage.unwrap();
        // Cache reads and writes are input, as Responses counts it.
        assert_eq!(usage["input_tokens"], 125);
        assert_eq!(usage["input_tokens_details"]["cached_tokens"], 100);
        assert_eq!(usage["output_tokens"], 42);
        assert!(translator.is_finished() && translator.losses().is_empty());
        let kept = translator.finished().unwrap();
        assert_eq!(kept.output.len(), 3);
    }
}

#[test]
fn thinking_goes_back_to_the_backend_byte_for_byte_and_only_for_its_tenant() {
    let sealer = Arc::new(Sealer::new(SealKey::generate(), Vec::new()));
    let first = write(
        json!({"model": "m", "input": "Weather in Paris?"}),
        &sealed("tenant-a", &sealer),
    )
    .1;
    let context = ExchangeContext {
        backend: first.context,
        native: Default::default(),
    };
    let (_, translator) = drive(StreamTranslator::new(context), &thinking_tool_stream(), 3);
    let output: Vec<Value> = translator
        .finished()
        .unwrap()
        .output
        .iter()
        .map(|item| serde_json::from_str(item.get()).unwrap())
        .collect();
    assert_eq!(output[0]["type"], "reasoning");
    let carrier = output[0]["encrypted_content"].as_str().unwrap();
    assert!(carrier.starts_with("wbt1.") && !carrier.contains("weather"));

    // The next turn: the client sends the output back with the tool's result.
    let mut input = vec![json!({"role": "user", "content": "Weather in Paris?"})];
    input.extend(output.iter().cloned());
    input.push(json!({"type": "function_call_output", "call_id": "toolu_01", "output": "Sunny"}));
    let next = json!({"model": "m", "input": input});
    let (sent, t) = write(next.clone(), &sealed("tenant-a", &sealer));
    assert!(t.losses.is_empty(), "{:?}", t.losses);
    let assistant = &sent["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "The user wants the weather.\n", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"})
    );
    assert_eq!(
        assistant["content"][1],
        json!({"type": "text", "text": "Let me \"check\"."})
    );
    assert_eq!(
        assistant["content"][2],
        json!({"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}})
    );
    assert_eq!(sent["messages"][2]["content"][0]["tool_use_id"], "toolu_01");

    // Another tenant cannot replay it, and an altered carrier is refused.
    let refused =
        translate_request(next.to_string().as_bytes(), &sealed("tenant-b", &sealer)).unwrap_err();
    assert_eq!(refused.param(), Some("input[1].encrypted_content"));
    let mut altered = next.clone();
    let mut text = carrier.to_owned();
    text.insert(10, 'x');
    altered["input"][1]["encrypted_content"] = json!(text);
    let refused = translate_request(altered.to_string().as_bytes(), &sealed("tenant-a", &sealer))
        .unwrap_err();
    assert_eq!(refused.param(), Some("input[1].encrypted_content"));
}

#[test]
fn reasoning_no_messages_backend_wrote_is_reported_not_sent() {
    let request = json!({"model": "m", "input": [
        {"role": "user", "content": "Hi"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Thought."}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Hello"}]},
        {"role": "user", "content": "Again"}
    ]});
    let (sent, t) = write(request, &options());
    assert_eq!(t.losses.paths(), "input[1]");
    assert!(t
        .losses
        .iter()
        .all(|l| l.kind == LossKind::ReasoningHistory));
    assert_eq!(
        sent["messages"][1]["content"],
        json!([{"type": "text", "text": "Hello"}])
    );
}

#[test]
fn a_body_reads_as_its_stream_would() {
    let body = json!({
        "id": "msg_02", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
            {"type": "text", "text": "Part one. "},
            {"type": "text", "text": "Part two."},
            {"type": "tool_use", "id": "toolu_9", "name": "apply_patch", "input": {"input": "*** Begin Patch"}}
        ],
        "stop_reason": "max_tokens", "stop_sequence": null,
        "usage": {"input_tokens": 7, "output_tokens": 9}
    });
    let body = body.to_string();
    // The request declared `apply_patch` a custom tool.
    let request = json!({"model": "m", "input": "Patch it", "tools": [{"type": "custom", "name": "apply_patch"}]});
    let t = write(request, &options()).1;
    let context = ExchangeContext {
        backend: t.context,
        native: Default::default(),
    };
    let events = body_events(body.as_bytes()).unwrap();
    let stream: Vec<&str> = events.iter().map(String::as_str).collect();
    let (out, _) = drive(StreamTranslator::new(context.clone()), &sse(&stream), 5);
    let transcript = responses_grammar::check(&parse_sse(&out)).unwrap();
    assert_eq!(transcript.text, "Part one. Part two.");
    assert_eq!(transcript.status, "incomplete");

    let response: Value =
        serde_json::from_slice(&translate_body(body.as_bytes(), &context).unwrap().body).unwrap();
    assert_eq!(response["status"], "incomplete");
    assert_eq!(
        response["incomplete_details"]["reason"],
        "max_output_tokens"
    );
    let output = response["output"].as_array().unwrap();
    assert_eq!(output[0]["type"], "reasoning");
    assert!(output[0]["encrypted_content"]
        .as_str()
        .unwrap()
        .starts_with("wbt0."));
    assert_eq!(output[1]["content"].as_array().unwrap().len(), 2);
    assert_eq!(output[2]["type"], "custom_tool_call");
    assert_eq!(output[2]["name"], "apply_patch");
    assert_eq!(output[2]["input"], "*** Begin Patch");
}

#[test]
fn a_failure_mid_stream_keeps_what_was_said() {
    let upstream = sse(&[
        r#"{"type":"message_start","message":{"id":"msg_3","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half an answer"}}"#,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    ]);
    for seed in [0, 4] {
        let (out, translator) = drive(
            StreamTranslator::new(ExchangeContext::default()),
            &upstream,
            seed,
        );
        let frames = parse_sse(&out);
        let transcript = responses_grammar::check(&frames).unwrap_or_else(|v| panic!("{v}"));
        assert_eq!(transcript.status, "failed");
        assert_eq!(transcript.text, "Half an answer");
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("Overloaded"), "{text}");
        assert!(translator.is_finished());
    }
}

#[test]
fn a_stream_cut_short_fails_well_formed() {
    let upstream = sse(&[
        r#"{"type":"message_start","message":{"id":"msg_4","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Cut"}}"#,
    ]);
    let (out, _) = drive(
        StreamTranslator::new(ExchangeContext::default()),
        &upstream,
        0,
    );
    let transcript = responses_grammar::check(&parse_sse(&out)).unwrap_or_else(|v| panic!("{v}"));
    assert_eq!(transcript.status, "failed");
    assert_eq!(transcript.text, "Cut");
}

#[test]
fn every_byte_split_of_a_stream_reads_the_same() {
    let upstream = thinking_tool_stream();
    let whole = {
        let (out, _) = drive(
            StreamTranslator::new(ExchangeContext::default()),
            &upstream,
            0,
        );
        responses_grammar::check(&parse_sse(&out)).unwrap()
    };
    for at in 1..upstream.len() {
        let mut stream = wirebridge_convert::SseTranslator::new(StreamTranslator::new(
            ExchangeContext::default(),
        ));
        let mut out = wirebridge_convert::Frames::sse();
        stream.feed(&upstream[..at], &mut out);
        stream.feed(&upstream[at..], &mut out);
        stream.finish(&mut out);
        let transcript = responses_grammar::check(&parse_sse(&out.take().bytes))
            .unwrap_or_else(|v| panic!("split at {at}: {v}"));
        assert_eq!(transcript.text, whole.text, "split at {at}");
        assert_eq!(transcript.reasoning, whole.reasoning, "split at {at}");
        assert_eq!(transcript.function_calls.len(), 1, "split at {at}");
        assert_eq!(
            transcript.function_calls[0].arguments,
            whole.function_calls[0].arguments
        );
    }
}

#[test]
fn tool_choices_files_and_images_by_url() {
    let tools = json!([{"type": "function", "name": "f"}, {"type": "custom", "name": "patch"}]);
    let choice = |tool_choice: Value, parallel: Option<bool>| {
        let mut request =
            json!({"model": "m", "input": "go", "tools": tools, "tool_choice": tool_choice});
        if let Some(parallel) = parallel {
            request["parallel_tool_calls"] = json!(parallel);
        }
        write(request, &options()).0["tool_choice"].clone()
    };
    assert_eq!(choice(json!("auto"), None), json!({"type": "auto"}));
    assert_eq!(choice(json!("none"), Some(false)), json!({"type": "none"}));
    assert_eq!(
        choice(json!({"type": "function", "name": "f"}), Some(false)),
        json!({"type": "tool", "name": "f", "disable_parallel_tool_use": true})
    );
    assert_eq!(
        choice(json!({"type": "custom", "name": "patch"}), None),
        json!({"type": "tool", "name": "patch"})
    );
    let (sent, t) = write(
        json!({"model": "m", "tools": tools, "tool_choice": {"type": "web_search"}, "input": [{"role": "user", "content": [
            {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "high"},
            {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"},
            {"type": "input_file", "file_url": "https://example.com/b.pdf"},
            {"type": "input_file", "file_id": "file-1"}
        ]}]}),
        &options(),
    );
    assert_eq!(
        sent["messages"][0]["content"],
        json!([
            {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}, "title": "a.pdf"},
            {"type": "document", "source": {"type": "url", "url": "https://example.com/b.pdf"}}
        ])
    );
    assert!(sent.get("tool_choice").is_none());
    assert_eq!(
        t.losses.paths(),
        "tool_choice, input[0].content[0].detail, input[0].content[3]"
    );
}

#[test]
fn server_tools_citations_and_a_paused_turn_are_reported() {
    let upstream = sse(&[
        r#"{"type":"message_start","message":{"id":"msg_5","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Found it."}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"https://example.com"}}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"pause_turn"},"usage":{"output_tokens":4}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    let (out, translator) = drive(
        StreamTranslator::new(ExchangeContext::default()),
        &upstream,
        2,
    );
    let transcript = responses_grammar::check(&parse_sse(&out)).unwrap_or_else(|v| panic!("{v}"));
    assert_eq!(transcript.text, "Found it.");
    assert!(transcript.function_calls.is_empty());
    assert_eq!(
        translator.losses().paths(),
        "content[0], content[1].citations, stop_reason"
    );
}

#[test]
fn a_stream_cut_or_unreadable_after_a_block_keeps_it_whole() {
    let start = [
        r#"{"type":"message_start","message":{"id":"msg_6","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Said."}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
        r#"{"type":"content_block_delta","index":2,"delta":{"type":"thinking_delta","thinking":"Half"}}"#,
    ];
    let cut = sse(&start);
    let mut unreadable = start.to_vec();
    unreadable.push(r#"{"type":"content_block_delta","index":2,"delta":"#);
    for upstream in [cut, sse(&unreadable)] {
        let (out, translator) = drive(
            StreamTranslator::new(ExchangeContext::default()),
            &upstream,
            1,
        );
        let transcript =
            responses_grammar::check(&parse_sse(&out)).unwrap_or_else(|v| panic!("{v}"));
        assert_eq!(transcript.status, "failed");
        assert_eq!(transcript.text, "Said.");
        let output: Vec<Value> = translator
            .finished()
            .unwrap()
            .output
            .iter()
            .map(|item| serde_json::from_str(item.get()).unwrap())
            .collect();
        assert_eq!(output[1]["content"][0]["text"], "Said.");
        // Whole thinking keeps its carrier; thinking cut short has no
        // signature to carry, and is only shown.
        assert!(output[0]["encrypted_content"].is_string());
        assert!(
            output[2].get("encrypted_content").is_none(),
            "{}",
            output[2]
        );
        assert_eq!(output[2]["content"][0]["text"], "Half");
    }
}

#[test]
fn a_call_without_its_id_or_name_fails_the_reply() {
    for block in [
        r#"{"type":"tool_use","id":"toolu_1","name":"","input":{}}"#,
        r#"{"type":"tool_use","name":"f","input":{}}"#,
    ] {
        let start =
            format!(r#"{{"type":"content_block_start","index":1,"content_block":{block}}}"#);
        let upstream = sse(&[
            r#"{"type":"message_start","message":{"id":"msg_7","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Calling."}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            &start,
        ]);
        let (out, _) = drive(
            StreamTranslator::new(ExchangeContext::default()),
            &upstream,
            0,
        );
        let transcript =
            responses_grammar::check(&parse_sse(&out)).unwrap_or_else(|v| panic!("{v}"));
        assert_eq!(transcript.status, "failed");
        assert_eq!(transcript.text, "Calling.");
        assert!(transcript.function_calls.is_empty());
        assert!(String::from_utf8(out)
            .unwrap()
            .contains("without its id or name"));
    }
}

#[test]
fn a_call_that_streams_no_input_takes_none() {
    let upstream = sse(&[
        r#"{"type":"message_start","message":{"id":"msg_8","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_8","name":"now","input":{}}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":2}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    for cut in [false, true] {
        let upstream = match cut {
            // Cut before the block closes: the call is left incomplete.
            true => upstream[..upstream.len() / 2].to_vec(),
            false => upstream.clone(),
        };
        let (out, _) = drive(
            StreamTranslator::new(ExchangeContext::default()),
            &upstream,
            0,
        );
        let transcript =
            responses_grammar::check(&parse_sse(&out)).unwrap_or_else(|v| panic!("{v}"));
        if !cut {
            assert_eq!(transcript.function_calls[0].arguments, "{}");
        }
    }
}

#[test]
fn what_a_reply_cannot_carry_is_reported_within_a_bound() {
    let unknown: Vec<String> = (0..500)
        .map(|n| format!(r#"{{"type":"new_event_{n}"}}"#))
        .collect();
    let mut events = vec![
        r#"{"type":"message_start","message":{"id":"msg_9","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}"#.to_owned(),
    ];
    events.extend(unknown);
    events.push(r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}"#.into());
    events.push(r#"{"type":"message_stop"}"#.into());
    let events: Vec<&str> = events.iter().map(String::as_str).collect();
    let (_, translator) = drive(
        StreamTranslator::new(ExchangeContext::default()),
        &sse(&events),
        0,
    );
    assert!(translator.is_finished());
    let losses = translator.losses();
    assert_eq!(losses.len(), 64);
    assert!(losses.iter().all(|l| l.kind == LossKind::UnsupportedItem));
}
