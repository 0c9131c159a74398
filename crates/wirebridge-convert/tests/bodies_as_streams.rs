//! Bodies told as streams, for a client that asked for a stream from a
//! backend that answered with a body: every recorded Responses and Chat
//! body, told as the upstream's events and fed to each client dialect's
//! stream translator, gives a stream that follows its grammar and says
//! what the body translated as a body says.

use wirebridge_convert::messages_to_responses::{self, MessagesContext};
use wirebridge_convert::responses_to_chat::{self, body_chunks, ResponsesContext};
use wirebridge_convert::responses_to_responses::{self, body_events, NativeContext};
use wirebridge_convert::{ConvertError, Frames, StreamTranslate};
use wirebridge_testkit::{fixtures, messages_grammar, parse_sse, responses_grammar};

/// The client's stream: `events` pushed through `translator`.
fn told<T: StreamTranslate>(mut translator: T, events: &[String]) -> Vec<u8> {
    let mut out = Frames::sse();
    for data in events {
        translator.push(data, &mut out);
    }
    if !translator.is_finished() {
        translator.finish(&mut out);
    }
    out.take().bytes
}

#[test]
fn a_responses_body_told_as_a_stream_says_what_the_body_says() {
    let bodies = fixtures::responses_bodies();
    assert!(bodies.len() >= 3);
    for (name, body) in bodies {
        let events = body_events(&body).unwrap_or_else(|e| panic!("{name}: {e}"));

        let ctx = NativeContext {
            stream: true,
            ..NativeContext::default()
        };
        let as_body = responses_to_responses::translate_body(&body, &ctx).unwrap();
        let expected = responses_grammar::responses_body_transcript(
            &serde_json::from_slice(&as_body.body).unwrap(),
        );
        let out = told(responses_to_responses::StreamTranslator::new(ctx), &events);
        let t = responses_grammar::check(&parse_sse(&out))
            .unwrap_or_else(|v| panic!("{name}: {v}\n{}", String::from_utf8_lossy(&out)));
        assert!(!expected.text.is_empty() || !expected.function_calls.is_empty());
        assert_eq!(t.text, expected.text, "{name}");
        assert_eq!(t.status, expected.status, "{name}");
        assert_eq!(t.function_calls, expected.function_calls, "{name}");

        let ctx = MessagesContext {
            stream: true,
            ..MessagesContext::default()
        };
        let as_body = messages_to_responses::translate_body(&body, &ctx).unwrap();
        let expected = messages_grammar::messages_body_transcript(
            &serde_json::from_slice(&as_body.body).unwrap(),
        );
        let out = told(messages_to_responses::StreamTranslator::new(ctx), &events);
        let t = messages_grammar::check(&parse_sse(&out))
            .unwrap_or_else(|v| panic!("{name}: {v}\n{}", String::from_utf8_lossy(&out)));
        assert_eq!(t.text, expected.text, "{name}");
        assert_eq!(t.stop_reason, expected.stop_reason, "{name}");
        assert_eq!(t.tool_calls.len(), expected.tool_calls.len(), "{name}");
    }
}

#[test]
fn a_chat_body_told_as_a_stream_says_what_the_body_says() {
    let bodies = fixtures::chat_bodies();
    assert!(!bodies.is_empty());
    for (name, body) in bodies {
        let chunks = body_chunks(&body).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(chunks.last().map(String::as_str), Some("[DONE]"));
        let ctx = ResponsesContext {
            stream: true,
            ..ResponsesContext::default()
        };
        let as_body = responses_to_chat::translate_body(&body, &ctx).unwrap();
        let expected = responses_grammar::responses_body_transcript(
            &serde_json::from_slice(&as_body.body).unwrap(),
        );
        let out = told(responses_to_chat::StreamTranslator::new(ctx), &chunks);
        let t = responses_grammar::check(&parse_sse(&out))
            .unwrap_or_else(|v| panic!("{name}: {v}\n{}", String::from_utf8_lossy(&out)));
        assert_eq!(t.text, expected.text, "{name}");
        assert_eq!(t.status, expected.status, "{name}");
        let calls = |t: &wirebridge_testkit::ResponsesTranscript| {
            t.function_calls
                .iter()
                .map(|c| (c.name.clone(), c.arguments.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(calls(&t), calls(&expected), "{name}");
        assert_eq!(
            t.usage.as_ref().map(|u| u["output_tokens"].clone()),
            expected.usage.as_ref().map(|u| u["output_tokens"].clone()),
            "{name}"
        );
    }
}

#[test]
fn a_body_that_is_no_response_is_told_as_no_stream() {
    let error = br#"{"error":{"message":"model is loading","type":"server_error"}}"#;
    match body_events(error) {
        Err(ConvertError::UpstreamFailed { message, .. }) => {
            assert_eq!(message, "model is loading")
        }
        other => panic!("{other:?}"),
    }
    // Whether a body must name itself a `Response` is the direction's
    // reader's to say (the native one requires it, which it reads first):
    // one with an output is told.
    let unnamed = body_events(br#"{"status":"completed","output":[]}"#).unwrap();
    assert!(unnamed[1].contains(r#""type":"response.completed""#));
    for body in [&br#"{"hello":"world"}"#[..], b"[]", b"not json"] {
        assert!(
            matches!(body_events(body), Err(ConvertError::InvalidUpstream(_))),
            "{}",
            String::from_utf8_lossy(body)
        );
    }
}
