//! What the Responses hub costs a Messages client on a Chat backend: each
//! leg composed (Messages → Responses → Chat for the request, Chat →
//! Responses → Messages for the stream) against the Responses leg alone,
//! the single translation a Responses client gets.
//!
//! - `hub/request`: a Claude Code-like request (12 tools, system blocks,
//!   thinking), compact as Claude Code sends it, as `wirebridge serve`
//!   translates it (the second leg told where the first copied the
//!   client's values and wrote each function tool's fields), against the
//!   Responses request it becomes, translated to Chat.
//! - `hub/stream_500`: a recorded Chat stream of 500 chunks through both
//!   stream translators, against the first alone (SSE decoding and encoding
//!   included). `composed` hands the Messages leg the Responses leg's events
//!   one at a time, its text, reasoning and tool-argument deltas as
//!   records of their fields (`Framing::Handed`), as the layers do;
//!   `composed_json` hands every event in bare JSON, as they did before.
//!
//! Each group also holds `baseline`: the same input's JSON parsed into a
//! `serde_json::Value` and written back (every event's, for the stream).
//!
//! `cargo bench --bench hub`

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::value::RawValue;
use wirebridge::convert::messages_to_responses::{self as m2r, MessagesContext, ThinkingDisplay};
use wirebridge::convert::responses_to_chat::{self as r2c, StreamTranslator};
use wirebridge::convert::{Frames, Framing, SseTranslator};

mod common;

/// The Claude Code-like request of the Messages golden tests.
const CLAUDE_CODE_REQUEST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/wirebridge-convert/tests/inputs/messages-claude-code-request.json"
);

/// A recorded Chat stream, its text chunks repeated to 500.
const CHAT_STREAM: &str = "vercel-ai/chat/openai-text.chunks.txt";

fn requests(c: &mut Criterion) {
    // The file is pretty-printed for review; Claude Code sends compact
    // JSON, whose raw values need no compacting on the way.
    let pretty =
        std::fs::read_to_string(CLAUDE_CODE_REQUEST).expect("the Claude Code-like request");
    let pretty: &RawValue = serde_json::from_str(&pretty).expect("JSON");
    let messages = wirebridge::wire::compact(pretty).get().as_bytes().to_vec();
    let responses = m2r::translate_request(&messages, &m2r::Options::default())
        .expect("it translates")
        .body;
    let options = r2c::Options::default();
    assert!(r2c::translate_request(&responses, &options).is_ok());

    let mut group = c.benchmark_group("hub/request");
    group.throughput(Throughput::Bytes(messages.len() as u64));
    group.bench_function("composed", |b| {
        b.iter(|| {
            let first = m2r::translate_request(&messages, &m2r::Options::default()).unwrap();
            // As the layers do: told where the first leg copied the
            // client's values and wrote its function tools, the second
            // steps over the values and takes the tools as written.
            r2c::ParsedRequest::parse_written(&first.body, &first.copies, first.tools.as_ref())
                .and_then(|parsed| parsed.translate(&r2c::History::default(), &options))
                .unwrap()
        })
    });
    group.bench_function("single", |b| {
        b.iter(|| r2c::translate_request(&responses, &options).unwrap())
    });
    group.bench_function("baseline", |b| {
        b.iter(|| common::round_trip(std::slice::from_ref(&messages)))
    });
    group.finish();
}

/// A Chat stream of `n` events from the recorded one: its first chunk, its
/// content chunks repeated, its closing chunks and `[DONE]`, as SSE.
fn chat_stream(n: usize) -> Vec<u8> {
    let shared = wirebridge_bench::cases::shared_dir().unwrap_or_else(|e| panic!("{e}"));
    let recorded = std::fs::read(shared.join("fixtures").join(CHAT_STREAM))
        .unwrap_or_else(|e| panic!("{CHAT_STREAM}: {e}"));
    let text = String::from_utf8_lossy(&recorded);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
        .filter(|l| *l != "[DONE]")
        .collect();
    let finish = lines
        .iter()
        .position(|l| l.contains("\"finish_reason\":\"stop\""))
        .expect("the recording has a finish chunk");
    let (first, content, closing) = (lines[0], &lines[1..finish], &lines[finish..]);
    let repeated = n.saturating_sub(2 + closing.len());
    let mut sse = String::new();
    let events = std::iter::once(first)
        .chain(content.iter().cycle().take(repeated).copied())
        .chain(closing.iter().copied())
        .chain(std::iter::once("[DONE]"));
    for event in events {
        sse.push_str("data: ");
        sse.push_str(event);
        sse.push_str("\n\n");
    }
    sse.into_bytes()
}

fn responses_context() -> r2c::ResponsesContext {
    let request = br#"{"model":"m","input":"hi","stream":true}"#;
    r2c::translate_request(request, &r2c::Options::default())
        .expect("it translates")
        .context
}

fn messages_context() -> MessagesContext {
    MessagesContext {
        model: "m".into(),
        stream: true,
        thinking: ThinkingDisplay::Off,
        declared_tools: None,
        count_thinking: false,
        ..MessagesContext::default()
    }
}

/// The Chat stream through the Responses leg: the Responses events it
/// writes, in `framing`.
fn responses_leg(chat: &[u8], framing: Framing) -> Frames {
    let mut stream = SseTranslator::new(StreamTranslator::new(responses_context()));
    let mut out = Frames::new(framing);
    out.reserve(chat.len() * 2);
    stream.feed(chat, &mut out);
    stream.finish(&mut out);
    out
}

fn streams(c: &mut Criterion) {
    let chat = chat_stream(500);
    let documents = common::sse_documents(&chat);
    let mut group = c.benchmark_group("hub/stream_500");
    group.throughput(Throughput::Elements(500));
    // As the layers do: the Responses leg's events handed on one at a
    // time, its deltas as records; and as they did before, every event
    // in bare JSON.
    for (name, framing) in [
        ("composed", Framing::Handed),
        ("composed_json", Framing::json()),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let responses = responses_leg(&chat, framing.clone());
                let mut stream = SseTranslator::new(m2r::StreamTranslator::new(messages_context()));
                let mut out = Frames::sse();
                out.reserve(responses.len());
                for event in responses.events() {
                    stream.feed_event(event, &mut out);
                }
                stream.finish(&mut out);
                out
            })
        });
    }
    group.bench_function("single", |b| b.iter(|| responses_leg(&chat, Framing::Sse)));
    group.bench_function("baseline", |b| b.iter(|| common::round_trip(&documents)));
    group.finish();
}

criterion_group!(benches, requests, streams);
criterion_main!(benches);
