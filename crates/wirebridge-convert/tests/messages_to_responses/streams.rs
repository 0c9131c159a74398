//! Every recorded Responses stream, translated for a Messages client: the
//! strict Messages grammar holds, and text, thinking, tool calls and usage
//! equal the recording's, however the upstream bytes are split.

use serde_json::Value;
use wirebridge_convert::messages_to_responses::{
    MessagesContext, StreamTranslator, ThinkingDisplay,
};
use wirebridge_testkit::{fixtures, messages_grammar, parse_sse, responses_grammar, SseFrame};

use crate::common::drive;

/// What a Messages client should see of a recorded stream: the content of
/// its output items.
#[derive(Debug, Default, PartialEq)]
pub struct Expected {
    pub text: String,
    /// (thinking, signature) of each reasoning item with something to show
    /// or carry.
    pub thinking: Vec<(String, String)>,
    /// (name, call id, arguments as JSON) of each function call.
    pub calls: Vec<(String, String, Value)>,
}

fn texts(item: &Value, key: &str) -> Vec<String> {
    item[key]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

pub fn expected(output: &[Value], display: ThinkingDisplay) -> Expected {
    let mut e = Expected::default();
    for item in output {
        match item["type"].as_str() {
            Some("message") => {
                for part in item["content"].as_array().into_iter().flatten() {
                    let key = if part["type"] == "refusal" {
                        "refusal"
                    } else {
                        "text"
                    };
                    e.text.push_str(part[key].as_str().unwrap_or(""));
                }
            }
            Some("reasoning") if display != ThinkingDisplay::Off => {
                let mut shown = texts(item, "summary");
                if shown.is_empty() {
                    shown = texts(item, "content");
                }
                let text = match display {
                    ThinkingDisplay::Summarized => shown.join("\n\n"),
                    _ => String::new(),
                };
                let signature = item["encrypted_content"].as_str().unwrap_or("").to_owned();
                if !text.is_empty() || !signature.is_empty() {
                    e.thinking.push((text, signature));
                }
            }
            Some("function_call") => {
                let arguments = item["arguments"].as_str().unwrap_or("");
                let arguments = match arguments {
                    "" => serde_json::json!({}),
                    text => serde_json::from_str(text).unwrap(),
                };
                e.calls.push((
                    item["name"].as_str().unwrap().to_owned(),
                    item["call_id"].as_str().unwrap().to_owned(),
                    arguments,
                ));
            }
            _ => {}
        }
    }
    e
}

/// The carriers of the reasoning items as their `output_item.done` events
/// have them: OpenAI's stream writes a new `encrypted_content` in each
/// event that shows the item (added, done, and the terminal response), and
/// the spec says to carry the done event's.
pub fn done_carriers(frames: &[SseFrame]) -> Vec<String> {
    frames
        .iter()
        .filter_map(|f| serde_json::from_str::<Value>(&f.data).ok())
        .filter(|e| e["type"] == "response.output_item.done" && e["item"]["type"] == "reasoning")
        .map(|e| {
            e["item"]["encrypted_content"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect()
}

/// `expected` with each thinking block's signature the stream's own.
fn expected_of_stream(output: &[Value], frames: &[SseFrame], display: ThinkingDisplay) -> Expected {
    let mut carriers = done_carriers(frames).into_iter().filter(|c| !c.is_empty());
    let mut e = expected(output, display);
    for (_, signature) in &mut e.thinking {
        if !signature.is_empty() {
            *signature = carriers.next().unwrap_or_default();
        }
    }
    e
}

pub fn seen(t: &wirebridge_testkit::MessagesTranscript) -> Expected {
    Expected {
        text: t.text.clone(),
        thinking: t
            .thinking
            .iter()
            .map(|r| (r.thinking.clone(), r.signature.clone()))
            .collect(),
        calls: t
            .tool_calls
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    c.call_id.clone(),
                    serde_json::from_str(&c.arguments).unwrap(),
                )
            })
            .collect(),
    }
}

/// The stop reason a recording comes to.
pub fn stop_reason(recorded: &wirebridge_testkit::ResponsesTranscript) -> &'static str {
    match (
        recorded.status.as_str(),
        recorded.incomplete_reason.as_deref(),
    ) {
        ("incomplete", Some("content_filter")) => "refusal",
        ("incomplete", _) => "max_tokens",
        _ if !recorded.refusal.is_empty() => "refusal",
        _ if !recorded.function_calls.is_empty() => "tool_use",
        _ => "end_turn",
    }
}

/// Anthropic's usage from a recorded Responses usage.
/// `count_thinking`: whether the client asked for thinking tokens (in
/// these tests, whenever it shows thinking at all).
pub fn assert_usage(messages: &Value, responses: &Value, count_thinking: bool, name: &str) {
    let cached = responses["input_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap_or(0);
    let input = responses["input_tokens"].as_u64().unwrap();
    assert_eq!(messages["input_tokens"], input - cached, "{name}: input");
    assert_eq!(
        messages["cache_read_input_tokens"], cached,
        "{name}: cached"
    );
    assert_eq!(
        messages["output_tokens"], responses["output_tokens"],
        "{name}: output"
    );
    let reasoning = responses["output_tokens_details"]["reasoning_tokens"]
        .as_u64()
        .unwrap_or(0);
    if count_thinking {
        assert_eq!(
            messages["output_tokens_details"]["thinking_tokens"], reasoning,
            "{name}: thinking"
        );
    } else {
        assert!(
            messages.get("output_tokens_details").is_none(),
            "{name}: thinking"
        );
    }
}

fn ctx(thinking: ThinkingDisplay) -> MessagesContext {
    MessagesContext {
        model: "claude-sonnet-4-5".into(),
        stream: true,
        thinking,
        declared_tools: None,
        count_thinking: thinking != ThinkingDisplay::Off,
        thread: None,
        diagnostics: None,
        compacted_at: None,
    }
}

fn translate(
    upstream: &[u8],
    thinking: ThinkingDisplay,
    seed: u64,
) -> (Vec<SseFrame>, StreamTranslator) {
    let (out, translator) = drive(StreamTranslator::new(ctx(thinking)), upstream, seed);
    (parse_sse(&out), translator)
}

#[test]
fn every_recorded_responses_stream_translates() {
    let streams = fixtures::responses_streams();
    assert!(streams.len() >= 14, "found {} streams", streams.len());
    for stream in streams {
        let recorded = responses_grammar::transcript_of_recorded(&stream.frames());
        for (seed, display) in [
            (11, ThinkingDisplay::Summarized),
            (12, ThinkingDisplay::Off),
            (13, ThinkingDisplay::Omitted),
            (14, ThinkingDisplay::Summarized),
        ] {
            let name = format!("{} (seed {seed}, {display:?})", stream.name);
            let (frames, translator) = translate(&stream.sse, display, seed);
            let t = messages_grammar::check(&frames).unwrap_or_else(|v| {
                let shown: Vec<_> = frames.iter().map(|f| f.data.as_str()).collect();
                panic!("{name}: {v}\n{}", shown.join("\n"))
            });
            let summary = translator.summary();
            if recorded.status == "failed" {
                let error = t
                    .error
                    .unwrap_or_else(|| panic!("{name}: failure not reported"));
                let message = recorded.error.as_ref().unwrap()["message"].clone();
                assert_eq!(error["message"], message, "{name}");
                assert_eq!(summary.outcome.as_deref(), Some("error"), "{name}");
                continue;
            }
            assert!(t.error.is_none(), "{name}: {:?}", t.error);
            if stream.name.contains("openai-phase") {
                // Recorded with most text deltas removed (see the fixtures'
                // README): its deltas cannot add up to its text. The
                // grammar check above still applies.
                continue;
            }
            let want = expected_of_stream(&recorded.output, &stream.frames(), display);
            assert_eq!(seen(&t), want, "{name}");
            let stop = stop_reason(&recorded);
            assert_eq!(t.stop_reason.as_deref(), Some(stop), "{name}");
            assert_eq!(summary.outcome.as_deref(), Some(stop), "{name}");
            let names: Vec<_> = summary.tool_calls.iter().map(|c| &c.name).collect();
            let called: Vec<_> = t.tool_calls.iter().map(|c| &c.name).collect();
            assert_eq!(names, called, "{name}");
            assert_usage(
                t.usage.as_ref().unwrap(),
                recorded.usage.as_ref().unwrap(),
                display != ThinkingDisplay::Off,
                &name,
            );
            assert!(
                translator
                    .losses()
                    .iter()
                    .all(|l| l.path.starts_with("output[")),
                "{name}: {:?}",
                translator.losses()
            );
        }
    }
}

/// The shortest recorded streams that hold text and a function call, split
/// in two at every byte: each split reads as the whole. (The recorded
/// streams with reasoning are 15 KB and more; the random splits of
/// `every_recorded_responses_stream_translates` cover them.)
#[test]
fn every_split_point_of_a_stream_reads_as_the_whole() {
    let streams = fixtures::responses_streams();
    let mut chosen = Vec::new();
    for kind in ["output_text.delta", "function_call_arguments.delta"] {
        let shortest = streams
            .iter()
            .filter(|s| String::from_utf8_lossy(&s.sse).contains(kind))
            .min_by_key(|s| s.sse.len())
            .unwrap_or_else(|| panic!("no recorded stream has {kind}"));
        chosen.push(shortest);
    }
    for stream in chosen {
        let display = ThinkingDisplay::Summarized;
        let whole = |pieces: &[&[u8]]| {
            let mut sse =
                wirebridge_convert::SseTranslator::new(StreamTranslator::new(ctx(display)));
            let mut out = wirebridge_convert::Frames::sse();
            for piece in pieces {
                sse.feed(piece, &mut out);
            }
            sse.finish(&mut out);
            let frames = parse_sse(out.as_bytes());
            let t =
                messages_grammar::check(&frames).unwrap_or_else(|v| panic!("{}: {v}", stream.name));
            (seen(&t), t.stop_reason, t.usage, t.error.is_some())
        };
        let unsplit = whole(&[&stream.sse]);
        for at in 1..stream.sse.len() {
            let (head, tail) = stream.sse.split_at(at);
            assert_eq!(
                whole(&[head, tail]),
                unsplit,
                "{} split at {at}",
                stream.name
            );
        }
    }
}

#[test]
fn thinking_carries_the_reasoning_and_its_carrier() {
    let stream = fixtures::responses_streams()
        .into_iter()
        .find(|s| s.name.contains("openai-reasoning-encrypted-content.1"))
        .expect("the encrypted reasoning fixture");
    let (frames, _) = translate(&stream.sse, ThinkingDisplay::Summarized, 21);
    let t = messages_grammar::check(&frames).unwrap();
    assert!(!t.thinking.is_empty());
    for thinking in &t.thinking {
        assert!(
            thinking.signature.starts_with("gAAAA"),
            "{}",
            thinking.signature
        );
    }
    assert_eq!(t.blocks[0]["type"], "thinking");
    // A ping follows the first block's start, as in Anthropic's streams.
    let kinds: Vec<_> = frames.iter().map(|f| f.event.as_deref().unwrap()).collect();
    assert_eq!(
        &kinds[..3],
        ["message_start", "content_block_start", "ping"]
    );

    // Without thinking asked for, the client sees none of it.
    let (frames, _) = translate(&stream.sse, ThinkingDisplay::Off, 22);
    let t = messages_grammar::check(&frames).unwrap();
    assert!(t.thinking.is_empty());
    assert!(t.blocks.iter().all(|b| b["type"] != "thinking"));
}

#[test]
fn a_cut_stream_ends_with_an_error_event_after_what_was_said() {
    let stream = fixtures::responses_streams()
        .into_iter()
        .find(|s| s.name.contains("azure__azure-text"))
        .unwrap();
    let middle = stream.sse.len() / 2;
    let boundary = middle
        + stream.sse[middle..]
            .windows(2)
            .position(|w| w == b"\n\n")
            .unwrap()
        + 2;
    let (frames, translator) = translate(&stream.sse[..boundary], ThinkingDisplay::Off, 23);
    let t = messages_grammar::check(&frames).unwrap();
    assert!(!t.text.is_empty(), "the text already sent stays");
    let error = t.error.unwrap();
    assert_eq!(error["type"], "api_error");
    assert!(error["message"].as_str().unwrap().contains("ended before"));
    assert_eq!(translator.summary().outcome.as_deref(), Some("error"));
    // The error comes right after the last text, the block left as it
    // was, as Anthropic's API ends a stream that fails.
    let kinds: Vec<_> = frames
        .iter()
        .rev()
        .take(2)
        .map(|f| f.event.clone().unwrap())
        .collect();
    assert_eq!(kinds, ["error", "content_block_delta"]);
}

#[test]
fn the_error_fixture_becomes_an_error_event() {
    let stream = fixtures::responses_streams()
        .into_iter()
        .find(|s| s.name.contains("openai-error"))
        .unwrap();
    let (frames, _) = translate(&stream.sse, ThinkingDisplay::Off, 24);
    let t = messages_grammar::check(&frames).unwrap();
    let error = t.error.unwrap();
    // OpenAI's `insufficient_quota` is a rate limit in Anthropic's terms.
    assert_eq!(error["type"], "rate_limit_error");
    assert!(error["message"]
        .as_str()
        .unwrap()
        .starts_with("You exceeded your current quota"));
    assert!(!frames
        .iter()
        .any(|f| f.event.as_deref() == Some("message_stop")));
}
