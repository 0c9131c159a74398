//! Items kept in a conversation, from the input of real Codex requests and
//! the output of real `Response` bodies, and from those arrays mutated: every item kept is in full form (an object
//! with its `type` and a unique `id`; a message with its `status` and a list
//! of content parts, each `output_text` with `annotations` and `logprobs`),
//! and what is no item is an error naming where, never a panic.

use serde_json::Value;
use wirebridge_convert::conversation::conversation_items;
use wirebridge_convert::ids::ResponseIds;
use wirebridge_testkit::fixtures;
use wirebridge_testkit::mutate::{mutate, Rng};

/// The `input` array of each recorded Codex request, and the `output`
/// array of each recorded `Response` body.
fn inputs() -> Vec<String> {
    let arrays = |bodies: Vec<(String, Vec<u8>)>, key: &str| -> Vec<String> {
        bodies
            .iter()
            .filter_map(|(_, body)| {
                let object: Value = serde_json::from_slice(body).ok()?;
                object
                    .get(key)
                    .filter(|i| i.is_array())
                    .map(Value::to_string)
            })
            .collect()
    };
    let mut all = arrays(fixtures::codex_requests(), "input");
    assert!(!all.is_empty(), "the recorded Codex requests hold inputs");
    let outputs = arrays(fixtures::responses_bodies(), "output");
    assert!(
        !outputs.is_empty(),
        "the recorded Response bodies hold outputs"
    );
    all.extend(outputs);
    all
}

fn assert_full(items: &str) {
    let Ok(kept) = conversation_items(items, &ResponseIds::new(), "items") else {
        return;
    };
    let mut ids = std::collections::HashSet::new();
    for item in kept {
        let value: Value = serde_json::from_str(&item.item).expect("an item is JSON");
        assert_eq!(value["id"], item.id.as_str(), "{value}");
        assert!(value["type"].is_string(), "{value}");
        ids.insert(item.id.clone());
        if value["type"] == "message" {
            assert!(value["status"].is_string(), "{value}");
            let parts = value["content"]
                .as_array()
                .expect("message content is a list");
            for part in parts.iter().filter(|p| p["type"] == "output_text") {
                assert!(
                    part["annotations"].is_array() && part["logprobs"].is_array(),
                    "{part}"
                );
            }
        }
    }
}

#[test]
fn recorded_inputs_are_kept_in_full() {
    for input in &inputs() {
        let kept = conversation_items(input, &ResponseIds::new(), "items")
            .unwrap_or_else(|e| panic!("a recorded input is refused: {e}"));
        let sent: Vec<Value> = serde_json::from_str(input).unwrap();
        assert_eq!(kept.len(), sent.len());
        assert_full(input);
    }
}

#[test]
fn mutated_inputs_are_kept_in_full_or_refused() {
    let inputs = inputs();
    let mut rng = Rng(11);
    for _ in 0..5_000 {
        let input = &inputs[rng.below(inputs.len())];
        let mutated = mutate(input.as_bytes(), &mut rng);
        if let Ok(text) = std::str::from_utf8(&mutated) {
            assert_full(text);
        }
    }
}
