//! Arbitrary bytes as a Responses backend's SSE stream, translated for a
//! Chat Completions client that asked for a usage chunk.
//!
//! Checks, beyond not panicking: the output passes the strict Chat chunk
//! grammar (with the usage chunk that `include_usage` asks for), ends with
//! `data: [DONE]`, once, right after the one error chunk of a failed
//! stream, and the translator says it is finished. A value the upstream
//! sent that is JSON only by the grammar is copied as sent and stops the
//! checker there (see [`unreadable_copy`]).
//!
//! The options byte chooses the context: bits 0–1 where reasoning goes
//! (omitted, `reasoning_content`, `reasoning`), bit 2 log probabilities,
//! bit 3 a 512-byte event size limit (an upstream event over it fails the
//! stream), bit 4 a request that declared one tool, `f` (calls to others
//! are left out).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebridge_convert::chat_to_responses::{ChatContext, ChatReasoning, StreamTranslator};
use wirebridge_fuzz::{drive, unreadable_copy, StreamInput};
use wirebridge_testkit::{chat_grammar, parse_sse};

fn context(options: u8) -> ChatContext {
    ChatContext {
        model: "m".to_owned(),
        stream: true,
        include_usage: true,
        logprobs: options & 4 != 0,
        reasoning: match options & 3 {
            1 => ChatReasoning::ReasoningContent,
            2 => ChatReasoning::Reasoning,
            _ => ChatReasoning::Omit,
        },
        // Calls to any other tool are ones the backend ran itself.
        declared_tools: (options & 16 != 0).then(|| vec!["f".to_owned()]),
        declared_custom: Vec::new(),
    }
}

/// An error chunk: the frame before `[DONE]` of a failed stream.
fn is_error(data: &str) -> bool {
    data.starts_with(r#"{"error""#)
}

fuzz_target!(|data: &[u8]| {
    let input = StreamInput::parse(data);
    let translator = StreamTranslator::new(context(input.options));
    let (_, out) = drive(translator, &input, input.options & 8 != 0);

    let frames = parse_sse(&out);
    if let Err(violation) = chat_grammar::check(&frames, true) {
        assert!(
            unreadable_copy(&violation, &frames, input.stream),
            "{violation}\n{}",
            String::from_utf8_lossy(&out)
        );
    }
    let shown = || String::from_utf8_lossy(&out).into_owned();
    let done = frames.iter().filter(|f| f.data == "[DONE]").count();
    assert_eq!(done, 1, "{}", shown());
    assert_eq!(
        frames.last().map(|f| f.data.as_str()),
        Some("[DONE]"),
        "{}",
        shown()
    );
    let errors: Vec<usize> = (0..frames.len())
        .filter(|&i| is_error(&frames[i].data))
        .collect();
    assert!(errors.len() <= 1, "{}", shown());
    if let Some(&at) = errors.first() {
        assert_eq!(at + 2, frames.len(), "{}", shown());
    }
});
