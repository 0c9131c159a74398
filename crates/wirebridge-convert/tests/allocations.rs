//! The stream re-encoding allocation budget: decoding the upstream's SSE,
//! translating each event and writing the client's frames into a reused
//! output buffer costs at most one heap allocation per chunk, amortized,
//! in every direction (the stateless Responses path included). And the
//! walk that looks for request fields the types do not model allocates
//! nothing in a request that holds none.
//!
//! Allocation counts are deterministic, unlike timings, so they are
//! asserted here; `wirebridge-bench` reports the same counts.

use wirebridge_convert::chat_to_responses::{self as c2r, ChatContext};
use wirebridge_convert::responses_to_chat::{self as r2c, ResponsesContext};
use wirebridge_convert::responses_to_messages::{self as r2m, ExchangeContext};
use wirebridge_convert::responses_to_responses::{self as r2r, NativeContext};
use wirebridge_convert::{SseTranslator, StreamTranslate};
use wirebridge_sse::{encode_data, encode_event};
use wirebridge_testkit::{allocations, fixtures, CountingAllocator};
use wirebridge_wire::{chat, responses};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Chunks in the steady-state part of each stream.
const CHUNKS: usize = 5000;

fn lines(rel: &str) -> Vec<String> {
    String::from_utf8(fixtures::load_bytes(rel))
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A stream split in three: the events that open it, `CHUNKS` recorded
/// content chunks (repeated), and the events that close it. Each event is
/// SSE-framed on its own, as an upstream sends it.
struct Stream {
    opening: Vec<Vec<u8>>,
    content: Vec<Vec<u8>>,
    closing: Vec<Vec<u8>>,
}

fn chat_stream() -> Stream {
    let lines = lines("vercel-ai/chat/openai-text.chunks.txt");
    let frame = |l: &String| {
        let mut out = Vec::new();
        encode_data(&mut out, l);
        out
    };
    let finish = lines
        .iter()
        .position(|l| l.contains(r#""finish_reason":"stop""#))
        .unwrap();
    let content = &lines[1..finish];
    let mut closing: Vec<Vec<u8>> = lines[finish..].iter().map(frame).collect();
    closing.push(b"data: [DONE]\n\n".to_vec());
    Stream {
        opening: vec![frame(&lines[0])],
        content: content.iter().cycle().take(CHUNKS).map(frame).collect(),
        closing,
    }
}

fn responses_stream() -> Stream {
    let lines =
        lines("vercel-ai/responses/openai-reasoning-encrypted-content-gpt-5-4-split.1.chunks.txt");
    let kind = |l: &str| {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        v["type"].as_str().unwrap().to_owned()
    };
    let frame = |l: &String| {
        let mut out = Vec::new();
        encode_event(&mut out, Some(&kind(l)), l);
        out
    };
    let of = |t: &str| -> Vec<&String> { lines.iter().filter(|l| kind(l) == t).collect() };
    let mut opening = vec![of("response.created")[0], of("response.in_progress")[0]];
    opening.push(*of("response.output_item.added").last().unwrap());
    opening.push(of("response.content_part.added")[0]);
    let deltas = of("response.output_text.delta");
    let closing = [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    .map(|t| *of(t).last().unwrap());
    Stream {
        opening: opening.into_iter().map(frame).collect(),
        content: deltas.into_iter().cycle().take(CHUNKS).map(frame).collect(),
        closing: closing.into_iter().map(frame).collect(),
    }
}

/// A Messages backend's stream of one text block: the recorded Chat
/// stream's text, in the deltas a Messages backend sends it in.
fn messages_stream() -> Stream {
    let frame = |event: serde_json::Value| {
        let mut out = Vec::new();
        let kind = event["type"].as_str().unwrap().to_owned();
        encode_event(&mut out, Some(&kind), &event.to_string());
        out
    };
    let texts: Vec<String> = lines("vercel-ai/chat/openai-text.chunks.txt")
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|c| {
            c.pointer("/choices/0/delta/content")?
                .as_str()
                .map(str::to_owned)
        })
        .filter(|t| !t.is_empty())
        .collect();
    let opening = vec![
        frame(
            serde_json::json!({"type": "message_start", "message": {"id": "msg_1",
            "type": "message", "role": "assistant", "model": "m", "content": [],
            "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        frame(
            serde_json::json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ),
    ];
    let content = texts
        .iter()
        .cycle()
        .take(CHUNKS)
        .map(|text| {
            frame(
                serde_json::json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": text}}),
            )
        })
        .collect();
    let closing = vec![
        frame(serde_json::json!({"type": "content_block_stop", "index": 0})),
        frame(
            serde_json::json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 300}}),
        ),
        frame(serde_json::json!({"type": "message_stop"})),
    ];
    Stream {
        opening,
        content,
        closing,
    }
}

/// Allocations per chunk: (steady state, whole stream), through the
/// [`SseTranslator`] every caller uses. The output buffer is cleared after
/// every upstream read, as the tower body does when it hands the frames on.
fn budget<T: StreamTranslate>(stream: &Stream, translator: T) -> (f64, f64, T) {
    let mut sse = SseTranslator::new(translator);
    let mut out = wirebridge_convert::Frames::sse();
    let start = allocations();
    let mut run = |events: &[Vec<u8>], sse: &mut SseTranslator<T>| {
        for event in events {
            sse.feed(event, &mut out);
            out.clear();
        }
    };
    run(&stream.opening, &mut sse);
    let steady_start = allocations();
    run(&stream.content, &mut sse);
    let steady = allocations() - steady_start;
    run(&stream.closing, &mut sse);
    let total = allocations() - start;
    let chunks = (stream.opening.len() + stream.content.len() + stream.closing.len()) as f64;
    (
        steady as f64 / CHUNKS as f64,
        total as f64 / chunks,
        sse.into_translator(),
    )
}

/// Runs `translator` over `stream` and holds it to at most `steady`
/// allocations a chunk in steady state and `whole` over the whole stream.
fn within<T: StreamTranslate>(stream: &Stream, translator: T, steady: f64, whole: f64) {
    let (steady_found, whole_found, translator) = budget(stream, translator);
    assert!(translator.is_finished());
    assert!(
        steady_found <= steady,
        "steady state: {steady_found} allocations per chunk"
    );
    assert!(
        whole_found <= whole,
        "whole stream: {whole_found} allocations per chunk"
    );
}

#[test]
fn chat_chunks_to_responses_events_allocate_at_most_once_per_chunk() {
    let stream = chat_stream();
    let translator = r2c::StreamTranslator::new(ResponsesContext::default());
    within(&stream, translator, 1.0, 1.0);
}

#[test]
fn responses_events_to_chat_chunks_allocate_at_most_once_per_chunk() {
    let stream = responses_stream();
    let context = ChatContext {
        include_usage: true,
        ..ChatContext::default()
    };
    let translator = c2r::StreamTranslator::new(context);
    within(&stream, translator, 1.0, 1.0);
}

/// A backend that keeps no state streams Responses events, re-sent under
/// the bridge's ids and positions: each delta is read into its fields (the
/// one allocation) and written again with the bridge's values in place,
/// never set on it first (which cost eight more).
#[test]
fn a_stateless_backends_deltas_allocate_once_each() {
    let stream = responses_stream();
    let translator = r2r::StreamTranslator::new(NativeContext::default());
    // The lifecycle events at either end cost a few more, amortized.
    within(&stream, translator, 1.01, 1.05);
}

/// A Messages backend's text deltas reach the Responses translator beneath
/// its reader as values, not as JSON written to be read again (which cost
/// two allocations a delta, and more time than the rest).
#[test]
fn a_messages_backends_text_deltas_allocate_at_most_once_each() {
    let stream = messages_stream();
    let translator = r2m::StreamTranslator::new(ExchangeContext::default());
    within(&stream, translator, 1.0, 1.0);
}

/// Every Chat request is walked (serde cannot tell whether it skipped a
/// field), and a Responses request whenever the one-pass reader cannot
/// tell: a walk that finds nothing must cost the request no allocation.
#[test]
fn a_request_with_nothing_unmodeled_is_walked_without_allocating() {
    let chat = br#"{"model":"m","messages":[{"role":"system","content":"Be brief."},
        {"role":"user","content":[{"type":"text","text":"Hi"},{"type":"image_url","image_url":{"url":"u"}}]},
        {"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
        {"role":"tool","tool_call_id":"c","content":"ok"}],
        "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],
        "stream":true,"stream_options":{"include_usage":true}}"#;
    let start = allocations();
    let found = chat::lenient::unmodeled_fields(chat);
    assert_eq!(allocations() - start, 0, "{found:?}");
    assert!(found.is_empty());
    for (name, body) in fixtures::codex_requests() {
        let start = allocations();
        let found = responses::lenient::unmodeled_fields(&body);
        assert_eq!(allocations() - start, 0, "{name}: {found:?}");
        assert!(found.is_empty(), "{name}");
    }
}
