//! The translation cases measured by `wirebridge-bench` and by the
//! criterion benches of this crate, so both measure the same work.
//!
//! Every case runs in every direction and has a baseline: parsing the same
//! input JSON into a `serde_json::Value` and writing it back with `to_vec`.
//!
//! - `request_3k`: a Codex turn with tools, a tool call and its result;
//! - `request_50k`: the full Codex request plus earlier turns;
//! - `chunk`: one ~300 B stream chunk (or event) in steady state, SSE
//!   decoding and encoding included;
//! - `stream_500`, `stream_5000`: whole recorded streams, extended by
//!   repeating their recorded deltas, decoded, translated and encoded.
//!
//! The inputs come from the recorded fixtures in the shared directory (the
//! one holding `fixtures/`), found by [`shared_dir`].

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use wirebridge_convert::chat_to_responses as c2r;
use wirebridge_convert::responses_to_chat as r2c;
use wirebridge_convert::responses_to_messages as r2m;
use wirebridge_convert::responses_to_responses as r2r;
use wirebridge_convert::{Frames, SseTranslator, StreamTranslate};

/// Overrides where the shared directory (holding `fixtures/`) is.
pub const SHARED_DIR_ENV: &str = "WIREBRIDGE_SHARED_DIR";

const CODEX_REQUEST: &str =
    "codex-peer/codex-exec-0.169.0-request-2-with-function_call_output.json";
const CHAT_STREAM: &str = "vercel-ai/chat/openai-text.chunks.txt";
const RESPONSES_STREAM: &str =
    "vercel-ai/responses/openai-reasoning-encrypted-content-gpt-5-4-split.1.chunks.txt";

/// Steady-state chunks pushed into one translator before it is replaced,
/// so the text it accumulates for its `*.done` events stays realistic.
const CHUNKS_PER_TRANSLATOR: u32 = 1000;

/// Which way a case translates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Responses client, Chat backend: Responses requests become Chat
    /// requests, Chat chunks become Responses events.
    ResponsesToChat,
    /// Chat client, Responses backend.
    ChatToResponses,
    /// Responses client, Messages backend: Responses requests are completed
    /// (as for a backend that keeps no state) and written as Messages;
    /// Messages events become Responses events.
    ResponsesToMessages,
}

impl Direction {
    /// Every direction.
    pub const ALL: [Direction; 3] = [
        Direction::ResponsesToChat,
        Direction::ChatToResponses,
        Direction::ResponsesToMessages,
    ];

    /// `responses_to_chat`, `chat_to_responses` or `responses_to_messages`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ResponsesToChat => "responses_to_chat",
            Direction::ChatToResponses => "chat_to_responses",
            Direction::ResponsesToMessages => "responses_to_messages",
        }
    }
}

/// One benchmark case: its input, and how to run it and its baseline.
pub struct Case {
    /// `direction/kind`, such as `responses_to_chat/stream_500`.
    pub name: String,
    /// Input bytes per iteration.
    pub input_bytes: usize,
    /// Items (requests, or stream chunks) per iteration.
    pub items: u64,
    direction: Direction,
    contexts: Contexts,
    work: Work,
    /// The JSON documents the baseline parses and writes, per iteration.
    baseline: Vec<Vec<u8>>,
}

enum Work {
    Request(Vec<u8>),
    /// SSE bytes, fed one event at a time.
    Stream {
        sse: Vec<u8>,
        events: Vec<Range<usize>>,
    },
    /// One SSE-framed chunk pushed after `prologue`.
    Chunk {
        prologue: Vec<u8>,
        chunk: Vec<u8>,
    },
}

/// Contexts taken from translating the 3 KB request, as a proxy would.
#[derive(Clone, Default)]
struct Contexts {
    responses: r2c::ResponsesContext,
    chat: c2r::ChatContext,
    messages: r2m::ExchangeContext,
}

/// Finds the shared directory: `$WIREBRIDGE_SHARED_DIR`, else `shared/`
/// beside the checkout this was built from, else beside the current
/// directory or one of its parents.
pub fn shared_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os(SHARED_DIR_ENV).filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    let here = std::env::current_dir().unwrap_or_default();
    for start in [built, here] {
        for dir in start.ancestors() {
            let candidate = dir.join("../shared");
            if candidate.join("fixtures").is_dir() {
                return Ok(candidate.canonicalize().unwrap_or(candidate));
            }
        }
    }
    Err(format!(
        "cannot find the recorded fixtures: set {SHARED_DIR_ENV} to the shared directory (the one holding fixtures/)"
    ))
}

fn load(shared: &Path, rel: &str) -> Result<Vec<u8>, String> {
    let path = shared.join("fixtures").join(rel);
    std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The recorded Codex request body.
fn codex_body(shared: &Path) -> Result<Value, String> {
    let codex: Value = serde_json::from_slice(&load(shared, CODEX_REQUEST)?)
        .map_err(|e| format!("{CODEX_REQUEST}: {e}"))?;
    Ok(codex.get("body").cloned().unwrap_or(codex))
}

/// The ~3 KB Codex turn of the `request_3k` cases, as a Responses request,
/// from the fixtures in `shared`.
pub fn codex_turn(shared: &Path) -> Result<Vec<u8>, String> {
    Ok(to_bytes(&small_request(&codex_body(shared)?)))
}

/// The Codex instructions from the fixtures in `shared`: recorded prose,
/// for requests that need text.
pub fn codex_prose(shared: &Path) -> Result<String, String> {
    let body = codex_body(shared)?;
    Ok(first_text(&body["input"][0]).to_owned())
}

/// The tools of the recorded Codex request (~18 KB of JSON), which a
/// `Response` object echoes back.
pub fn codex_tools(shared: &Path) -> Result<Value, String> {
    Ok(codex_body(shared)?["tools"].clone())
}

/// Every case, both directions, in a stable order, built from the fixtures
/// in `shared`.
pub fn all_cases(shared: &Path) -> Result<Vec<Case>, String> {
    let body = codex_body(shared)?;
    let small_responses = to_bytes(&small_request(&body));
    let large_responses = to_bytes(&large_request(&body));
    let small = r2c_request(&small_responses)?;
    let large_chat = r2c_request(&large_responses)?.body;
    let chat_context = c2r::translate_request(&small.body, &c2r::Options::default())
        .map_err(|e| format!("the 3 KB Chat request does not translate: {e}"))?
        .context;
    let contexts = Contexts {
        responses: small.context,
        chat: chat_context,
        messages: r2m_request(&small_responses)
            .map_err(|e| format!("the 3 KB request does not translate for Messages: {e}"))?
            .1,
    };
    let chat_lines = lines(&load(shared, CHAT_STREAM)?);
    let responses_lines = lines(&load(shared, RESPONSES_STREAM)?);

    let mut cases = Vec::new();
    for direction in Direction::ALL {
        let (small, large) = match direction {
            Direction::ResponsesToChat | Direction::ResponsesToMessages => {
                (small_responses.clone(), large_responses.clone())
            }
            Direction::ChatToResponses => (small.body.clone(), large_chat.clone()),
        };
        cases.push(request_case(direction, "request_3k", small));
        cases.push(request_case(direction, "request_50k", large));
        let events = |n| match direction {
            Direction::ResponsesToChat => chat_stream(&chat_lines, n),
            Direction::ChatToResponses => responses_stream(&responses_lines, n),
            Direction::ResponsesToMessages => messages_stream(&chat_lines, n),
        };
        cases.push(chunk_case(direction, &events(500)));
        cases.push(stream_case(direction, "stream_500", &events(500)));
        cases.push(stream_case(direction, "stream_5000", &events(5000)));
    }
    for case in &mut cases {
        case.contexts = contexts.clone();
        case.check()?;
    }
    Ok(cases)
}

/// A Responses request as the proxy sends it to a Messages backend: parsed,
/// completed (nothing stored before it) and written as Messages; the body's
/// length and the reply's context.
fn r2m_request(
    body: &[u8],
) -> Result<(usize, r2m::ExchangeContext), wirebridge_convert::ConvertError> {
    let options = r2c::Options::default();
    let parsed = r2c::ParsedRequest::parse(body)?;
    let whole = r2r::translate_request(parsed, &r2c::History::default(), &options)?;
    let written = r2m::translate_request(&whole.body, &options)?;
    let context = r2m::ExchangeContext {
        backend: written.context,
        native: whole.context,
    };
    Ok((written.body.len(), context))
}

fn r2c_request(body: &[u8]) -> Result<r2c::TranslatedRequest, String> {
    r2c::translate_request(body, &r2c::Options::default())
        .map_err(|e| format!("the benchmark request does not translate: {e}"))
}

fn to_bytes(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("values serialize")
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `text` cut to at most `max` bytes, at a line end when there is one.
fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &text[..end];
    cut[..cut.rfind('\n').unwrap_or(cut.len())].to_owned()
}

fn first_text(item: &Value) -> &str {
    item.pointer("/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A ~3 KB Codex turn: shortened instructions, the environment, the user's
/// question, a tool call and its result, and three tools.
fn small_request(body: &Value) -> Value {
    let mut request = body.clone();
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let mut kept = Vec::new();
    for (i, item) in input.iter().enumerate() {
        let mut item = item.clone();
        if i == 0 {
            item["content"][0]["text"] = Value::from(truncate(first_text(&item), 900));
        } else if first_text(&item).starts_with("<skills_instructions>") {
            continue;
        }
        kept.push(item);
    }
    request["input"] = Value::Array(kept);
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    request["tools"] = Value::Array(
        tools
            .into_iter()
            .filter(|t| {
                matches!(t["name"].as_str(), Some("write_stdin" | "view_image"))
                    || t["type"] == "web_search"
            })
            .collect(),
    );
    if let Some(map) = request.as_object_mut() {
        map.remove("client_metadata");
    }
    request
}

/// A ~50 KB request: the whole Codex request, with earlier turns (a
/// question, a command, its output, an answer) before the last question.
fn large_request(body: &Value) -> Value {
    conversation(body, 49_000)
}

/// The whole Codex request with earlier turns (a question, a command, its
/// output, an answer) before the last question, until it holds at least
/// `target` bytes of JSON, from the fixtures in `shared`.
pub fn codex_conversation(shared: &Path, target: usize) -> Result<Vec<u8>, String> {
    Ok(to_bytes(&conversation(&codex_body(shared)?, target)))
}

fn conversation(body: &Value, target: usize) -> Value {
    let mut request = body.clone();
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let prose = first_text(&input[0]).to_owned();
    let question = input
        .iter()
        .position(|i| i["role"] == "user" && first_text(i) == "weather in SF?")
        .unwrap_or(input.len());
    let (head, tail) = input.split_at(question);
    let mut items: Vec<Value> = head.to_vec();
    // The size is counted as items are added rather than by writing the
    // whole request again for each turn: an item added to a non-empty array
    // adds its own JSON and a comma.
    let mut size = {
        let mut r = request.clone();
        let mut all = items.clone();
        all.extend_from_slice(tail);
        r["input"] = Value::Array(all);
        to_bytes(&r).len()
    };
    let mut turn = 0;
    while size < target && turn <= target / 100 {
        let at = (turn * 997) % prose.len().saturating_sub(1200).max(1);
        let mut start = at;
        while !prose.is_char_boundary(start) {
            start += 1;
        }
        let excerpt = truncate(&prose[start..], 900);
        let call_id = format!("call_turn{turn:02}");
        let turn_items = [
            json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": format!("Step {turn}: show me the next part of the guidelines.")}]}),
            json!({"type": "function_call", "name": "exec_command", "call_id": call_id,
                "arguments": format!("{{\"cmd\":\"sed -n '{},{}p' AGENTS.md\",\"yield_time_ms\":1000}}", turn * 40 + 1, turn * 40 + 40)}),
            json!({"type": "function_call_output", "call_id": call_id,
                "output": format!("Chunk ID: {turn:04x}\nWall time: 0.0021 seconds\nProcess exited with code 0\nOutput:\n{excerpt}")}),
            json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": truncate(&excerpt, 300)}]}),
        ];
        for item in turn_items {
            size += to_bytes(&item).len() + 1;
            items.push(item);
        }
        turn += 1;
    }
    items.extend_from_slice(tail);
    request["input"] = Value::Array(items);
    request
}

/// A Chat stream of `n` events: the recorded first chunk, recorded content
/// chunks repeated, the finish and usage chunks, and `[DONE]`.
fn chat_stream(lines: &[String], n: usize) -> Vec<String> {
    let (first, rest) = lines.split_first().expect("a recorded stream");
    let finish = rest
        .iter()
        .position(|l| l.contains("\"finish_reason\":\"stop\""));
    let finish = finish.expect("the recording has a finish chunk");
    let content = &rest[..finish];
    let mut events = vec![first.clone()];
    events.extend(
        content
            .iter()
            .cycle()
            .take(n - 1 - (rest.len() - finish) - 1)
            .cloned(),
    );
    events.extend(rest[finish..].iter().cloned());
    events.push("[DONE]".to_owned());
    events
}

/// A Responses stream of `n` events: the recorded message item, its
/// recorded text deltas repeated, and the closing events carrying the whole
/// text, as the Responses API sends them.
fn responses_stream(lines: &[String], n: usize) -> Vec<String> {
    let events: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    fn of<'e>(events: &'e [Value], kind: &'e str) -> impl Iterator<Item = &'e Value> {
        events.iter().filter(move |e| e["type"] == kind)
    }
    let of = |kind: &'static str| of(&events, kind);
    let one = |kind: &'static str| {
        of(kind)
            .last()
            .cloned()
            .expect("the recording has the event")
    };
    let deltas: Vec<&Value> = of("response.output_text.delta").collect();
    let count = n - 8;
    let mut out = vec![one("response.created"), one("response.in_progress")];
    out.push(
        of("response.output_item.added")
            .last()
            .cloned()
            .expect("a message item"),
    );
    out.push(one("response.content_part.added"));
    let mut text = String::new();
    for delta in deltas.iter().cycle().take(count) {
        text.push_str(delta["delta"].as_str().unwrap_or_default());
        out.push((*delta).clone());
    }
    let mut done = one("response.output_text.done");
    done["text"] = Value::from(text.as_str());
    let mut part = one("response.content_part.done");
    part["part"]["text"] = Value::from(text.as_str());
    let mut item = of("response.output_item.done")
        .last()
        .cloned()
        .expect("the message item");
    item["item"]["content"][0]["text"] = Value::from(text.as_str());
    let mut completed = one("response.completed");
    completed["response"]["output"] = json!([item["item"].clone()]);
    out.extend([done, part, item, completed]);
    for (seq, event) in out.iter_mut().enumerate() {
        event["sequence_number"] = Value::from(seq);
    }
    out.iter()
        .map(|e| String::from_utf8(to_bytes(e)).expect("JSON is UTF-8"))
        .collect()
}

/// A Messages stream of `n` events: a message with one text block whose
/// deltas are the recorded Chat stream's content, repeated, as a Messages
/// backend would stream the same answer.
fn messages_stream(chat_lines: &[String], n: usize) -> Vec<String> {
    let deltas: Vec<String> = chat_lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|chunk| {
            chunk
                .pointer("/choices/0/delta/content")?
                .as_str()
                .map(str::to_owned)
        })
        .filter(|text| !text.is_empty())
        .collect();
    let mut out = vec![
        json!({"type": "message_start", "message": {"id": "msg_bench", "type": "message",
            "role": "assistant", "model": "claude-bench", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 1200, "cache_read_input_tokens": 900, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ];
    for text in deltas.iter().cycle().take(n - 5) {
        out.push(json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": text}}));
    }
    out.push(json!({"type": "content_block_stop", "index": 0}));
    out.push(
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
        "usage": {"output_tokens": n}}),
    );
    out.push(json!({"type": "message_stop"}));
    out.iter()
        .map(|e| String::from_utf8(to_bytes(e)).expect("JSON is UTF-8"))
        .collect()
}

/// Frames event payloads as the upstream sends them, returning the bytes
/// and where each event is.
fn frame(direction: Direction, events: &[String]) -> (Vec<u8>, Vec<Range<usize>>) {
    let mut sse = Vec::new();
    let mut ranges = Vec::new();
    for data in events {
        let start = sse.len();
        if direction != Direction::ResponsesToChat {
            let kind = serde_json::from_str::<Value>(data)
                .ok()
                .and_then(|v| v["type"].as_str().map(str::to_owned));
            wirebridge_sse::encode_event(&mut sse, kind.as_deref(), data);
        } else {
            wirebridge_sse::encode_data(&mut sse, data);
        }
        ranges.push(start..sse.len());
    }
    (sse, ranges)
}

fn json_documents(events: &[String]) -> Vec<Vec<u8>> {
    events
        .iter()
        .filter(|e| e.starts_with('{'))
        .map(|e| e.as_bytes().to_vec())
        .collect()
}

fn request_case(direction: Direction, kind: &str, body: Vec<u8>) -> Case {
    Case {
        name: format!("{}/{kind}", direction.as_str()),
        input_bytes: body.len(),
        items: 1,
        direction,
        contexts: Contexts::default(),
        baseline: vec![body.clone()],
        work: Work::Request(body),
    }
}

fn stream_case(direction: Direction, kind: &str, events: &[String]) -> Case {
    let (sse, ranges) = frame(direction, events);
    Case {
        name: format!("{}/{kind}", direction.as_str()),
        input_bytes: sse.len(),
        items: ranges.len() as u64,
        direction,
        contexts: Contexts::default(),
        baseline: json_documents(events),
        work: Work::Stream {
            sse,
            events: ranges,
        },
    }
}

/// A content chunk (a text delta event) from the middle of a stream.
fn chunk_case(direction: Direction, events: &[String]) -> Case {
    let (sse, ranges) = frame(direction, events);
    let at = match direction {
        Direction::ResponsesToChat | Direction::ResponsesToMessages => 12,
        Direction::ChatToResponses => 16,
    };
    let chunk = sse[ranges[at].clone()].to_vec();
    Case {
        name: format!("{}/chunk", direction.as_str()),
        input_bytes: chunk.len(),
        items: 1,
        direction,
        contexts: Contexts::default(),
        baseline: vec![events[at].as_bytes().to_vec()],
        work: Work::Chunk {
            prologue: sse[..ranges[at - 1].end].to_vec(),
            chunk,
        },
    }
}

/// A stream translator of either direction, driven as the proxy drives it.
type Stream = SseTranslator<Box<dyn StreamTranslate>>;

fn stream(direction: Direction, contexts: &Contexts) -> Stream {
    SseTranslator::new(match direction {
        Direction::ResponsesToChat => {
            Box::new(r2c::StreamTranslator::new(contexts.responses.clone()))
        }
        Direction::ChatToResponses => Box::new(c2r::StreamTranslator::new(contexts.chat.clone())),
        Direction::ResponsesToMessages => {
            Box::new(r2m::StreamTranslator::new(contexts.messages.clone()))
        }
    })
}

/// A case ready to run: the output buffer and, for the chunk case, the
/// translator in steady state.
pub struct Runner<'a> {
    case: &'a Case,
    out: Frames,
    steady: Option<Stream>,
    pushed: u32,
    finished: bool,
}

impl Case {
    /// Prepares to run the case.
    pub fn runner(&self) -> Runner<'_> {
        Runner {
            case: self,
            out: Frames::sse(),
            steady: None,
            pushed: 0,
            finished: false,
        }
    }

    /// Runs the case once, checking that it translates (setup only).
    fn check(&self) -> Result<(), String> {
        let mut runner = self.runner();
        let written = runner.run();
        if written > 0 && runner.finished {
            Ok(())
        } else {
            Err(format!("case {} produced no complete output", self.name))
        }
    }
}

impl Runner<'_> {
    /// Translates the input once; returns the bytes written.
    pub fn run(&mut self) -> usize {
        let case = self.case;
        match &case.work {
            Work::Request(body) => {
                let written = match case.direction {
                    Direction::ResponsesToChat => {
                        r2c::translate_request(body, &r2c::Options::default()).map(|t| t.body.len())
                    }
                    Direction::ChatToResponses => {
                        c2r::translate_request(body, &c2r::Options::default()).map(|t| t.body.len())
                    }
                    Direction::ResponsesToMessages => r2m_request(body).map(|(len, _)| len),
                };
                self.finished = written.is_ok();
                written.unwrap_or(0)
            }
            Work::Stream { sse, events } => {
                let mut stream = stream(case.direction, &case.contexts);
                let mut written = 0;
                for range in events {
                    stream.feed(&sse[range.clone()], &mut self.out);
                    written += self.out.len();
                    self.out.clear();
                }
                stream.finish(&mut self.out);
                written += self.out.len();
                self.out.clear();
                self.finished = stream.is_finished();
                written
            }
            Work::Chunk { prologue, chunk } => {
                if self.pushed.is_multiple_of(CHUNKS_PER_TRANSLATOR) {
                    let mut stream = stream(case.direction, &case.contexts);
                    stream.feed(prologue, &mut self.out);
                    self.out.clear();
                    self.steady = Some(stream);
                }
                self.pushed = self.pushed.wrapping_add(1);
                let stream = self.steady.as_mut().expect("set above");
                stream.feed(chunk, &mut self.out);
                let written = self.out.len();
                self.out.clear();
                self.finished = true;
                written
            }
        }
    }

    /// The baseline once: every JSON document of the input parsed into a
    /// `serde_json::Value` and written back. Returns the bytes written.
    pub fn baseline(&mut self) -> usize {
        let mut written = 0;
        for document in &self.case.baseline {
            let value: Value = serde_json::from_slice(document).expect("the input is JSON");
            written += serde_json::to_vec(&value).expect("values serialize").len();
        }
        written
    }
}
