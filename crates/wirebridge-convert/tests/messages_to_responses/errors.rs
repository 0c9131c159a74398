//! Requests that cannot be translated: each error names its field, in
//! Anthropic's error shape.

use serde_json::Value;
use wirebridge_convert::messages_to_responses::{error_body, translate_request, Options};
use wirebridge_convert::{LossKind, LossPolicy};

fn refused(body: &str) -> (String, Value) {
    let err = translate_request(body.as_bytes(), &Options::default())
        .err()
        .unwrap_or_else(|| panic!("translated: {body}"));
    let (status, bytes) = error_body(&err);
    assert_eq!(status, 400, "{body}");
    let shaped: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(shaped["type"], "error");
    assert_eq!(shaped["error"]["type"], "invalid_request_error");
    (err.param().unwrap_or_default().to_owned(), shaped)
}

const USER: &str = r#"[{"role":"user","content":"Hi"}]"#;

fn with(extra: &str) -> String {
    format!(r#"{{"model":"m","max_tokens":100,"messages":{USER}{extra}}}"#)
}

#[test]
fn every_refusal_names_its_field() {
    let cases: Vec<(String, &str)> = vec![
        (r#"{"max_tokens":1,"messages":[]}"#.into(), "model"),
        (format!(r#"{{"model":"m","messages":{USER}}}"#), "max_tokens"),
        (r#"{"model":"m","max_tokens":1}"#.into(), "messages"),
        (r#"{"model":"m","max_tokens":1,"messages":[]}"#.into(), "messages"),
        (r#"{"model":"m","max_tokens":"many","messages":[]}"#.into(), "max_tokens"),
        (
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"tool","content":"x"}]}"#.into(),
            "messages[0].role",
        ),
        (
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"Hi"},{"role":"system","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}"#.into(),
            "messages[1].content[0].type",
        ),
        (
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":""}]}"#.into(),
            "messages[0].content",
        ),
        (
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"AA=="}}]}]}"#.into(),
            "messages[0].content[0].source.media_type",
        ),
        (
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"ftp"}}]}]}"#.into(),
            "messages[0].content[0].source.type",
        ),
        (
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":5}]}]}"#.into(),
            "messages[0].content[0].text",
        ),
        (
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","content":"ok"}]}]}"#.into(),
            "messages[0].content[0].tool_use_id",
        ),
        (
            // A result answering no call: the Responses request it would
            // become is refused too, naming its own `input[0].call_id`.
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"ok"}]}]}"#.into(),
            "messages[0].content[0].tool_use_id",
        ),
        (
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"Go"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"},{"type":"tool_result","tool_use_id":"toolu_2","content":"ok"}]}]}"#.into(),
            "messages[2].content[1].tool_use_id",
        ),
        (
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]}]}"#.into(),
            "messages[0].content[0].id",
        ),
        (
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}"#.into(),
            "messages[0].content[0].type",
        ),
        (
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"thinking","signature":"s"}]}]}"#.into(),
            "messages[0].content[0].thinking",
        ),
        (with(r#","system":[{"type":"image"}]"#), "system[0].type"),
        (with(r#","tools":[{"name":"f"}]"#), "tools[0].input_schema"),
        (with(r#","tools":[{"input_schema":{}}]"#), "tools[0].name"),
        (with(r#","tool_choice":{"type":"tool"}"#), "tool_choice.name"),
        (with(r#","tool_choice":{"type":"some"}"#), "tool_choice.type"),
        (with(r#","thinking":{"type":"enabled"}"#), "thinking.budget_tokens"),
        (with(r#","thinking":{"type":"maybe"}"#), "thinking.type"),
        (with(r#","thinking":{"type":"enabled","budget_tokens":2048,"display":"loud"}"#), "thinking.display"),
        (with(r#","output_config":{"effort":"extreme"}"#), "output_config.effort"),
        (with(r#","output_config":{"format":{"type":"json_schema"}}"#), "output_config.format.schema"),
        (with(r#","service_tier":"gold""#), "service_tier"),
    ];
    for (body, field) in cases {
        let (param, shaped) = refused(&body);
        assert_eq!(param, field, "{body}");
        let message = shaped["error"]["message"].as_str().unwrap();
        assert!(message.contains(field), "{body}: {message}");
    }
}

#[test]
fn a_strict_policy_refuses_each_loss_by_name() {
    let strict = Options {
        policy: LossPolicy::strict(),
    };
    for (extra, field) in [
        (r#","top_k":5"#, "top_k"),
        (r#","stop_sequences":["END"]"#, "stop_sequences"),
        (
            r#","tools":[{"type":"web_search_20250305","name":"web_search"}]"#,
            "tools[0]",
        ),
        (
            r#","context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}"#,
            "context_management.edits[0]",
        ),
        (
            r#","tools":[{"name":"lookup","input_schema":{"type":"object"},"defer_loading":true}]"#,
            "tools[0].defer_loading",
        ),
    ] {
        let err = translate_request(with(extra).as_bytes(), &strict).unwrap_err();
        assert_eq!(err.param(), Some(field), "{extra}");
        let (status, body) = error_body(&err);
        assert_eq!(status, 400);
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert!(body["error"]["message"].as_str().unwrap().contains(field));
    }
    // What changes nothing is no loss: no stop sequences, an edit that
    // keeps all thinking.
    let quiet = with(
        r#","stop_sequences":[],"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]}"#,
    );
    assert!(translate_request(quiet.as_bytes(), &strict).is_ok());
    // The default policy drops and reports instead.
    let lenient = translate_request(with(r#","top_k":5"#).as_bytes(), &Options::default()).unwrap();
    assert_eq!(
        lenient.losses.iter().next().unwrap().kind,
        LossKind::SamplingParameter
    );
    // A deferred tool is reported, and offered all the same.
    let deferred = with(
        r#","tools":[{"name":"lookup","input_schema":{"type":"object"},"defer_loading":true}]"#,
    );
    let lenient = translate_request(deferred.as_bytes(), &Options::default()).unwrap();
    let loss = lenient.losses.iter().next().unwrap();
    assert_eq!(
        (loss.kind, loss.path.as_str()),
        (LossKind::UnsupportedParameter, "tools[0].defer_loading")
    );
    let body: Value = serde_json::from_slice(&lenient.body).unwrap();
    assert_eq!(body["tools"][0]["name"], "lookup");
}

#[test]
fn a_string_source_is_refused_for_an_image() {
    // A search result's source is a URL string; an image's is an object.
    let image = r#"{"model":"m","max_tokens":100,"messages":[{"role":"user","content":[{"type":"image","source":"https://example.com/a.png"}]}]}"#;
    let (param, shaped) = refused(image);
    assert_eq!(param, "messages[0].content[0].source");
    assert!(shaped["error"]["message"]
        .as_str()
        .unwrap()
        .contains("not a string"));
}

#[test]
fn deep_and_broken_bodies_are_refused() {
    let deep = format!(
        r#"{{"model":"m","max_tokens":1,"metadata":{}{}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let err = translate_request(deep.as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(err.status(), 400);
    assert!(translate_request(b"not json", &Options::default()).is_err());
}

/// The first structured-outputs beta's `output_format` is read as
/// `output_config.format` is; both at once is refused, not one chosen.
#[test]
fn the_older_output_format_is_read_once() {
    let schema = r#"{"type":"json_schema","schema":{"type":"object"}}"#;
    let older = with(&format!(r#","output_format":{schema}"#));
    let translated = translate_request(older.as_bytes(), &Options::default()).unwrap();
    let body: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_eq!(body["text"]["format"]["type"], "json_schema");
    assert_eq!(body["text"]["format"]["schema"]["type"], "object");
    assert!(translated.losses.is_empty());

    let both = with(&format!(
        r#","output_format":{schema},"output_config":{{"format":{schema}}}"#
    ));
    let err = translate_request(both.as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(err.param(), Some("output_format"));
    let broken = with(r#","output_format":{"type":"regex"}"#);
    let err = translate_request(broken.as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(err.param(), Some("output_format.type"));
}
