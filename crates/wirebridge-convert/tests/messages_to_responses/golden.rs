//! Whole Messages-to-Responses request translations, compared with golden
//! files in `tests/golden/`: `<name>.responses-request.json` and, for what
//! was dropped, `<name>.losses.txt`. Regenerate with `UPDATE_GOLDEN=1
//! cargo test -p wirebridge-convert --test messages_to_responses` and
//! review the diff.

use serde_json::Value;
use wirebridge_convert::messages_to_responses::{translate_request, Options};

use crate::common::{assert_golden, input};

fn golden(name: &str) -> Value {
    let body = input(&format!("{name}.json"));
    let translated =
        translate_request(&body, &Options::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let responses: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_golden(
        &format!("{name}.responses-request.json"),
        &(serde_json::to_string_pretty(&responses).unwrap() + "\n"),
    );
    let losses: Vec<String> = translated.losses.iter().map(ToString::to_string).collect();
    assert_golden(&format!("{name}.losses.txt"), &(losses.join("\n") + "\n"));
    responses
}

/// A request shaped as Claude Code sends it: two cached system blocks, 12
/// tools, thinking with a budget, `context_management`, `output_config`, a
/// session-long `metadata.user_id`, and a tool loop with signed thinking.
#[test]
fn a_claude_code_request() {
    let responses = golden("messages-claude-code-request");
    assert_eq!(responses["tools"].as_array().unwrap().len(), 12);
    let input = responses["input"].as_array().unwrap();
    // Call ids are kept verbatim, whatever their shape.
    let calls: Vec<_> = input
        .iter()
        .filter(|i| i["type"] == "function_call")
        .map(|i| i["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(calls, ["call_8Kq2", "toolu_01Hx"]);
    let outputs: Vec<_> = input
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(outputs, calls);
    // The signature is carried as the reasoning's carrier, byte for byte.
    assert_eq!(
        input[1]["encrypted_content"],
        "gAAAAABpN1example-carrier-of-the-backend=="
    );
    assert_eq!(responses["reasoning"]["effort"], "high");
}

/// Images, documents, server tools, a forced tool, redacted thinking, a
/// failed tool result with an image, structured output and a prefill.
#[test]
fn a_request_with_every_feature() {
    let responses = golden("messages-request-features");
    assert_eq!(responses["tool_choice"]["name"], "get_weather");
    assert_eq!(responses["parallel_tool_calls"], false);
    assert_eq!(responses["service_tier"], "default");
    assert_eq!(responses["safety_identifier"], "user-1234");
}
