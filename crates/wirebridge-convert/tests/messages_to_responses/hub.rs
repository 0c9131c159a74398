//! Messages clients on Chat backends, through the hub: Messages →
//! Responses → Chat for the request, and Chat → Responses → Messages for
//! the stream, with the existing translators and no pair of their own.

use serde_json::Value;
use wirebridge_convert::messages_to_responses::{
    self, MessagesContext, StreamTranslator, ThinkingDisplay,
};
use wirebridge_convert::responses_to_chat::{self, ResponsesContext};
use wirebridge_convert::{Frames, Framing, SseTranslator};
use wirebridge_testkit::{chat_grammar, fixtures, messages_grammar, parse_sse, split_random};

use crate::common::input;

#[test]
fn a_claude_code_request_reaches_a_chat_backend() {
    let messages = input("messages-claude-code-request.json");
    let responses = messages_to_responses::translate_request(
        &messages,
        &messages_to_responses::Options::default(),
    )
    .unwrap();
    let chat = responses_to_chat::translate_request(
        &responses.body,
        &responses_to_chat::Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let body: Value = serde_json::from_slice(&chat.body).unwrap();
    assert_eq!(body["tools"].as_array().unwrap().len(), 12);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    let ids: Vec<_> = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_8Kq2", "toolu_01Hx"]);
    let answered: Vec<_> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(answered, ids);
    // The Chat leg says what it could not carry: the thinking the default
    // profile does not replay, and the carrier it cannot seal without a key.
    let paths = chat.losses.paths();
    assert!(paths.contains("input[1]"), "{paths}");
    assert!(paths.contains("include[0]"), "{paths}");
}

/// The Responses leg told where the Messages leg copied the client's system
/// prompt, tool descriptions and schemas steps over them and makes the same Chat
/// request, to the byte, as reading them again; a body sent with
/// whitespace notes none, as a copied value then may hold some.
#[test]
fn the_copies_the_messages_leg_notes_are_read_as_they_were_written() {
    let pretty = input("messages-claude-code-request.json");
    let compact = wirebridge_wire::compact(
        serde_json::from_slice::<&serde_json::value::RawValue>(&pretty).unwrap(),
    )
    .get()
    .as_bytes()
    .to_vec();
    let options = responses_to_chat::Options::default();
    for (messages, compact) in [(&compact, true), (&pretty, false)] {
        let responses = messages_to_responses::translate_request(
            messages,
            &messages_to_responses::Options::default(),
        )
        .unwrap();
        // Each tool's description and schema and the instructions, and
        // otherwise only strings (the messages' texts, the calls'
        // arguments, the tool results); from a body sent with whitespace,
        // the strings alone.
        let noted: Vec<&str> = responses
            .copies
            .iter()
            .map(|range| std::str::from_utf8(&responses.body[range.clone()]).unwrap())
            .collect();
        assert!(!noted.is_empty());
        assert_eq!(noted.iter().all(|v| v.starts_with('"')), !compact);
        if compact {
            let written: Written<'_> = serde_json::from_slice(&responses.body).unwrap();
            let mut expected = vec![written.instructions.get()];
            for tool in &written.tools {
                expected.extend([tool.description.get(), tool.parameters.get()]);
            }
            let (strings, others): (Vec<&str>, Vec<&str>) =
                noted.iter().partition(|value| value.starts_with('"'));
            assert_eq!(expected.len(), 25);
            for value in &expected {
                assert!(noted.contains(value), "{value}");
            }
            assert!(strings.len() > 13, "{strings:?}");
            assert!(others.iter().all(|o| expected.contains(o)), "{others:?}");
        }
        // Each function tool's fields noted where they were written, when
        // the client's body was compact: the tools are taken from there.
        assert_eq!(responses.tools.is_some(), compact);
        if let Some(tools) = &responses.tools {
            let written: Written<'_> = serde_json::from_slice(&responses.body).unwrap();
            assert_eq!(tools.tools.len(), written.tools.len());
            let text = |range: &std::ops::Range<usize>| {
                std::str::from_utf8(&responses.body[range.clone()]).unwrap()
            };
            for (noted, tool) in tools.tools.iter().zip(&written.tools) {
                assert_eq!(text(&noted.name), tool.name.get());
                assert_eq!(
                    noted.description.as_ref().map(text),
                    Some(tool.description.get())
                );
                assert_eq!(
                    noted.parameters.as_ref().map(text),
                    Some(tool.parameters.get())
                );
            }
        }
        let chat = |copies, tools| {
            responses_to_chat::ParsedRequest::parse_written(&responses.body, copies, tools)
                .and_then(|parsed| {
                    parsed.translate(&responses_to_chat::History::default(), &options)
                })
                .unwrap()
        };
        let looking = chat(&[], None);
        for knowing in [
            chat(&responses.copies, None),
            chat(&responses.copies, responses.tools.as_ref()),
            chat(&[], responses.tools.as_ref()),
        ] {
            assert_eq!(
                String::from_utf8(knowing.body).unwrap(),
                String::from_utf8(looking.body.clone()).unwrap()
            );
            assert_eq!(knowing.losses.paths(), looking.losses.paths());
        }
    }
}

/// What the Responses request says of its instructions and tools, as
/// written.
#[derive(serde::Deserialize)]
struct Written<'a> {
    #[serde(borrow)]
    instructions: &'a serde_json::value::RawValue,
    #[serde(borrow)]
    tools: Vec<WrittenTool<'a>>,
}

#[derive(serde::Deserialize)]
struct WrittenTool<'a> {
    #[serde(borrow)]
    name: &'a serde_json::value::RawValue,
    #[serde(borrow)]
    description: &'a serde_json::value::RawValue,
    #[serde(borrow)]
    parameters: &'a serde_json::value::RawValue,
}

/// A system turn in the middle of the conversation (Claude Code sends its
/// environment as one, after the first user message) stays in its place:
/// a `system` message on the Responses leg and on the Chat leg, its text
/// whole, nothing reported lost.
#[test]
fn a_system_turn_stays_in_its_place() {
    let request = br##"{"model":"m","max_tokens":100,"system":"You are terse.","messages":[
      {"role":"user","content":[{"type":"text","text":"call Bash with command=ls"}]},
      {"role":"system","content":[{"type":"text","text":"# Environment","cache_control":{"type":"ephemeral"}},{"type":"text","text":"cwd: /src"}]},
      {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a.txt"}]},
      {"role":"system","content":"Plan mode is off."},
      {"role":"system","content":""}]}"##;
    let responses = messages_to_responses::translate_request(
        request,
        &messages_to_responses::Options::default(),
    )
    .unwrap();
    assert!(responses.losses.is_empty(), "{:?}", responses.losses);
    let body: Value = serde_json::from_slice(&responses.body).unwrap();
    let roles: Vec<_> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["role"].as_str().or(i["type"].as_str()).unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "system",
            "function_call",
            "function_call_output",
            "system"
        ]
    );
    let environment = &body["input"][1]["content"];
    assert_eq!(environment[0]["text"], "# Environment");
    assert_eq!(
        environment[0]["prompt_cache_breakpoint"]["mode"],
        "explicit"
    );
    assert_eq!(environment[1]["text"], "cwd: /src");
    assert_eq!(body["input"][4]["content"], "Plan mode is off.");

    let chat = responses_to_chat::translate_request(
        &responses.body,
        &responses_to_chat::Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(chat.losses.is_empty(), "{:?}", chat.losses);
    let body: Value = serde_json::from_slice(&chat.body).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<_> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "system", "assistant", "tool", "system"]
    );
    assert_eq!(messages[0]["content"], "You are terse.");
    assert_eq!(messages[2]["content"], "# Environment\n\ncwd: /src");
    assert_eq!(messages[5]["content"], "Plan mode is off.");
}

/// Drives two translators in a row, the second fed the first's events as
/// they come: in SSE, over bytes split anywhere; in bare JSON, one event at
/// a time, as the tower layers hand them on.
fn chain(
    upstream: &[u8],
    seed: u64,
    thinking: ThinkingDisplay,
    middle: Framing,
) -> (Vec<u8>, StreamTranslator) {
    let mut chat_leg =
        SseTranslator::new(responses_to_chat::StreamTranslator::new(ResponsesContext {
            stream: true,
            ..ResponsesContext::default()
        }));
    let mut messages_leg = SseTranslator::new(StreamTranslator::new(MessagesContext {
        model: "claude-sonnet-4-5".into(),
        stream: true,
        thinking,
        declared_tools: None,
        count_thinking: false,
        thread: None,
        diagnostics: None,
        compacted_at: None,
    }));
    let mut out = Frames::sse();
    let mut middle = Frames::new(middle);
    let mut hand_on = |middle: &mut Frames, out: &mut Frames| {
        if middle.framing().is_json() {
            for event in middle.events() {
                messages_leg.feed_event(event, out);
            }
        } else {
            for part in split_random(middle.as_bytes(), seed + 1) {
                messages_leg.feed(&part, out);
            }
        }
        middle.clear();
    };
    for piece in split_random(upstream, seed) {
        chat_leg.feed(&piece, &mut middle);
        hand_on(&mut middle, &mut out);
    }
    chat_leg.finish(&mut middle);
    hand_on(&mut middle, &mut out);
    messages_leg.finish(&mut out);
    (out.take().bytes, messages_leg.into_translator())
}

/// Deltas handed as records reach a Messages client as the same bytes
/// their JSON events did, and the Responses leg's own stream (SSE, for a
/// Responses client) is unchanged by the framing a Messages leg asked of
/// it elsewhere.
#[test]
fn handed_deltas_give_the_bytes_json_events_give() {
    let streams = fixtures::chat_streams();
    let mut handed = 0;
    for stream in &streams {
        for display in [ThinkingDisplay::Summarized, ThinkingDisplay::Off] {
            let (json, _) = chain(&stream.sse, 61, display, Framing::json());
            let (records, _) = chain(&stream.sse, 61, display, Framing::Handed);
            assert_eq!(
                without_ids(&records),
                without_ids(&json),
                "{} ({display:?})",
                stream.name
            );
        }
        // The middle holds records where JSON had deltas, and nothing
        // else changed.
        let middle = |framing: Framing| {
            let mut leg =
                SseTranslator::new(responses_to_chat::StreamTranslator::new(ResponsesContext {
                    stream: true,
                    ..ResponsesContext::default()
                }));
            let mut frames = Frames::new(framing);
            leg.feed(&stream.sse, &mut frames);
            leg.finish(&mut frames);
            let events: Vec<Vec<u8>> = frames.events().map(<[u8]>::to_vec).collect();
            events
        };
        let (json, records) = (middle(Framing::json()), middle(Framing::Handed));
        assert_eq!(json.len(), records.len(), "{}", stream.name);
        for (json, record) in json.iter().zip(&records) {
            if record.first() != Some(&1) {
                // Two runs: the ids drawn, and the clock read, differ.
                let same = |event: &[u8]| without_times(&without_ids(event));
                assert_eq!(same(record), same(json), "{}", stream.name);
                continue;
            }
            handed += 1;
            // The record's fragment is the event's `delta`, as written.
            #[derive(serde::Deserialize)]
            struct Delta<'a> {
                #[serde(rename = "type")]
                kind: &'a str,
                #[serde(borrow)]
                delta: &'a serde_json::value::RawValue,
            }
            let event: Delta<'_> = serde_json::from_slice(json).unwrap();
            assert!(
                event.kind.ends_with("_text.delta")
                    || event.kind == "response.refusal.delta"
                    || event.kind == "response.function_call_arguments.delta",
                "{}",
                event.kind
            );
            let tail = format!(",{}", event.delta.get());
            assert!(record.ends_with(tail.as_bytes()), "{}", stream.name);
        }
    }
    assert!(handed > 100, "only {handed} deltas were handed");
}

/// `text` with each id the translators draw afresh for a stream (`msg_`,
/// `resp_`, `rs_`, … and 32 hex digits or more: an item's adds its index) as `msg_*`, `resp_*`, ….
fn without_ids(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let mut out = String::with_capacity(text.len());
    let mut rest = &*text;
    while let Some(at) = rest.find('_') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let hex = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
        if hex >= 32 {
            out.push('*');
            rest = &rest[hex..];
        }
    }
    out.push_str(rest);
    out
}

/// `text` with the number after each `"created_at":` and
/// `"completed_at":` as `*`.
fn without_times(text: &str) -> String {
    let mut out = text.to_owned();
    for key in ["\"created_at\":", "\"completed_at\":"] {
        let mut from = 0;
        while let Some(at) = out[from..].find(key) {
            let start = from + at + key.len();
            let digits = out[start..].bytes().take_while(u8::is_ascii_digit).count();
            out.replace_range(start..start + digits, "*");
            from = start;
        }
    }
    out
}

#[test]
fn every_recorded_chat_stream_reaches_a_messages_client() {
    let streams = fixtures::chat_streams();
    assert!(streams.len() >= 10);
    for stream in streams {
        let recorded = chat_grammar::transcript_of_recorded(&stream.frames());
        for (seed, display, middle) in [
            (51, ThinkingDisplay::Summarized, Framing::Sse),
            (52, ThinkingDisplay::Off, Framing::Sse),
            (53, ThinkingDisplay::Summarized, Framing::json()),
            (54, ThinkingDisplay::Off, Framing::json()),
            (55, ThinkingDisplay::Summarized, Framing::Handed),
            (56, ThinkingDisplay::Off, Framing::Handed),
        ] {
            let name = format!("{} ({display:?}, {middle:?})", stream.name);
            let (out, translator) = chain(&stream.sse, seed, display, middle);
            let t = messages_grammar::check(&parse_sse(&out))
                .unwrap_or_else(|v| panic!("{name}: {v}\n{}", String::from_utf8_lossy(&out)));
            if let Some(error) = &recorded.error {
                let sent = t
                    .error
                    .unwrap_or_else(|| panic!("{name}: failure not reported"));
                assert_eq!(sent["message"], error["message"], "{name}");
                continue;
            }
            assert_eq!(t.text, recorded.text.clone() + &recorded.refusal, "{name}");
            let thinking: String = t.thinking.iter().map(|r| r.thinking.as_str()).collect();
            match display {
                ThinkingDisplay::Summarized => assert_eq!(thinking, recorded.reasoning, "{name}"),
                _ => assert!(t.thinking.is_empty(), "{name}"),
            }
            let calls: Vec<_> = t
                .tool_calls
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        c.call_id.clone(),
                        serde_json::from_str::<Value>(&c.arguments).unwrap(),
                    )
                })
                .collect();
            let want: Vec<_> = recorded
                .tool_calls
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        c.call_id.clone(),
                        serde_json::from_str::<Value>(&c.arguments).unwrap(),
                    )
                })
                .collect();
            assert_eq!(calls, want, "{name}");
            let stop = match recorded.finish_reason.as_deref() {
                Some("length") => "max_tokens",
                Some("content_filter") => "refusal",
                _ if !recorded.refusal.is_empty() => "refusal",
                _ if !want.is_empty() => "tool_use",
                _ => "end_turn",
            };
            assert_eq!(t.stop_reason.as_deref(), Some(stop), "{name}");
            if let Some(usage) = &recorded.usage {
                let sent = t.usage.unwrap();
                let cached = usage["prompt_tokens_details"]["cached_tokens"]
                    .as_u64()
                    .unwrap_or(0);
                let prompt = usage["prompt_tokens"].as_u64().unwrap();
                assert_eq!(sent["input_tokens"], prompt - cached, "{name}");
                assert_eq!(sent["output_tokens"], usage["completion_tokens"], "{name}");
            }
            assert!(translator.is_finished(), "{name}");
        }
    }
}
