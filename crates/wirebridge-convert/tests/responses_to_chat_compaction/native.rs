//! The same compaction items, sent to a Responses backend that keeps no
//! state: read in place of what they summarize, item by item.

use super::turns::LONG_TURN;
use super::*;
use wirebridge_convert::responses_to_responses;

/// The `input` a native backend is sent for a request with `input` items,
/// and what was lost.
fn native_input(input: Value, options: &Options) -> (Vec<Value>, wirebridge_convert::LossReport) {
    let body = serde_json::to_vec(&json!({"model": "m", "input": input})).unwrap();
    let parsed = ParsedRequest::parse(&body).unwrap();
    let t =
        responses_to_responses::translate_request(parsed, &History::default(), options).unwrap();
    let sent = json(&t.body);
    (sent["input"].as_array().unwrap().clone(), t.losses)
}

fn text_of(item: &Value) -> String {
    match &item["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

#[test]
fn a_native_backend_reads_the_summary_in_place_of_the_compaction_item() {
    let sealer = sealer();
    let (_, compacted) = compact(&sealer, "t");
    let earlier: Vec<Value> = serde_json::from_str(CONVERSATION).unwrap();
    let mut input = earlier;
    input.push(compacted["output"][2].clone());
    input.push(json!({"type":"function_call_output","call_id":"call_1","output":"late"}));
    input.push(json!({"role": "user", "content": "And the hotel?"}));
    let (sent, losses) = native_input(Value::Array(input), &options(&sealer, "t"));
    let texts: Vec<String> = sent.iter().map(text_of).collect();
    assert_eq!(
        texts,
        [
            "Plan a trip to Lisbon in May.".to_owned(),
            "Prefer trains.".to_owned(),
            format!("{SUMMARY_INTRO}{SUMMARY}"),
            "And the hotel?".to_owned(),
        ],
        "the client's messages, the summary, then what follows: {sent:?}"
    );
    assert_eq!(sent[2]["role"], "user");
    assert_eq!(sent[2]["type"], "message");
    assert_eq!(sent[1]["role"], "developer", "kept as written: {sent:?}");
    assert!(
        !serde_json::to_string(&sent)
            .unwrap()
            .contains("encrypted_content"),
        "the sealed carrier never reaches the backend"
    );
    let paths: Vec<&str> = losses.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(
        paths,
        ["input[6]"],
        "the result whose call was compacted away: {losses:?}"
    );
}

#[test]
fn a_native_backend_is_not_sent_a_compaction_it_cannot_read() {
    let sealer = sealer();
    let (_, compacted) = compact(&sealer, "t");
    let mut input: Vec<Value> = serde_json::from_str(CONVERSATION).unwrap();
    input.push(compacted["output"][2].clone());
    input.push(json!({"role": "user", "content": "And the hotel?"}));
    // Another tenant's key cannot open it: the conversation is sent as it
    // was, without the item, and the loss names it.
    let (sent, losses) = native_input(Value::Array(input), &options(&sealer, "other"));
    assert_eq!(sent.len(), 6, "{sent:?}");
    assert!(sent.iter().all(|item| item["type"] != "compaction"));
    let paths: Vec<&str> = losses.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["input[5].encrypted_content"]);
    assert_eq!(
        losses.iter().next().unwrap().kind,
        LossKind::UnsupportedItem
    );
}

#[test]
fn a_conversation_without_compaction_reaches_a_native_backend_as_it_was() {
    let input: Value = serde_json::from_str(CONVERSATION).unwrap();
    let (sent, losses) = native_input(input.clone(), &options(&sealer(), "t"));
    let kinds: Vec<&str> = sent
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "function_call",
            "function_call_output",
            "message"
        ]
    );
    let texts: Vec<String> = sent.iter().map(text_of).collect();
    let written: Vec<String> = input.as_array().unwrap().iter().map(text_of).collect();
    assert_eq!(texts, written);
    assert_eq!(sent[3]["output"], "booked");
    assert!(losses.is_empty(), "{losses:?}");
}

#[test]
fn a_native_turn_compacted_before_its_reply() {
    let sealer = sealer();
    let options = options(&sealer, "t");
    let parsed = ParsedRequest::parse(LONG_TURN.as_bytes()).unwrap();
    let summarize = parsed
        .translate_summary(&History::default(), &options)
        .unwrap();
    let reply = chat_reply(
        SUMMARY,
        json!({"prompt_tokens": 1500, "completion_tokens": 20, "total_tokens": 1520}),
    );
    let summary = summarize.summary(&reply, &seal(&sealer, "t")).unwrap();

    let measured = ParsedRequest::parse(LONG_TURN.as_bytes()).unwrap();
    let measured =
        responses_to_responses::translate_compacting(measured, &History::default(), &options)
            .unwrap();
    let measured = json(&measured.body);
    assert!(
        measured.get("context_management").is_none(),
        "acted on by the bridge: {measured}"
    );
    assert_eq!(measured["input"].as_array().unwrap().len(), 4);

    let parsed = ParsedRequest::parse(LONG_TURN.as_bytes()).unwrap();
    let t = responses_to_responses::translate_compacted(
        parsed,
        &History::default(),
        &options,
        &summary,
    )
    .unwrap();
    let sent = json(&t.body);
    assert!(sent.get("context_management").is_none());
    let texts: Vec<String> = sent["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(text_of)
        .collect();
    assert_eq!(
        texts,
        [
            "Plan a trip.".to_owned(),
            "Book the cheapest.".to_owned(),
            format!("{SUMMARY_INTRO}{SUMMARY}"),
        ]
    );
    // The reply: the compaction item first, then the backend's output.
    let reply = br#"{"id":"b","object":"response","status":"completed","model":"m","output":[
        {"type":"message","id":"x","role":"assistant","status":"completed",
         "content":[{"type":"output_text","text":"Booked.","annotations":[]}]}],
        "usage":{"input_tokens":300,"output_tokens":5,"total_tokens":305}}"#;
    let body = responses_to_responses::translate_body(reply, &t.context).unwrap();
    let response = json(&body.body);
    let output = response["output"].as_array().unwrap();
    assert_eq!(output.len(), 2, "{response}");
    assert_eq!(output[0]["type"], "compaction");
    assert!(output[0]["encrypted_content"].as_str().unwrap().len() > SUMMARY.len());
    assert_eq!(output[1]["content"][0]["text"], "Booked.");
    // Its usage adds the summary's to the reply's.
    assert_eq!(response["usage"]["input_tokens"], 1800);
    assert_eq!(response["usage"]["output_tokens"], 25);
    assert_eq!(response["usage"]["total_tokens"], 1825);
}

#[test]
fn a_trigger_a_native_backend_is_sent_without_compacting_is_reported() {
    let body =
        br#"{"model":"m","input":[{"role":"user","content":"Hi"},{"type":"compaction_trigger"}]}"#;
    let parsed = ParsedRequest::parse(body).unwrap();
    let t =
        responses_to_responses::translate_request(parsed, &History::default(), &Options::default())
            .unwrap();
    let sent = json(&t.body);
    assert_eq!(sent["input"].as_array().unwrap().len(), 1, "{sent}");
    let paths: Vec<&str> = t.losses.iter().map(|l| l.path.as_str()).collect();
    assert_eq!(paths, ["input[1]"]);
}
