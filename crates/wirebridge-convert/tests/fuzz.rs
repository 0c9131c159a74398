//! Random and mutated input never panics, and a stream always ends in a
//! well-formed way: exactly one terminal event, whatever the bytes.

mod common;

use wirebridge_convert::responses_to_chat::{
    translate_body, translate_request, Options, ResponsesContext,
};
use wirebridge_testkit::mutate::{mutate, Rng};
use wirebridge_testkit::{fixtures, parse_sse, responses_grammar};

#[test]
fn mutated_streams_always_end_well_formed() {
    let streams = fixtures::chat_streams();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..600 {
        let stream = &streams[round % streams.len()];
        let input = mutate(&stream.sse, &mut rng);
        let (out, translator) =
            common::translate_stream(&input, ResponsesContext::default(), round as u64);
        assert!(
            translator.is_finished(),
            "{} round {round}: no terminal event",
            stream.name
        );
        let frames = parse_sse(&out);
        let terminals = frames
            .iter()
            .filter(|f| {
                matches!(
                    f.event.as_deref(),
                    Some("response.completed" | "response.incomplete" | "response.failed")
                )
            })
            .count();
        assert_eq!(terminals, 1, "{} round {round}", stream.name);
        // A failed stream may leave an item open; anything else must be
        // grammatical.
        if frames.last().and_then(|f| f.event.as_deref()) != Some("response.failed") {
            responses_grammar::check(&frames)
                .unwrap_or_else(|v| panic!("{} round {round}: {v}", stream.name));
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(42);
    for round in 0..2000 {
        let len = rng.below(300);
        let bytes: Vec<u8> = (0..len)
            .map(|_| match rng.below(3) {
                0 => b"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{}]}}]}\n\r:"[rng.below(49)],
                _ => rng.next_u64() as u8,
            })
            .collect();
        let (_, translator) = common::translate_stream(&bytes, ResponsesContext::default(), round);
        assert!(translator.is_finished());
        let _ = translate_request(&bytes, &Options::default());
        let _ = translate_body(&bytes, &ResponsesContext::default());
    }
}

#[test]
fn mutated_requests_and_bodies_never_panic() {
    let mut rng = Rng(7);
    let requests = fixtures::codex_requests();
    let bodies = fixtures::chat_bodies();
    for _ in 0..300 {
        let (_, request) = &requests[rng.below(requests.len())];
        let _ = translate_request(&mutate(request, &mut rng), &Options::default());
        let (_, body) = &bodies[rng.below(bodies.len())];
        let _ = translate_body(&mutate(body, &mut rng), &ResponsesContext::default());
    }
}

#[test]
fn mutated_responses_streams_end_with_done_after_any_error() {
    use wirebridge_convert::chat_to_responses::{self, ChatContext};
    let streams = fixtures::responses_streams();
    let bodies = fixtures::responses_bodies();
    let mut rng = Rng(0xdead_beef);
    for round in 0..600 {
        let stream = &streams[round % streams.len()];
        let input = mutate(&stream.sse, &mut rng);
        let translator = chat_to_responses::StreamTranslator::new(ChatContext::default());
        let (out, translator) = common::drive(translator, &input, round as u64);
        assert!(translator.is_finished());
        let frames = parse_sse(&out);
        let name = format!("{} round {round}", stream.name);
        // `[DONE]` last and once; a failure's one error chunk right before it.
        assert_eq!(frames.last().unwrap().data, "[DONE]", "{name}");
        let done = frames.iter().filter(|f| f.data == "[DONE]").count();
        assert_eq!(done, 1, "{name}");
        let errors: Vec<usize> = (0..frames.len())
            .filter(|&i| frames[i].data.starts_with(r#"{"error""#))
            .collect();
        assert!(errors.len() <= 1, "{name}");
        if let Some(&at) = errors.first() {
            assert_eq!(at + 2, frames.len(), "{name}");
        }
        let (_, body) = &bodies[round % bodies.len()];
        let _ = chat_to_responses::translate_body(&mutate(body, &mut rng), &ChatContext::default());
    }
}
