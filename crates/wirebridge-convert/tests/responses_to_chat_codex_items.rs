//! Items of Codex's own history in `input`: `configuration_update`,
//! `agent_message` and `context_compaction`. None is ever refused for its
//! type: what the model reads in it is sent, the rest is left out.

use std::sync::Arc;

use serde_json::{json, Value};
use wirebridge_convert::responses_to_chat::compaction::{CompactRequest, SUMMARY_INTRO};
use wirebridge_convert::responses_to_chat::{translate_request, History, Options, Seal};
use wirebridge_convert::seal::{SealKey, Sealer};
use wirebridge_convert::{LossKind, LossPolicy};

/// The messages a request with `input` sends, and the paths it lost.
fn translate(input: Value, options: &Options) -> (Vec<Value>, Vec<(LossKind, String)>) {
    let body = serde_json::to_vec(&json!({"model": "m", "input": input})).unwrap();
    let t = translate_request(&body, options).unwrap_or_else(|e| panic!("{e}"));
    let chat: Value = serde_json::from_slice(&t.body).unwrap();
    let losses = t.losses.iter().map(|l| (l.kind, l.path.clone())).collect();
    (chat["messages"].as_array().unwrap().clone(), losses)
}

/// Under the policy that rejects every loss: what is left out here is no
/// loss, so no policy can turn it into a 400.
fn strict() -> Options {
    Options {
        policy: LossPolicy::strict(),
        ..Options::default()
    }
}

#[test]
fn a_configuration_update_is_left_out_without_a_loss() {
    // Codex's shape: the reasoning effort for the turns after it.
    let input = json!([
        {"role": "user", "content": "hi"},
        {"type": "configuration_update", "reasoning": {"effort": "high"}},
        {"type": "configuration_update", "id": "cu_1",
         "text": {"format": {"type": "text"}}, "agent": {"agent_name": "/root"}},
        {"role": "user", "content": "go on"}
    ]);
    let (messages, losses) = translate(input, &strict());
    assert!(losses.is_empty(), "{losses:?}");
    assert_eq!(
        messages,
        [
            json!({"role": "user", "content": "hi"}),
            json!({"role": "user", "content": "go on"})
        ]
    );
}

#[test]
fn an_agent_message_reaches_the_model_as_a_user_message() {
    let message = |content: Value| {
        json!({"type": "agent_message", "id": "amsg_1", "author": "/root/worker",
               "recipient": "/root", "content": content})
    };
    let input = json!([
        {"role": "user", "content": "Ask the worker."},
        message(json!([{"type": "input_text", "text": "3 files changed."}]))
    ]);
    let (messages, losses) = translate(input, &strict());
    assert!(losses.is_empty(), "{losses:?}");
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "3 files changed."})
    );

    // An image stays an image part.
    let image = "data:image/png;base64,iVBORw0KGgo=";
    let input = json!([message(json!([
        {"type": "input_text", "text": "The chart:"},
        {"type": "input_image", "image_url": image}
    ]))]);
    let (messages, _) = translate(input, &Options::default());
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[0]["content"][1]["image_url"]["url"], image);

    // Sealed content opens only where it was sealed: lost, reported; an
    // item with nothing readable left is not sent empty.
    let input = json!([
        {"role": "user", "content": "hi"},
        message(json!([
            {"type": "input_text", "text": "Partly readable."},
            {"type": "encrypted_content", "encrypted_content": "gAAAA-sealed"}
        ])),
        message(json!([{"type": "encrypted_content", "encrypted_content": "gAAAA-sealed"}]))
    ]);
    let (messages, losses) = translate(input, &Options::default());
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[1]["content"], "Partly readable.");
    assert_eq!(
        losses,
        [
            (LossKind::UnsupportedContent, "input[1].content[1]".into()),
            (LossKind::UnsupportedContent, "input[2].content[0]".into())
        ]
    );
}

#[test]
fn a_context_compaction_without_a_carrier_is_left_out_without_a_loss() {
    let input = json!([
        {"role": "user", "content": "hi"},
        {"type": "context_compaction", "id": "cmp_1"},
        {"type": "context_compaction", "encrypted_content": null},
        {"role": "user", "content": "next"}
    ]);
    let (messages, losses) = translate(input, &strict());
    assert!(losses.is_empty(), "{losses:?}");
    assert_eq!(messages.len(), 2);
}

#[test]
fn a_context_compaction_reads_as_the_compaction_it_carries() {
    let sealer = Arc::new(Sealer::new(SealKey::generate(), Vec::new()));
    let options = Options {
        seal: Some(Seal {
            sealer: Arc::clone(&sealer),
            scope: "t".into(),
        }),
        ..Options::default()
    };
    // A compaction the bridge made, carried under Codex's item type.
    let request = br#"{"model":"m","input":[{"role":"user","content":"Plan a trip."},
        {"type":"message","role":"assistant","content":"Where to?"}]}"#;
    let summarize = CompactRequest::parse(request)
        .unwrap()
        .translate(&History::default(), &options)
        .unwrap();
    let reply = br#"{"id":"c","object":"chat.completion","created":1,"model":"m",
        "choices":[{"index":0,"message":{"role":"assistant","content":"A trip is planned."},"finish_reason":"stop"}]}"#;
    let seal = options.seal.clone().unwrap();
    let summary = summarize.summary(reply, &seal).unwrap();
    let compacted: Value = serde_json::from_slice(&summarize.compact_resource(&summary)).unwrap();
    let mut item = compacted["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "compaction")
        .unwrap()
        .clone();
    item["type"] = json!("context_compaction");

    let input = json!([
        {"role": "user", "content": "Plan a trip."},
        {"type": "message", "role": "assistant", "content": "Where to?"},
        item,
        {"role": "user", "content": "Lisbon."}
    ]);
    let (messages, losses) = translate(input, &options);
    assert!(losses.is_empty(), "{losses:?}");
    // The assistant's turn before it is what the summary stands for.
    let texts: Vec<&str> = messages
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    let summary = format!("{SUMMARY_INTRO}A trip is planned.");
    assert_eq!(texts, ["Plan a trip.", summary.as_str(), "Lisbon."]);

    // One sealed by another server is the same loss as a `compaction`
    // item's: the conversation it summarized is not sent.
    let input = json!([
        {"type": "context_compaction", "encrypted_content": "gAAAA-another-server"},
        {"role": "user", "content": "Lisbon."}
    ]);
    let (messages, losses) = translate(input, &options);
    assert_eq!(messages.len(), 1);
    assert_eq!(
        losses,
        [(
            LossKind::UnsupportedItem,
            "input[0].encrypted_content".into()
        )]
    );
}
