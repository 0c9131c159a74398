//! Replay mode: a recorded file served for every generation request.

use bytes::Bytes;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Why a replay file cannot be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The file cannot be read.
    #[error("cannot read the replay file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line of a `*.chunks.txt` file is not a JSON object.
    #[error("replay file {path}, line {line}: not a JSON object ({reason})")]
    BadChunkLine {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// A loaded replay file: its content type and its chunks (one SSE event per
/// chunk for streams), whose concatenation is what is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replay {
    /// `text/event-stream`, `application/json` or `text/plain; charset=utf-8`.
    pub content_type: &'static str,
    /// The body, in chunks.
    pub chunks: Vec<Bytes>,
}

/// Load `path`: `*.chunks.txt` files (one JSON payload per line) are framed
/// as SSE, any other file is served byte for byte.
pub(crate) fn load(path: &Path) -> Result<Replay, ReplayError> {
    let bytes = std::fs::read(path).map_err(|source| ReplayError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".chunks.txt") {
        return reframe(path, &bytes);
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let content_type = match first {
        Some(b'{' | b'[') => "application/json",
        _ if looks_like_sse(&bytes) => "text/event-stream",
        _ => "text/plain; charset=utf-8",
    };
    let chunks = if content_type == "text/event-stream" {
        split_events(&bytes)
    } else {
        vec![Bytes::from(bytes)]
    };
    Ok(Replay {
        content_type,
        chunks,
    })
}

/// Whether a line of `bytes` starts with an SSE field or a comment.
fn looks_like_sse(bytes: &[u8]) -> bool {
    bytes.split(|&b| b == b'\n').any(|line| {
        line.starts_with(b"data:") || line.starts_with(b"event:") || line.starts_with(b":")
    })
}

/// Split raw SSE after each blank line, so each event is its own chunk.
fn split_events(bytes: &[u8]) -> Vec<Bytes> {
    let mut chunks = Vec::new();
    let mut start = 0;
    for i in 0..bytes.len() {
        if bytes[i] != b'\n' {
            continue;
        }
        let blank = (i >= 1 && bytes[i - 1] == b'\n')
            || (i >= 2 && bytes[i - 1] == b'\r' && bytes[i - 2] == b'\n');
        if blank {
            chunks.push(Bytes::copy_from_slice(&bytes[start..=i]));
            start = i + 1;
        }
    }
    if start < bytes.len() {
        chunks.push(Bytes::copy_from_slice(&bytes[start..]));
    }
    chunks
}

/// Frame one-JSON-per-line content as SSE: Responses and Messages lines (a
/// `type` starting with `response.`, or `message_start`, or `error`, on any
/// line) as `event: TYPE\ndata: JSON\n\n`; Chat lines as `data: JSON\n\n`
/// followed by `data: [DONE]\n\n`.
fn reframe(path: &Path, bytes: &[u8]) -> Result<Replay, ReplayError> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let bad = |reason: String| ReplayError::BadChunkLine {
            path: path.to_path_buf(),
            line: n + 1,
            reason,
        };
        match serde_json::from_str::<Value>(line) {
            Ok(v @ Value::Object(_)) => lines.push((line, v)),
            Ok(_) => return Err(bad("not an object".to_string())),
            Err(e) => return Err(bad(e.to_string())),
        }
    }
    let event_type = |v: &Value| v.get("type").and_then(Value::as_str).map(str::to_string);
    // Responses and Messages streams name every event; Chat streams none.
    let named = lines.iter().any(|(_, v)| {
        event_type(v)
            .is_some_and(|t| t.starts_with("response.") || t == "message_start" || t == "error")
    });
    let mut chunks: Vec<Bytes> = lines
        .iter()
        .map(|(line, v)| match event_type(v).filter(|_| named) {
            Some(ty) => Bytes::from(format!("event: {ty}\ndata: {line}\n\n")),
            None => Bytes::from(format!("data: {line}\n\n")),
        })
        .collect();
    if !named {
        chunks.push(Bytes::from_static(b"data: [DONE]\n\n"));
    }
    Ok(Replay {
        content_type: "text/event-stream",
        chunks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_after_blank_lines() {
        let raw = b"data: 1\n\nevent: e\r\ndata: 2\r\n\r\ndata: 3";
        let chunks = split_events(raw);
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks.concat(), raw.to_vec());
        assert_eq!(&chunks[0][..], b"data: 1\n\n");
    }

    #[test]
    fn messages_lines_are_named_events() {
        let lines = concat!(
            r#"{"type":"message_start","message":{}}"#,
            "\n",
            r#"{"type":"ping"}"#,
            "\n",
            r#"{"type":"message_stop"}"#,
            "\n",
        );
        let replay = reframe(Path::new("m.chunks.txt"), lines.as_bytes()).unwrap();
        assert_eq!(replay.chunks.len(), 3, "no [DONE] after a Messages stream");
        assert_eq!(
            &replay.chunks[1][..],
            b"event: ping\ndata: {\"type\":\"ping\"}\n\n"
        );
    }

    #[test]
    fn sniffs_content() {
        assert!(looks_like_sse(b"\n: keepalive\n"));
        assert!(!looks_like_sse(b"hello"));
    }
}
