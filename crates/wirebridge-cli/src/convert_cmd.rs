//! `wirebridge convert`: offline translation of a captured body or stream.

use std::borrow::Cow;
use std::io::Read;
use std::path::PathBuf;

use wirebridge_convert::{
    chat_to_responses, responses_to_chat, Frames, LossReport, SseTranslator, StreamTranslate,
};

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// A `POST /v1/chat/completions` body.
    ChatRequest,
    /// A `chat.completion` body.
    ChatResponse,
    /// A `chat.completion.chunk` SSE stream.
    ChatStream,
    /// A `POST /v1/responses` body.
    ResponsesRequest,
    /// A `Response` body.
    ResponsesResponse,
    /// A Responses SSE event stream.
    ResponsesStream,
}

impl Kind {
    /// The same kind in the other API.
    pub fn counterpart(self) -> Kind {
        match self {
            Kind::ChatRequest => Kind::ResponsesRequest,
            Kind::ChatResponse => Kind::ResponsesResponse,
            Kind::ChatStream => Kind::ResponsesStream,
            Kind::ResponsesRequest => Kind::ChatRequest,
            Kind::ResponsesResponse => Kind::ChatResponse,
            Kind::ResponsesStream => Kind::ChatStream,
        }
    }
}

/// Why a conversion failed; exit code 1.
#[derive(Debug, thiserror::Error)]
pub enum ConvertCmdError {
    /// The input cannot be read.
    #[error("cannot read {0}: {1}")]
    Read(String, std::io::Error),
    /// No conversion between these kinds.
    #[error("cannot convert {from:?} to {to:?}: convert a kind to the same kind of the other API")]
    Unsupported {
        /// From.
        from: Kind,
        /// To.
        to: Kind,
    },
    /// The input is not a valid document of its kind.
    #[error("{0}")]
    Invalid(#[from] wirebridge_convert::ConvertError),
    /// The stream ended in failure.
    #[error(
        "the stream ended in failure (the translated stream, with its error event, was written)"
    )]
    StreamFailed,
}

/// Translated output and what it lost.
pub struct Converted {
    /// The translated document.
    pub output: Vec<u8>,
    /// What could not be carried.
    pub losses: LossReport,
}

/// Reads `input` (a path, or `-` for stdin).
pub fn read_input(input: &Option<PathBuf>) -> Result<Vec<u8>, ConvertCmdError> {
    match input.as_deref().filter(|p| p.as_os_str() != "-") {
        Some(path) => {
            std::fs::read(path).map_err(|e| ConvertCmdError::Read(path.display().to_string(), e))
        }
        None => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|e| ConvertCmdError::Read("stdin".into(), e))?;
            Ok(bytes)
        }
    }
}

/// Translates `bytes` of kind `from` into kind `to`.
pub fn convert(from: Kind, to: Kind, bytes: &[u8]) -> Result<Converted, ConvertCmdError> {
    if to != from.counterpart() {
        return Err(ConvertCmdError::Unsupported { from, to });
    }
    Ok(match from {
        Kind::ResponsesRequest => {
            let t = responses_to_chat::translate_request(
                bytes,
                &responses_to_chat::Options::default(),
            )?;
            Converted {
                output: t.body,
                losses: t.losses,
            }
        }
        Kind::ChatRequest => {
            let t = chat_to_responses::translate_request(
                bytes,
                &chat_to_responses::Options::default(),
            )?;
            Converted {
                output: t.body,
                losses: t.losses,
            }
        }
        Kind::ChatResponse => {
            let t = responses_to_chat::translate_body(
                bytes,
                &responses_to_chat::ResponsesContext::default(),
            )?;
            Converted {
                output: t.body,
                losses: t.losses,
            }
        }
        Kind::ResponsesResponse => {
            let t = chat_to_responses::translate_body(
                bytes,
                &chat_to_responses::ChatContext::default(),
            )?;
            Converted {
                output: t.body,
                losses: t.losses,
            }
        }
        Kind::ChatStream => {
            let translator = responses_to_chat::StreamTranslator::new(
                responses_to_chat::ResponsesContext::default(),
            );
            let (output, translator) = translate_stream(translator, bytes);
            let failed = translator.summary().outcome.as_deref() == Some("failed");
            finish_stream(output, translator.losses().clone(), failed)?
        }
        Kind::ResponsesStream => {
            let ctx = chat_to_responses::ChatContext {
                include_usage: true,
                ..Default::default()
            };
            let translator = chat_to_responses::StreamTranslator::new(ctx);
            let (output, translator) = translate_stream(translator, bytes);
            let failed = translator.summary().outcome.as_deref() == Some("error");
            finish_stream(output, translator.losses().clone(), failed)?
        }
    })
}

/// Runs a whole captured stream through the translator, as the proxy does.
fn translate_stream<T: StreamTranslate>(translator: T, bytes: &[u8]) -> (Vec<u8>, T) {
    let mut stream = SseTranslator::new(translator);
    let mut output = Frames::sse();
    stream.feed(&sse_framed(bytes), &mut output);
    stream.finish(&mut output);
    (output.take().bytes, stream.into_translator())
}

fn finish_stream(
    output: Vec<u8>,
    losses: LossReport,
    failed: bool,
) -> Result<Converted, ConvertCmdError> {
    if failed {
        use std::io::Write;
        let _ = std::io::stdout().write_all(&output);
        return Err(ConvertCmdError::StreamFailed);
    }
    Ok(Converted { output, losses })
}

/// The capture as SSE: as given, or, for one JSON document per line (a
/// capture with the SSE framing stripped), each line framed as an event.
fn sse_framed(bytes: &[u8]) -> Cow<'_, [u8]> {
    let text = String::from_utf8_lossy(bytes);
    let framed = text
        .lines()
        .any(|l| l.starts_with("data:") || l.starts_with("event:"));
    if framed {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        wirebridge_sse::encode_data(&mut out, line);
    }
    Cow::Owned(out)
}
