//! Arbitrary bytes as a request that compacts, translated for a Chat
//! backend with a seal key: the first byte chooses the route, bit 0 a
//! `POST /responses/compact` body or a `POST /responses` turn (a final
//! `compaction_trigger`, or a `context_management` threshold, as the body
//! asks); the rest is the body.
//!
//! Checked, beyond not panicking: every request the translator takes is
//! sent as JSON (see [`check_request`]), every refusal names itself; the
//! backend's summary, read back, answers with a `response.compaction`
//! object whose last item is the sealed `compaction` item, or a trigger
//! turn's `Response` whose only item it is; a threshold turn, compacted,
//! is sent as JSON again.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use wirebridge_convert::responses_to_chat::compaction::{CompactRequest, CompactionAsk};
use wirebridge_convert::responses_to_chat::{History, Options, ParsedRequest, Seal};
use wirebridge_convert::seal::{SealKey, Sealer, PREFIX};
use wirebridge_fuzz::check_request;

/// What the backend answers the request for a summary with.
const SUMMARY_REPLY: &[u8] = br#"{"id":"c","object":"chat.completion","created":1,"model":"m",
  "choices":[{"index":0,"message":{"role":"assistant","content":"The user asked; it was done."},"finish_reason":"stop"}],
  "usage":{"prompt_tokens":40,"completion_tokens":8,"total_tokens":48}}"#;

fn seal() -> &'static Seal {
    static SEAL: OnceLock<Seal> = OnceLock::new();
    SEAL.get_or_init(|| {
        let key: SealKey = "0b".repeat(32).parse().expect("a 32-byte hex key");
        Seal {
            sealer: Arc::new(Sealer::new(key, Vec::new())),
            scope: "tenant".to_owned(),
        }
    })
}

fn options() -> Options {
    Options {
        seal: Some(seal().clone()),
        ..Options::default()
    }
}

/// `bytes` as strict JSON.
fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}", String::from_utf8_lossy(bytes));
    })
}

/// Whether `item` is a `compaction` item this bridge sealed.
fn is_sealed_compaction(item: &Value) -> bool {
    item["type"] == "compaction"
        && item["encrypted_content"]
            .as_str()
            .is_some_and(|c| c.starts_with(PREFIX))
}

fn compact(body: &[u8]) {
    let Ok(request) = CompactRequest::parse(body) else {
        return;
    };
    let translated = request.translate(&History::default(), &options());
    check_request(body, translated.as_ref().map(|t| t.body.as_slice()));
    let Ok(summarize) = translated else {
        return;
    };
    let summary = summarize
        .summary(SUMMARY_REPLY, seal())
        .expect("a summary with text is read");
    let resource = json(&summarize.compact_resource(&summary));
    assert_eq!(resource["object"], "response.compaction");
    let output = resource["output"].as_array().expect("an output array");
    assert!(
        is_sealed_compaction(output.last().expect("an item")),
        "{resource}"
    );
}

fn turn(body: &[u8]) {
    let Ok(parsed) = ParsedRequest::parse(body) else {
        return;
    };
    let ask = match parsed.compaction() {
        Ok(ask) => ask,
        Err(e) => return check_request(body, Err(&e)),
    };
    match ask {
        Some(CompactionAsk::Trigger) => {
            let translated = parsed.translate_summary(&History::default(), &options());
            check_request(body, translated.as_ref().map(|t| t.body.as_slice()));
            let Ok(summarize) = translated else {
                return;
            };
            let summary = summarize
                .summary(SUMMARY_REPLY, seal())
                .expect("a summary with text is read");
            let reply = summarize.trigger_reply(&summary);
            let response = json(&reply.body);
            let output = response["output"].as_array().expect("an output array");
            assert_eq!(output.len(), 1, "{response}");
            assert!(is_sealed_compaction(&output[0]), "{response}");
        }
        Some(CompactionAsk::Threshold(_)) => {
            let translated = parsed.translate_compacting(&History::default(), &options());
            check_request(body, translated.as_ref().map(|t| t.body.as_slice()));
            if translated.is_err() {
                return;
            }
            // Over the threshold: summarized, then sent compacted.
            let parsed = ParsedRequest::parse(body).expect("parsed once already");
            let summarize = parsed.translate_summary(&History::default(), &options());
            check_request(body, summarize.as_ref().map(|t| t.body.as_slice()));
            let Ok(summarize) = summarize else {
                return;
            };
            let summary = summarize
                .summary(SUMMARY_REPLY, seal())
                .expect("a summary with text is read");
            let parsed = ParsedRequest::parse(body).expect("parsed once already");
            let compacted = parsed.translate_compacted(&History::default(), &options(), &summary);
            check_request(body, compacted.as_ref().map(|t| t.body.as_slice()));
        }
        None => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&route, body)) = data.split_first() else {
        return;
    };
    match route & 1 {
        0 => compact(body),
        _ => turn(body),
    }
});
