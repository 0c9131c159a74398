//! Arbitrary bytes as a Chat Completions backend's SSE stream, translated
//! for a Responses client.
//!
//! Checks, beyond not panicking: the output passes the strict Responses
//! stream grammar, failed streams included (the bridge promises that a
//! failure closes the open item and lists every item sent in
//! `response.failed`), with exactly one terminal event, and the translator
//! says it is finished. A value the upstream sent that is JSON only by the
//! grammar is copied as sent and stops the checker there (see
//! [`unreadable_copy`]). And that whatever the one-pass completion reader
//! reads of an upstream event, serde reads the same (`read_as_serde`).
//!
//! The options byte chooses the context: bits 0–1 how reasoning is shown
//! (auto, text, summary), bits 2–3 `<think>` tags (off, tags, starts
//! inside), bit 4 a context from a request with namespaced, custom and
//! tool-search tools, bit 5 a 512-byte event size limit (an upstream event
//! over it fails the stream).
#![no_main]

use libfuzzer_sys::fuzz_target;
use wirebridge_convert::profile::ThinkTags;
use wirebridge_convert::responses_to_chat::{
    translate_request, Options, ReasoningOutput, ResponsesContext, StreamTranslator,
};
use wirebridge_fuzz::{drive, unreadable_copy, StreamInput, TOOLS_REQUEST};
use wirebridge_testkit::{parse_sse, responses_grammar};
use wirebridge_wire::chat::lenient::read_check::read_as_serde;

const TERMINALS: [&str; 3] = [
    "response.completed",
    "response.incomplete",
    "response.failed",
];

fn context(options: u8) -> ResponsesContext {
    let mut ctx = if options & 0x10 != 0 {
        translate_request(TOOLS_REQUEST.as_bytes(), &Options::default())
            .expect("the built-in request translates")
            .context
    } else {
        ResponsesContext::default()
    };
    ctx.reasoning_output = match options & 3 {
        1 => ReasoningOutput::Text,
        2 => ReasoningOutput::Summary,
        _ => ctx.reasoning_output,
    };
    ctx.think_tags = match (options >> 2) & 3 {
        1 => ThinkTags::Tags,
        2 => ThinkTags::StartsInside,
        3 => ThinkTags::Off,
        _ => ctx.think_tags,
    };
    ctx
}

fuzz_target!(|data: &[u8]| {
    let input = StreamInput::parse(data);
    for frame in parse_sse(input.stream) {
        read_as_serde(frame.data.as_bytes());
    }
    let (_, out) = drive(
        StreamTranslator::new(context(input.options)),
        &input,
        input.options & 0x20 != 0,
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
});
