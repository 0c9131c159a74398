//! Chat request → Responses request: each mapping, errors naming the field,
//! the loss policy, and garbage input.

mod errors;
mod messages;
mod params;

use serde_json::{json, Value};
use wirebridge_convert::chat_to_responses::{translate_request, Options};
use wirebridge_convert::LossReport;

fn translate(body: &str) -> (Value, LossReport) {
    translate_with(body, &Options::default())
}

fn translate_with(body: &str, options: &Options) -> (Value, LossReport) {
    let translated =
        translate_request(body.as_bytes(), options).unwrap_or_else(|e| panic!("{e}\n{body}"));
    (
        serde_json::from_slice(&translated.body).unwrap(),
        translated.losses,
    )
}

fn responses(body: &str) -> Value {
    translate(body).0
}

/// A request with these messages and extra top-level fields.
fn request(messages: Value, extra: Value) -> String {
    let mut body = json!({"model": "gpt-5", "messages": messages});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body.to_string()
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}
