//! Responses request → Chat request: errors, policy and profiles.

use serde_json::Value;
use wirebridge_convert::profile::BackendProfile;
use wirebridge_convert::responses_to_chat::{translate_request, Options};
use wirebridge_convert::{LossAction, LossKind, LossPolicy};
use wirebridge_testkit::fixtures;

fn chat(body: &str, options: &Options) -> Value {
    let translated = translate_request(body.as_bytes(), options).unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_slice(&translated.body).unwrap()
}

/// Fields of `CreateResponse` that `CreateChatCompletionRequest` does not
/// define, or defines differently: none may reach a Chat backend.
const RESPONSES_ONLY: [&str; 16] = [
    "input",
    "instructions",
    "include",
    "client_metadata",
    "previous_response_id",
    "truncation",
    "background",
    "conversation",
    "max_output_tokens",
    "text",
    "reasoning",
    "max_tool_calls",
    "prompt",
    "context_management",
    "prompt_cache_options",
    "top_k",
];

#[test]
fn codex_requests_carry_no_responses_only_fields() {
    let requests = fixtures::codex_requests();
    assert_eq!(requests.len(), 3);
    for profile in BackendProfile::BUILTIN {
        let options = Options {
            profile: BackendProfile::builtin(profile).unwrap(),
            ..Options::default()
        };
        for (name, body) in &requests {
            let translated = translate_request(body, &options)
                .unwrap_or_else(|e| panic!("{name} ({profile}): {e}"));
            let chat: Value = serde_json::from_slice(&translated.body).unwrap();
            for field in RESPONSES_ONLY {
                assert!(
                    chat.get(field).is_none(),
                    "{name} ({profile}): '{field}' leaked"
                );
            }
            if !options.profile.passes("prompt_cache_key") {
                assert!(chat.get("prompt_cache_key").is_none());
                assert!(translated
                    .losses
                    .iter()
                    .any(|l| l.path == "prompt_cache_key"));
            }
            let roles: Vec<&str> = chat["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["role"].as_str().unwrap())
                .collect();
            if !options.profile.developer_role {
                assert!(
                    !roles.contains(&"developer"),
                    "{name} ({profile}): developer role sent"
                );
            }
            // Codex keeps working: its web_search tool becomes web_search_options
            // where the backend has them, else it is dropped and reported; never refused.
            let dropped = translated
                .losses
                .iter()
                .any(|l| l.kind == LossKind::HostedTool);
            assert_ne!(
                dropped,
                chat.get("web_search_options").is_some(),
                "{name} ({profile})"
            );
            assert_eq!(
                dropped, !options.profile.web_search_options,
                "{name} ({profile})"
            );
            assert!(
                chat["tools"].as_array().unwrap().len() >= 10,
                "{name} ({profile}): tools lost"
            );
        }
    }
}

#[test]
fn errors_name_the_field() {
    let cases = [
        (r#"{"input":"hi"}"#, "model"),
        (r#"{"model":"m"}"#, "input"),
        (
            r#"{"model":"m","input":[{"role":"wizard","content":"x"}]}"#,
            "input[0].role",
        ),
        (
            r#"{"model":"m","input":[{"role":"user"}]}"#,
            "input[0].content",
        ),
        (r#"{"model":"m","input":""}"#, "input"),
        (
            r#"{"model":"m","input":[{"role":"user","content":[]}]}"#,
            "input[0].content",
        ),
        (
            r#"{"model":"m","input":[{"role":"developer","content":"d"},{"type":"message","role":"user","content":[{"type":"input_text","text":""}]}]}"#,
            "input[1].content",
        ),
        (
            r#"{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}"#,
            "input[0].call_id",
        ),
        (
            r#"{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c"}]}"#,
            "input[1].output",
        ),
        (
            r#"{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":"x"}]}"#,
            "input[0].call_id",
        ),
        (
            r#"{"model":"m","input":"x","tool_choice":"sometimes"}"#,
            "tool_choice",
        ),
        (
            r#"{"model":"m","input":"x","text":{"format":{"type":"yaml"}}}"#,
            "text.format.type",
        ),
        (
            r#"{"model":"m","input":"x","text":{"format":{"type":"json_schema","schema":{}}}}"#,
            "text.format.name",
        ),
        (
            r#"{"model":"m","input":"x","temperature":"hot"}"#,
            "temperature",
        ),
        (
            r#"{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":5}]}]}"#,
            "input[0].content",
        ),
        (
            r#"{"model":"m","input":"x","tools":[{"type":"function"}]}"#,
            "tools[0].name",
        ),
        (
            r#"{"model":"m","input":"x","previous_response_id":"resp_1"}"#,
            "previous_response_id",
        ),
    ];
    for (body, param) in cases {
        let err = translate_request(body.as_bytes(), &Options::default()).expect_err(body);
        assert_eq!(err.status(), 400, "{body}");
        assert_eq!(err.param(), Some(param), "{body}: {err}");
        let api: Value = serde_json::from_slice(&err.to_body()).unwrap();
        assert_eq!(api["error"]["param"], param);
        assert_eq!(api["error"]["type"], "invalid_request_error");
        assert!(
            api["error"]["message"]
                .as_str()
                .unwrap()
                .contains(param.split('[').next().unwrap()),
            "{body}: {api}"
        );
        assert!(api["error"]["code"].is_string());
    }
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    let body = fixtures::codex_requests().remove(0).1;
    for cut in [0, 1, 7, body.len() / 3, body.len() / 2, body.len() - 1] {
        let err = translate_request(&body[..cut], &Options::default()).unwrap_err();
        assert_eq!(err.status(), 400);
    }
    for garbage in [
        &b"\xff\xfe"[..],
        b"[]",
        b"null",
        b"\"input\"",
        b"{\"model\":1}",
    ] {
        assert!(translate_request(garbage, &Options::default()).is_err());
    }
}

#[test]
fn pass_through_json_nested_too_deep_is_refused_naming_where() {
    // Tool schemas are forwarded as sent, never parsed: only the depth
    // check stands between a 100,000-deep schema and the backend's parser.
    let schema = "[".repeat(100_000) + &"]".repeat(100_000);
    let body = format!(
        r#"{{"model":"m","input":"hi","tools":[{{"type":"function","name":"f","parameters":{schema}}}]}}"#
    );
    let err = translate_request(body.as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(err.status(), 400);
    assert!(
        err.param()
            .unwrap()
            .starts_with("tools[0].parameters[0][0]"),
        "{err}"
    );
    assert!(err.to_string().contains("128 levels"), "{err}");
    let metadata = format!(
        r#"{{"model":"m","input":"hi","metadata":{{"k":{}}}}}"#,
        "[".repeat(129) + &"]".repeat(129)
    );
    let err = translate_request(metadata.as_bytes(), &Options::default()).unwrap_err();
    assert!(err.param().unwrap().starts_with("metadata.k"), "{err}");
    // 128 levels in all is still fine.
    let fine = format!(
        r#"{{"model":"m","input":"hi","metadata":{{"k":{}}}}}"#,
        "[".repeat(126) + &"]".repeat(126)
    );
    assert!(translate_request(fine.as_bytes(), &Options::default()).is_ok());
}

#[test]
fn the_policy_decides_drop_or_reject() {
    let body =
        r#"{"model":"m","input":"x","tools":[{"type":"file_search","vector_store_ids":["vs"]}]}"#;
    let dropped = translate_request(body.as_bytes(), &Options::default()).unwrap();
    assert_eq!(dropped.losses.paths(), "tools[0]");
    let strict = Options {
        policy: LossPolicy::default().with(LossKind::HostedTool, LossAction::Reject),
        ..Options::default()
    };
    let err = translate_request(body.as_bytes(), &strict).unwrap_err();
    assert_eq!(err.param(), Some("tools[0]"));
    assert!(err.to_string().contains("file_search"), "{err}");

    let stateful = r#"{"model":"m","input":"x","previous_response_id":"resp_1"}"#;
    let lenient = Options {
        policy: LossPolicy::default().with(LossKind::StatefulFeature, LossAction::Drop),
        ..Options::default()
    };
    assert_eq!(
        translate_request(stateful.as_bytes(), &lenient)
            .unwrap()
            .losses
            .paths(),
        "previous_response_id"
    );
}

#[test]
fn profiles_choose_fields() {
    let body = r#"{"model":"m","input":[{"role":"developer","content":"d"},{"role":"user","content":"u"}],
        "max_output_tokens":9,"reasoning":{"effort":"high"},"metadata":{"a":"b"},"store":true,"text":{"verbosity":"low"}}"#;
    let openai = chat(
        body,
        &Options {
            profile: BackendProfile::openai(),
            ..Options::default()
        },
    );
    assert_eq!(openai["messages"][0]["role"], "developer");
    assert_eq!(openai["max_completion_tokens"], 9);
    assert_eq!(openai["reasoning_effort"], "high");
    assert_eq!(openai["metadata"]["a"], "b");
    assert_eq!(openai["store"], true);
    assert_eq!(openai["verbosity"], "low");

    let generic = chat(body, &Options::default());
    assert_eq!(generic["messages"][0]["role"], "system");
    assert_eq!(generic["max_tokens"], 9);
    for absent in [
        "max_completion_tokens",
        "reasoning_effort",
        "metadata",
        "store",
        "verbosity",
    ] {
        assert!(generic.get(absent).is_none(), "{absent}");
    }
}

#[test]
fn a_named_tool_choice_takes_the_form_the_backend_reads() {
    let body = r#"{"model":"m","input":"x","tool_choice":{"type":"function","name":"b"},
        "tools":[{"type":"function","name":"a","parameters":{"type":"object"}},
                 {"type":"function","name":"b","parameters":{"type":"object"}}]}"#;
    let names = |chat: &Value| -> Vec<String> {
        chat["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // Servers that read Chat's named object get it, with every tool offered.
    let vllm = chat(
        body,
        &Options {
            profile: BackendProfile::vllm(),
            ..Options::default()
        },
    );
    assert_eq!(
        vllm["tool_choice"],
        serde_json::json!({"type": "function", "function": {"name": "b"}})
    );
    assert_eq!(names(&vllm), ["a", "b"]);
    // llama-server reads only the string forms (an object falls back to
    // `auto`): the call is forced by requiring one and offering only `b`.
    for profile in [BackendProfile::llama_cpp(), BackendProfile::generic()] {
        let narrowed = chat(
            body,
            &Options {
                profile,
                ..Options::default()
            },
        );
        assert_eq!(narrowed["tool_choice"], "required");
        assert_eq!(names(&narrowed), ["b"]);
    }
    // Narrowing to a tool that is not there would leave nothing to call.
    let missing = r#"{"model":"m","input":"x","tool_choice":{"type":"function","name":"c"},
        "tools":[{"type":"function","name":"a","parameters":{"type":"object"}}]}"#;
    let error = translate_request(missing.as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(error.param(), Some("tool_choice.name"), "{error}");
}

#[test]
fn stream_asks_for_usage() {
    let c = chat(
        r#"{"model":"m","input":"x","stream":true}"#,
        &Options::default(),
    );
    assert_eq!(c["stream"], true);
    assert_eq!(c["stream_options"]["include_usage"], true);
    let c = chat(r#"{"model":"m","input":"x"}"#, &Options::default());
    assert!(c.get("stream").is_none() && c.get("stream_options").is_none());
}

#[test]
fn codex_stream_and_reasoning_options_are_accepted_without_a_loss() {
    // As Codex sends them: `stream_options.reasoning_summary_delivery`
    // (`sequential_cutoff`, its only value) and `reasoning.context`.
    let request = r#"{"model":"m","input":"x","stream":true,
        "stream_options":{"reasoning_summary_delivery":"sequential_cutoff","include_obfuscation":false},
        "reasoning":{"summary":"auto","context":"current_turn"}}"#;
    for profile in BackendProfile::BUILTIN {
        let options = Options {
            profile: BackendProfile::builtin(profile).unwrap(),
            ..Options::default()
        };
        let translated = translate_request(request.as_bytes(), &options).unwrap();
        assert!(
            translated.losses.is_empty(),
            "{profile}: {:?}",
            translated.losses
        );
        let c: Value = serde_json::from_slice(&translated.body).unwrap();
        // Options of the bridge's own stream: none reaches the backend.
        let sent = c.get("stream_options").cloned().unwrap_or_default();
        assert!(
            sent.get("reasoning_summary_delivery").is_none()
                && sent.get("include_obfuscation").is_none(),
            "{profile}: {sent}"
        );
    }

    // Padding asked for is lost, and an option of no stream is named.
    let request = r#"{"model":"m","input":"x","stream":true,
        "stream_options":{"include_obfuscation":true,"include_usage":true}}"#;
    let translated = translate_request(request.as_bytes(), &Options::default()).unwrap();
    let paths: Vec<&str> = translated.losses.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "stream_options.include_obfuscation",
            "stream_options.include_usage"
        ]
    );
}

#[test]
fn text_is_copied_byte_for_byte() {
    // Escapes are carried through as written, not decoded and re-encoded.
    let c = translate_request(
        br#"{"model":"m","input":"caf\u00e9 \"q\" \ud83d\ude00\n"}"#,
        &Options::default(),
    )
    .unwrap();
    let text = String::from_utf8(c.body).unwrap();
    assert!(
        text.contains(r#""content":"caf\u00e9 \"q\" \ud83d\ude00\n""#),
        "{text}"
    );
}

#[test]
fn web_search_location_is_nested_and_cache_only_search_reported() {
    let body = r#"{"model":"m","input":"news?","tools":[{"type":"web_search","external_web_access":false,"search_context_size":"low",
        "user_location":{"type":"approximate","city":"Paris","country":"FR","timezone":"Europe/Paris"}}]}"#;
    let options = Options {
        profile: BackendProfile::openai(),
        ..Options::default()
    };
    let translated = translate_request(body.as_bytes(), &options).unwrap();
    let chat: Value = serde_json::from_slice(&translated.body).unwrap();
    let location = &chat["web_search_options"]["user_location"];
    assert_eq!(location["type"], "approximate");
    assert_eq!(location["approximate"]["city"], "Paris");
    assert!(location["approximate"].get("type").is_none());
    assert_eq!(chat["web_search_options"]["search_context_size"], "low");
    assert_eq!(translated.losses.paths(), "tools[0].external_web_access");
}

#[test]
fn echoed_tools_carry_what_the_spec_requires() {
    let body = r#"{"model":"m","input":"x","tools":[
        {"type":"function","name":"f"},
        {"type":"function","name":"g","strict":true,"parameters":{"type":"object"}},
        {"type":"namespace","name":"ns","description":"d","tools":[{"type":"function","name":"h","parameters":{}}]}]}"#;
    let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
    let tools: Value = serde_json::from_str(translated.context.echo.tools.get()).unwrap();
    assert_eq!(
        tools[0]["strict"], false,
        "sent to the Chat backend without strict"
    );
    assert!(tools[0]["parameters"].is_null());
    assert!(
        tools[0]["description"].is_null(),
        "a key Open Responses requires"
    );
    assert_eq!(tools[1]["strict"], true);
    assert_eq!(tools[2]["tools"][0]["strict"], false);
    // Complete tools are echoed as sent, byte for byte.
    let complete = r#"{"model":"m","input":"x","tools":[{"type":"function","name":"g","description":"G.","strict":false,"parameters":{"type":"object"}}]}"#;
    let translated = translate_request(complete.as_bytes(), &Options::default()).unwrap();
    assert_eq!(
        translated.context.echo.tools.get(),
        r#"[{"type":"function","name":"g","description":"G.","strict":false,"parameters":{"type":"object"}}]"#
    );
}

#[test]
fn an_empty_user_message_is_refused_under_every_profile() {
    for name in wirebridge_convert::BackendProfile::BUILTIN {
        let options = Options {
            profile: wirebridge_convert::BackendProfile::builtin(name).unwrap(),
            ..Options::default()
        };
        for content in [r#""""#, "[]", r#"[{"type":"input_text","text":""}]"#] {
            let body =
                format!(r#"{{"model":"m","input":[{{"role":"user","content":{content}}}]}}"#);
            let err = translate_request(body.as_bytes(), &options).expect_err(&body);
            assert_eq!(err.param(), Some("input[0].content"), "{name}: {body}");
            assert!(err.to_string().contains("empty"), "{err}");
        }
        // An image alone is content.
        let image = r#"{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x/i.png"}]}]}"#;
        translate_request(image.as_bytes(), &options).unwrap();
    }
}

#[test]
fn loose_assistant_history_is_accepted_and_phase_stays_out_of_chat() {
    // Assistant messages without id or status, with a phase, as clients
    // replaying a conversation send them.
    let body = r#"{"model":"m","input":[
        {"role":"user","content":"hi"},
        {"type":"message","role":"assistant","phase":"commentary","content":[{"type":"output_text","text":"Looking."}]},
        {"role":"assistant","phase":"final_answer","content":"Done."},
        {"role":"user","content":"thanks"}]}"#;
    let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
    assert!(translated.losses.is_empty(), "{:?}", translated.losses);
    let chat: Value = serde_json::from_slice(&translated.body).unwrap();
    let messages = chat["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[1]["content"], "Looking.");
    assert_eq!(messages[2]["content"], "Done.");
    assert!(!String::from_utf8_lossy(&translated.body).contains("phase"));
}
