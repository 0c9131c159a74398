//! Arbitrary bytes as a Messages backend's SSE stream, read for a
//! Responses client.
//!
//! Checks, beyond not panicking: the output passes the strict Responses
//! stream grammar, failed streams included, with exactly one terminal
//! event, and the translator says it is finished. And that every reasoning
//! item the client is sent with a carrier carries its thinking in one the
//! next request opens again for the same tenant (thinking cut short has
//! none, and is reported when sent back).
//!
//! The options byte chooses the context: bit 0 a request that declared a
//! custom tool and a namespaced one (the backend's calls of them come back
//! as a `custom_tool_call` and in their namespace), bit 1 a sealer (else
//! carriers are only encoded), bit 2 a 512-byte event size limit.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use wirebridge_convert::responses_to_chat::{Options, Seal};
use wirebridge_convert::responses_to_messages::{
    translate_request, ExchangeContext, StreamTranslator,
};
use wirebridge_convert::seal::{SealKey, Sealer};
use wirebridge_fuzz::{drive, unreadable_copy, StreamInput};
use wirebridge_testkit::{parse_sse, responses_grammar};

const TERMINALS: [&str; 3] = [
    "response.completed",
    "response.incomplete",
    "response.failed",
];

/// A request declaring a function, a custom tool and a namespaced tool.
const TOOLS_REQUEST: &str = r#"{"model":"m","input":"go","stream":true,"tools":[
{"type":"function","name":"get_weather","parameters":{"type":"object"}},
{"type":"custom","name":"apply_patch"},
{"type":"namespace","name":"agents","tools":[{"type":"function","name":"spawn"}]}]}"#;

fn options(bits: u8) -> Options {
    let seal = (bits & 2 != 0).then(|| Seal {
        sealer: Arc::new(Sealer::new(SealKey::generate(), Vec::new())),
        scope: "tenant".into(),
    });
    Options {
        seal,
        ..Options::default()
    }
}

fuzz_target!(|data: &[u8]| {
    let input = StreamInput::parse(data);
    let options = options(input.options);
    let request = match input.options & 1 {
        1 => TOOLS_REQUEST,
        _ => r#"{"model":"m","input":"go","stream":true}"#,
    };
    let written = translate_request(request.as_bytes(), &options).expect("the request translates");
    let context = ExchangeContext {
        backend: written.context,
        native: Default::default(),
    };
    let (stream, out) = drive(
        StreamTranslator::new(context),
        &input,
        input.options & 4 != 0,
    );

    let frames = parse_sse(&out);
    if let Err(violation) = responses_grammar::check(&frames) {
        assert!(
            unreadable_copy(&violation, &frames, input.stream),
            "{violation}\n{}",
            String::from_utf8_lossy(&out)
        );
    }
    let terminals = frames
        .iter()
        .filter(|f| f.event.as_deref().is_some_and(|e| TERMINALS.contains(&e)))
        .count();
    assert_eq!(terminals, 1, "{}", String::from_utf8_lossy(&out));

    // Every reasoning item handed back with a carrier opens into a thinking
    // block; one without (thinking cut short, which has no signature of its
    // own) is reported, never sent.
    let translator = stream.into_translator();
    let Some(finished) = translator.finished() else {
        return;
    };
    for item in finished.output {
        let item: serde_json::Value = serde_json::from_str(item.get()).expect("items are JSON");
        if item["type"] != "reasoning" {
            continue;
        }
        let next = serde_json::json!({"model": "m", "input": [
            {"role": "user", "content": "go"}, item, {"role": "user", "content": "again"}]});
        let replayed = translate_request(next.to_string().as_bytes(), &options)
            .expect("a carrier the bridge wrote opens for its tenant");
        let body: serde_json::Value = serde_json::from_slice(&replayed.body).unwrap();
        if item.get("encrypted_content").is_none() {
            assert!(
                body["messages"].as_array().is_some_and(|m| m.len() == 1),
                "{body}"
            );
            let lost = replayed.losses.paths();
            assert!(lost == "input[1]" || lost.is_empty(), "{lost}");
            continue;
        }
        let kind = &body["messages"][1]["content"][0]["type"];
        assert!(kind == "thinking" || kind == "redacted_thinking", "{body}");
    }
});
