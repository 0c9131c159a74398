//! Content parts, tool results and other pieces of messages.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use wirebridge_wire::chat::lenient::{Content, ContentPart, ImageUrl};
use wirebridge_wire::raw::{json_as_string_literal, JsonStr, JsonText};
use wirebridge_wire::responses::strict::{InputPart, ToolOutput};
use wirebridge_wire::Str;

use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// Parses a raw `content`, naming the failing part in the error.
pub(super) fn parse_content<'a>(
    raw: &'a RawValue,
    path: &str,
) -> Result<Option<Content<'a>>, ConvertError> {
    Content::from_raw(raw).map_err(|e| locate::<Vec<ContentPart<'_>>>(raw, path, e))
}

/// Re-parses a value that failed with path tracking, to name the exact
/// field below `path` (only on this cold path).
pub(crate) fn locate<'a, T: Deserialize<'a>>(
    raw: &'a RawValue,
    path: &str,
    err: serde_json::Error,
) -> ConvertError {
    let mut de = serde_json::Deserializer::from_str(raw.get());
    let (inner, message) = match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Err(located) => (located.path().to_string(), located.into_inner().to_string()),
        Ok(_) => (".".to_owned(), err.to_string()),
    };
    let param = match inner.as_str() {
        "." | "" => path.to_owned(),
        p if p.starts_with('[') => format!("{path}{p}"),
        p => format!("{path}.{p}"),
    };
    ConvertError::InvalidBody {
        param: Some(param),
        message,
    }
}

/// A part's text field, required.
pub(super) fn required_text<'a>(
    text: Option<JsonStr<'a>>,
    path: &str,
    field: &str,
) -> Result<JsonText<'a>, ConvertError> {
    text.map(Into::into)
        .ok_or_else(|| ConvertError::MissingField(format!("{path}.{field}")))
}

/// Function-call arguments as a JSON text: the exact string the client
/// sent, or an object some clients send encoded as one; `{}` when absent.
pub(super) fn arguments(raw: Option<&RawValue>) -> JsonText<'_> {
    match raw.filter(|r| r.get() != "null") {
        None => JsonText::from_text("{}"),
        Some(raw) => match JsonStr::new(raw) {
            Some(text) => text.into(),
            None => JsonText::Owned(json_as_string_literal(raw)),
        },
    }
}

/// User, system and developer parts (and parts of tool results).
pub(super) fn input_parts<'a>(
    parts: Vec<ContentPart<'a>>,
    path: &str,
    losses: &mut LossRecorder<'_>,
) -> Result<Vec<InputPart<'a>>, ConvertError> {
    let mut out = Vec::with_capacity(parts.len());
    for (j, part) in parts.into_iter().enumerate() {
        let part_path = format!("{path}[{j}]");
        if let Some(converted) = input_part(part, &part_path, losses)? {
            out.push(converted);
        }
    }
    Ok(out)
}

fn input_part<'a>(
    part: ContentPart<'a>,
    path: &str,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<InputPart<'a>>, ConvertError> {
    let prompt_cache_breakpoint = part.prompt_cache_breakpoint.filter(|r| r.get() != "null");
    Ok(Some(match part.kind() {
        "text" => InputPart::InputText {
            text: required_text(part.text, path, "text")?,
            prompt_cache_breakpoint,
        },
        "image_url" => {
            let image_path = format!("{path}.image_url");
            let image = match (part.parse_image_url(), part.image_url) {
                (Ok(image), _) => image,
                (Err(e), Some(raw)) => return Err(locate::<ImageUrl<'_>>(raw, &image_path, e)),
                (Err(e), None) => return Err(ConvertError::from_parse_at(&image_path, e)),
            }
            .ok_or_else(|| ConvertError::MissingField(image_path.clone()))?;
            let url = image
                .url
                .ok_or_else(|| ConvertError::MissingField(format!("{image_path}.url")))?;
            InputPart::InputImage {
                image_url: Some(url.into()),
                file_id: None,
                // Responses requires a detail; Chat's default is `auto`.
                detail: image.detail.map_or(Cow::Borrowed("auto"), Str::into_cow),
                prompt_cache_breakpoint,
            }
        }
        "file" => {
            let file = part
                .file
                .ok_or_else(|| ConvertError::MissingField(format!("{path}.file")))?;
            InputPart::InputFile {
                file_id: file.file_id.map(Into::into),
                filename: file.filename.map(Into::into),
                file_data: file.file_data.map(Into::into),
                file_url: None,
                prompt_cache_breakpoint,
            }
        }
        "input_audio" => InputPart::InputAudio {
            input_audio: part
                .input_audio
                .filter(|r| r.get() != "null")
                .ok_or_else(|| ConvertError::MissingField(format!("{path}.input_audio")))?,
        },
        "" => return Err(ConvertError::MissingField(format!("{path}.type"))),
        other => {
            losses.record(
                LossKind::UnsupportedContent,
                path,
                format!("'{other}' parts have no Responses input equivalent"),
            )?;
            return Ok(None);
        }
    }))
}

/// A tool message's content: a string, text parts joined, or (when a client
/// sends images or files) input parts.
pub(super) fn tool_output<'a>(
    raw: Option<&'a RawValue>,
    path: &str,
    losses: &mut LossRecorder<'_>,
) -> Result<ToolOutput<'a>, ConvertError> {
    let Some(raw) = raw else {
        return Ok(ToolOutput::Text(JsonText::from_text("")));
    };
    Ok(match parse_content(raw, path)? {
        None => ToolOutput::Text(JsonText::from_text("")),
        Some(Content::Text(text)) => ToolOutput::Text(text.into()),
        Some(Content::Parts(parts)) if parts.iter().all(|p| p.kind() == "text") => {
            ToolOutput::Text(joined_text(&parts, path)?)
        }
        Some(Content::Parts(parts)) => ToolOutput::Parts(input_parts(parts, path, losses)?),
    })
}

/// Text parts joined by newlines, copied without decoding.
fn joined_text<'a>(parts: &[ContentPart<'a>], path: &str) -> Result<JsonText<'a>, ConvertError> {
    let texts = parts
        .iter()
        .enumerate()
        .map(|(j, part)| {
            part.text
                .ok_or_else(|| ConvertError::MissingField(format!("{path}[{j}].text")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(JsonText::join(texts, r"\n"))
}
