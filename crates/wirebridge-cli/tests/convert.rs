//! `wirebridge convert` over the recorded fixtures: each translates, and
//! translating back gives the same content.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;
use wirebridge_testkit::{chat_grammar, fixtures, parse_sse, responses_grammar};

const BIN: &str = env!("CARGO_BIN_EXE_wirebridge");

/// Runs `wirebridge convert --from KIND -` on `input`: (exit code, stdout, stderr).
fn convert(from: &str, input: &[u8]) -> (i32, Vec<u8>, String) {
    let mut child = Command::new(BIN)
        .args(["convert", "--from", from, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn chat_streams_round_trip() {
    for stream in fixtures::chat_streams() {
        let expected = chat_grammar::transcript_of_recorded(&stream.frames());
        let (code, responses, _) = convert("chat-stream", &stream.sse);
        assert_eq!(code, 0, "{}", stream.name);
        responses_grammar::check(&parse_sse(&responses))
            .unwrap_or_else(|v| panic!("{}: {v}", stream.name));
        let (code, back, _) = convert("responses-stream", &responses);
        assert_eq!(code, 0, "{}", stream.name);
        let t = chat_grammar::check(&parse_sse(&back), true)
            .unwrap_or_else(|v| panic!("{}: {v}", stream.name));
        assert_eq!(t.text, expected.text, "{}", stream.name);
        assert_eq!(t.refusal, expected.refusal, "{}", stream.name);
        let calls = |c: &[wirebridge_testkit::ToolCallRecord]| {
            c.iter()
                .map(|c| (c.name.clone(), c.call_id.clone(), c.arguments.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            calls(&t.tool_calls),
            calls(&expected.tool_calls),
            "{}",
            stream.name
        );
        assert_eq!(
            t.usage.as_ref().map(|u| &u["total_tokens"]),
            expected.usage.as_ref().map(|u| &u["total_tokens"]),
            "{}",
            stream.name
        );
    }
}

#[test]
fn responses_streams_round_trip() {
    for stream in fixtures::responses_streams() {
        let expected = responses_grammar::transcript_of_recorded(&stream.frames());
        let (code, chat, _) = convert("responses-stream", &stream.sse);
        if expected.status == "failed" {
            assert_eq!(code, 1, "{}: a failed stream exits 1", stream.name);
            continue;
        }
        assert_eq!(code, 0, "{}", stream.name);
        let (code, back, _) = convert("chat-stream", &chat);
        assert_eq!(code, 0, "{}", stream.name);
        let t = responses_grammar::check(&parse_sse(&back))
            .unwrap_or_else(|v| panic!("{}: {v}", stream.name));
        if !stream.name.contains("openai-phase") {
            assert_eq!(t.text, expected.text, "{}", stream.name);
        }
        assert_eq!(
            t.function_calls.len(),
            expected.function_calls.len(),
            "{}",
            stream.name
        );
    }
}

#[test]
fn bodies_and_requests_round_trip() {
    for (name, body) in fixtures::chat_bodies() {
        let (code, response, _) = convert("chat-response", &body);
        assert_eq!(code, 0, "{name}");
        let (code, back, _) = convert("responses-response", &response);
        assert_eq!(code, 0, "{name}");
        let (a, b): (Value, Value) = (
            serde_json::from_slice(&body).unwrap(),
            serde_json::from_slice(&back).unwrap(),
        );
        // An empty content beside tool calls (llama-server writes `""`)
        // opens no message item, so it comes back as no content.
        let content = |v: &Value| match &v["choices"][0]["message"]["content"] {
            Value::String(s) if s.is_empty() => Value::Null,
            other => other.clone(),
        };
        assert_eq!(content(&b), content(&a), "{name}");
        assert_eq!(
            b["usage"]["total_tokens"], a["usage"]["total_tokens"],
            "{name}"
        );
    }
    for (name, body) in fixtures::codex_requests() {
        let (code, chat, stderr) = convert("responses-request", &body);
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(stderr.contains("dropped"), "{name}: losses go to stderr");
        let (code, back, _) = convert("chat-request", &chat);
        assert_eq!(code, 0, "{name}");
        let (a, b): (Value, Value) = (
            serde_json::from_slice(&body).unwrap(),
            serde_json::from_slice(&back).unwrap(),
        );
        assert_eq!(b["model"], a["model"]);
        let calls = |v: &Value| {
            v["input"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i["type"] == "function_call")
                .map(|i| i["call_id"].clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(calls(&b), calls(&a), "{name}");
    }
}

#[test]
fn invalid_input_exits_1_with_the_error() {
    let (code, _, stderr) = convert(
        "responses-request",
        br#"{"model":"m","input":[{"role":"wizard","content":"x"}]}"#,
    );
    assert_eq!(code, 1);
    assert!(stderr.contains("input[0].role"), "{stderr}");
    let (code, _, stderr) = convert("chat-response", b"not json");
    assert_eq!(code, 1);
    assert!(!stderr.is_empty());
}
