//! Errors naming the field, and garbage, truncated and mutated input.

use serde_json::{json, Value};
use wirebridge_convert::chat_to_responses::{translate_request, Options};
use wirebridge_testkit::fixtures;
use wirebridge_testkit::mutate::{mutate, Rng};

use super::{request, user};

#[test]
fn a_schema_nested_too_deep_is_refused_naming_where() {
    let schema = "{\"a\":".repeat(200) + "1" + &"}".repeat(200);
    let body = format!(
        r#"{{"model":"m","messages":[{{"role":"user","content":"hi"}}],"response_format":{{"type":"json_schema","json_schema":{{"name":"s","schema":{schema}}}}}}}"#
    );
    let err = translate_request(body.as_bytes(), &Options::default()).unwrap_err();
    assert_eq!(err.status(), 400);
    assert!(
        err.param()
            .unwrap()
            .starts_with("response_format.json_schema.schema.a.a"),
        "{err}"
    );
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
            request(json!([{"role": "user", "content": ""}]), json!({})),
            "messages[0].content",
        ),
        (
            request(json!([{"role": "user", "content": []}]), json!({})),
            "messages[0].content",
        ),
        (
            request(
                json!([{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": ""}]}]),
                json!({}),
            ),
            "messages[1].content",
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
                _ => rng.next_u64() as u8,
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
