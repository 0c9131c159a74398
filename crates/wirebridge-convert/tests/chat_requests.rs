//! Chat request → Responses request: each mapping, errors naming the field,
//! the loss policy, and garbage input.

use serde_json::{json, Value};
use wirebridge_convert::chat_to_responses::{translate_request, ChatReasoning, Options};
use wirebridge_convert::{LossAction, LossKind, LossPolicy, LossReport};
use wirebridge_testkit::fixtures;

fn translate(body: &str) -> (Value, LossReport) {
    translate_with(body, &Options::default())
}

fn translate_with(body: &str, options: &Options) -> (Value, LossReport) {
    let translated =
        translate_request(body.as_bytes(), options).unwrap_or_else(|e| panic!("{e}\n{body}"));
    (
        serde_json::from_slice(&translated.body).unwrap(),
        translated.losses,
    )
}

fn responses(body: &str) -> Value {
    translate(body).0
}

/// A request with these messages and extra top-level fields.
fn request(messages: Value, extra: Value) -> String {
    let mut body = json!({"model": "gpt-5", "messages": messages});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body.to_string()
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

#[test]
fn messages_become_items_in_order_with_roles_kept() {
    let r = responses(&request(
        json!([
            {"role": "system", "content": "S"},
            {"role": "developer", "content": [{"type": "text", "text": "D1"}, {"type": "text", "text": "D2"}]},
            {"role": "user", "content": "U"},
            {"role": "assistant", "content": "A"},
            {"role": "user", "content": "U2"}
        ]),
        json!({}),
    ));
    assert!(r.get("instructions").is_none(), "system stays a message");
    let input = r["input"].as_array().unwrap();
    let roles: Vec<&str> = input.iter().map(|i| i["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "developer", "user", "assistant", "user"]);
    assert!(input.iter().all(|i| i["type"] == "message"));
    assert_eq!(input[0]["content"], "S");
    assert_eq!(
        input[1]["content"],
        json!([{"type": "input_text", "text": "D1"}, {"type": "input_text", "text": "D2"}])
    );
    assert_eq!(input[2]["content"], "U");
}

#[test]
fn user_parts_map_to_input_parts() {
    let (r, losses) = translate(&request(
        json!([{"role": "user", "content": [
            {"type": "text", "text": "look", "prompt_cache_breakpoint": {"mode": "explicit"}},
            {"type": "image_url", "image_url": {"url": "https://x/a.png", "detail": "high"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
            {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBE"}},
            {"type": "file", "file": {"file_id": "file-1"}},
            {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
            {"type": "video_url", "video_url": {"url": "https://x/v.mp4"}}
        ]}]),
        json!({}),
    ));
    assert_eq!(
        r["input"][0]["content"],
        json!([
            {"type": "input_text", "text": "look", "prompt_cache_breakpoint": {"mode": "explicit"}},
            {"type": "input_image", "image_url": "https://x/a.png", "detail": "high"},
            {"type": "input_image", "image_url": "data:image/png;base64,AA", "detail": "auto"},
            {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBE"},
            {"type": "input_file", "file_id": "file-1"},
            {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}}
        ])
    );
    let lost: Vec<_> = losses.iter().map(|l| (l.kind, l.path.as_str())).collect();
    assert_eq!(
        lost,
        [(LossKind::UnsupportedContent, "messages[0].content[6]")]
    );
}

#[test]
fn assistant_history_becomes_output_messages() {
    let r = responses(&request(
        json!([
            user("q"),
            {"role": "assistant", "content": "plain"},
            {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "refusal", "refusal": "r1"}]},
            {"role": "assistant", "content": null, "refusal": "No."}
        ]),
        json!({}),
    ));
    let input = &r["input"];
    let text =
        |t: &str| json!({"type": "output_text", "text": t, "annotations": [], "logprobs": []});
    assert_eq!(
        input[1],
        json!({"type": "message", "id": "msg_chat_1", "role": "assistant", "status": "completed", "content": [text("plain")]})
    );
    assert_eq!(
        input[2]["content"],
        json!([text("a"), {"type": "refusal", "refusal": "r1"}])
    );
    assert_eq!(input[3]["id"], "msg_chat_3");
    assert_eq!(
        input[3]["content"],
        json!([{"type": "refusal", "refusal": "No."}])
    );
}

#[test]
fn tool_calls_and_results_become_call_items() {
    let body = r#"{"model":"m","messages":[
        {"role":"user","content":"q"},
        {"role":"assistant","content":"","tool_calls":[
            {"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"x\": 1,  \"y\":\"\\u00e9\"}"}},
            {"id":"call_b","function":{"name":"g","arguments":{"z":2}}}]},
        {"role":"tool","tool_call_id":"call_a","content":"r1"},
        {"role":"tool","tool_call_id":"call_b","content":[{"type":"text","text":"p1"},{"type":"text","text":"p2"}]}
    ]}"#;
    let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
    let text = String::from_utf8(translated.body.clone()).unwrap();
    // Arguments are the exact string the client sent, escapes and spaces included.
    assert!(
        text.contains(r#""arguments":"{\"x\": 1,  \"y\":\"\\u00e9\"}""#),
        "{text}"
    );
    let r: Value = serde_json::from_slice(&translated.body).unwrap();
    let input = r["input"].as_array().unwrap();
    assert_eq!(input.len(), 5, "no message item for the empty text: {r}");
    assert_eq!(
        input[1],
        json!({"type": "function_call", "call_id": "call_a", "name": "f", "arguments": "{\"x\": 1,  \"y\":\"\\u00e9\"}"})
    );
    assert_eq!(input[2]["arguments"], r#"{"z":2}"#);
    assert_eq!(
        input[3],
        json!({"type": "function_call_output", "call_id": "call_a", "output": "r1"})
    );
    assert_eq!(input[4]["output"], "p1\np2");
    assert!(translated.losses.is_empty());
}

#[test]
fn tool_results_with_images_keep_them() {
    let r = responses(&request(
        json!([
            user("q"),
            {"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": [
                {"type": "text", "text": "here"},
                {"type": "image_url", "image_url": {"url": "https://x/s.png"}}
            ]}
        ]),
        json!({}),
    ));
    assert_eq!(
        r["input"][2]["output"],
        json!([
            {"type": "input_text", "text": "here"},
            {"type": "input_image", "image_url": "https://x/s.png", "detail": "auto"}
        ])
    );
}

#[test]
fn custom_tool_calls_and_their_results_stay_custom() {
    let r = responses(&request(
        json!([
            user("q"),
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "custom", "custom": {"name": "apply_patch", "input": "*** Begin Patch\n"}},
                {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "patched"},
            {"role": "tool", "tool_call_id": "c2", "content": "done"}
        ]),
        json!({}),
    ));
    let input = &r["input"];
    assert_eq!(
        input[1],
        json!({"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "*** Begin Patch\n"})
    );
    assert_eq!(
        input[3],
        json!({"type": "custom_tool_call_output", "call_id": "c1", "output": "patched"})
    );
    assert_eq!(input[4]["type"], "function_call_output");
}

#[test]
fn legacy_function_calls_get_stable_ids() {
    let r = responses(&request(
        json!([
            user("q"),
            {"role": "assistant", "content": null, "function_call": {"name": "lookup", "arguments": "{\"k\":1}"}},
            {"role": "function", "name": "lookup", "content": "v1"},
            {"role": "assistant", "function_call": {"name": "lookup", "arguments": "{\"k\":2}"}},
            {"role": "function", "name": "lookup", "content": null}
        ]),
        json!({"functions": [{"name": "lookup", "parameters": {"type": "object"}}], "function_call": "auto"}),
    ));
    let input = &r["input"];
    assert_eq!(
        input[1],
        json!({"type": "function_call", "call_id": "call_fn_1", "name": "lookup", "arguments": "{\"k\":1}"})
    );
    assert_eq!(
        input[2],
        json!({"type": "function_call_output", "call_id": "call_fn_1", "output": "v1"})
    );
    assert_eq!(input[3]["call_id"], "call_fn_3");
    assert_eq!(
        input[4],
        json!({"type": "function_call_output", "call_id": "call_fn_3", "output": ""})
    );
    assert_eq!(
        r["tools"],
        json!([{"type": "function", "name": "lookup", "parameters": {"type": "object"}, "strict": false}])
    );
    assert_eq!(r["tool_choice"], "auto");
    // The same request gives the same ids: the prompt prefix stays cacheable.
    assert_eq!(
        r,
        responses(&request(
            json!([
                user("q"),
                {"role": "assistant", "content": null, "function_call": {"name": "lookup", "arguments": "{\"k\":1}"}},
                {"role": "function", "name": "lookup", "content": "v1"},
                {"role": "assistant", "function_call": {"name": "lookup", "arguments": "{\"k\":2}"}},
                {"role": "function", "name": "lookup", "content": null}
            ]),
            json!({"functions": [{"name": "lookup", "parameters": {"type": "object"}}], "function_call": "auto"}),
        ))
    );
}

#[test]
fn tools_are_flattened() {
    let body = r#"{"model":"m","messages":[{"role":"user","content":"q"}],"tools":[
        {"type":"function","function":{"name":"a","description":"A.","parameters":{"type": "object",  "properties":{}},"strict":true}},
        {"type":"function","function":{"name":"b"}},
        {"type":"custom","custom":{"name":"c","description":"C.","format":{"type":"grammar","grammar":{"syntax":"lark","definition":"start: \"x\""}}}},
        {"type":"custom","custom":{"name":"d","format":{"type":"text"}}},
        {"type":"custom","custom":{"name":"e"}}
    ],"parallel_tool_calls":false}"#;
    let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
    let text = String::from_utf8(translated.body.clone()).unwrap();
    assert!(
        text.contains(r#""parameters":{"type": "object",  "properties":{}}"#),
        "schemas pass through as written: {text}"
    );
    let r: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_eq!(
        r["tools"],
        json!([
            {"type": "function", "name": "a", "description": "A.", "parameters": {"type": "object", "properties": {}}, "strict": true},
            // Responses makes unmarked functions strict; Chat's default is written out.
            {"type": "function", "name": "b", "parameters": null, "strict": false},
            {"type": "custom", "name": "c", "description": "C.", "format": {"type": "grammar", "syntax": "lark", "definition": "start: \"x\""}},
            {"type": "custom", "name": "d", "format": {"type": "text"}},
            {"type": "custom", "name": "e"}
        ])
    );
    assert_eq!(r["parallel_tool_calls"], false);
}

#[test]
fn tool_choice_shapes() {
    let choice = |choice: Value, extra: Value| {
        let mut fields = json!({"tool_choice": choice, "tools": [
            {"type": "function", "function": {"name": "f"}},
            {"type": "custom", "custom": {"name": "g"}}
        ]});
        for (k, v) in extra.as_object().unwrap() {
            fields[k] = v.clone();
        }
        responses(&request(json!([user("q")]), fields))["tool_choice"].clone()
    };
    for mode in ["none", "auto", "required"] {
        assert_eq!(choice(json!(mode), json!({})), mode);
    }
    assert_eq!(
        choice(
            json!({"type": "function", "function": {"name": "f"}}),
            json!({})
        ),
        json!({"type": "function", "name": "f"})
    );
    assert_eq!(
        choice(
            json!({"type": "custom", "custom": {"name": "g"}}),
            json!({})
        ),
        json!({"type": "custom", "name": "g"})
    );
    assert_eq!(
        choice(
            json!({"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
                {"type": "function", "function": {"name": "f"}},
                {"type": "custom", "custom": {"name": "g"}}
            ]}}),
            json!({})
        ),
        json!({"type": "allowed_tools", "mode": "required", "tools": [
            {"type": "function", "name": "f"},
            {"type": "custom", "name": "g"}
        ]})
    );
    assert_eq!(
        choice(Value::Null, json!({"function_call": {"name": "f"}})),
        json!({"type": "function", "name": "f"})
    );
    assert_eq!(
        choice(Value::Null, json!({"function_call": "none"})),
        "none"
    );
    assert_eq!(
        choice(json!("required"), json!({"function_call": "none"})),
        "required",
        "tool_choice wins over the legacy function_call"
    );
    assert!(choice(Value::Null, json!({})).is_null());
}

#[test]
fn web_search_options_become_a_web_search_tool() {
    let r = responses(&request(
        json!([user("q")]),
        json!({"web_search_options": {
            "user_location": {"type": "approximate", "approximate": {"city": "Paris", "country": "FR", "timezone": "Europe/Paris"}},
            "search_context_size": "high"
        }}),
    ));
    assert_eq!(
        r["tools"],
        json!([{"type": "web_search", "search_context_size": "high", "user_location": {
            "type": "approximate", "city": "Paris", "country": "FR", "timezone": "Europe/Paris"
        }}])
    );
    let r = responses(&request(
        json!([user("q")]),
        json!({"web_search_options": {}}),
    ));
    assert_eq!(r["tools"], json!([{"type": "web_search"}]));
}

#[test]
fn response_format_and_verbosity_become_text() {
    let text = |extra: Value| responses(&request(json!([user("q")]), extra))["text"].clone();
    assert_eq!(
        text(
            json!({"response_format": {"type": "json_schema", "json_schema": {
            "name": "answer", "description": "An answer.", "strict": true,
            "schema": {"type": "object", "properties": {"a": {"type": "string"}}}
        }}, "verbosity": "low"})
        ),
        json!({"format": {"type": "json_schema", "name": "answer", "description": "An answer.", "strict": true,
            "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}, "verbosity": "low"})
    );
    assert_eq!(
        text(json!({"response_format": {"type": "json_object"}})),
        json!({"format": {"type": "json_object"}})
    );
    assert_eq!(
        text(json!({"response_format": {"type": "text"}})),
        json!({"format": {"type": "text"}})
    );
    assert!(text(json!({})).is_null());
}

#[test]
fn sampling_limits_and_reasoning() {
    let (r, losses) = translate(&request(
        json!([user("q")]),
        json!({"max_completion_tokens": 300, "max_tokens": 200, "temperature": 0.3, "top_p": 0.5,
               "reasoning_effort": "low", "n": 1, "presence_penalty": 0, "frequency_penalty": 0.0,
               "stop": [], "logit_bias": {}, "modalities": ["text"]}),
    ));
    assert_eq!(r["max_output_tokens"], 300);
    assert_eq!(r["temperature"], 0.3);
    assert_eq!(r["top_p"], 0.5);
    assert_eq!(r["reasoning"], json!({"effort": "low"}));
    assert!(
        losses.is_empty(),
        "settings that change nothing are no loss: {losses:?}"
    );
    assert_eq!(
        responses(&request(json!([user("q")]), json!({"max_tokens": 200})))["max_output_tokens"],
        200
    );

    // A client that wants reasoning text gets the summaries Responses can return.
    let wants_reasoning = Options {
        reasoning: ChatReasoning::ReasoningContent,
        ..Options::default()
    };
    let (r, _) = translate_with(
        &request(json!([user("q")]), json!({"reasoning_effort": "high"})),
        &wants_reasoning,
    );
    assert_eq!(r["reasoning"], json!({"effort": "high", "summary": "auto"}));
    let (r, _) = translate_with(&request(json!([user("q")]), json!({})), &wants_reasoning);
    assert!(
        r.get("reasoning").is_none(),
        "no reasoning asked of non-reasoning models"
    );
}

#[test]
fn small_token_limits_are_raised_and_reported() {
    let body = request(json!([user("q")]), json!({"max_tokens": 1}));
    let (r, losses) = translate(&body);
    assert_eq!(r["max_output_tokens"], 16);
    assert_eq!(losses.paths(), "max_tokens");
    let strict = Options {
        policy: LossPolicy::strict(),
        ..Options::default()
    };
    let err = translate_request(body.as_bytes(), &strict).unwrap_err();
    assert_eq!(err.param(), Some("max_tokens"));
}

#[test]
fn logprobs_become_include() {
    let translated = translate_request(
        request(
            json!([user("q")]),
            json!({"logprobs": true, "top_logprobs": 3}),
        )
        .as_bytes(),
        &Options::default(),
    )
    .unwrap();
    let r: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_eq!(r["include"], json!(["message.output_text.logprobs"]));
    assert_eq!(r["top_logprobs"], 3);
    assert!(translated.context.logprobs);
    let r = responses(&request(json!([user("q")]), json!({"logprobs": false})));
    assert!(r.get("include").is_none());
}

#[test]
fn passthrough_fields_and_store_default() {
    let r = responses(&request(
        json!([user("q")]),
        json!({"user": "u1", "safety_identifier": "s1", "prompt_cache_key": "k", "prompt_cache_retention": "24h",
               "metadata": {"a": "b"}, "store": true, "service_tier": "flex", "parallel_tool_calls": true,
               "prompt_cache_options": {"ttl": "1h"}, "moderation": {"mode": "auto"}}),
    ));
    for (field, value) in [
        ("user", json!("u1")),
        ("safety_identifier", json!("s1")),
        ("prompt_cache_key", json!("k")),
        ("prompt_cache_retention", json!("24h")),
        ("metadata", json!({"a": "b"})),
        ("store", json!(true)),
        ("service_tier", json!("flex")),
        ("parallel_tool_calls", json!(true)),
        ("prompt_cache_options", json!({"ttl": "1h"})),
        ("moderation", json!({"mode": "auto"})),
    ] {
        assert_eq!(r[field], value, "{field}");
    }
    // Chat stores nothing unless asked; Responses would store by default.
    let r = responses(&request(json!([user("q")]), json!({})));
    assert_eq!(r["store"], false);
    for absent in [
        "tools",
        "tool_choice",
        "text",
        "reasoning",
        "include",
        "stream",
        "temperature",
    ] {
        assert!(r.get(absent).is_none(), "{absent}");
    }
}

#[test]
fn streaming_and_the_reply_context() {
    let translated = translate_request(
        request(
            json!([user("q")]),
            json!({"model": "gpt-x", "stream": true, "stream_options": {"include_usage": true, "include_obfuscation": false}}),
        )
        .as_bytes(),
        &Options {
            reasoning: ChatReasoning::Reasoning,
            ..Options::default()
        },
    )
    .unwrap();
    let r: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_eq!(r["stream"], true);
    assert_eq!(r["stream_options"], json!({"include_obfuscation": false}));
    let ctx = translated.context;
    assert_eq!(ctx.model, "gpt-x");
    assert!(ctx.stream && ctx.include_usage && !ctx.logprobs);
    assert_eq!(ctx.reasoning, ChatReasoning::Reasoning);

    let translated = translate_request(
        request(json!([user("q")]), json!({"stream": false})).as_bytes(),
        &Options::default(),
    )
    .unwrap();
    let r: Value = serde_json::from_slice(&translated.body).unwrap();
    assert!(r.get("stream").is_none() && r.get("stream_options").is_none());
    assert!(!translated.context.stream && !translated.context.include_usage);
}

#[test]
fn what_responses_cannot_express_is_reported() {
    let (r, losses) = translate(&request(
        json!([
            {"role": "user", "name": "ann", "content": "q"},
            {"role": "assistant", "content": "a", "audio": {"id": "audio_1"}, "reasoning_content": "thought"}
        ]),
        json!({"stop": ["\n"], "seed": 7, "presence_penalty": 0.5, "frequency_penalty": -0.5,
               "logit_bias": {"50256": -100}, "audio": {"voice": "alloy", "format": "wav"},
               "modalities": ["text", "audio"], "prediction": {"type": "content", "content": "x"}}),
    ));
    let lost: Vec<(LossKind, &str)> = losses.iter().map(|l| (l.kind, l.path.as_str())).collect();
    assert_eq!(
        lost,
        [
            (LossKind::SamplingParameter, "stop"),
            (LossKind::SamplingParameter, "seed"),
            (LossKind::SamplingParameter, "presence_penalty"),
            (LossKind::SamplingParameter, "frequency_penalty"),
            (LossKind::SamplingParameter, "logit_bias"),
            (LossKind::UnsupportedParameter, "audio"),
            (LossKind::UnsupportedParameter, "modalities[1]"),
            (LossKind::UnsupportedParameter, "prediction"),
            (LossKind::UnsupportedParameter, "messages[0].name"),
            (LossKind::UnsupportedParameter, "messages[1].audio"),
            (LossKind::ReasoningHistory, "messages[1].reasoning_content"),
        ]
    );
    for field in [
        "stop",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "audio",
        "modalities",
        "prediction",
    ] {
        assert!(r.get(field).is_none(), "{field} leaked");
    }
    assert!(r["input"][0].get("name").is_none());
}

#[test]
fn several_answers_are_refused_unless_the_policy_allows_dropping() {
    let body = request(json!([user("q")]), json!({"n": 3}));
    let err = translate_request(body.as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(err.status(), 400);
    assert_eq!(err.param(), Some("n"));
    let api: Value = serde_json::from_slice(&err.to_body()).unwrap();
    assert_eq!(api["error"]["param"], "n");
    assert_eq!(api["error"]["code"], "unsupported_parameter");
    assert!(api["error"]["message"].as_str().unwrap().contains('3'));

    let lenient = Options {
        policy: LossPolicy::default().with(LossKind::MultipleChoices, LossAction::Drop),
        ..Options::default()
    };
    let (r, losses) = translate_with(&body, &lenient);
    assert!(r.get("n").is_none());
    assert_eq!(losses.paths(), "n");

    let strict = Options {
        policy: LossPolicy::default().with(LossKind::SamplingParameter, LossAction::Reject),
        ..Options::default()
    };
    let err = translate_request(
        request(json!([user("q")]), json!({"seed": 1})).as_bytes(),
        &strict,
    )
    .unwrap_err();
    assert_eq!(err.param(), Some("seed"));
}

#[test]
fn errors_name_the_field() {
    let tool_call = |call: Value| {
        request(
            json!([user("q"), {"role": "assistant", "tool_calls": [call]}]),
            json!({}),
        )
    };
    let cases: Vec<(String, &str)> = vec![
        (
            r#"{"messages":[{"role":"user","content":"q"}]}"#.into(),
            "model",
        ),
        (r#"{"model":"m"}"#.into(), "messages"),
        (r#"{"model":"m","messages":[]}"#.into(), "messages"),
        (r#"{"model":"m","messages":{}}"#.into(), "messages"),
        (
            request(json!([{"role": "wizard", "content": "x"}]), json!({})),
            "messages[0].role",
        ),
        (
            request(json!([{"content": "x"}]), json!({})),
            "messages[0].role",
        ),
        (
            request(json!([{"role": "user"}]), json!({})),
            "messages[0].content",
        ),
        (
            request(json!([{"role": "user", "content": null}]), json!({})),
            "messages[0].content",
        ),
        (
            request(json!([{"role": "user", "content": 5}]), json!({})),
            "messages[0].content",
        ),
        (
            request(
                json!([{"role": "user", "content": [{"type": "text", "text": 5}]}]),
                json!({}),
            ),
            "messages[0].content[0].text",
        ),
        (
            request(
                json!([{"role": "user", "content": [{"type": "text"}]}]),
                json!({}),
            ),
            "messages[0].content[0].text",
        ),
        (
            request(
                json!([{"role": "user", "content": [{"text": "x"}]}]),
                json!({}),
            ),
            "messages[0].content[0].type",
        ),
        (
            request(
                json!([{"role": "user", "content": [{"type": "image_url", "image_url": {"detail": "low"}}]}]),
                json!({}),
            ),
            "messages[0].content[0].image_url.url",
        ),
        (
            request(
                json!([{"role": "user", "content": [{"type": "file"}]}]),
                json!({}),
            ),
            "messages[0].content[0].file",
        ),
        (
            request(json!([{"role": "tool", "content": "r"}]), json!({})),
            "messages[0].tool_call_id",
        ),
        (
            request(
                json!([{"role": "tool", "tool_call_id": 7, "content": "r"}]),
                json!({}),
            ),
            "messages[0].tool_call_id",
        ),
        (
            request(
                json!([{"role": "function", "name": "f", "content": "r"}]),
                json!({}),
            ),
            "messages[0].name",
        ),
        (
            request(json!([{"role": "function", "content": "r"}]), json!({})),
            "messages[0].name",
        ),
        (
            tool_call(json!({"type": "function", "function": {"name": "f"}})),
            "messages[1].tool_calls[0].id",
        ),
        (
            tool_call(json!({"id": "c", "type": "function"})),
            "messages[1].tool_calls[0].function",
        ),
        (
            tool_call(json!({"id": "c", "type": "function", "function": {"arguments": "{}"}})),
            "messages[1].tool_calls[0].function.name",
        ),
        (
            tool_call(json!({"id": "c", "type": "custom", "custom": {"name": "g"}})),
            "messages[1].tool_calls[0].custom.input",
        ),
        (
            tool_call(json!({"id": "c", "type": "magic"})),
            "messages[1].tool_calls[0].type",
        ),
        (
            request(
                json!([user("q"), {"role": "assistant", "function_call": {"arguments": "{}"}}]),
                json!({}),
            ),
            "messages[1].function_call.name",
        ),
        (
            request(json!([user("q")]), json!({"temperature": "hot"})),
            "temperature",
        ),
        (request(json!([user("q")]), json!({"n": -1})), "n"),
        (
            request(json!([user("q")]), json!({"stream": "yes"})),
            "stream",
        ),
        (
            request(json!([user("q")]), json!({"tool_choice": "sometimes"})),
            "tool_choice",
        ),
        (
            request(json!([user("q")]), json!({"tool_choice": 3})),
            "tool_choice",
        ),
        (
            request(
                json!([user("q")]),
                json!({"tool_choice": {"function": {"name": "f"}}}),
            ),
            "tool_choice.type",
        ),
        (
            request(
                json!([user("q")]),
                json!({"tool_choice": {"type": "function"}}),
            ),
            "tool_choice.function.name",
        ),
        (
            request(
                json!([user("q")]),
                json!({"tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "any", "tools": []}}}),
            ),
            "tool_choice.allowed_tools.mode",
        ),
        (
            request(
                json!([user("q")]),
                json!({"tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [{"type": "function"}]}}}),
            ),
            "tool_choice.allowed_tools.tools[0].function.name",
        ),
        (
            request(json!([user("q")]), json!({"function_call": {}})),
            "function_call.name",
        ),
        (
            request(
                json!([user("q")]),
                json!({"tools": [{"function": {"name": "f"}}]}),
            ),
            "tools[0].type",
        ),
        (
            request(json!([user("q")]), json!({"tools": [{"type": "function"}]})),
            "tools[0].function",
        ),
        (
            request(
                json!([user("q")]),
                json!({"tools": [{"type": "function", "function": {}}]}),
            ),
            "tools[0].function.name",
        ),
        (
            request(
                json!([user("q")]),
                json!({"tools": [{"type": "function", "function": {"name": "f", "strict": "yes"}}]}),
            ),
            "tools[0].function.strict",
        ),
        (
            request(
                json!([user("q")]),
                json!({"tools": [{"type": "custom", "custom": {"name": "g", "format": {"type": "grammar", "grammar": {"syntax": "lark"}}}}]}),
            ),
            "tools[0].custom.format.grammar.definition",
        ),
        (
            request(
                json!([user("q")]),
                json!({"functions": [{"description": "d"}]}),
            ),
            "functions[0].name",
        ),
        (
            request(
                json!([user("q")]),
                json!({"response_format": {"type": "yaml"}}),
            ),
            "response_format.type",
        ),
        (
            request(
                json!([user("q")]),
                json!({"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}),
            ),
            "response_format.json_schema.name",
        ),
        (
            request(
                json!([user("q")]),
                json!({"response_format": {"type": "json_schema", "json_schema": {"name": "a"}}}),
            ),
            "response_format.json_schema.schema",
        ),
    ];
    for (body, param) in cases {
        let err = translate_request(body.as_bytes(), &Options::default()).expect_err(&body);
        assert_eq!(err.status(), 400, "{body}");
        assert_eq!(err.param(), Some(param), "{body}: {err}");
        let api: Value = serde_json::from_slice(&err.to_body()).unwrap();
        assert_eq!(api["error"]["param"], param);
        assert_eq!(api["error"]["type"], "invalid_request_error");
        let message = api["error"]["message"].as_str().unwrap();
        let top = param.split(['[', '.']).next().unwrap();
        assert!(message.contains(top), "{body}: {message}");
        assert!(api["error"]["code"].is_string());
    }
}

/// Recorded Chat requests do not exist in the fixtures, so the corpus for
/// garbage tests is built from recorded replies: each becomes the follow-up
/// request a client would send.
fn corpus() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (_, bytes) in fixtures::chat_bodies() {
        let reply: Value = serde_json::from_slice(&bytes).unwrap();
        let message = &reply["choices"][0]["message"];
        let mut messages = vec![
            json!({"role": "system", "content": "Be helpful."}),
            user("Go."),
        ];
        messages.push(message.clone());
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            messages.push(
                json!({"role": "tool", "tool_call_id": call["id"], "content": "{\"ok\":true}"}),
            );
        }
        let body = json!({"model": reply["model"], "messages": messages, "stream": true,
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]});
        out.push(serde_json::to_vec(&body).unwrap());
    }
    out
}

#[test]
fn truncated_and_garbage_input_are_errors_not_panics() {
    let body = corpus().remove(0);
    for cut in [0, 1, 7, body.len() / 3, body.len() / 2, body.len() - 1] {
        let err = translate_request(&body[..cut], &Options::default()).unwrap_err();
        assert_eq!(err.status(), 400);
    }
    for garbage in [
        &b"\xff\xfe"[..],
        b"[]",
        b"null",
        b"\"messages\"",
        b"{\"model\":1}",
        b"{\"model\":\"m\",\"messages\":[null]}",
        b"{\"model\":\"m\",\"messages\":[[]]}",
    ] {
        assert!(translate_request(garbage, &Options::default()).is_err());
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Flips, deletes and duplicates bytes of a real input.
fn mutate(input: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(6) {
        if out.is_empty() {
            break;
        }
        let at = rng.below(out.len());
        match rng.below(4) {
            0 => out[at] = b"{}[]\",:\\\n0an"[rng.below(12)],
            1 => {
                out.remove(at);
            }
            2 => {
                let end = (at + rng.below(64)).min(out.len());
                let copy = out[at..end].to_vec();
                out.splice(at..at, copy);
            }
            _ => out[at] = rng.next() as u8,
        }
    }
    out
}

#[test]
fn mutated_and_random_input_never_panics() {
    let corpus = corpus();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut ok, mut failed) = (0, 0);
    for _ in 0..2000 {
        let body = &corpus[rng.below(corpus.len())];
        match translate_request(&mutate(body, &mut rng), &Options::default()) {
            Ok(translated) => {
                ok += 1;
                // What translates is valid JSON.
                serde_json::from_slice::<Value>(&translated.body).unwrap();
            }
            Err(err) => {
                failed += 1;
                assert_eq!(err.status(), 400);
            }
        }
    }
    assert!(ok > 0 && failed > 0, "ok {ok}, failed {failed}");
    for _ in 0..2000 {
        let len = rng.below(200);
        let bytes: Vec<u8> = (0..len)
            .map(|_| match rng.below(3) {
                0 => br#"{"model":"m","messages":[{"role":"tool","content":[]}]}"#[rng.below(55)],
                _ => rng.next() as u8,
            })
            .collect();
        let _ = translate_request(&bytes, &Options::default());
    }
}

#[test]
fn text_is_copied_byte_for_byte() {
    let translated = translate_request(
        br#"{"model":"m","messages":[{"role":"user","content":"caf\u00e9 \"q\" \ud83d\ude00\n"}]}"#,
        &Options::default(),
    )
    .unwrap();
    let text = String::from_utf8(translated.body).unwrap();
    assert!(
        text.contains(r#""content":"caf\u00e9 \"q\" \ud83d\ude00\n""#),
        "{text}"
    );
}
