//! What the strict checker says about every recorded stream, what the
//! lenient extractor reads from them, and the recordings the other tests
//! corrupt.

use crate::common::*;
use serde_json::json;
use wirebridge_testkit::fixtures;
use wirebridge_testkit::responses_grammar::{self, check, check_with, CheckOptions};
use wirebridge_testkit::{ResponsesTranscript, SseFrame, Violation};

const DIR: &str = "vercel-ai/responses/";

/// What the strict checker says about a recorded stream.
enum Expect {
    /// Real OpenAI output that passes every strict rule.
    Strict,
    /// Real OpenAI output whose `function_call_arguments.done` lacks the
    /// spec-required `name`: OpenAI has omitted it in every recording since
    /// 2025. Passes with `CheckOptions::recorded_openai()`, and strict `check`
    /// rejects it for that reason only.
    NoNameOnArgumentsDone,
    /// Not ground truth: rejected, with a message mentioning this text.
    Rejected(&'static str),
}

/// Every Responses recording and what the strict checker must say about it.
/// A new recording that is not listed here is expected to be real OpenAI
/// output passing `CheckOptions::recorded_openai()`.
fn expectation(name: &str) -> Expect {
    let file = name.strip_prefix(DIR).unwrap_or(name);
    match file {
        // GitHub Copilot, not OpenAI: response and item ids rotate on every
        // event (fixtures README: "Compat quirk").
        "github-copilot-id-rotation.1.chunks.txt" => Expect::Rejected("response id"),
        // Trimmed upstream (sequence_number jumps 5→41, deltas removed, an
        // output_index skipped) and its lifecycle `response` objects were
        // stripped down to a few keys: "use it for item/phase structure only".
        "openai-phase.1.chunks.txt" => Expect::Rejected("missing required key"),
        // llama-server's own Responses endpoint, not OpenAI: no
        // `sequence_number`, `output_index` or `content_index` on any event,
        // and a bare `response` (id, object, status) until it completes.
        "recorded/llama-server/responses-stream-text.sse" => {
            Expect::Rejected("missing `sequence_number`")
        }
        // Function calls (Azure OpenAI and OpenAI): no `name` on arguments.done.
        "azure__azure-tool-call.1.chunks.txt"
        | "issue-19493-gpt-5.1-tool-call.chunks.txt"
        | "openai-issue-11239.1.chunks.txt"
        | "openai-reasoning-encrypted-content.1.chunks.txt#1"
        | "openai-reasoning-encrypted-content.1.chunks.txt#2"
        | "openai-reasoning-encrypted-content.1.chunks.txt#3" => Expect::NoNameOnArgumentsDone,
        // Azure-hosted OpenAI text, real OpenAI text / reasoning / web search
        // (hosted items) / in-stream error.
        "azure__azure-text.1.chunks.txt"
        | "openai-error.1.chunks.txt"
        | "openai-issue-11239.2.chunks.txt"
        | "openai-reasoning-encrypted-content-gpt-5-4-split.1.chunks.txt"
        | "openai-reasoning-encrypted-content.1.chunks.txt#4"
        | "openai-web-search-tool.1.chunks.txt" => Expect::Strict,
        _ => Expect::NoNameOnArgumentsDone,
    }
}

#[test]
fn recorded_streams_meet_their_expectation() {
    let streams = fixtures::responses_streams();
    assert!(streams.len() >= 14);
    for s in streams {
        let frames = s.frames();
        let relaxed = check_with(&frames, &CheckOptions::recorded_openai());
        match expectation(&s.name) {
            Expect::Strict => {
                let t = check(&frames).unwrap_or_else(|v| panic!("{}: {v}", s.name));
                assert_eq!(relaxed.as_ref().ok(), Some(&t), "{}", s.name);
            }
            Expect::NoNameOnArgumentsDone => {
                let t = relaxed.unwrap_or_else(|v| panic!("{}: {v}", s.name));
                assert!(!t.function_calls.is_empty(), "{}", s.name);
                let v = check(&frames).expect_err(&s.name);
                assert!(
                    v.message.contains("function_call_arguments.done")
                        && v.message.contains("name"),
                    "{}: {v}",
                    s.name
                );
                // Adding the name everywhere makes it pass the strict rules.
                let mut fixed = frames.clone();
                let names: Vec<String> = t.function_calls.iter().map(|c| c.name.clone()).collect();
                let mut k = 0;
                for f in fixed.iter_mut() {
                    if f.event.as_deref() == Some("response.function_call_arguments.done") {
                        let mut v = json_of(f);
                        v["name"] = json!(names[k]);
                        k += 1;
                        set_json(f, &v);
                    }
                }
                check(&fixed).unwrap_or_else(|v| panic!("{} with names: {v}", s.name));
            }
            Expect::Rejected(needle) => {
                assert_rejected(relaxed, needle);
                assert_rejected(check(&frames), needle);
            }
        }
    }
}

#[test]
fn transcripts_of_valid_recordings_match_the_lenient_extractor() {
    for s in fixtures::responses_streams() {
        let frames = s.frames();
        let Ok(strict) = check_with(&frames, &CheckOptions::recorded_openai()) else {
            continue;
        };
        let lenient = responses_grammar::transcript_of_recorded(&frames);
        assert_eq!(strict, lenient, "{}", s.name);
    }
}

#[test]
fn transcript_contents_of_known_recordings() {
    let t = check(&frames(&format!(
        "{DIR}openai-reasoning-encrypted-content-gpt-5-4-split.1.chunks.txt"
    )))
    .unwrap();
    assert_eq!(t.status, "completed");
    assert!(t.response_id.starts_with("resp_"));
    assert!(t.reasoning.len() > 1000 && !t.text.is_empty());
    assert_eq!(t.usage.as_ref().unwrap()["total_tokens"], 2697);
    assert_eq!(t.output.len(), 2);

    let t = check_with(
        &frames(&format!("{DIR}openai-issue-11239.1.chunks.txt")),
        &CheckOptions::recorded_openai(),
    )
    .unwrap();
    assert_eq!(t.function_calls.len(), 1);
    let call = &t.function_calls[0];
    assert_eq!(call.name, "lookupVerificationCode");
    assert_eq!(call.call_id, "call_wMUhph1s1bedjPJraJvGw62X");
    assert_eq!(call.arguments, "{\"label\":\"issue-11239\"}");
    assert_eq!(call.item_type, "function_call");

    let t = check(&frames(&format!("{DIR}openai-error.1.chunks.txt"))).unwrap();
    assert_eq!(t.status, "failed");
    assert_eq!(t.error.as_ref().unwrap()["type"], "insufficient_quota");
    assert_eq!(t.error.as_ref().unwrap()["code"], "insufficient_quota");

    let t = check(&frames(&format!(
        "{DIR}openai-web-search-tool.1.chunks.txt"
    )))
    .unwrap();
    assert_eq!(t.output.len(), 14);
    assert!(t.output.iter().any(|o| o["type"] == "web_search_call"));
    assert!(t.text.len() > 1000);
}

#[test]
fn lenient_extractor_handles_quirky_recordings() {
    // GitHub Copilot: rotating ids; content is still complete.
    let f = frames(&format!("{DIR}github-copilot-id-rotation.1.chunks.txt"));
    let t = responses_grammar::transcript_of_recorded(&f);
    assert_eq!(t.response_id, "capture-id-1");
    assert_eq!(t.status, "completed");
    assert!(!t.text.is_empty() && !t.reasoning.is_empty());
    let deltas: String = f
        .iter()
        .map(json_of)
        .filter(|v| v["type"] == "response.output_text.delta")
        .map(|v| v["delta"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(t.text, deltas);

    // openai-phase: deltas were trimmed, the done texts are the truth.
    let f = frames(&format!("{DIR}openai-phase.1.chunks.txt"));
    let t = responses_grammar::transcript_of_recorded(&f);
    let done: String = f
        .iter()
        .map(json_of)
        .filter(|v| v["type"] == "response.output_text.done")
        .map(|v| v["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(t.text, done);
    assert!(t.text.starts_with("Got it"));

    // A stream cut off in the middle of a message, without sequence numbers:
    // the deltas so far are the content.
    let mut f = frames(&format!("{DIR}openai-issue-11239.2.chunks.txt"));
    let cut = nth_event(&f, "response.output_text.delta", 3);
    f.truncate(cut);
    for fr in f.iter_mut() {
        let mut v = json_of(fr);
        v.as_object_mut().unwrap().remove("sequence_number");
        set_json(fr, &v);
    }
    let t = responses_grammar::transcript_of_recorded(&f);
    assert_eq!(t.status, "in_progress");
    assert!(!t.text.is_empty());
    assert_eq!(t.output.len(), 1);
    assert_eq!(
        t.output[0]["content"][0]["text"].as_str(),
        Some(t.text.as_str())
    );
}

// The recordings that the mutation tests corrupt.

/// A text reply.
pub(crate) const TEXT: &str = "vercel-ai/responses/openai-issue-11239.2.chunks.txt";
/// A function call.
pub(crate) const TOOL: &str = "vercel-ai/responses/openai-issue-11239.1.chunks.txt";
/// Reasoning followed by a function call.
pub(crate) const REASONING: &str =
    "vercel-ai/responses/openai-reasoning-encrypted-content.1.chunks.txt#1";
/// A failure reported in the stream.
pub(crate) const ERROR: &str = "vercel-ai/responses/openai-error.1.chunks.txt";

/// The checker with the documented deviations of real OpenAI streams allowed.
pub(crate) fn relaxed(frames: &[SseFrame]) -> Result<ResponsesTranscript, Violation> {
    check_with(frames, &CheckOptions::recorded_openai())
}

#[test]
fn mutation_bases_are_valid() {
    check(&frames(TEXT)).unwrap();
    check(&frames(ERROR)).unwrap();
    relaxed(&frames(TOOL)).unwrap();
    relaxed(&frames(REASONING)).unwrap();
}
