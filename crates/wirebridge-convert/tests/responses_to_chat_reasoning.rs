//! Reasoning a Responses client can show and send back: summary or text
//! output, sealed `encrypted_content` replayed across a stateless tool loop,
//! which turns are replayed, and efforts the backend does not take.

mod common;

use std::sync::Arc;

use serde_json::{json, Value};
use wirebridge_convert::profile::BackendProfile;
use wirebridge_convert::responses_to_chat::{
    translate_body, translate_request, Options, ReasoningOutput, ResponsesContext, Seal,
};
use wirebridge_convert::seal::{SealKey, Sealer};
use wirebridge_convert::LossKind;
use wirebridge_testkit::{parse_sse, responses_grammar};

const REASONING_THEN_CALL: &str = concat!(
    r#"data: {"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"List the "}}]}"#,
    "\n\n",
    r#"data: {"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{"reasoning_content":"files \"first\"."}}]}"#,
    "\n\n",
    r#"data: {"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}}]}}]}"#,
    "\n\n",
    r#"data: {"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
    "\n\ndata: [DONE]\n\n",
);

const TOOLS: &str = r#"[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}},"strict":false}]"#;

fn seal(scope: &str, sealer: &Arc<Sealer>) -> Seal {
    Seal {
        sealer: sealer.clone(),
        scope: scope.into(),
    }
}

fn replaying(profile: BackendProfile) -> BackendProfile {
    BackendProfile {
        replay_reasoning: true,
        ..profile
    }
}

fn first_turn(reasoning: &str, options: &Options) -> ResponsesContext {
    let body = format!(
        r#"{{"model":"m","input":"list files","tools":{TOOLS},"reasoning":{reasoning},"store":false,"include":["reasoning.encrypted_content"],"stream":true}}"#
    );
    translate_request(body.as_bytes(), options).unwrap().context
}

/// The stream's events and the finished response.
fn stream(ctx: ResponsesContext) -> (Vec<Value>, Value) {
    let (out, translator) = common::translate_stream(REASONING_THEN_CALL.as_bytes(), ctx, 3);
    let frames = parse_sse(&out);
    responses_grammar::check(&frames).unwrap_or_else(|v| panic!("{v}"));
    let events = frames
        .iter()
        .map(|f| serde_json::from_str(&f.data).unwrap())
        .collect();
    let finished = serde_json::from_str(translator.finished_response().unwrap().get()).unwrap();
    (events, finished)
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[test]
fn a_summary_request_gets_summary_parts_and_otherwise_reasoning_text() {
    let options = Options::default();
    let (events, finished) = stream(first_turn(r#"{"summary":"auto"}"#, &options));
    assert!(types(&events).contains(&"response.reasoning_summary_text.delta"));
    assert!(!types(&events).contains(&"response.reasoning_text.delta"));
    assert_eq!(
        finished["output"][0]["summary"][0]["text"],
        "List the files \"first\"."
    );

    let (events, finished) = stream(first_turn(r#"{"effort":"low"}"#, &options));
    assert!(types(&events).contains(&"response.reasoning_text.delta"));
    assert_eq!(
        finished["output"][0]["content"][0]["text"],
        "List the files \"first\"."
    );

    // Forced by the setting, or by the profile, whatever the request says.
    let text = Options {
        reasoning_output: ReasoningOutput::Text,
        ..Options::default()
    };
    let body = r#"{"model":"m","input":"x","reasoning":{"summary":"detailed"}}"#;
    let translated = translate_request(body.as_bytes(), &text).unwrap();
    assert_eq!(translated.context.reasoning_output, ReasoningOutput::Text);
    assert!(translated
        .losses
        .iter()
        .any(|l| l.path == "reasoning.summary" && l.kind == LossKind::ReasoningSetting));
    let profile = Options {
        profile: BackendProfile {
            reasoning_output: ReasoningOutput::Summary,
            ..BackendProfile::vllm()
        },
        ..Options::default()
    };
    let body = r#"{"model":"m","input":"x"}"#;
    let translated = translate_request(body.as_bytes(), &profile).unwrap();
    assert_eq!(
        translated.context.reasoning_output,
        ReasoningOutput::Summary
    );
}

/// The second request of a stateless tool loop, as Codex sends it: the
/// reasoning item it got (with `encrypted_content`), the call, its output.
fn second_turn(reasoning_item: &Value) -> String {
    let mut item = reasoning_item.clone();
    item.as_object_mut().unwrap().remove("id");
    json!({
        "model": "m",
        "store": false,
        "include": ["reasoning.encrypted_content"],
        "tools": serde_json::from_str::<Value>(TOOLS).unwrap(),
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
            item,
            {"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"}
        ]
    })
    .to_string()
}

#[test]
fn sealed_reasoning_is_replayed_on_the_next_turn_of_the_tool_loop() {
    let sealer = Arc::new(Sealer::new(SealKey::generate(), Vec::new()));
    let options = Options {
        profile: replaying(BackendProfile::vllm()),
        seal: Some(seal("tenant-a", &sealer)),
        ..Options::default()
    };
    let (events, finished) = stream(first_turn(r#"{"summary":"auto"}"#, &options));
    let item = &finished["output"][0];
    let sealed = item["encrypted_content"].as_str().unwrap();
    assert!(sealed.starts_with("wbs1."), "{sealed}");
    assert!(!sealed.contains("List"), "the carrier hides the text");
    // It travels in output_item.done and the finished response alike.
    let done = events
        .iter()
        .find(|e| e["type"] == "response.output_item.done" && e["item"]["type"] == "reasoning")
        .unwrap();
    assert_eq!(done["item"]["encrypted_content"], sealed);

    // The client keeps only the carrier: the summary is stripped, so the
    // replay can only come from it.
    let mut carrier_only = item.clone();
    carrier_only["summary"] = json!([]);
    let next = translate_request(second_turn(&carrier_only).as_bytes(), &options).unwrap();
    let chat: Value = serde_json::from_slice(&next.body).unwrap();
    let assistant = &chat["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["reasoning_content"], "List the files \"first\".");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
    assert!(next.losses.is_empty(), "{:?}", next.losses);

    // Another tenant, a tampered carrier, a forgotten key: reported, and
    // the visible summary is replayed instead.
    let other_tenant = Options {
        seal: Some(seal("tenant-b", &sealer)),
        ..options.clone()
    };
    let mut tampered = item.clone();
    let mut bytes = sealed.to_owned().into_bytes();
    let last = bytes.len() - 2;
    bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
    tampered["encrypted_content"] = json!(String::from_utf8(bytes).unwrap());
    let forgotten = Options {
        seal: Some(seal(
            "tenant-a",
            &Arc::new(Sealer::new(SealKey::generate(), Vec::new())),
        )),
        ..options.clone()
    };
    for (opts, item, why) in [
        (&other_tenant, item, "another tenant"),
        (&options, &tampered, "tampered"),
        (&forgotten, item, "a key the bridge no longer has"),
    ] {
        let next = translate_request(second_turn(item).as_bytes(), opts).unwrap();
        let losses: Vec<_> = next.losses.iter().collect();
        assert_eq!(losses.len(), 1, "{why}: {losses:?}");
        assert_eq!(losses[0].path, "input[1].encrypted_content", "{why}");
        assert_eq!(losses[0].kind, LossKind::ReasoningHistory, "{why}");
        let chat: Value = serde_json::from_slice(&next.body).unwrap();
        assert_eq!(
            chat["messages"][1]["reasoning_content"], "List the files \"first\".",
            "{why}: the summary is replayed"
        );
        assert!(
            !String::from_utf8_lossy(&next.body).contains("wbs1."),
            "{why}"
        );
    }
}

#[test]
fn a_body_carries_sealed_reasoning_too() {
    let sealer = Arc::new(Sealer::new(SealKey::generate(), Vec::new()));
    let options = Options {
        seal: Some(seal("t", &sealer)),
        ..Options::default()
    };
    let ctx = first_turn(r#"{"effort":"low"}"#, &options);
    let body = br#"{"id":"c","choices":[{"index":0,"message":{"role":"assistant","reasoning_content":"Think.","content":"Done."},"finish_reason":"stop"}]}"#;
    let reply = translate_body(body, &ctx).unwrap();
    let response: Value = serde_json::from_slice(&reply.body).unwrap();
    let sealed = response["output"][0]["encrypted_content"].as_str().unwrap();
    assert_eq!(
        sealer
            .open(wirebridge_convert::seal::Purpose::Reasoning, "t", sealed)
            .unwrap(),
        br#""Think.""#
    );

    // Without `include`, no carrier.
    let body_request = r#"{"model":"m","input":"x"}"#;
    let ctx = translate_request(body_request.as_bytes(), &options)
        .unwrap()
        .context;
    let reply = translate_body(body, &ctx).unwrap();
    let response: Value = serde_json::from_slice(&reply.body).unwrap();
    assert!(response["output"][0].get("encrypted_content").is_none());
}

#[test]
fn only_the_current_turn_is_replayed_unless_all_turns_are_asked_for() {
    let options = Options {
        profile: replaying(BackendProfile::vllm()),
        ..Options::default()
    };
    let request = |context: &str| {
        json!({
            "model": "m",
            "reasoning": {"context": context},
            "input": [
                {"role": "user", "content": "first"},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "old thought"}]},
                {"role": "assistant", "content": "first answer"},
                {"role": "user", "content": "second"},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "new thought"}]},
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "ok"}
            ]
        })
        .to_string()
    };
    let replayed = |context: &str| -> Vec<Value> {
        let t = translate_request(request(context).as_bytes(), &options).unwrap();
        assert!(t.losses.is_empty(), "{context}: {:?}", t.losses);
        let chat: Value = serde_json::from_slice(&t.body).unwrap();
        chat["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "assistant")
            .map(|m| m["reasoning_content"].clone())
            .collect()
    };
    assert_eq!(
        replayed("current_turn"),
        [Value::Null, json!("new thought")]
    );
    assert_eq!(replayed("auto"), [Value::Null, json!("new thought")]);
    assert_eq!(
        replayed("all_turns"),
        [json!("old thought"), json!("new thought")]
    );

    // A backend that replays nothing: the setting is no loss of its own;
    // each reasoning item withheld is (and is listed in the response).
    let t = translate_request(request("all_turns").as_bytes(), &Options::default()).unwrap();
    let paths: Vec<&str> = t.losses.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["input[1]", "input[4]"]);
    let err = translate_request(request("sometimes").as_bytes(), &options).unwrap_err();
    assert_eq!(err.param(), Some("reasoning.context"));
}

#[test]
fn efforts_the_backend_does_not_take_are_clamped_and_reported() {
    let options = Options {
        profile: BackendProfile::vllm(),
        ..Options::default()
    };
    for (asked, sent) in [
        ("low", "low"),
        ("xhigh", "high"),
        ("max", "high"),
        ("minimal", "low"),
        ("none", "low"),
    ] {
        let body = format!(r#"{{"model":"m","input":"x","reasoning":{{"effort":"{asked}"}}}}"#);
        let t = translate_request(body.as_bytes(), &options).unwrap();
        let chat: Value = serde_json::from_slice(&t.body).unwrap();
        assert_eq!(chat["reasoning_effort"], sent, "{asked}");
        let reported = t.losses.iter().any(|l| l.path == "reasoning.effort");
        assert_eq!(reported, asked != sent, "{asked}");
        // The response repeats what was asked.
        let echo: Value = serde_json::from_str(t.context.echo.reasoning.unwrap().get()).unwrap();
        assert_eq!(echo["effort"], asked);
    }
}
