//! Content blocks a user sends (text, images, documents) as Responses input
//! parts, and `cache_control` as prompt-cache breakpoints.

use std::borrow::Cow;
use std::fmt::Display;

use serde_json::value::RawValue;
use wirebridge_wire::messages::lenient::{Block, BlockSource, Content, Source};
use wirebridge_wire::raw::{JsonStr, JsonText};
use wirebridge_wire::responses::strict::InputPart;

use super::path::Path;
use crate::chat_to_responses::locate;
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// A Responses prompt-cache breakpoint, `{"mode":"explicit"}`: where a
/// `cache_control` marks the end of a prefix worth caching.
pub(super) fn breakpoint() -> &'static RawValue {
    serde_json::from_str(r#"{"mode":"explicit"}"#).expect("a constant is valid JSON")
}

/// Parses a raw `content`, naming the failing block in the error.
pub(super) fn parse_content<'a>(
    raw: &'a RawValue,
    path: Path<'_>,
) -> Result<Option<Content<'a>>, ConvertError> {
    Content::from_raw(raw).map_err(|e| locate::<Vec<Block<'_>>>(raw, &path.to_string(), e))
}

/// A required text field of a block.
pub(super) fn required_text<'a>(
    text: Option<JsonStr<'a>>,
    path: impl Display,
    field: &str,
) -> Result<JsonText<'a>, ConvertError> {
    text.map(Into::into)
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.{field}")))
}

/// Whether a block is text: a `text` block, or an `input_text` block as
/// some agent SDKs send in Messages requests (the Responses name of the
/// same thing), read as one.
pub(super) fn is_text(kind: &str) -> bool {
    matches!(kind, "text" | "input_text")
}

/// A text, image, document or search result block as input parts (a
/// `content` document and a search result give one part per block they
/// hold); other blocks are the caller's.
pub(super) fn input_parts<'a>(
    block: &Block<'a>,
    path: Path<'_>,
    losses: &mut LossRecorder<'_>,
    out: &mut Vec<InputPart<'a>>,
) -> Result<(), ConvertError> {
    let start = out.len();
    match block.kind() {
        "text" | "input_text" => {
            if block
                .citations
                .is_some_and(|c| !matches!(c.get(), "null" | "[]"))
            {
                losses.record(
                    LossKind::UnsupportedContent,
                    format!("{path}.citations"),
                    "Responses input text carries no citations",
                )?;
            }
            out.push(InputPart::InputText {
                text: required_text(block.text, path, "text")?,
                prompt_cache_breakpoint: None,
            });
        }
        "image" => {
            if let Some(part) = image(block, path, losses)? {
                out.push(part);
            }
        }
        "document" => document(block, path, losses, out)?,
        "search_result" => search_result(block, path, losses, out)?,
        other => unreachable_kind(other, path)?,
    }
    if block.is_cache_breakpoint() && out.len() > start {
        set_breakpoint(out.last_mut().expect("a part was added"));
    }
    Ok(())
}

fn unreachable_kind(kind: &str, path: Path<'_>) -> Result<(), ConvertError> {
    Err(ConvertError::invalid(
        format!("{path}.type"),
        format!("'{kind}' is not a text, image, document or search result block"),
    ))
}

/// Marks a part as the end of a prefix to cache.
pub(super) fn set_breakpoint(part: &mut InputPart<'_>) {
    match part {
        InputPart::InputText {
            prompt_cache_breakpoint,
            ..
        }
        | InputPart::InputImage {
            prompt_cache_breakpoint,
            ..
        }
        | InputPart::InputFile {
            prompt_cache_breakpoint,
            ..
        } => *prompt_cache_breakpoint = Some(breakpoint()),
        InputPart::InputAudio { .. } => {}
    }
}

fn source<'b, 'a>(block: &'b Block<'a>, path: Path<'_>) -> Result<&'b Source<'a>, ConvertError> {
    match &block.source {
        Some(BlockSource::Object(source)) => Ok(source),
        Some(BlockSource::Url(_)) => Err(ConvertError::invalid(
            format!("{path}.source"),
            "an image's or a document's source is an object with a type, not a string",
        )),
        None => Err(ConvertError::MissingField(format!("{path}.source"))),
    }
}

/// `data:{media_type};base64,{data}`, from the block's escaped text.
fn data_url<'a>(source: &Source<'a>, path: Path<'_>) -> Result<JsonText<'a>, ConvertError> {
    let media_type = source
        .media_type
        .as_deref()
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.source.media_type")))?;
    let data = source
        .data
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.source.data")))?;
    let media = serde_json::to_string(media_type).expect("strings always serialize");
    let media = &media[1..media.len() - 1];
    Ok(JsonText::from_escaped(&format!(
        "data:{media};base64,{}",
        data.escaped()
    )))
}

/// A file the backend cannot fetch: an Anthropic Files API id.
fn file_id_loss(path: Path<'_>, losses: &mut LossRecorder<'_>) -> Result<(), ConvertError> {
    losses.record(
        LossKind::UnsupportedContent,
        format!("{path}.source"),
        "a file uploaded to Anthropic's Files API means nothing to this backend",
    )
}

fn unknown_source(source: &Source<'_>, path: Path<'_>, expected: &str) -> ConvertError {
    match source.kind() {
        "" => ConvertError::MissingField(format!("{path}.source.type")),
        other => ConvertError::invalid(
            format!("{path}.source.type"),
            format!("unknown source type '{other}' (expected {expected})"),
        ),
    }
}

fn image<'a>(
    block: &Block<'a>,
    path: Path<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<InputPart<'a>>, ConvertError> {
    let source = source(block, path)?;
    let image_url = match source.kind() {
        "base64" => data_url(source, path)?,
        "url" => required_text(source.url, path.member("source"), "url")?,
        "file" => {
            file_id_loss(path, losses)?;
            return Ok(None);
        }
        _ => return Err(unknown_source(source, path, "base64, url or file")),
    };
    Ok(Some(InputPart::InputImage {
        image_url: Some(image_url),
        file_id: None,
        // Anthropic has no detail setting; Responses requires one.
        detail: Cow::Borrowed("auto"),
        prompt_cache_breakpoint: None,
    }))
}

/// A document: a PDF (base64 or URL) as a file, plain text and `content`
/// documents as their text and images.
fn document<'a>(
    block: &Block<'a>,
    path: Path<'_>,
    losses: &mut LossRecorder<'_>,
    out: &mut Vec<InputPart<'a>>,
) -> Result<(), ConvertError> {
    let source = source(block, path)?;
    if asks_for_citations(block) {
        losses.record(
            LossKind::UnsupportedContent,
            format!("{path}.citations"),
            "Responses cannot cite the documents it is given",
        )?;
    }
    if block.context.is_some() {
        losses.record(
            LossKind::UnsupportedContent,
            format!("{path}.context"),
            "Responses files have no context text of their own",
        )?;
    }
    let title = block.title.map(JsonText::from);
    match source.kind() {
        "base64" => out.push(InputPart::InputFile {
            file_id: None,
            // A file sent inline needs a name; the title is the best one.
            filename: Some(title.unwrap_or_else(|| JsonText::from_text("document.pdf"))),
            file_data: Some(data_url(source, path)?),
            file_url: None,
            prompt_cache_breakpoint: None,
        }),
        "url" => out.push(InputPart::InputFile {
            file_id: None,
            filename: title,
            file_data: None,
            file_url: Some(required_text(source.url, path.member("source"), "url")?),
            prompt_cache_breakpoint: None,
        }),
        "file" => file_id_loss(path, losses)?,
        kind @ ("text" | "content") => {
            if block.title.is_some() {
                losses.record(
                    LossKind::UnsupportedContent,
                    format!("{path}.title"),
                    "a text document is sent as its text, without its title",
                )?;
            }
            if kind == "text" {
                out.push(InputPart::InputText {
                    text: required_text(source.data, path.member("source"), "data")?,
                    prompt_cache_breakpoint: None,
                });
                return Ok(());
            }
            let source_path = path.member("source");
            let content_path = source_path.member("content");
            let missing = || ConvertError::MissingField(content_path.to_string());
            let raw = source.content.ok_or_else(missing)?;
            match parse_content(raw, content_path)? {
                None => return Err(missing()),
                Some(Content::Text(text)) => out.push(InputPart::InputText {
                    text: text.into(),
                    prompt_cache_breakpoint: None,
                }),
                Some(Content::Blocks(blocks)) => {
                    for (k, inner) in blocks.iter().enumerate() {
                        let inner_path = content_path.index(k);
                        match inner.kind() {
                            "text" | "input_text" | "image" => {
                                input_parts(inner, inner_path, losses, out)?
                            }
                            other => unreachable_kind(other, inner_path)?,
                        }
                    }
                }
            }
        }
        _ => {
            return Err(unknown_source(
                source,
                path,
                "base64, url, text, content or file",
            ))
        }
    }
    Ok(())
}

/// A search result (what a tool or the client found, to be cited) as its
/// text blocks. Responses input has no search results: where the text came
/// from, its title and the citations asked of it are reported, as a text
/// document's title is.
fn search_result<'a>(
    block: &Block<'a>,
    path: Path<'_>,
    losses: &mut LossRecorder<'_>,
    out: &mut Vec<InputPart<'a>>,
) -> Result<(), ConvertError> {
    losses.record(
        LossKind::UnsupportedContent,
        format!("{path}.source"),
        "a search result is sent as its text, without its source and title",
    )?;
    if asks_for_citations(block) {
        losses.record(
            LossKind::UnsupportedContent,
            format!("{path}.citations"),
            "Responses cannot cite the search results it is given",
        )?;
    }
    let content_path = path.member("content");
    let missing = || ConvertError::MissingField(content_path.to_string());
    let parsed;
    let content = match (&block.parsed_content, block.content) {
        (Some(content), _) => content,
        (None, Some(raw)) => {
            parsed = parse_content(raw, content_path)?.ok_or_else(missing)?;
            &parsed
        }
        (None, None) => return Err(missing()),
    };
    match content {
        Content::Text(text) => out.push(InputPart::InputText {
            text: (*text).into(),
            prompt_cache_breakpoint: None,
        }),
        Content::Blocks(blocks) => {
            for (k, inner) in blocks.iter().enumerate() {
                let inner_path = content_path.index(k);
                match inner.kind() {
                    kind if is_text(kind) => input_parts(inner, inner_path, losses, out)?,
                    "" => return Err(ConvertError::MissingField(format!("{inner_path}.type"))),
                    other => {
                        return Err(ConvertError::invalid(
                            format!("{inner_path}.type"),
                            format!("a search result holds text blocks only, not '{other}'"),
                        ))
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether a document or a search result asks to be cited: its
/// `citations` is `{"enabled": true}`, or a shape the bridge does not know
/// (reported rather than dropped unseen). Citations are off by default.
fn asks_for_citations(block: &Block<'_>) -> bool {
    #[derive(serde::Deserialize)]
    struct Citations {
        enabled: Option<bool>,
    }
    match block.citations.map(|raw| raw.get()) {
        None | Some("null") => false,
        Some(raw) => {
            serde_json::from_str::<Citations>(raw).map_or(true, |c| c.enabled == Some(true))
        }
    }
}
