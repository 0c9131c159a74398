//! The translation cases measured by `wirebridge-bench` and by the
//! criterion benches at the repository's root (`cargo bench`), so both
//! measure the same work.
//!
//! Every case runs in every direction and has a baseline: parsing the same
//! input JSON into a `serde_json::Value` and writing it back with `to_vec`.
//!
//! - `request_3k`: a Codex turn with tools, a tool call and its result;
//! - `request_50k`: the full Codex request plus earlier turns;
//! - `chunk`: one ~300 B stream chunk (or event) in steady state, SSE
//!   decoding and encoding included;
//! - `stream_500`, `stream_5000`: whole recorded streams, extended by
//!   repeating their recorded deltas, decoded, translated and encoded;
//! - `body_500`: the reply body a backend answers with when asked for no
//!   stream, holding the text of the 500-event stream.
//!
//! The inputs come from the recorded fixtures in the shared directory (the
//! one holding `fixtures/`), found by [`shared_dir`].

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::Value;
use wirebridge_convert::chat_to_responses as c2r;
use wirebridge_convert::responses_to_chat as r2c;
use wirebridge_convert::responses_to_messages as r2m;
use wirebridge_convert::responses_to_responses as r2r;
use wirebridge_convert::{Frames, SseTranslator, StreamTranslate};

mod inputs;

use inputs::{
    chat_body, chat_stream, codex_body, large_request, lines, load, messages_body, messages_stream,
    messages_thinking_stream, responses_body, responses_stream, small_request, to_bytes,
    CHAT_STREAM, RESPONSES_STREAM,
};
pub use inputs::{codex_conversation, codex_prose, codex_tools, codex_turn};

/// Overrides where the shared directory (holding `fixtures/`) is.
pub const SHARED_DIR_ENV: &str = "WIREBRIDGE_SHARED_DIR";

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
#[derive(Debug)]
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

#[derive(Debug)]
enum Work {
    Request(Vec<u8>),
    /// A reply body, translated whole.
    Body(Vec<u8>),
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
#[derive(Clone, Default, Debug)]
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
        let stream_500 = events(500);
        let body = match direction {
            Direction::ResponsesToChat => chat_body(&stream_500),
            Direction::ChatToResponses => responses_body(&stream_500),
            Direction::ResponsesToMessages => messages_body(&stream_500),
        };
        cases.push(body_case(direction, body));
        cases.push(chunk_case(direction, &stream_500));
        cases.push(stream_case(direction, "stream_500", &stream_500));
        cases.push(stream_case(direction, "stream_5000", &events(5000)));
        if direction == Direction::ResponsesToMessages {
            let thinking = messages_thinking_stream(&chat_lines, 500);
            cases.push(stream_case(direction, "thinking_500", &thinking));
        }
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

fn body_case(direction: Direction, body: Vec<u8>) -> Case {
    Case {
        name: format!("{}/body_500", direction.as_str()),
        input_bytes: body.len(),
        items: 1,
        direction,
        contexts: Contexts::default(),
        baseline: vec![body.clone()],
        work: Work::Body(body),
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

impl std::fmt::Debug for Runner<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The translator in steady state is a trait object: its case and
        // how far it went say what it is.
        f.debug_struct("Runner")
            .field("case", &self.case.name)
            .field("pushed", &self.pushed)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
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
            Work::Body(body) => {
                let contexts = &case.contexts;
                let written = match case.direction {
                    Direction::ResponsesToChat => {
                        r2c::translate_body(body, &contexts.responses).map(|t| t.body.len())
                    }
                    Direction::ChatToResponses => {
                        c2r::translate_body(body, &contexts.chat).map(|t| t.body.len())
                    }
                    Direction::ResponsesToMessages => {
                        r2m::translate_body(body, &contexts.messages).map(|t| t.body.len())
                    }
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
