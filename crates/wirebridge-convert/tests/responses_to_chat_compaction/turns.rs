//! `POST /responses` turns that ask for compaction: a final trigger, or a
//! `context_management` threshold.

use super::compact::follow_up;
use super::*;

fn ask(body: &str) -> Result<Option<CompactionAsk>, ConvertError> {
    ParsedRequest::parse(body.as_bytes()).unwrap().compaction()
}

#[test]
fn what_a_request_asks_of_compaction_is_checked() {
    assert_eq!(ask(r#"{"model":"m","input":"hi"}"#).unwrap(), None);
    assert_eq!(
        ask(r#"{"model":"m","input":[{"role":"user","content":"hi"},{"type":"compaction_trigger"}]}"#)
            .unwrap(),
        Some(CompactionAsk::Trigger)
    );
    let err = ask(
        r#"{"model":"m","input":[{"role":"user","content":"hi"},{"type":"compaction_trigger"},{"role":"user","content":"more"}]}"#,
    )
    .unwrap_err();
    assert_eq!(err.status(), 400);
    assert_eq!(err.param(), Some("input[1]"));
    assert!(err.to_string().contains("last input item"), "{err}");

    assert_eq!(
        ask(r#"{"model":"m","input":"hi","context_management":[{"type":"compaction","compact_threshold":5000},{"type":"compaction","compact_threshold":2000}]}"#)
            .unwrap(),
        Some(CompactionAsk::Threshold(2000))
    );
    for (body, param) in [
        (
            r#"[{"type":"compaction","compact_threshold":999}]"#,
            "context_management[0].compact_threshold",
        ),
        (
            r#"[{"type":"compaction","compact_threshold":2000},{"type":"compaction","compact_threshold":-1}]"#,
            "context_management[1].compact_threshold",
        ),
        (
            r#"[{"type":"compaction","compact_threshold":"2000"}]"#,
            "context_management[0].compact_threshold",
        ),
        (
            r#"[{"type":"truncation","compact_threshold":2000}]"#,
            "context_management[0].type",
        ),
        (
            r#"[{"compact_threshold":2000}]"#,
            "context_management[0].type",
        ),
        (r#"{"type":"compaction"}"#, "context_management"),
    ] {
        let err = ask(&format!(
            r#"{{"model":"m","input":"hi","context_management":{body}}}"#
        ))
        .unwrap_err();
        assert_eq!(err.status(), 400, "{body}");
        assert_eq!(err.param(), Some(param), "{body}: {err}");
    }
    assert_eq!(
        ask(r#"{"model":"m","input":"hi","context_management":[{"type":"compaction","compact_threshold":null}]}"#)
            .unwrap(),
        None
    );
}

#[test]
fn a_threshold_without_a_value_is_reported_when_compacting() {
    let body = br#"{"model":"m","input":"hi","context_management":[{"type":"compaction","compact_threshold":null}]}"#;
    let t = ParsedRequest::parse(body)
        .unwrap()
        .translate_compacting(&History::default(), &Options::default())
        .unwrap();
    assert_eq!(t.losses.paths(), "context_management[0].compact_threshold");
    // Without a layer that compacts, the whole setting is lost.
    let t = translate_request(body, &Options::default()).unwrap();
    assert_eq!(t.losses.paths(), "context_management");
}

#[test]
fn a_trigger_nobody_acts_on_is_reported() {
    let body =
        br#"{"model":"m","input":[{"role":"user","content":"hi"},{"type":"compaction_trigger"}]}"#;
    let t = translate_request(body, &Options::default()).unwrap();
    assert_eq!(t.losses.paths(), "input[1]");
    assert_eq!(json(&t.body)["messages"].as_array().unwrap().len(), 1);
}

const TRIGGER_TURN: &str = r#"{"model":"m","stream":true,"input":[
    {"role":"user","content":"Plan a trip."},
    {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Where to?"}]},
    {"type":"compaction_trigger"}]}"#;

#[test]
fn a_trigger_turn_answers_with_the_compaction_item_alone() {
    let sealer = sealer();
    let summarize = ParsedRequest::parse(TRIGGER_TURN.as_bytes())
        .unwrap()
        .translate_summary(&History::default(), &options(&sealer, "t"))
        .unwrap();
    assert!(summarize.stream(), "the client asked for a stream");
    let chat = json(&summarize.body);
    assert!(chat.get("stream").is_none());
    let messages = chat["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "the trigger says nothing: {chat}");
    assert_eq!(messages[2]["content"], SUMMARY_PROMPT);

    let reply = chat_reply(
        SUMMARY,
        json!({"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}),
    );
    let summary = summarize.summary(&reply, &seal(&sealer, "t")).unwrap();
    let body = summarize.trigger_reply(&summary);
    let response = json(&body.body);
    assert_eq!(response["object"], "response");
    assert_eq!(response["status"], "completed");
    assert_eq!(response["output"].as_array().unwrap().len(), 1);
    assert_eq!(response["output"][0]["type"], "compaction");
    assert_eq!(response["usage"]["total_tokens"], 52);
    let stem = response["id"].as_str().unwrap().trim_start_matches("resp_");
    assert!(response["output"][0]["id"].as_str().unwrap().contains(stem));

    let mut events = wirebridge_convert::Frames::sse();
    summarize.trigger_events(&body, &mut events);
    let frames = parse_sse(events.as_bytes());
    responses_grammar::check(&frames).unwrap_or_else(|v| panic!("{v}"));
    let kinds: Vec<&str> = frames.iter().map(|f| f.event.as_deref().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.output_item.done",
            "response.completed"
        ]
    );
    let done: Value = serde_json::from_str(&frames[3].data).unwrap();
    assert_eq!(done["item"], response["output"][0]);
    let completed: Value = serde_json::from_str(&frames[4].data).unwrap();
    assert_eq!(completed["response"], response);
}

#[test]
fn a_summary_reply_without_text_is_the_upstreams_failure() {
    let sealer = sealer();
    let summarize = ParsedRequest::parse(TRIGGER_TURN.as_bytes())
        .unwrap()
        .translate_summary(&History::default(), &options(&sealer, "t"))
        .unwrap();
    let err = summarize
        .summary(&chat_reply("  ", json!(null)), &seal(&sealer, "t"))
        .unwrap_err();
    assert_eq!(err.status(), 502);
    let err = summarize
        .summary(
            b"{\"error\":{\"message\":\"overloaded\"}}",
            &seal(&sealer, "t"),
        )
        .unwrap_err();
    assert_eq!(err.status(), 502);
}

pub(super) const LONG_TURN: &str = r#"{"model":"m","stream":true,"context_management":[{"type":"compaction","compact_threshold":1000}],"input":[
    {"role":"user","content":"Plan a trip."},
    {"type":"function_call","call_id":"call_1","name":"search","arguments":"{}"},
    {"type":"function_call_output","call_id":"call_1","output":"many results"},
    {"role":"user","content":"Book the cheapest."}]}"#;

/// A turn compacted before its reply: the summary, and the continuation.
fn compacted_turn(
    sealer: &Arc<Sealer>,
) -> (
    wirebridge_convert::responses_to_chat::TranslatedRequest,
    Value,
) {
    let options = options(sealer, "t");
    let parsed = ParsedRequest::parse(LONG_TURN.as_bytes()).unwrap();
    assert_eq!(
        parsed.compaction().unwrap(),
        Some(CompactionAsk::Threshold(1000))
    );
    let summarize = parsed
        .translate_summary(&History::default(), &options)
        .unwrap();
    let reply = chat_reply(
        SUMMARY,
        json!({"prompt_tokens": 1500, "completion_tokens": 20, "total_tokens": 1520}),
    );
    let summary = summarize.summary(&reply, &seal(sealer, "t")).unwrap();
    let t = ParsedRequest::parse(LONG_TURN.as_bytes())
        .unwrap()
        .translate_compacted(&History::default(), &options, &summary)
        .unwrap();
    assert!(t.losses.is_empty(), "{:?}", t.losses);
    let chat = json(&t.body);
    (t, chat)
}

#[test]
fn a_compacted_turn_reads_the_clients_messages_then_the_summary() {
    let (_, chat) = compacted_turn(&sealer());
    let messages = chat["messages"].as_array().unwrap();
    let contents: Vec<&str> = messages
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        contents,
        [
            "Plan a trip.",
            "Book the cheapest.",
            &format!("{SUMMARY_INTRO}{SUMMARY}")
        ]
    );
    assert_eq!(chat["stream"], true, "the reply itself streams as asked");
}

#[test]
fn a_compacted_turn_puts_the_compaction_first_in_a_body_and_a_stream() {
    let sealer = sealer();
    let (t, _) = compacted_turn(&sealer);
    let reply = chat_reply(
        "Booked.",
        json!({"prompt_tokens": 300, "completion_tokens": 5, "total_tokens": 305}),
    );
    let body = translate_body(&reply, &t.context).unwrap();
    let response = json(&body.body);
    let output = response["output"].as_array().unwrap();
    assert_eq!(output[0]["type"], "compaction");
    assert_eq!(output[1]["type"], "message");
    assert_ne!(output[0]["id"], output[1]["id"]);
    assert_eq!(output[1]["content"][0]["text"], "Booked.");
    assert_eq!(
        response["usage"]["input_tokens"], 1800,
        "both passes counted"
    );
    assert_eq!(response["usage"]["total_tokens"], 1825);
    assert_eq!(body.output.len(), 2, "the store keeps the compaction too");

    let upstream = common::sse(&[
        r#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Booked."}}]}"#,
        r#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":300,"completion_tokens":5,"total_tokens":305}}"#,
        "[DONE]",
    ]);
    let (out, translator) = common::drive(StreamTranslator::new(t.context.clone()), &upstream, 7);
    let frames = parse_sse(&out);
    responses_grammar::check(&frames).unwrap_or_else(|v| panic!("{v}"));
    let events: Vec<Value> = frames
        .iter()
        .map(|f| serde_json::from_str(&f.data).unwrap())
        .collect();
    assert_eq!(events[2]["type"], "response.output_item.added");
    assert_eq!(events[2]["output_index"], 0);
    assert_eq!(events[2]["item"]["type"], "compaction");
    assert_eq!(events[3]["type"], "response.output_item.done");
    assert_eq!(events[4]["type"], "response.output_item.added");
    assert_eq!(events[4]["output_index"], 1);
    let completed = events.last().unwrap();
    assert_eq!(completed["type"], "response.completed");
    assert_eq!(completed["response"]["output"][0], events[3]["item"]);
    assert_eq!(completed["response"]["usage"]["total_tokens"], 1825);
    assert_eq!(translator.finished().unwrap().output.len(), 2);
}

#[test]
fn a_result_whose_call_was_compacted_away_is_dropped_and_reported() {
    let sealer = sealer();
    let (_, compacted) = compact(&sealer, "t");
    let input = json!([
        {"role": "user", "content": "Go."},
        {"type": "function_call", "call_id": "call_9", "name": "book", "arguments": "{}"},
        compacted["output"][2].clone(),
        {"type": "function_call_output", "call_id": "call_9", "output": "late"},
    ]);
    let (messages, losses) = follow_up(input, &options(&sealer, "t"));
    assert_eq!(losses.paths(), "input[3]");
    assert!(messages
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["role"] != "tool" && m.get("tool_calls").is_none()));
}

#[test]
fn the_compaction_page_quotes_the_prompts_as_they_are() {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/compaction.md"
    ))
    .unwrap();
    for text in [SUMMARY_PROMPT, SUMMARY_INTRO] {
        let quoted: Vec<String> = text
            .trim_end()
            .lines()
            .map(|line| match line {
                "" => ">".to_owned(),
                line => format!("> {line}"),
            })
            .collect();
        let quoted = quoted.join("\n");
        assert!(
            page.contains(&quoted),
            "docs/compaction.md does not quote:\n{quoted}"
        );
    }
}

#[test]
fn a_conversation_with_nothing_in_it_is_not_summarized() {
    let sealer = sealer();
    for body in [
        r#"{"model":"m","input":[{"type":"compaction_trigger"}]}"#,
        r#"{"model":"m","input":[]}"#,
    ] {
        let err = ParsedRequest::parse(body.as_bytes())
            .unwrap()
            .translate_summary(&History::default(), &options(&sealer, "t"))
            .unwrap_err();
        assert_eq!(err.status(), 400, "{body}");
        assert_eq!(err.param(), Some("input"), "{body}");
    }
}

#[test]
fn a_compacted_conversation_compacts_again() {
    let sealer = sealer();
    let (_, first) = compact(&sealer, "t");
    let mut input = first["output"].as_array().unwrap().clone();
    input.push(json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":"Trains booked."}]}));
    input.push(json!({"role": "user", "content": "Now the hotel."}));
    let body = serde_json::to_vec(&json!({"model": "m", "input": input})).unwrap();
    let summarize = CompactRequest::parse(&body)
        .unwrap()
        .translate(&History::default(), &options(&sealer, "t"))
        .unwrap();
    let contents: Vec<String> = json(&summarize.body)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(contents.len(), 6, "{contents:?}");
    assert_eq!(
        contents[2],
        format!("{SUMMARY_INTRO}{SUMMARY}"),
        "the earlier summary, read"
    );
    assert_eq!(contents[3], "Trains booked.");
    assert_eq!(contents[5], SUMMARY_PROMPT);

    let reply = chat_reply(
        "Lisbon trip: flights and trains booked; hotel next.",
        json!(null),
    );
    let summary = summarize.summary(&reply, &seal(&sealer, "t")).unwrap();
    let second = json(&summarize.compact_resource(&summary));
    let kinds: Vec<(&str, &str)> = second["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["type"].as_str().unwrap(),
                o["role"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("message", "user"),
            ("message", "developer"),
            ("message", "user"),
            ("compaction", "")
        ],
        "the client's messages, then only the new compaction"
    );
    assert_ne!(
        second["output"][3]["encrypted_content"],
        first["output"][2]["encrypted_content"]
    );
    assert_eq!(
        second["usage"]["total_tokens"], 0,
        "no usage reported: zeros"
    );
}
