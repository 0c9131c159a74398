//! Keys of a request that the bridge does not read, at any depth: reported
//! by their JSON path on every path that reads the request, refused under
//! a strict policy, and never found in what real clients send.

use serde_json::{json, Value};
use wirebridge_convert::profile::BackendProfile;
use wirebridge_convert::responses_to_chat::{History, Options, ParsedRequest};
use wirebridge_convert::{
    chat_to_responses, responses_to_chat, responses_to_messages, responses_to_responses,
    ConvertError, LossKind, LossPolicy, LossReport,
};
use wirebridge_testkit::fixtures::codex_requests;

/// The recorded Codex turn with a tool call and its result.
fn codex_turn() -> Value {
    let (_, body) = codex_requests()
        .into_iter()
        .find(|(name, _)| name.contains("function_call_output"))
        .expect("the recorded Codex turn with a tool result");
    serde_json::from_slice(&body).unwrap()
}

/// The Codex turn with a key added inside a message item, inside one of
/// its content parts, and inside a function tool; the paths they are at.
fn codex_turn_with_unknown_keys() -> (Value, [&'static str; 3]) {
    let mut turn = codex_turn();
    // The user's own words: a message item of content parts.
    let item = &mut turn["input"][3];
    assert_eq!(item["content"][0]["type"], "input_text", "{item}");
    item["cache_hint"] = json!("warm");
    item["content"][0]["lang"] = json!("en");
    let tool = &mut turn["tools"][0];
    assert_eq!(tool["type"], "function", "{tool}");
    tool["eager_input_streaming"] = json!(true);
    let paths = [
        "input[3].cache_hint",
        "input[3].content[0].lang",
        "tools[0].eager_input_streaming",
    ];
    (turn, paths)
}

fn strict() -> Options {
    Options {
        policy: LossPolicy::strict(),
        ..Options::default()
    }
}

/// The paths reported for keys the bridge does not read.
fn not_read(losses: &LossReport) -> Vec<String> {
    losses
        .iter()
        .filter(|loss| loss.reason.contains("does not read"))
        .map(|loss| {
            assert_eq!(loss.kind, LossKind::UnsupportedParameter, "{loss}");
            loss.path.clone()
        })
        .collect()
}

fn over_chat(request: &Value, options: &Options) -> Result<LossReport, ConvertError> {
    let body = serde_json::to_vec(request).unwrap();
    responses_to_chat::translate_request(&body, options).map(|t| t.losses)
}

fn over_messages(request: &Value, options: &Options) -> Result<LossReport, ConvertError> {
    let body = serde_json::to_vec(request).unwrap();
    responses_to_messages::translate_request(&body, options).map(|t| t.losses)
}

/// What real clients send is all read: the recorded Codex requests report
/// nothing. The same turn with a key added inside an item, a part and a
/// tool reports each by its path, over a Chat and over a Messages backend,
/// and nothing else changes in the report.
#[test]
fn keys_added_to_a_codex_turn_are_reported_by_path_and_nothing_else() {
    for (name, body) in codex_requests() {
        let request: Value = serde_json::from_slice(&body).unwrap();
        for losses in [
            over_chat(&request, &Options::default()).unwrap(),
            over_messages(&request, &Options::default()).unwrap(),
        ] {
            assert_eq!(not_read(&losses), Vec::<String>::new(), "{name}");
        }
    }
    let (turn, paths) = codex_turn_with_unknown_keys();
    type Translate = fn(&Value, &Options) -> Result<LossReport, ConvertError>;
    for (backend, translate) in [
        ("chat", over_chat as Translate),
        ("messages", over_messages as Translate),
    ] {
        let before = translate(&codex_turn(), &Options::default()).unwrap();
        let after = translate(&turn, &Options::default()).unwrap();
        assert_eq!(not_read(&after), paths, "{backend}");
        assert_eq!(after.len(), before.len() + paths.len(), "{backend}");
    }

    // A stateless Responses backend is sent the items as the client wrote
    // them, unknown keys included: nothing is lost, nothing reported.
    let body = serde_json::to_vec(&turn).unwrap();
    let parsed = ParsedRequest::parse(&body).unwrap();
    let t = responses_to_responses::translate_request(parsed, &History::default(), &strict())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(t.losses.is_empty(), "{:?}", t.losses);
    let sent: Value = serde_json::from_slice(&t.body).unwrap();
    assert_eq!(sent["input"][3]["content"][0]["lang"], "en");
}

#[test]
fn a_strict_policy_refuses_a_key_not_read_naming_its_path() {
    for translate in [over_chat, over_messages] {
        let err = translate(&one_part_with_a_key_not_read(), &strict()).unwrap_err();
        assert!(matches!(err, ConvertError::Rejected(_)), "{err}");
        assert_eq!(err.param(), Some("input[0].content[0].lang"));
    }
}

/// A request whose only loss is a key the bridge does not read (the Codex
/// turn has others, which a strict policy refuses first).
fn one_part_with_a_key_not_read() -> Value {
    json!({"model": "m", "input": [{"role": "user",
        "content": [{"type": "input_text", "text": "hi", "lang": "en"}]}]})
}

/// Over a Messages backend the request is the whole conversation, the
/// items the bridge stored among them, with the fields it writes on them:
/// none of those is reported, and a key a client added still is.
#[test]
fn items_the_bridge_stored_report_nothing_over_messages() {
    let request = json!({"model": "m", "input": [
        {"type": "message", "id": "msg_1", "role": "user", "status": "completed",
         "content": [{"type": "input_text", "text": "Weather in SF?"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [],
         "content": [{"type": "reasoning_text", "text": "Look it up."}]},
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "weather",
         "arguments": "{\"city\":\"SF\"}", "status": "completed"},
        {"type": "function_call_output", "id": "fco_1", "call_id": "c1", "output": "sunny",
         "status": "completed"},
        {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
         "phase": "final_answer",
         "content": [{"type": "output_text", "text": "Sunny.", "annotations": [], "logprobs": []}]},
        {"type": "configuration_update", "reasoning": {"effort": "high"}},
        {"role": "user", "content": [{"type": "input_text", "text": "And LA?", "lang": "en"}]}
    ], "tools": [{"type": "function", "name": "weather", "parameters": {"type": "object"}}]});
    let losses = over_messages(&request, &Options::default()).unwrap();
    assert_eq!(not_read(&losses), ["input[6].content[0].lang"]);
}

/// The tool choice, a reasoning item's summary and a custom tool's format
/// are kept raw and read by each translator: a key none of them reads is
/// reported inside them too, over a Chat and over a Messages backend, and
/// those the translators read are not.
#[test]
fn keys_inside_the_tool_choice_a_summary_and_a_custom_format_are_reported() {
    let request = |extra: bool| {
        let mut request = json!({"model": "m", "input": [
            {"role": "user", "content": "Weather in SF?"},
            {"type": "reasoning", "id": "rs_1",
             "summary": [{"type": "summary_text", "text": "Look it up."}]},
            {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "sunny"}
        ], "tools": [
            {"type": "function", "name": "weather", "parameters": {"type": "object"}},
            {"type": "custom", "name": "patch", "format": {"type": "text"}}
        ], "tool_choice": {"type": "function", "name": "weather"}});
        if extra {
            request["input"][1]["summary"][0]["lang"] = json!("en");
            request["tools"][1]["format"]["version"] = json!(2);
            request["tool_choice"]["hint"] = json!("fast");
        }
        request
    };
    // A Chat backend that takes reasoning back is sent the summary of the
    // tool loop's reasoning; a Messages backend reads only thinking it
    // signed, so that loss covers the item, and what is inside it is not
    // reported again.
    let replaying = Options {
        profile: BackendProfile {
            replay_reasoning: true,
            ..BackendProfile::vllm()
        },
        ..Options::default()
    };
    let everything: &[&str] = &[
        "input[1].summary[0].lang",
        "tool_choice.hint",
        "tools[1].format.version",
    ];
    type Translate = fn(&Value, &Options) -> Result<LossReport, ConvertError>;
    for (backend, translate, options, expected) in [
        ("chat", over_chat as Translate, &replaying, everything),
        (
            "messages",
            over_messages,
            &Options::default(),
            &everything[1..],
        ),
    ] {
        let read = translate(&request(false), options).unwrap();
        assert_eq!(not_read(&read), Vec::<String>::new(), "{backend}");
        let added = translate(&request(true), options).unwrap();
        assert_eq!(not_read(&added), expected, "{backend}: {added:?}");
    }
    let chat = over_chat(&request(false), &replaying).unwrap();
    assert!(chat.is_empty(), "the summary is replayed: {chat:?}");
}

#[test]
fn chat_keys_the_bridge_does_not_read_are_reported_by_path() {
    let request = json!({"model": "m", "top_k": 5, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Weather?", "lang": "en"}]},
        {"role": "assistant", "content": null, "cache": true, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}",
             "thought": "t"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"}
    ], "tools": [{"type": "function", "function": {"name": "weather", "parameters": {},
        "examples": []}}]});
    let body = serde_json::to_vec(&request).unwrap();
    let options = chat_to_responses::Options::default();
    let losses = chat_to_responses::translate_request(&body, &options)
        .unwrap()
        .losses;
    assert_eq!(
        not_read(&losses),
        [
            "messages[0].content[0].lang",
            "messages[1].cache",
            "messages[1].tool_calls[0].function.thought",
            "tools[0].function.examples",
            "top_k",
        ]
    );
    let strict = chat_to_responses::Options {
        policy: LossPolicy::strict(),
        ..chat_to_responses::Options::default()
    };
    let err = chat_to_responses::translate_request(&body, &strict).unwrap_err();
    assert_eq!(err.param(), Some("messages[0].content[0].lang"));

    // What a plain request holds is all read.
    let plain = br#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
    let losses = chat_to_responses::translate_request(plain, &options)
        .unwrap()
        .losses;
    assert!(losses.is_empty(), "{losses:?}");
}
