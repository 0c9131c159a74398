//! A compaction answered by the engine, as a Messages client reads it: the
//! Responses reply of a `compaction_trigger` turn (its one `compaction`
//! item, sealed) as a message whose content is one `compaction` block, its
//! `content` the carrier, `stop_reason: "compaction"`; as a body and as a
//! stream in Anthropic's grammar.

use serde_json::{json, Value};
use wirebridge_convert::messages_to_responses::{
    self, translate_body, MessagesContext, StreamTranslator,
};
use wirebridge_testkit::{messages_grammar, parse_sse};

use crate::common::drive;

const CARRIER: &str = "wbs1.c2VhbGVkIHN1bW1hcnk";

/// The reply of a `compaction_trigger` turn, as the engine writes it.
fn compacted_response() -> Value {
    json!({
        "id": "resp_0c1", "object": "response", "created_at": 1, "status": "completed",
        "model": "m",
        "output": [{"type": "compaction", "id": "cmp_1", "encrypted_content": CARRIER}],
        "usage": {"input_tokens": 120, "output_tokens": 30, "total_tokens": 150}
    })
}

fn ctx(stream: bool) -> MessagesContext {
    MessagesContext {
        model: "claude-sonnet-4-5".into(),
        stream,
        ..MessagesContext::default()
    }
}

#[test]
fn a_compaction_reply_is_one_compaction_block_and_stops_for_compaction() {
    let body = serde_json::to_vec(&compacted_response()).unwrap();
    let reply = translate_body(&body, &ctx(false)).unwrap();
    let message: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(
        message["content"],
        json!([{"type": "compaction", "content": CARRIER}])
    );
    assert_eq!(message["stop_reason"], "compaction");
    // The summarizing call's usage.
    assert_eq!(message["usage"]["input_tokens"], 120);
    assert_eq!(message["usage"]["output_tokens"], 30);
    assert!(reply.losses.is_empty(), "{:?}", reply.losses);
    assert_eq!(reply.summary.outcome.as_deref(), Some("compaction"));
}

#[test]
fn a_compaction_without_its_carrier_is_the_upstream_s_fault() {
    let mut response = compacted_response();
    response["output"][0]
        .as_object_mut()
        .unwrap()
        .remove("encrypted_content");
    let body = serde_json::to_vec(&response).unwrap();
    let err = translate_body(&body, &ctx(false)).unwrap_err();
    assert_eq!(err.status(), 502, "{err}");
}

#[test]
fn a_streamed_compaction_opens_its_block_and_sends_the_carrier_in_one_delta() {
    let item = &compacted_response()["output"][0];
    let started = json!({"id": "resp_0c1", "object": "response", "status": "in_progress",
                         "model": "m", "output": []});
    let events = [
        json!({"type": "response.created", "sequence_number": 0, "response": started}),
        json!({"type": "response.in_progress", "sequence_number": 1, "response": started}),
        json!({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0, "item": item}),
        json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": item}),
        json!({"type": "response.completed", "sequence_number": 4, "response": compacted_response()}),
    ];
    let sse: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    for seed in [1, 2, 3] {
        let (out, translator) = drive(StreamTranslator::new(ctx(true)), sse.as_bytes(), seed);
        let frames = parse_sse(&out);
        let t = messages_grammar::check(&frames).unwrap_or_else(|v| panic!("{v}"));
        assert_eq!(
            t.blocks,
            [json!({"type": "compaction", "content": CARRIER})]
        );
        assert_eq!(t.stop_reason.as_deref(), Some("compaction"));
        assert_eq!(t.usage.as_ref().unwrap()["output_tokens"], 30);
        let start = frames
            .iter()
            .find(|f| f.event.as_deref() == Some("content_block_start"))
            .unwrap();
        let start: Value = serde_json::from_str(&start.data).unwrap();
        assert_eq!(
            start["content_block"],
            json!({"type": "compaction", "content": null})
        );
        assert!(translator.losses().is_empty(), "{:?}", translator.losses());
    }
}

/// The block a reply gave, sent back first with a new turn: the next
/// request starts from the compaction item it was.
#[test]
fn the_block_sent_back_is_read_as_the_compaction_item() {
    let request = json!({
        "model": "m", "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "A long conversation"},
            {"role": "assistant", "content": [{"type": "compaction", "content": CARRIER}]},
            {"role": "user", "content": "Go on."}
        ]
    });
    let body = serde_json::to_vec(&request).unwrap();
    let translated = messages_to_responses::translate_request(&body, &Default::default()).unwrap();
    let responses: Value = serde_json::from_slice(&translated.body).unwrap();
    assert_eq!(
        responses["input"],
        json!([
            {"type": "compaction", "encrypted_content": CARRIER},
            {"type": "message", "role": "user", "content": "Go on."}
        ])
    );
}
