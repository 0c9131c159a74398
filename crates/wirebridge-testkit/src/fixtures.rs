//! Recorded fixtures from `shared/fixtures` (see its README), loaded as the
//! bytes an upstream or a client would really send.
//!
//! The shared directory is a sibling of the repository checkout
//! (`<checkout>/../shared`); set `WIREBRIDGE_SHARED_DIR` to use another one.
//! Files are discovered by listing directories, so new recordings are picked
//! up without code changes. Loaders panic with a clear message when the
//! fixtures are missing: this is test code.

use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

pub use crate::split::{split_points, split_random};
pub use crate::sse::{encode_sse, parse_sse, SseFrame};

/// Environment variable that overrides the location of the shared directory.
pub const SHARED_DIR_ENV: &str = "WIREBRIDGE_SHARED_DIR";

/// The shared directory (holding `fixtures/` and `spec/`): the value of
/// `WIREBRIDGE_SHARED_DIR` when set and non-empty, else `../../../shared`
/// relative to this crate's manifest directory.
pub fn shared_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(SHARED_DIR_ENV) {
        if !dir.is_empty() {
            return PathBuf::from(dir);
        }
    }
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    default.canonicalize().unwrap_or(default)
}

/// Path of a fixture file, `rel` being relative to `shared/fixtures`
/// (e.g. `"openai-python/chat-stream-text.sse"`), or, when it starts with
/// `recorded/`, to the project's own [`recorded_dir`].
pub fn fixture_path(rel: &str) -> PathBuf {
    match rel.strip_prefix("recorded/") {
        Some(own) => recorded_dir().join(own),
        None => shared_dir().join("fixtures").join(rel),
    }
}

/// The bytes of a fixture file. Panics when it cannot be read.
pub fn load_bytes(rel: &str) -> Vec<u8> {
    let path = fixture_path(rel);
    fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read fixture {} ({e}); the shared directory is {} (override with {SHARED_DIR_ENV})",
            path.display(),
            shared_dir().display()
        )
    })
}

/// Which API a recorded stream belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamKind {
    /// Chat Completions: `data: {chat.completion.chunk}` frames and `data: [DONE]`.
    Chat,
    /// Responses: `event: TYPE` + `data: {…}` frames, no `[DONE]`.
    Responses,
}

/// A recorded stream, as raw SSE bytes exactly as an upstream would send them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureStream {
    /// Path relative to `shared/fixtures`, with `#N` appended (1-based) when
    /// the file holds several concatenated responses.
    pub name: String,
    /// The API the stream belongs to.
    pub kind: StreamKind,
    /// Raw SSE bytes.
    pub sse: Vec<u8>,
}

impl FixtureStream {
    /// The stream parsed with the reference parser [`parse_sse`].
    pub fn frames(&self) -> Vec<SseFrame> {
        parse_sse(&self.sse)
    }
}

/// Files in `shared/fixtures/<dir>` whose name ends with `suffix` (and starts
/// with `prefix`), sorted by name, as paths relative to `shared/fixtures`.
fn list(dir: &str, prefix: &str, suffix: &str) -> Vec<String> {
    let path = fixture_path(dir);
    let entries = fs::read_dir(&path).unwrap_or_else(|e| {
        panic!(
            "cannot list fixture directory {} ({e}); set {SHARED_DIR_ENV} to the shared directory",
            path.display()
        )
    });
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(prefix) && n.ends_with(suffix))
        .collect();
    names.sort();
    names.into_iter().map(|n| format!("{dir}/{n}")).collect()
}

/// Guess the API of raw SSE bytes: Responses when a frame has an `event:`
/// name or a JSON `type` starting with `response.`, else Chat.
fn sniff_kind(sse: &[u8]) -> StreamKind {
    for f in parse_sse(sse) {
        if f.event.is_some() {
            return StreamKind::Responses;
        }
        if let Ok(v) = serde_json::from_str::<Value>(&f.data) {
            if v.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.starts_with("response."))
            {
                return StreamKind::Responses;
            }
            if v.get("object").is_some() || v.get("choices").is_some() {
                return StreamKind::Chat;
            }
        }
    }
    StreamKind::Chat
}

/// The non-blank lines of a `*.chunks.txt` file (one JSON event per line).
fn chunk_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// Re-frame `*.chunks.txt` content (one JSON per line, SSE framing stripped)
/// as the raw SSE an upstream sends:
///
/// * Chat: `data: {json}\n\n` per line, then `data: [DONE]\n\n`;
/// * Responses: `event: {type}\ndata: {json}\n\n` per line (no `[DONE]`).
///
/// Blank lines are skipped. Panics when a Responses line has no `type`.
pub fn reframe_chunks(kind: StreamKind, text: &str) -> Vec<u8> {
    let mut out = String::with_capacity(text.len() + 64);
    for line in chunk_lines(text) {
        match kind {
            StreamKind::Chat => {}
            StreamKind::Responses => {
                let v: Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("bad JSON line in Responses chunks ({e}): {line}"));
                let ty = v
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_else(|| panic!("Responses chunk line without `type`: {line}"));
                out.push_str("event: ");
                out.push_str(ty);
                out.push('\n');
            }
        }
        out.push_str("data: ");
        out.push_str(line);
        out.push_str("\n\n");
    }
    if kind == StreamKind::Chat {
        out.push_str("data: [DONE]\n\n");
    }
    out.into_bytes()
}

/// Split Responses chunk lines into one group per `response.created`
/// (lines before the first `response.created` stay with the first group).
fn split_responses(lines: Vec<&str>) -> Vec<Vec<&str>> {
    let mut groups: Vec<Vec<&str>> = Vec::new();
    for line in lines {
        let is_created = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned))
            .is_some_and(|t| t == "response.created");
        if is_created && groups.last().is_some_and(|g| !g.is_empty()) {
            groups.push(Vec::new());
        }
        if groups.is_empty() {
            groups.push(Vec::new());
        }
        groups.last_mut().expect("non-empty").push(line);
    }
    groups
}

/// The project's own recordings of real servers, `tests/recorded/<server>/`
/// in the repository (see the README there): what a live run recorded.
pub fn recorded_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/recorded")
}

/// Files of [`recorded_dir`] named `<prefix>*<suffix>`, in every server's
/// folder, sorted, with their bytes; named `recorded/<server>/<file>`.
fn recorded(prefix: &str, suffix: &str) -> Vec<(String, Vec<u8>)> {
    let root = recorded_dir();
    let mut found = Vec::new();
    for server in fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot list {} ({e})", root.display()))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
    {
        let server_name = server.file_name().to_string_lossy().into_owned();
        for file in fs::read_dir(server.path())
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            let name = file.file_name().to_string_lossy().into_owned();
            if name.starts_with(prefix)
                && name.ends_with(suffix)
                && !name.ends_with(".request.json")
            {
                let bytes = fs::read(file.path()).unwrap_or_else(|e| panic!("{name}: {e}"));
                found.push((format!("recorded/{server_name}/{name}"), bytes));
            }
        }
    }
    found.sort();
    found
}

fn recorded_streams(kind: StreamKind, prefix: &str) -> Vec<FixtureStream> {
    recorded(prefix, ".sse")
        .into_iter()
        .map(|(name, sse)| FixtureStream { name, kind, sse })
        .collect()
}

fn read_text(rel: &str) -> String {
    String::from_utf8(load_bytes(rel)).unwrap_or_else(|e| panic!("fixture {rel} is not UTF-8: {e}"))
}

fn sse_streams(kind: StreamKind) -> Vec<FixtureStream> {
    list("openai-python", "", ".sse")
        .into_iter()
        .filter_map(|rel| {
            let sse = load_bytes(&rel);
            (sniff_kind(&sse) == kind).then_some(FixtureStream {
                name: rel,
                kind,
                sse,
            })
        })
        .collect()
}

/// Every recorded Chat Completions stream, as raw SSE bytes:
/// `openai-python/*.sse` (as is), `vercel-ai/chat/*.chunks.txt` (re-framed
/// with `data:` lines and a final `data: [DONE]`), and the project's own
/// `recorded/*/chat-stream-*.sse`, each group sorted by name.
pub fn chat_streams() -> Vec<FixtureStream> {
    let mut out = sse_streams(StreamKind::Chat);
    out.extend(recorded_streams(StreamKind::Chat, "chat-stream-"));
    for rel in list("vercel-ai/chat", "", ".chunks.txt") {
        let text = read_text(&rel);
        out.push(FixtureStream {
            sse: reframe_chunks(StreamKind::Chat, &text),
            name: rel,
            kind: StreamKind::Chat,
        });
    }
    out
}

/// Every recorded Responses stream, as raw SSE bytes:
/// `vercel-ai/responses/*.chunks.txt` re-framed with `event:` + `data:` lines
/// (any Responses `.sse` file in `openai-python/`, and the project's own
/// `recorded/*/responses-stream-*.sse`). A file holding several
/// concatenated responses is split on `response.created` into streams named
/// `FILE#1`, `FILE#2`, ….
pub fn responses_streams() -> Vec<FixtureStream> {
    let mut out = sse_streams(StreamKind::Responses);
    out.extend(recorded_streams(StreamKind::Responses, "responses-stream-"));
    for rel in list("vercel-ai/responses", "", ".chunks.txt") {
        let text = read_text(&rel);
        let groups = split_responses(chunk_lines(&text));
        let many = groups.len() > 1;
        for (i, group) in groups.into_iter().enumerate() {
            let name = if many {
                format!("{rel}#{}", i + 1)
            } else {
                rel.clone()
            };
            out.push(FixtureStream {
                name,
                kind: StreamKind::Responses,
                sse: reframe_chunks(StreamKind::Responses, &group.join("\n")),
            });
        }
    }
    out
}

/// True for an HTTP error body (`{"error": {...}}` without an `object`).
fn is_error_body(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Value>(bytes)
        .map(|v| v.get("object").is_none() && v.get("error").is_some_and(Value::is_object))
        .unwrap_or(false)
}

fn bodies(files: Vec<String>) -> Vec<(String, Vec<u8>)> {
    files
        .into_iter()
        .map(|rel| {
            let bytes = load_bytes(&rel);
            (rel, bytes)
        })
        .filter(|(_, bytes)| !is_error_body(bytes))
        .collect()
}

/// Non-streaming Chat completion bodies (file bytes as recorded):
/// `openai-python/chat-json-*.json` and `vercel-ai/chat/*.json` except HTTP
/// error bodies, and the project's own `recorded/*/chat-json-*.json`.
pub fn chat_bodies() -> Vec<(String, Vec<u8>)> {
    let mut files = list("openai-python", "chat-json-", ".json");
    files.extend(list("vercel-ai/chat", "", ".json"));
    let mut out = bodies(files);
    out.extend(recorded("chat-json-", ".json"));
    out
}

/// Non-streaming Responses bodies (file bytes as recorded):
/// `vercel-ai/responses/*.json` except HTTP error bodies (`openai-error.1.json`),
/// and the project's own `recorded/*/responses-json-*.json`.
pub fn responses_bodies() -> Vec<(String, Vec<u8>)> {
    let mut out = bodies(list("vercel-ai/responses", "", ".json"));
    out.extend(recorded("responses-json-", ".json"));
    out
}

/// HTTP error bodies (`{"error": {...}}`) among the recorded JSON files of
/// both APIs, e.g. `vercel-ai/responses/openai-error.1.json`.
pub fn error_bodies() -> Vec<(String, Vec<u8>)> {
    let mut files = list("vercel-ai/chat", "", ".json");
    files.extend(list("vercel-ai/responses", "", ".json"));
    files
        .into_iter()
        .map(|rel| {
            let bytes = load_bytes(&rel);
            (rel, bytes)
        })
        .filter(|(_, bytes)| is_error_body(bytes))
        .collect()
}

/// Requests sent by the real Codex CLI (`codex-peer/*.json`, which wrap
/// `{method, path, headers, body}`): the `body` of each, as compact JSON with
/// its key order and number spellings preserved.
pub fn codex_requests() -> Vec<(String, Vec<u8>)> {
    list("codex-peer", "", ".json")
        .into_iter()
        .map(|rel| {
            let bytes = load_bytes(&rel);
            let wrapper: BTreeMap<String, Box<RawValue>> = serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("{rel}: not a JSON object: {e}"));
            let body = wrapper
                .get("body")
                .unwrap_or_else(|| panic!("{rel}: no `body` field"));
            (rel, crate::json::minify(body.get()).into_bytes())
        })
        .collect()
}
