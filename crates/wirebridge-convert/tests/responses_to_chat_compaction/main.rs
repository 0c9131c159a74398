//! Compaction in front of a Chat backend: the summary request, the sealed
//! `compaction` item, and the item read back in a later request
//! ([`compact`]); turns that ask for compaction, by a trigger or a
//! threshold ([`turns`]).

#[path = "../common/mod.rs"]
mod common;

mod compact;
mod native;
mod turns;

use std::sync::Arc;

use serde_json::{json, Value};
use wirebridge_convert::responses_to_chat::compaction::{
    CompactRequest, CompactionAsk, SummaryRequest, SUMMARY_INTRO, SUMMARY_PROMPT,
};
use wirebridge_convert::responses_to_chat::{
    translate_body, translate_request, History, Options, ParsedRequest, Seal, StreamTranslator,
};
use wirebridge_convert::seal::{SealKey, Sealer};
use wirebridge_convert::{ConvertError, LossKind};
use wirebridge_testkit::{parse_sse, responses_grammar};

const SUMMARY: &str = "The user is planning a trip to Lisbon in May; flights are booked.";

fn sealer() -> Arc<Sealer> {
    Arc::new(Sealer::new(SealKey::generate(), Vec::new()))
}

fn options(sealer: &Arc<Sealer>, tenant: &str) -> Options {
    Options {
        seal: Some(seal(sealer, tenant)),
        ..Options::default()
    }
}

fn seal(sealer: &Arc<Sealer>, tenant: &str) -> Seal {
    Seal {
        sealer: Arc::clone(sealer),
        scope: tenant.into(),
    }
}

fn chat_reply(content: &str, usage: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "id": "c1", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": usage,
    }))
    .unwrap()
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

const CONVERSATION: &str = r#"[
    {"role":"user","content":"Plan a trip to Lisbon in May."},
    {"type":"message","id":"msg_a","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Booking flights.","annotations":[]}]},
    {"type":"function_call","call_id":"call_1","name":"book","arguments":"{}"},
    {"type":"function_call_output","call_id":"call_1","output":"booked"},
    {"role":"developer","content":[{"type":"input_text","text":"Prefer trains."}]}
]"#;

/// Compacts `CONVERSATION` for `tenant`: the summary request and its
/// compacted output.
fn compact(sealer: &Arc<Sealer>, tenant: &str) -> (SummaryRequest, Value) {
    let body = format!(r#"{{"model":"m","instructions":"Be brief.","input":{CONVERSATION}}}"#);
    let request = CompactRequest::parse(body.as_bytes()).unwrap();
    let summarize = request
        .translate(&History::default(), &options(sealer, tenant))
        .unwrap();
    let reply = chat_reply(
        SUMMARY,
        json!({"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}),
    );
    let summary = summarize.summary(&reply, &seal(sealer, tenant)).unwrap();
    let compacted = json(&summarize.compact_resource(&summary));
    (summarize, compacted)
}
