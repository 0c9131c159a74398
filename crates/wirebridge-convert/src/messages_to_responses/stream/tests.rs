//! The translator's own cases.

use super::StreamTranslator;
use crate::frames::Frames;
use crate::handed::{record, DeltaKind};
use crate::messages_to_responses::{MessagesContext, ThinkingDisplay};

/// A Messages client is sent the same events, and told the same stop
/// reason, whether each delta came as its JSON event or as a record.
#[test]
fn the_messages_translator_takes_a_record_as_its_event() {
    let deltas = [
        (
            DeltaKind::ReasoningSummary,
            "response.reasoning_summary_text.delta",
            0,
            "summary_index",
            0,
            r#""Let me \"see\"""#,
        ),
        (
            DeltaKind::ReasoningText,
            "response.reasoning_text.delta",
            0,
            "content_index",
            1,
            r#""hm""#,
        ),
        (
            DeltaKind::OutputText,
            "response.output_text.delta",
            1,
            "content_index",
            0,
            r#""Hello\n""#,
        ),
        (
            DeltaKind::Refusal,
            "response.refusal.delta",
            1,
            "content_index",
            1,
            r#""I can't""#,
        ),
    ];
    let run = |records: bool| {
        let mut translator = StreamTranslator::new(MessagesContext {
            model: "m".into(),
            stream: true,
            thinking: ThinkingDisplay::Summarized,
            ..MessagesContext::default()
        });
        let mut out = Frames::sse();
        translator.push(r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"m"}}"#, &mut out);
        for (seq, (kind, name, output_index, field, part, fragment)) in deltas.iter().enumerate() {
            let data = match records {
                true => record(*kind, *output_index, *part, fragment),
                false => format!(
                    r#"{{"type":"{name}","sequence_number":{},"output_index":{output_index},"{field}":{part},"delta":{fragment}}}"#,
                    seq + 1
                ),
            };
            translator.push(&data, &mut out);
        }
        // The message ends, and a tool call's arguments come in two
        // fragments.
        translator.push(r#"{"type":"response.output_item.done","sequence_number":4,"output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[]}}"#, &mut out);
        translator.push(r#"{"type":"response.output_item.added","sequence_number":5,"output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"Read","arguments":"","status":"in_progress"}}"#, &mut out);
        for (seq, fragment) in [(6, r#""{\"path\":""#), (7, r#""\"a.rs\"}""#)] {
            let data = match records {
                true => record(DeltaKind::FunctionCallArguments, 2, 0, fragment),
                false => format!(
                    r#"{{"type":"response.function_call_arguments.delta","sequence_number":{seq},"item_id":"fc_1","output_index":2,"delta":{fragment}}}"#
                ),
            };
            translator.push(&data, &mut out);
        }
        translator.push(r#"{"type":"response.output_item.done","sequence_number":8,"output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"Read","arguments":"{\"path\":\"a.rs\"}","status":"completed"}}"#, &mut out);
        translator.push(r#"{"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":5,"output_tokens":4}}}"#, &mut out);
        let summary = translator.summary();
        let text = String::from_utf8(out.take().bytes).unwrap();
        let id = translator.id().to_owned();
        (text.replace(&id, "msg_*"), summary.outcome)
    };
    let (events, outcome) = run(false);
    assert_eq!(run(true), (events.clone(), outcome.clone()));
    assert_eq!(outcome.as_deref(), Some("refusal"));
    for fragment in [
        "Let me \\\"see\\\"",
        "Hello\\n",
        "I can't",
        "input_json_delta",
        "{\\\"path\\\":",
    ] {
        assert!(events.contains(fragment), "{fragment} in {events}");
    }
}
