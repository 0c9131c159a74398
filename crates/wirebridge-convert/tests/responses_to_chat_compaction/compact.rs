//! `POST /responses/compact`: the summary request, the compacted output,
//! and the compaction item read back in later requests.

use super::*;

#[test]
fn the_summary_request_is_the_conversation_then_the_prompt_in_one_piece() {
    let sealer = sealer();
    let body = format!(
        r#"{{"model":"m","instructions":"Be brief.","input":{CONVERSATION},"stream":true,"max_output_tokens":50,
            "tools":[{{"type":"function","name":"book","parameters":{{"type":"object"}}}}]}}"#
    );
    let summarize = CompactRequest::parse(body.as_bytes())
        .unwrap()
        .translate(&History::default(), &options(&sealer, "t"))
        .unwrap();
    let chat = json(&summarize.body);
    let messages = chat["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "system", "user"],
        "{chat}"
    );
    assert_eq!(messages[0]["content"], "Be brief.");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(messages.last().unwrap()["content"], SUMMARY_PROMPT);
    // Asked in one piece, as text: no stream, no limit, no tool call.
    assert!(chat.get("stream").is_none(), "{chat}");
    assert!(chat.get("max_tokens").is_none(), "{chat}");
    assert_eq!(chat["tool_choice"], "none");
    assert_eq!(chat["model"], "m");
}

#[test]
fn the_compacted_output_is_the_clients_messages_then_one_sealed_item() {
    let sealer = sealer();
    let (_, compacted) = compact(&sealer, "t");
    assert_eq!(compacted["object"], "response.compaction");
    assert!(compacted["id"].as_str().unwrap().starts_with("resp_"));
    assert!(compacted["created_at"].as_u64().unwrap() > 1_700_000_000);
    let output = compacted["output"].as_array().unwrap();
    assert_eq!(output.len(), 3, "{compacted}");
    assert_eq!(output[0]["type"], "message");
    assert_eq!(output[0]["role"], "user");
    assert_eq!(output[0]["status"], "completed");
    assert_eq!(
        output[0]["content"],
        json!([{"type":"input_text","text":"Plan a trip to Lisbon in May."}])
    );
    assert!(output[0]["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(output[1]["role"], "developer");
    assert_eq!(output[1]["content"][0]["text"], "Prefer trains.");
    let item = &output[2];
    assert_eq!(item["type"], "compaction");
    assert!(item["id"].as_str().unwrap().starts_with("cmp_"));
    let sealed = item["encrypted_content"].as_str().unwrap();
    assert!(sealed.starts_with("wbs1."), "{sealed}");
    assert!(
        !sealed.contains("Lisbon"),
        "the summary is sealed, not shown"
    );
    assert_eq!(
        compacted["usage"],
        json!({"input_tokens":120,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},
               "output_tokens":30,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":150})
    );
}

/// The messages a follow-up request sends, with `input` items.
pub(super) fn follow_up(
    input: Value,
    options: &Options,
) -> (Value, wirebridge_convert::LossReport) {
    let body = serde_json::to_vec(&json!({"model": "m", "input": input})).unwrap();
    let t = translate_request(&body, options).unwrap();
    (json(&t.body)["messages"].clone(), t.losses)
}

#[test]
fn a_follow_up_reads_the_summary_in_place_of_the_compaction_item() {
    let sealer = sealer();
    let (_, compacted) = compact(&sealer, "t");
    let mut input = compacted["output"].as_array().unwrap().clone();
    input.push(json!({"role": "user", "content": "And the hotel?"}));
    let (messages, losses) = follow_up(Value::Array(input), &options(&sealer, "t"));
    assert!(losses.is_empty(), "{losses:?}");
    let messages = messages.as_array().unwrap();
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(messages[0]["content"], "Plan a trip to Lisbon in May.");
    assert_eq!(
        messages[1]["role"], "system",
        "developer, on the generic profile"
    );
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(
        messages[2]["content"],
        format!("{SUMMARY_INTRO}{SUMMARY}"),
        "the summary, introduced"
    );
    assert_eq!(messages[3]["content"], "And the hotel?");
}

#[test]
fn the_latest_compaction_stands_for_the_assistant_turns_before_it() {
    let sealer = sealer();
    let (_, compacted) = compact(&sealer, "t");
    let item = compacted["output"][2].clone();
    let earlier: Vec<Value> = serde_json::from_str(CONVERSATION).unwrap();
    let mut input = earlier.clone();
    input.push(item);
    input.push(json!({"type":"message","role":"assistant","content":[{"type":"output_text","text":"A hotel near the river?"}]}));
    input.push(json!({"role": "user", "content": "Yes."}));
    let (messages, losses) = follow_up(Value::Array(input), &options(&sealer, "t"));
    assert!(losses.is_empty(), "{losses:?}");
    let contents: Vec<String> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(contents[0], "Plan a trip to Lisbon in May.");
    assert_eq!(contents[1], "Prefer trains.");
    assert!(contents[2].ends_with(SUMMARY));
    assert_eq!(contents[3], "A hotel near the river?");
    assert_eq!(contents[4], "Yes.");
    assert_eq!(
        contents.len(),
        5,
        "no call, result or earlier reply: {messages}"
    );
}

#[test]
fn a_compaction_that_does_not_open_is_dropped_and_reported() {
    let sealer = sealer();
    let (_, compacted) = compact(&sealer, "t");
    let good = compacted["output"][2]["encrypted_content"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut tampered = good.clone().into_bytes();
    let at = tampered.len() - 5;
    tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
    let cases = [
        (
            String::from_utf8(tampered).unwrap(),
            options(&sealer, "t"),
            "altered",
        ),
        (
            good.clone(),
            options(&sealer, "another tenant"),
            "another tenant",
        ),
        (
            "gAAAAABpM0Yj-openai".into(),
            options(&sealer, "t"),
            "sealed elsewhere",
        ),
        (good, Options::default(), "no key"),
    ];
    for (sealed, options, case) in cases {
        let input = json!([
            {"role": "user", "content": "Plan a trip."},
            {"type": "compaction", "id": "cmp_1", "encrypted_content": sealed},
            {"role": "user", "content": "And the hotel?"},
        ]);
        let (messages, losses) = follow_up(input, &options);
        let messages = messages.as_array().unwrap();
        assert_eq!(messages.len(), 2, "{case}: {messages:?}");
        assert!(
            !messages
                .iter()
                .any(|m| m["content"].as_str().unwrap().starts_with(SUMMARY_INTRO)),
            "{case}"
        );
        let loss = losses.iter().next().expect(case);
        assert_eq!(loss.kind, LossKind::UnsupportedItem, "{case}");
        assert_eq!(loss.path, "input[1].encrypted_content", "{case}");
    }
}

#[test]
fn the_loss_policy_can_refuse_an_unreadable_compaction() {
    let options = Options {
        policy: wirebridge_convert::LossPolicy::default().with(
            LossKind::UnsupportedItem,
            wirebridge_convert::LossAction::Reject,
        ),
        ..Options::default()
    };
    let body = br#"{"model":"m","input":[{"type":"compaction","encrypted_content":"opaque"},{"role":"user","content":"hi"}]}"#;
    let err = translate_request(body, &options).unwrap_err();
    assert_eq!(err.status(), 400);
    assert_eq!(err.param(), Some("input[0].encrypted_content"));
}

#[test]
fn a_compaction_without_its_carrier_is_a_400_naming_it() {
    let body = br#"{"model":"m","input":[{"role":"user","content":"hi"},{"type":"compaction","id":"cmp_1"}]}"#;
    let err = translate_request(body, &Options::default()).unwrap_err();
    assert!(matches!(err, ConvertError::MissingField(_)), "{err}");
    assert_eq!(err.param(), Some("input[1].encrypted_content"));
}

#[test]
fn a_compact_request_without_a_model_is_a_400_naming_it() {
    let err = CompactRequest::parse(br#"{"input":"hi"}"#).unwrap_err();
    assert_eq!(err.status(), 400);
    assert_eq!(err.param(), Some("model"));
    let err = CompactRequest::parse(br#"{"model":"m","input":7}"#).unwrap_err();
    assert_eq!(err.param(), Some("input"));
}
