//! Arbitrary bytes as a Responses backend's SSE stream, translated for an
//! Anthropic Messages client that asked for a stream.
//!
//! Checks, beyond not panicking: the output passes the strict Messages
//! stream grammar, ends with exactly one terminal event, `message_stop` or
//! `error`, as its last frame, and the translator says it is finished. A
//! value the upstream sent that is JSON only by the grammar is copied as
//! sent and stops the checker there (see [`unreadable_copy`]).
//!
//! The options byte chooses the context: bits 0–1 how thinking is shown
//! (off, summarized, omitted; 3 is summarized too), bit 2 a request that
//! declared one tool, `f` (calls to others are left out), bit 3 a 512-byte
//! event size limit (an upstream event over it fails the stream).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebridge_convert::messages_to_responses::{
    MessagesContext, StreamTranslator, ThinkingDisplay,
};
use wirebridge_fuzz::{drive, unreadable_copy, StreamInput};
use wirebridge_testkit::{messages_grammar, parse_sse};

const TERMINALS: [&str; 2] = ["message_stop", "error"];

fn context(options: u8) -> MessagesContext {
    MessagesContext {
        model: "m".to_owned(),
        stream: true,
        thinking: match options & 3 {
            0 => ThinkingDisplay::Off,
            2 => ThinkingDisplay::Omitted,
            _ => ThinkingDisplay::Summarized,
        },
        // Calls to any other tool are ones the backend ran itself.
        declared_tools: (options & 4 != 0).then(|| vec!["f".to_owned()]),
        count_thinking: options & 8 != 0,
        ..MessagesContext::default()
    }
}

fn is_terminal(event: Option<&str>) -> bool {
    event.is_some_and(|e| TERMINALS.contains(&e))
}

fuzz_target!(|data: &[u8]| {
    let input = StreamInput::parse(data);
    let (_, out) = drive(
        StreamTranslator::new(context(input.options)),
        &input,
        input.options & 8 != 0,
    );

    let frames = parse_sse(&out);
    if let Err(violation) = messages_grammar::check(&frames) {
        assert!(
            unreadable_copy(&violation, &frames, input.stream),
            "{violation}\n{}",
            String::from_utf8_lossy(&out)
        );
    }
    let terminals = frames
        .iter()
        .filter(|f| is_terminal(f.event.as_deref()))
        .count();
    assert_eq!(terminals, 1, "{}", String::from_utf8_lossy(&out));
    let last = frames.last().and_then(|f| f.event.as_deref());
    assert!(is_terminal(last), "{}", String::from_utf8_lossy(&out));
});
