//! Tests of the strict Responses grammar checker: real OpenAI recordings pass
//! it, known non-OpenAI / trimmed recordings and targeted corruptions fail it.

mod common;

use common::*;
use serde_json::{json, Value};
use wirebridge_testkit::fixtures;
use wirebridge_testkit::responses_grammar::{self, check, check_with, CheckOptions};
use wirebridge_testkit::{SseFrame, Violation};

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

// ---------------------------------------------------------------------------
// Mutations of valid recorded streams.
// ---------------------------------------------------------------------------

const TEXT: &str = "vercel-ai/responses/openai-issue-11239.2.chunks.txt";
const TOOL: &str = "vercel-ai/responses/openai-issue-11239.1.chunks.txt";
const REASONING: &str = "vercel-ai/responses/openai-reasoning-encrypted-content.1.chunks.txt#1";
const ERROR: &str = "vercel-ai/responses/openai-error.1.chunks.txt";

fn relaxed(frames: &[SseFrame]) -> Result<wirebridge_testkit::ResponsesTranscript, Violation> {
    check_with(frames, &CheckOptions::recorded_openai())
}

#[test]
fn mutation_bases_are_valid() {
    check(&frames(TEXT)).unwrap();
    check(&frames(ERROR)).unwrap();
    relaxed(&frames(TOOL)).unwrap();
    relaxed(&frames(REASONING)).unwrap();
}

#[test]
fn rejects_missing_response_created() {
    let mut f = frames(TEXT);
    f.remove(0);
    renumber(&mut f);
    let v = assert_rejected(check(&f), "response.created");
    assert_eq!(v.frame, 0);
}

#[test]
fn rejects_swapped_events() {
    let mut f = frames(TEXT);
    f.swap(0, 1);
    renumber(&mut f);
    assert_rejected(check(&f), "first event must be response.created");

    let mut f = frames(TEXT);
    let added = first_event(&f, "response.content_part.added");
    f.swap(added, added + 1);
    renumber(&mut f);
    assert_rejected(check(&f), "before its content_part.added");

    let mut f = frames(TEXT);
    let done = first_event(&f, "response.output_text.done");
    f.swap(done, done + 1);
    renumber(&mut f);
    assert_rejected(check(&f), "content_part.done before output_text.done");
}

#[test]
fn rejects_bad_sequence_numbers() {
    let mut f = frames(TEXT);
    edit(&mut f, 5, |v| v["sequence_number"] = json!(6));
    let v = assert_rejected(check(&f), "sequence_number");
    assert_eq!(v.frame, 5);

    let mut f = frames(TEXT);
    edit(&mut f, 3, |v| {
        v.as_object_mut().unwrap().remove("sequence_number");
    });
    assert_rejected(check(&f), "sequence_number");
}

#[test]
fn rejects_changed_item_id() {
    let mut f = frames(TEXT);
    let i = nth_event(&f, "response.output_text.delta", 2);
    edit(&mut f, i, |v| v["item_id"] = json!("msg_other"));
    let v = assert_rejected(check(&f), "item_id");
    assert_eq!(v.frame, i);

    let mut f = frames(TOOL);
    let i = first_event(&f, "response.output_item.done");
    edit(&mut f, i, |v| v["item"]["id"] = json!("rs_other"));
    assert_rejected(relaxed(&f), "`id`");
}

#[test]
fn rejects_dropped_deltas() {
    let mut f = frames(TEXT);
    f.remove(nth_event(&f, "response.output_text.delta", 4));
    renumber(&mut f);
    assert_rejected(check(&f), "concatenation of its deltas");

    let mut f = frames(TOOL);
    f.remove(nth_event(&f, "response.function_call_arguments.delta", 1));
    renumber(&mut f);
    assert_rejected(relaxed(&f), "concatenation of its deltas");

    let mut f = frames(REASONING);
    f.remove(nth_event(&f, "response.reasoning_summary_text.delta", 0));
    renumber(&mut f);
    assert_rejected(relaxed(&f), "concatenation of its deltas");
}

#[test]
fn rejects_missing_terminal_event() {
    let mut f = frames(TEXT);
    f.pop();
    let v = assert_rejected(check(&f), "terminal event");
    assert_eq!(v.frame, f.len());

    let mut f = frames(ERROR);
    f.pop();
    assert_rejected(check(&f), "terminal event");
}

#[test]
fn rejects_events_after_the_terminal_event() {
    let mut f = frames(TEXT);
    let extra = f[nth_event(&f, "response.output_text.delta", 0)].clone();
    f.push(extra);
    renumber(&mut f);
    assert_rejected(check(&f), "after the terminal event");

    let mut f = frames(TEXT);
    let again = f.last().unwrap().clone();
    f.push(again);
    renumber(&mut f);
    assert_rejected(check(&f), "after the terminal event");
}

#[test]
fn rejects_interleaved_items() {
    // Item 1 is added before item 0 is done.
    let mut f = frames(TOOL);
    let done0 = first_event(&f, "response.output_item.done");
    let added1 = nth_event(&f, "response.output_item.added", 1);
    assert_eq!(added1, done0 + 1);
    f.swap(done0, added1);
    renumber(&mut f);
    assert_rejected(relaxed(&f), "interleaved");

    // A sub-event of item 1 sent while item 0 is open.
    let mut f = frames(REASONING);
    let first_summary_delta = first_event(&f, "response.reasoning_summary_text.delta");
    let foreign = f[first_event(&f, "response.function_call_arguments.delta")].clone();
    f.insert(first_summary_delta, foreign);
    renumber(&mut f);
    assert_rejected(relaxed(&f), "interleaved");
}

#[test]
fn rejects_other_corruptions() {
    // Event name differs from the JSON type.
    let mut f = frames(TEXT);
    f[3].event = Some("response.output_text.delta".into());
    assert_rejected(check(&f), "does not match");

    // No event name at all.
    let mut f = frames(TEXT);
    f[2].event = None;
    assert_rejected(check(&f), "no `event:`");

    // A [DONE] sentinel.
    let mut f = frames(TEXT);
    f.push(SseFrame::data("[DONE]"));
    assert_rejected(check(&f), "[DONE]");

    // Response id changes in the terminal event.
    let mut f = frames(TEXT);
    let last = f.len() - 1;
    edit(&mut f, last, |v| v["response"]["id"] = json!("resp_other"));
    assert_rejected(check(&f), "differs from the first lifecycle event");

    // The done item's text differs from the streamed text.
    let mut f = frames(TEXT);
    let i = first_event(&f, "response.output_item.done");
    edit(&mut f, i, |v| {
        v["item"]["content"][0]["text"] = json!("something else")
    });
    assert_rejected(check(&f), "differs from the streamed text");

    // response.completed.output differs from the done items.
    let mut f = frames(TOOL);
    let last = f.len() - 1;
    edit(&mut f, last, |v| {
        v["response"]["output"].as_array_mut().unwrap().remove(0);
    });
    assert_rejected(relaxed(&f), "output");
    let mut f = frames(TEXT);
    let last = f.len() - 1;
    edit(&mut f, last, |v| {
        v["response"]["output"][0]["content"][0]["text"] = json!("changed")
    });
    assert_rejected(check(&f), "output[0] differs");

    // output_index skips a number.
    let mut f = frames(TOOL);
    let start = nth_event(&f, "response.output_item.added", 1);
    for i in start..f.len() - 1 {
        edit(&mut f, i, |v| {
            if v.get("output_index").is_some() {
                v["output_index"] = json!(2)
            }
        });
    }
    assert_rejected(relaxed(&f), "output_index 2, expected 1");

    // The added item is not partial.
    let mut f = frames(TOOL);
    let i = nth_event(&f, "response.output_item.added", 1);
    edit(&mut f, i, |v| v["item"]["arguments"] = json!("{}"));
    assert_rejected(relaxed(&f), "just-added");
    let mut f = frames(TEXT);
    let i = first_event(&f, "response.output_item.added");
    edit(&mut f, i, |v| v["item"]["status"] = json!("completed"));
    assert_rejected(check(&f), "in_progress");

    // The done item keeps status in_progress.
    let mut f = frames(TEXT);
    let i = first_event(&f, "response.output_item.done");
    edit(&mut f, i, |v| v["item"]["status"] = json!("in_progress"));
    assert_rejected(check(&f), "status");

    // output_text.delta without logprobs.
    let mut f = frames(TEXT);
    let i = first_event(&f, "response.output_text.delta");
    edit(&mut f, i, |v| {
        v.as_object_mut().unwrap().remove("logprobs");
    });
    assert_rejected(check(&f), "logprobs");

    // Unknown event type.
    let mut f = frames(TEXT);
    let i = first_event(&f, "response.output_text.delta");
    edit(&mut f, i, |v| {
        v["type"] = json!("response.output_text.partial")
    });
    f[i].event = Some("response.output_text.partial".into());
    assert_rejected(check(&f), "unknown event type");

    // A required key of Response missing in response.created.
    let mut f = frames(TEXT);
    edit(&mut f, 0, |v| {
        v["response"].as_object_mut().unwrap().remove("tools");
    });
    assert_rejected(check(&f), "`tools`");

    // Usage without total_tokens.
    let mut f = frames(TEXT);
    let last = f.len() - 1;
    edit(&mut f, last, |v| {
        v["response"]["usage"]
            .as_object_mut()
            .unwrap()
            .remove("total_tokens");
    });
    assert_rejected(check(&f), "total_tokens");

    // An item left open at response.completed.
    let mut f = frames(TEXT);
    f.remove(first_event(&f, "response.output_item.done"));
    renumber(&mut f);
    assert_rejected(check(&f), "still open");

    // A content part never closed.
    let mut f = frames(TEXT);
    f.remove(first_event(&f, "response.content_part.done"));
    renumber(&mut f);
    assert_rejected(check(&f), "no content_part.done");

    // function_call_arguments.done names another function.
    let mut f = frames(TOOL);
    let i = first_event(&f, "response.function_call_arguments.done");
    edit(&mut f, i, |v| v["name"] = json!("other_function"));
    assert_rejected(relaxed(&f), "name");

    // The done item changes the call_id.
    let mut f = frames(TOOL);
    let i = nth_event(&f, "response.output_item.done", 1);
    edit(&mut f, i, |v| v["item"]["call_id"] = json!("call_other"));
    assert_rejected(relaxed(&f), "call_id");

    // Wrong terminal status.
    let mut f = frames(TEXT);
    let last = f.len() - 1;
    edit(&mut f, last, |v| {
        v["response"]["status"] = json!("incomplete")
    });
    assert_rejected(check(&f), "status");
}

#[test]
fn rejects_malformed_failures() {
    // Spec-shaped (flat) error event instead of the nested one.
    let mut f = frames(ERROR);
    edit(&mut f, 2, |v| {
        *v = json!({"type": "error", "sequence_number": 2, "code": "server_error",
                    "message": "boom", "param": null});
    });
    assert_rejected(check(&f), "nest");

    // Nested error without `type`.
    let mut f = frames(ERROR);
    edit(&mut f, 2, |v| {
        v["error"].as_object_mut().unwrap().remove("type");
    });
    assert_rejected(check(&f), "`type`");

    // response.failed without the error event.
    let mut f = frames(ERROR);
    f.remove(2);
    renumber(&mut f);
    assert_rejected(check(&f), "preceded by an `error` event");

    // Something between the error event and response.failed.
    let mut f = frames(ERROR);
    let extra = f[1].clone();
    f.insert(3, extra);
    renumber(&mut f);
    assert_rejected(check(&f), "immediately followed by response.failed");

    // An error event that ends the stream.
    let mut f = frames(ERROR);
    f.pop();
    assert_rejected(check(&f), "terminal");

    // response.failed without error code.
    let mut f = frames(ERROR);
    edit(&mut f, 3, |v| {
        v["response"]["error"]
            .as_object_mut()
            .unwrap()
            .remove("code");
    });
    assert_rejected(check(&f), "code");
}

// ---------------------------------------------------------------------------
// Hand-built streams for shapes the recordings do not cover.
// ---------------------------------------------------------------------------

const RID: &str = "resp_test";

fn lifecycle_start() -> Vec<Value> {
    vec![
        json!({"type": "response.created", "response": response_obj(RID, "in_progress", vec![])}),
        json!({"type": "response.in_progress", "response": response_obj(RID, "in_progress", vec![])}),
    ]
}

fn usage() -> Value {
    json!({"input_tokens": 5, "input_tokens_details": {"cached_tokens": 0},
           "output_tokens": 7, "output_tokens_details": {"reasoning_tokens": 2},
           "total_tokens": 12})
}

fn completed(output: Vec<Value>) -> Value {
    let mut r = response_obj(RID, "completed", output);
    r["usage"] = usage();
    json!({"type": "response.completed", "response": r})
}

/// A message item (index `oi`) with an output_text part and a refusal part.
fn message_events(oi: u64, id: &str, text: &[&str], refusal: &[&str]) -> (Vec<Value>, Value) {
    let full: String = text.concat();
    let full_refusal: String = refusal.concat();
    let mut ev = vec![
        json!({"type": "response.output_item.added", "output_index": oi,
        "item": {"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
    ];
    ev.push(json!({"type": "response.content_part.added", "output_index": oi, "item_id": id,
        "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}}));
    for d in text {
        ev.push(
            json!({"type": "response.output_text.delta", "output_index": oi, "item_id": id,
            "content_index": 0, "delta": d, "logprobs": []}),
        );
    }
    ev.push(
        json!({"type": "response.output_text.done", "output_index": oi, "item_id": id,
        "content_index": 0, "text": full, "logprobs": []}),
    );
    let part0 = json!({"type": "output_text", "text": full, "annotations": [], "logprobs": []});
    ev.push(
        json!({"type": "response.content_part.done", "output_index": oi, "item_id": id,
        "content_index": 0, "part": part0}),
    );
    ev.push(
        json!({"type": "response.content_part.added", "output_index": oi, "item_id": id,
        "content_index": 1, "part": {"type": "refusal", "refusal": ""}}),
    );
    for d in refusal {
        ev.push(
            json!({"type": "response.refusal.delta", "output_index": oi, "item_id": id,
            "content_index": 1, "delta": d}),
        );
    }
    ev.push(
        json!({"type": "response.refusal.done", "output_index": oi, "item_id": id,
        "content_index": 1, "refusal": full_refusal}),
    );
    let part1 = json!({"type": "refusal", "refusal": full_refusal});
    ev.push(
        json!({"type": "response.content_part.done", "output_index": oi, "item_id": id,
        "content_index": 1, "part": part1}),
    );
    let item = json!({"id": id, "type": "message", "status": "completed", "role": "assistant",
        "content": [part0, part1]});
    ev.push(json!({"type": "response.output_item.done", "output_index": oi, "item": item}));
    (ev, item)
}

/// A reasoning item with one summary part and one reasoning_text part.
fn reasoning_events(oi: u64, id: &str) -> (Vec<Value>, Value) {
    let mut ev = vec![
        json!({"type": "response.output_item.added", "output_index": oi,
        "item": {"id": id, "type": "reasoning", "summary": []}}),
    ];
    ev.push(
        json!({"type": "response.reasoning_summary_part.added", "output_index": oi, "item_id": id,
        "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
    );
    for d in ["Thinking ", "hard."] {
        ev.push(
            json!({"type": "response.reasoning_summary_text.delta", "output_index": oi,
            "item_id": id, "summary_index": 0, "delta": d}),
        );
    }
    ev.push(
        json!({"type": "response.reasoning_summary_text.done", "output_index": oi, "item_id": id,
        "summary_index": 0, "text": "Thinking hard."}),
    );
    ev.push(
        json!({"type": "response.reasoning_summary_part.done", "output_index": oi, "item_id": id,
        "summary_index": 0, "part": {"type": "summary_text", "text": "Thinking hard."}}),
    );
    for d in ["raw ", "thoughts"] {
        ev.push(
            json!({"type": "response.reasoning_text.delta", "output_index": oi, "item_id": id,
            "content_index": 0, "delta": d}),
        );
    }
    ev.push(
        json!({"type": "response.reasoning_text.done", "output_index": oi, "item_id": id,
        "content_index": 0, "text": "raw thoughts"}),
    );
    let item = json!({"id": id, "type": "reasoning", "status": "completed",
        "summary": [{"type": "summary_text", "text": "Thinking hard."}],
        "content": [{"type": "reasoning_text", "text": "raw thoughts"}]});
    ev.push(json!({"type": "response.output_item.done", "output_index": oi, "item": item}));
    (ev, item)
}

fn custom_tool_events(oi: u64, id: &str) -> (Vec<Value>, Value) {
    let mut ev = vec![
        json!({"type": "response.output_item.added", "output_index": oi,
        "item": {"id": id, "type": "custom_tool_call", "status": "in_progress",
                 "call_id": "call_custom", "name": "apply_patch", "input": ""}}),
    ];
    for d in ["*** Begin", " Patch"] {
        ev.push(
            json!({"type": "response.custom_tool_call_input.delta", "output_index": oi,
            "item_id": id, "delta": d}),
        );
    }
    ev.push(
        json!({"type": "response.custom_tool_call_input.done", "output_index": oi,
        "item_id": id, "input": "*** Begin Patch"}),
    );
    let item = json!({"id": id, "type": "custom_tool_call", "status": "completed",
        "call_id": "call_custom", "name": "apply_patch", "input": "*** Begin Patch"});
    ev.push(json!({"type": "response.output_item.done", "output_index": oi, "item": item}));
    (ev, item)
}

fn function_events(oi: u64, id: &str, with_name: bool) -> (Vec<Value>, Value) {
    let mut ev = vec![
        json!({"type": "response.output_item.added", "output_index": oi,
        "item": {"id": id, "type": "function_call", "status": "in_progress",
                 "call_id": "call_1", "name": "get_weather", "arguments": ""}}),
    ];
    for d in ["{\"city\":", "\"Paris\"}"] {
        ev.push(
            json!({"type": "response.function_call_arguments.delta", "output_index": oi,
            "item_id": id, "delta": d}),
        );
    }
    let mut done = json!({"type": "response.function_call_arguments.done", "output_index": oi,
        "item_id": id, "arguments": "{\"city\":\"Paris\"}"});
    if with_name {
        done["name"] = json!("get_weather");
    }
    ev.push(done);
    let item = json!({"id": id, "type": "function_call", "status": "completed",
        "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"});
    ev.push(json!({"type": "response.output_item.done", "output_index": oi, "item": item}));
    (ev, item)
}

#[test]
fn accepts_every_core_item_kind() {
    let mut events = lifecycle_start();
    let mut output = Vec::new();
    for (ev, item) in [
        reasoning_events(0, "rs_1"),
        message_events(1, "msg_1", &["Hel", "lo"], &["No", "pe"]),
        function_events(2, "fc_1", true),
        custom_tool_events(3, "ctc_1"),
    ] {
        events.extend(ev);
        output.push(item);
    }
    events.push(completed(output));
    let t = check(&responses_frames(events)).unwrap();
    assert_eq!(t.text, "Hello");
    assert_eq!(t.refusal, "Nope");
    assert_eq!(t.reasoning, "Thinking hard.raw thoughts");
    assert_eq!(t.function_calls.len(), 2);
    assert_eq!(t.function_calls[0].item_type, "function_call");
    assert_eq!(t.function_calls[1].item_type, "custom_tool_call");
    assert_eq!(t.function_calls[1].arguments, "*** Begin Patch");
    assert_eq!(t.usage, Some(usage()));
    assert_eq!(t.output.len(), 4);
    assert_eq!(
        t,
        responses_grammar::transcript_of_recorded(&responses_frames({
            let mut e = lifecycle_start();
            let mut o = Vec::new();
            for (ev, item) in [
                reasoning_events(0, "rs_1"),
                message_events(1, "msg_1", &["Hel", "lo"], &["No", "pe"]),
                function_events(2, "fc_1", true),
                custom_tool_events(3, "ctc_1"),
            ] {
                e.extend(ev);
                o.push(item);
            }
            e.push(completed(o));
            e
        }))
    );
}

#[test]
fn strict_requires_the_name_on_arguments_done() {
    let mut events = lifecycle_start();
    let (ev, item) = function_events(0, "fc_1", false);
    events.extend(ev);
    events.push(completed(vec![item]));
    let f = responses_frames(events);
    assert_rejected(check(&f), "missing `name`");
    relaxed(&f).unwrap();
}

#[test]
fn incomplete_responses() {
    let (mut ev, mut item) = message_events(0, "msg_1", &["Trunc"], &[]);
    // Drop the refusal part: keep added..content_part.done of part 0 only.
    let keep = ev
        .iter()
        .position(|e| e["type"] == "response.content_part.added" && e["content_index"] == 1)
        .unwrap();
    ev.truncate(keep);
    item["status"] = json!("incomplete");
    item["content"].as_array_mut().unwrap().truncate(1);
    ev.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    let mut events = lifecycle_start();
    events.extend(ev);
    let mut r = response_obj(RID, "incomplete", vec![item.clone()]);
    r["incomplete_details"] = json!({"reason": "max_output_tokens"});
    r["usage"] = usage();
    events.push(json!({"type": "response.incomplete", "response": r}));
    let t = check(&responses_frames(events.clone())).unwrap();
    assert_eq!(t.status, "incomplete");
    assert_eq!(t.incomplete_reason.as_deref(), Some("max_output_tokens"));
    assert_eq!(t.text, "Trunc");

    // No reason.
    let mut bad = events.clone();
    bad.last_mut().unwrap()["response"]["incomplete_details"] = json!(null);
    assert_rejected(check(&responses_frames(bad)), "incomplete_details");

    // An incomplete item in a completed response.
    let mut bad = events;
    let last = bad.len() - 1;
    bad[last] = completed(vec![item]);
    assert_rejected(check(&responses_frames(bad)), "incomplete");
}

#[test]
fn failure_in_the_middle_of_an_item() {
    let error = json!({"type": "error", "error": {"type": "server_error", "code": "server_error",
        "message": "upstream disconnected", "param": null}});
    let failed = |output: Vec<Value>| {
        let mut r = response_obj(RID, "failed", output);
        r["error"] = json!({"code": "server_error", "message": "upstream disconnected"});
        json!({"type": "response.failed", "response": r})
    };
    let (ev, _) = message_events(0, "msg_1", &["Par", "tial"], &[]);

    // Left open: what was said would vanish from the failed response.
    let mut open = lifecycle_start();
    open.extend(ev.iter().take(3).cloned()); // added, part added, one delta
    open.push(error.clone());
    open.push(failed(vec![]));
    let f = responses_frames(open);
    assert_rejected(check(&f), "still open");
    let lenient = responses_grammar::transcript_of_recorded(&f);
    assert_eq!(lenient.text, "Par");

    // Closed as incomplete with the text that arrived, and listed.
    let part = json!({"type": "output_text", "text": "Par", "annotations": [], "logprobs": []});
    let item = json!({"id": "msg_1", "type": "message", "status": "incomplete",
        "role": "assistant", "content": [part.clone()]});
    let mut closed = lifecycle_start();
    closed.extend(ev.iter().take(3).cloned());
    closed.push(
        json!({"type": "response.output_text.done", "output_index": 0, "item_id": "msg_1",
        "content_index": 0, "text": "Par", "logprobs": []}),
    );
    closed.push(
        json!({"type": "response.content_part.done", "output_index": 0, "item_id": "msg_1",
        "content_index": 0, "part": part}),
    );
    closed.push(
        json!({"type": "response.output_item.done", "output_index": 0, "item": item.clone()}),
    );
    closed.push(error.clone());
    closed.push(failed(vec![item.clone()]));
    let t = check(&responses_frames(closed.clone())).unwrap();
    assert_eq!(t.status, "failed");
    assert_eq!(t.text, "Par");
    assert_eq!(
        t.error.as_ref().unwrap()["message"],
        "upstream disconnected"
    );

    // Closed but missing from the failed response's output.
    let last = closed.len() - 1;
    closed[last] = failed(vec![]);
    assert_rejected(check(&responses_frames(closed)), "output");
}

#[test]
fn hosted_items_need_only_pairing() {
    let mut events = lifecycle_start();
    let added = json!({"id": "ws_1", "type": "web_search_call", "status": "in_progress"});
    let done = json!({"id": "ws_1", "type": "web_search_call", "status": "completed",
                      "action": {"type": "search", "query": "q"}});
    events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": added}));
    events.push(
        json!({"type": "response.web_search_call.searching", "output_index": 0, "item_id": "ws_1"}),
    );
    events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": done}));
    events.push(completed(vec![done.clone()]));
    check(&responses_frames(events.clone())).unwrap();

    // A message event inside a hosted item is out of place.
    let mut bad = events.clone();
    bad.insert(
        3,
        json!({"type": "response.output_text.delta", "output_index": 0, "item_id": "ws_1",
        "content_index": 0, "delta": "x", "logprobs": []}),
    );
    assert_rejected(check(&responses_frames(bad)), "not valid inside");

    // The done item changes type.
    let mut bad = events;
    bad[4]["item"]["type"] = json!("file_search_call");
    assert_rejected(check(&responses_frames(bad)), "`type`");
}

#[test]
fn reasoning_rules() {
    let (ev, item) = reasoning_events(0, "rs_1");
    let build = |ev: Vec<Value>, item: Value| {
        let mut events = lifecycle_start();
        events.extend(ev);
        events.push(completed(vec![item]));
        responses_frames(events)
    };
    check(&build(ev.clone(), item.clone())).unwrap();

    // summary_index skips.
    let mut bad = ev.clone();
    for e in bad.iter_mut() {
        if e.get("summary_index").is_some() {
            e["summary_index"] = json!(1);
        }
    }
    assert_rejected(
        check(&build(bad, item.clone())),
        "summary_index 1, expected 0",
    );

    // The done item lacks the summary.
    let mut bad_item = item.clone();
    bad_item["summary"] = json!([]);
    let mut bad = ev.clone();
    *bad.last_mut().unwrap() =
        json!({"type": "response.output_item.done", "output_index": 0, "item": bad_item});
    assert_rejected(check(&build(bad, bad_item)), "summary");

    // The summary part is closed before its text is done.
    let mut bad = ev.clone();
    let text_done = bad
        .iter()
        .position(|e| e["type"] == "response.reasoning_summary_text.done")
        .unwrap();
    bad.swap(text_done, text_done + 1);
    assert_rejected(
        check(&build(bad, item)),
        "before reasoning_summary_text.done",
    );
}

#[test]
fn annotations_must_be_indexed_and_carried_over() {
    let f = frames("vercel-ai/responses/openai-web-search-tool.1.chunks.txt");
    check(&f).unwrap();

    let mut bad = f.clone();
    let i = nth_event(&bad, "response.output_text.annotation.added", 3);
    edit(&mut bad, i, |v| v["annotation_index"] = json!(7));
    assert_rejected(check(&bad), "annotation_index");

    let mut bad = f;
    let i = first_event(&bad, "response.content_part.done");
    edit(&mut bad, i, |v| {
        v["part"]["annotations"].as_array_mut().unwrap().pop();
    });
    assert_rejected(check(&bad), "annotations");
}
