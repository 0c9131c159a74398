//! Tests of the strict Chat chunk grammar checker: real OpenAI recordings pass
//! it, Azure / DeepSeek recordings and targeted corruptions fail it.

mod common;

use common::*;
use serde_json::{json, Value};
use wirebridge_testkit::chat_grammar::{self, check};
use wirebridge_testkit::{fixtures, SseFrame};

/// What the strict checker says about a recorded Chat stream.
enum Expect {
    /// Real OpenAI output; passes with this `expect_usage_chunk`.
    Pass { usage: bool },
    /// Not ground truth: rejected with a message mentioning this text.
    Rejected(&'static str),
}

/// Every Chat recording and what the strict checker must say about it. A new
/// recording that is not listed is expected to be real OpenAI output with a
/// usage chunk (every recording so far asked for `include_usage`).
fn expectation(name: &str) -> Expect {
    match name {
        // Azure: a leading chunk with `id: ""`, `object: ""`, `choices: []`
        // and prompt_filter_results. A translator must never emit that.
        "vercel-ai/chat/azure-model-router.1.chunks.txt" => {
            Expect::Rejected("`id` must be a non-empty")
        }
        // DeepSeek on Azure (not OpenAI): `tool_calls: null` and `role: null`
        // in every delta, and `created` changes during the stream.
        "vercel-ai/chat/azure__azure-deepseek-reasoning.1.chunks.txt" => {
            Expect::Rejected("tool_calls must be an array")
        }
        // llama-server (not OpenAI): `created` is the second each chunk
        // was written, so it moves on in streams that last longer than one.
        "recorded/llama-server/chat-stream-codex-turn.sse"
        | "recorded/llama-server/chat-stream-tool-call.sse" => {
            Expect::Rejected("differs from the first chunk's")
        }
        // openai-python (2024, gpt-4o) and vercel-ai openai-text (2026,
        // gpt-4.1-nano): real OpenAI, all recorded with include_usage; and
        // llama-server's text stream, written within one second.
        _ => Expect::Pass { usage: true },
    }
}

#[test]
fn recorded_streams_meet_their_expectation() {
    let streams = fixtures::chat_streams();
    assert!(streams.len() >= 15);
    for s in streams {
        let frames = s.frames();
        match expectation(&s.name) {
            Expect::Pass { usage } => {
                let t = check(&frames, usage).unwrap_or_else(|v| panic!("{}: {v}", s.name));
                // The same stream with the other usage expectation is wrong.
                assert_rejected(check(&frames, !usage), "usage");
                // The strict transcript equals the lenient one.
                assert_eq!(
                    t,
                    chat_grammar::transcript_of_recorded(&frames),
                    "{}",
                    s.name
                );
                assert!(t.finish_reason.is_some(), "{}", s.name);
                assert_eq!(t.usage.is_some(), usage, "{}", s.name);
            }
            Expect::Rejected(needle) => {
                assert_rejected(check(&frames, true), needle);
                assert_rejected(check(&frames, false), needle);
            }
        }
    }
}

#[test]
fn azure_leading_chunk_is_the_only_strict_problem_of_the_model_router_stream() {
    let mut f = frames("vercel-ai/chat/azure-model-router.1.chunks.txt");
    let v = assert_rejected(check(&f, true), "`id`");
    assert_eq!(v.frame, 0);
    f.remove(0);
    check(&f, true).unwrap();
}

#[test]
fn lenient_extractor_reads_quirky_recordings() {
    let f = frames("vercel-ai/chat/azure-model-router.1.chunks.txt");
    let t = chat_grammar::transcript_of_recorded(&f);
    assert_eq!(t.id, "chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt");
    assert!(!t.text.is_empty());
    assert_eq!(t.finish_reason.as_deref(), Some("stop"));
    assert_eq!(t.usage.as_ref().unwrap()["total_tokens"], 93);

    let f = frames("vercel-ai/chat/azure__azure-deepseek-reasoning.1.chunks.txt");
    let t = chat_grammar::transcript_of_recorded(&f);
    assert!(
        t.reasoning.starts_with("We need to"),
        "{}",
        &t.reasoning[..40]
    );
    assert!(!t.text.is_empty());
    assert_eq!(t.usage.as_ref().unwrap()["completion_tokens"], 1720);
    assert!(t.tool_calls.is_empty());

    // n = 3: only choice 0 counts.
    let f = frames("openai-python/chat-stream-n3-choices.sse");
    let t = chat_grammar::transcript_of_recorded(&f);
    assert!(t.text.starts_with("{\"city\":\"San Francisco\""));
    assert_eq!(t.text.matches("city").count(), 1);

    // Fragments without index (some providers): id map, then last index.
    let chunks = vec![
        chunk(
            json!({"role": "assistant", "tool_calls": [{"id": "call_a", "type": "function",
            "function": {"name": "f", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"function": {"name": "", "arguments": "{\"x\""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"id": "call_a", "function": {"arguments": ":1}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
    ];
    let t = chat_grammar::transcript_of_recorded(&chat_frames(chunks));
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].name, "f");
    assert_eq!(t.tool_calls[0].arguments, "{\"x\":1}");
}

#[test]
fn transcripts_of_known_recordings() {
    let t = check(
        &frames("openai-python/chat-stream-parallel-tool-calls.sse"),
        true,
    )
    .unwrap();
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    let names: Vec<&str> = t.tool_calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["GetWeatherArgs", "get_stock_price"]);
    assert_eq!(t.tool_calls[1].call_id, "call_DNYTawLBoN8fj3KN6qU9N1Ou");
    assert_eq!(
        t.tool_calls[1].arguments,
        "{\"ticker\": \"AAPL\", \"exchange\": \"NASDAQ\"}"
    );
    assert_eq!(t.tool_calls[1].item_type, "function_call");

    let t = check(&frames("openai-python/chat-stream-refusal.sse"), true).unwrap();
    assert_eq!(t.refusal, "I'm sorry, I can't assist with that request.");
    assert!(t.text.is_empty());

    let t = check(&frames("openai-python/chat-stream-finish-length.sse"), true).unwrap();
    assert_eq!(t.finish_reason.as_deref(), Some("length"));
    assert_eq!(t.text, "{\"");

    // The stream and the body of the same request agree on the shape.
    let t = check(&frames("vercel-ai/chat/openai-text.chunks.txt"), true).unwrap();
    assert!(t.id.starts_with("chatcmpl-") && t.text.len() > 1000);
    assert_eq!(t.usage.as_ref().unwrap()["completion_tokens"], 300);
}

// ---------------------------------------------------------------------------
// Mutations of valid recorded streams.
// ---------------------------------------------------------------------------

const TEXT: &str = "openai-python/chat-stream-text.sse";
const TOOLS: &str = "openai-python/chat-stream-parallel-tool-calls.sse";

fn first_fragment_of(frames: &[SseFrame], call_index: u64) -> usize {
    frames
        .iter()
        .position(|f| {
            serde_json::from_str::<Value>(&f.data)
                .ok()
                .and_then(|v| v["choices"][0]["delta"]["tool_calls"][0]["index"].as_u64())
                == Some(call_index)
        })
        .unwrap()
}

#[test]
fn rejects_a_second_role() {
    let mut f = frames(TEXT);
    edit(&mut f, 3, |v| {
        v["choices"][0]["delta"]["role"] = json!("assistant")
    });
    let v = assert_rejected(check(&f, true), "role");
    assert_eq!(v.frame, 3);

    let mut f = frames(TEXT);
    edit(&mut f, 0, |v| {
        v["choices"][0]["delta"]
            .as_object_mut()
            .unwrap()
            .remove("role");
    });
    assert_rejected(check(&f, true), "role");
}

#[test]
fn rejects_tool_call_ids_on_later_fragments() {
    let mut f = frames(TOOLS);
    let i = first_fragment_of(&f, 0) + 2;
    edit(&mut f, i, |v| {
        v["choices"][0]["delta"]["tool_calls"][0]["id"] = json!("call_JMW1whyEaYG438VE1OIflxA2")
    });
    let v = assert_rejected(check(&f, true), "repeats `id`");
    assert_eq!(v.frame, i);

    let mut f = frames(TOOLS);
    let i = first_fragment_of(&f, 1) + 1;
    edit(&mut f, i, |v| {
        v["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] = json!("get_stock_price")
    });
    assert_rejected(check(&f, true), "function.name");
}

#[test]
fn rejects_non_dense_tool_indexes() {
    let mut f = frames(TOOLS);
    for i in 0..f.len() {
        edit_if_json(&mut f, i, |v| {
            if v["choices"][0]["delta"]["tool_calls"][0]["index"] == 1 {
                v["choices"][0]["delta"]["tool_calls"][0]["index"] = json!(2);
            }
        });
    }
    assert_rejected(check(&f, true), "not dense");

    // The first call starting at 1.
    let mut f = frames(TOOLS);
    for i in 0..f.len() {
        edit_if_json(&mut f, i, |v| {
            if let Some(n) = v["choices"][0]["delta"]["tool_calls"][0]["index"].as_u64() {
                v["choices"][0]["delta"]["tool_calls"][0]["index"] = json!(n + 1);
            }
        });
    }
    assert_rejected(check(&f, true), "not dense");
}

fn edit_if_json(frames: &mut [SseFrame], i: usize, change: impl FnOnce(&mut Value)) {
    if frames[i].data != "[DONE]" {
        edit(frames, i, change);
    }
}

#[test]
fn rejects_a_missing_done() {
    let mut f = frames(TEXT);
    assert_eq!(f.pop().unwrap().data, "[DONE]");
    let v = assert_rejected(check(&f, true), "[DONE]");
    assert_eq!(v.frame, f.len());
}

#[test]
fn usage_chunk_rules() {
    // A usage chunk that was not asked for.
    assert_rejected(check(&frames(TEXT), false), "unexpected usage chunk");

    // A usage chunk that was asked for but is missing.
    let mut f = frames(TEXT);
    let n = f.len();
    f.remove(n - 2);
    assert_rejected(check(&f, true), "usage chunk");
    check(&f, false).unwrap();

    // Usage chunk with choices.
    let mut f = frames(TEXT);
    let n = f.len();
    edit(&mut f, n - 2, |v| {
        v["choices"] = json!([{"index": 0, "delta": {}, "finish_reason": null}])
    });
    assert_rejected(check(&f, true), "choices: []");

    // Usage chunk before the finish_reason.
    let mut f = frames(TEXT);
    let n = f.len();
    f.swap(n - 3, n - 2);
    assert_rejected(check(&f, true), "before choice 0 got a finish_reason");

    // Usage without total_tokens.
    let mut f = frames(TEXT);
    let n = f.len();
    edit(&mut f, n - 2, |v| {
        v["usage"].as_object_mut().unwrap().remove("total_tokens");
    });
    assert_rejected(check(&f, true), "total_tokens");

    // Two usage chunks.
    let mut f = frames(TEXT);
    let n = f.len();
    let usage = f[n - 2].clone();
    f.insert(n - 1, usage);
    assert_rejected(check(&f, true), "only `[DONE]` may follow the usage chunk");

    // A chunk with empty choices and no usage.
    let mut f = frames(TEXT);
    edit(&mut f, 2, |v| v["choices"] = json!([]));
    assert_rejected(check(&f, true), "empty `choices`");
}

#[test]
fn rejects_other_corruptions() {
    // An event name.
    let mut f = frames(TEXT);
    f[1].event = Some("message".into());
    assert_rejected(check(&f, true), "event");

    // id / created / model change mid-stream.
    for (key, val) in [
        ("id", json!("chatcmpl-other")),
        ("created", json!(1)),
        ("model", json!("gpt-x")),
    ] {
        let mut f = frames(TEXT);
        edit(&mut f, 4, |v| v[key] = val);
        let v = assert_rejected(check(&f, true), "differs from the first chunk");
        assert_eq!(v.frame, 4);
    }

    // Wrong object.
    let mut f = frames(TEXT);
    edit(&mut f, 1, |v| v["object"] = json!("chat.completion"));
    assert_rejected(check(&f, true), "chat.completion.chunk");

    // Missing finish_reason key.
    let mut f = frames(TEXT);
    edit(&mut f, 1, |v| {
        v["choices"][0]
            .as_object_mut()
            .unwrap()
            .remove("finish_reason");
    });
    assert_rejected(check(&f, true), "finish_reason");

    // Two finish_reasons.
    let mut f = frames(TEXT);
    edit(&mut f, 5, |v| {
        v["choices"][0]["finish_reason"] = json!("stop")
    });
    assert_rejected(check(&f, true), "after its finish_reason");

    // Unknown finish_reason.
    let mut f = frames(TEXT);
    let n = f.len();
    edit(&mut f, n - 3, |v| {
        v["choices"][0]["finish_reason"] = json!("eos")
    });
    assert_rejected(check(&f, true), "not one of");

    // `stop` after tool calls, `tool_calls` without any.
    let mut f = frames(TOOLS);
    let n = f.len();
    edit(&mut f, n - 3, |v| {
        v["choices"][0]["finish_reason"] = json!("stop")
    });
    assert_rejected(check(&f, true), "`stop` although tool calls were streamed");
    let mut f = frames(TEXT);
    let n = f.len();
    edit(&mut f, n - 3, |v| {
        v["choices"][0]["finish_reason"] = json!("tool_calls")
    });
    assert_rejected(check(&f, true), "no tool calls were streamed");

    // A first fragment without id / name / type.
    for (path, needle) in [
        ("id", "`id`"),
        ("type", "type"),
        ("function", "function.name"),
    ] {
        let mut f = frames(TOOLS);
        let i = first_fragment_of(&f, 1);
        edit(&mut f, i, |v| {
            v["choices"][0]["delta"]["tool_calls"][0]
                .as_object_mut()
                .unwrap()
                .remove(path);
        });
        assert_rejected(check(&f, true), needle);
    }

    // A chunk after [DONE].
    let mut f = frames(TEXT);
    f.push(f[1].clone());
    assert_rejected(check(&f, true), "after `data: [DONE]`");

    // Not JSON.
    let mut f = frames(TEXT);
    f[2].data = "{not json".into();
    assert_rejected(check(&f, true), "not valid JSON");

    // Content of the wrong type.
    let mut f = frames(TEXT);
    edit(&mut f, 2, |v| {
        v["choices"][0]["delta"]["content"] = json!(["x"])
    });
    assert_rejected(check(&f, true), "delta.content");

    // [DONE] while a choice is unfinished (finish and usage chunks dropped).
    let mut f = frames(TEXT);
    let n = f.len();
    f.drain(n - 3..n - 1);
    assert_rejected(
        check(&f, false),
        "`[DONE]` before choice 0 got a finish_reason",
    );
}

#[test]
fn error_termination() {
    let err = json!({"error": {"message": "upstream went away", "type": "server_error",
                               "param": null, "code": null}});
    let base = vec![
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"content": "Hel"}), None),
    ];

    // Followed by [DONE], as the translators end a failed stream.
    let mut with_done = base.clone();
    with_done.push(err.clone());
    with_done.push(json!("[DONE]"));
    let t = check(&chat_frames(with_done), true).unwrap();
    assert_eq!(t.text, "Hel");
    assert_eq!(t.error.as_ref().unwrap()["message"], "upstream went away");
    assert_eq!(t.finish_reason, None);

    // Without it: a recorded stream may end so (and its transcript has the
    // error), the bridge's may not.
    let mut without_done = base.clone();
    without_done.push(err.clone());
    assert_rejected(
        check(&chat_frames(without_done.clone()), false),
        "stream ended without `data: [DONE]`",
    );
    assert_eq!(
        chat_grammar::transcript_of_recorded(&chat_frames(without_done)).error,
        t.error
    );

    // Something after the error chunk.
    let mut after = base.clone();
    after.push(err);
    after.push(chunk(json!({"content": "lo"}), None));
    assert_rejected(
        check(&chat_frames(after), true),
        "only `[DONE]` may follow an error chunk",
    );

    // An error chunk without a message.
    let mut bad = base;
    bad.push(json!({"error": {"type": "server_error"}}));
    assert_rejected(check(&chat_frames(bad), true), "message");
}

#[test]
fn accepts_hand_built_streams() {
    // Reasoning, content, a tool call whose arguments arrive with the name.
    let chunks = vec![
        chunk(json!({"role": "assistant", "content": null}), None),
        chunk(json!({"reasoning_content": "Let me "}), None),
        chunk(json!({"reasoning_content": "think."}), None),
        chunk(json!({"content": "Calling."}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "f", "arguments": "{\"a\""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": ":1}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
            "function": {"name": "g", "arguments": "{}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        json!("[DONE]"),
    ];
    let t = check(&chat_frames(chunks), false).unwrap();
    assert_eq!(t.reasoning, "Let me think.");
    assert_eq!(t.text, "Calling.");
    assert_eq!(t.tool_calls.len(), 2);
    assert_eq!(t.tool_calls[0].arguments, "{\"a\":1}");
    assert_eq!(t.tool_calls[1].call_id, "call_2");
    assert_eq!(t.id, "chatcmpl-test");
}
