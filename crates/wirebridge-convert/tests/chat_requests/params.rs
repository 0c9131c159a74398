//! Tools, tool choice, output format, sampling, pass-through fields,
//! streaming, and what Responses cannot express.

use serde_json::{json, Value};
use wirebridge_convert::chat_to_responses::{translate_request, ChatReasoning, Options};
use wirebridge_convert::{LossAction, LossKind, LossPolicy};

use super::{request, responses, translate, translate_with, user};

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
               "prompt_cache_options": {"ttl": "30m"}, "moderation": {"model": "omni-moderation-latest"}}),
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
        ("prompt_cache_options", json!({"ttl": "30m"})),
        ("moderation", json!({"model": "omni-moderation-latest"})),
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
