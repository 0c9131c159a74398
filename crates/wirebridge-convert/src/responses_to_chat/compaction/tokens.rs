//! How many tokens a conversation holds: counted by the backend's
//! tokenizer where the profile names one, else estimated.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// An estimate of the tokens a Chat request holds, for a backend that
/// cannot count them: one for every 4 bytes of the request body, rounded
/// up (the body is the messages and the tools the model reads, with their
/// JSON around them). About what English text and JSON come to with
/// common tokenizers; code and other scripts take more tokens, so the
/// estimate errs towards compacting, or truncating, late.
///
/// ```
/// use wirebridge_convert::responses_to_chat::compaction::estimate_tokens;
///
/// assert_eq!(estimate_tokens(&[b'x'; 4000]), 1000);
/// assert_eq!(estimate_tokens(b"12345"), 2);
/// ```
pub fn estimate_tokens(chat_body: &[u8]) -> u64 {
    crate::truncation::estimate(chat_body)
}

/// The body of a tokenize request for a Chat request body: its `model`,
/// `messages` and `tools`, as vLLM's `/tokenize` takes them (with
/// `add_generation_prompt`, so the count is the prompt the model reads).
/// `None` for a body that is not a Chat request.
pub fn tokenize_request(chat_body: &[u8]) -> Option<Vec<u8>> {
    #[derive(Deserialize, Serialize)]
    struct Tokenize<'a> {
        #[serde(borrow)]
        model: &'a RawValue,
        #[serde(borrow)]
        messages: &'a RawValue,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        tools: Option<&'a RawValue>,
        #[serde(default = "yes")]
        add_generation_prompt: bool,
    }
    fn yes() -> bool {
        true
    }
    let request: Tokenize<'_> = serde_json::from_slice(chat_body).ok()?;
    serde_json::to_vec(&request).ok()
}

/// The token count in a tokenize answer: its `count` (vLLM and servers
/// like it), the length of its `tokens` array (llama.cpp), or its
/// `input_tokens` (a Messages backend's `count_tokens`). `None` for
/// anything else.
///
/// ```
/// use wirebridge_convert::responses_to_chat::compaction::tokenize_count;
///
/// assert_eq!(tokenize_count(br#"{"count":3,"max_model_len":8192,"tokens":[1,2,3]}"#), Some(3));
/// assert_eq!(tokenize_count(br#"{"tokens":[9,8]}"#), Some(2));
/// assert_eq!(tokenize_count(br#"{"input_tokens":14}"#), Some(14));
/// assert_eq!(tokenize_count(br#"{"error":"no"}"#), None);
/// ```
pub fn tokenize_count(answer: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct Answer<'a> {
        count: Option<u64>,
        #[serde(borrow)]
        tokens: Option<Vec<&'a RawValue>>,
        input_tokens: Option<u64>,
    }
    let answer: Answer<'_> = serde_json::from_slice(answer).ok()?;
    answer
        .count
        .or_else(|| answer.tokens.map(|t| t.len() as u64))
        .or(answer.input_tokens)
}
