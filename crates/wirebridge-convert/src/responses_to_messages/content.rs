//! Content parts as Messages blocks: text, images (a URL or inline
//! base64), documents (PDFs, by URL or inline); what Messages has no block
//! for is reported.

use std::borrow::Cow;

use wirebridge_wire::responses::lenient::ContentPart;
use wirebridge_wire::JsonStr;

use super::at::At;
use super::write::{Block, Built, Source};
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// Reads parts, reporting what it cannot carry.
pub(super) struct Parts<'r, 'p> {
    losses: &'r mut LossRecorder<'p>,
}

impl<'r, 'p> Parts<'r, 'p> {
    pub(super) fn new(losses: &'r mut LossRecorder<'p>) -> Self {
        Self { losses }
    }

    /// The block of one part; `None` for a part with nothing to send (an
    /// empty text, which Messages refuses) or one reported as lost.
    pub(super) fn block<'a>(
        &mut self,
        part: &ContentPart<'a>,
        at: At<'_>,
    ) -> Result<Option<Block<'a>>, ConvertError> {
        match part.kind() {
            "input_text" | "output_text" | "text" | "summary_text" | "reasoning_text" => {
                if part.annotations.is_some_and(|a| a.get() != "[]") {
                    self.losses.record(
                        LossKind::UnsupportedContent,
                        at.field("annotations").to_string(),
                        "annotations have no Messages form; the text is sent without them",
                    )?;
                }
                Ok(text(part.text))
            }
            "refusal" => Ok(text(part.refusal)),
            "input_image" => self.image(part, at).map(Some),
            "input_file" => self.file(part, at),
            other => {
                self.losses.record(
                    LossKind::UnsupportedContent,
                    at.to_string(),
                    format!("a `{other}` part has no Messages block"),
                )?;
                Ok(None)
            }
        }
    }

    fn image<'a>(&mut self, part: &ContentPart<'a>, at: At<'_>) -> Result<Block<'a>, ConvertError> {
        let url = part
            .image_url
            .and_then(|raw| {
                // A string, or `{"url": …}` as some clients send it.
                JsonStr::new(raw).or_else(|| {
                    serde_json::from_str::<UrlObject<'a>>(raw.get())
                        .ok()
                        .and_then(|o| JsonStr::new(o.url))
                })
            })
            .map(JsonStr::decode);
        let Some(url) = url else {
            let why = match part.file_id {
                Some(_) => "an image uploaded by `file_id` lives on OpenAI's servers; Messages needs its URL or data",
                None => "an image needs its `image_url`",
            };
            return Err(ConvertError::invalid(
                at.field("image_url").to_string(),
                why,
            ));
        };
        if part.detail.as_deref().is_some_and(|d| d != "auto") {
            self.losses.record(
                LossKind::UnsupportedContent,
                at.field("detail").to_string(),
                "Messages has no image detail setting",
            )?;
        }
        Ok(Block::Built(Built::Image {
            source: source(url),
            cache_control: None,
        }))
    }

    fn file<'a>(
        &mut self,
        part: &ContentPart<'a>,
        at: At<'_>,
    ) -> Result<Option<Block<'a>>, ConvertError> {
        let title = part.filename.map(|name| Cow::Borrowed(name.raw()));
        let source = match (part.file_data, part.file_url) {
            (Some(data), _) => {
                let data = data.decode();
                match data.strip_prefix("data:") {
                    Some(_) => source(data),
                    None => Source::Base64 {
                        media_type: Cow::Borrowed("application/pdf"),
                        data,
                    },
                }
            }
            (None, Some(url)) => Source::Url { url: url.decode() },
            (None, None) => {
                self.losses.record(
                    LossKind::UnsupportedContent,
                    at.to_string(),
                    "a file uploaded by `file_id` lives on OpenAI's servers; Messages needs its data or URL",
                )?;
                return Ok(None);
            }
        };
        Ok(Some(Block::Built(Built::Document {
            source,
            title,
            cache_control: None,
        })))
    }
}

/// A text block, unless the text is empty or absent.
fn text<'a>(text: Option<JsonStr<'a>>) -> Option<Block<'a>> {
    text.filter(|t| !t.is_empty())
        .map(|t| Block::text(Cow::Borrowed(t.raw())))
}

/// `{"url": …}`.
#[derive(serde::Deserialize)]
struct UrlObject<'a> {
    #[serde(borrow)]
    url: &'a serde_json::value::RawValue,
}

/// A data URL as inline base64, anything else as a URL.
fn source(url: Cow<'_, str>) -> Source<'_> {
    // The lengths of the media type and the data, when `url` is inline.
    let inline = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
        .map(|(media_type, data)| (media_type.len(), data.len()));
    let Some((media_len, data_len)) = inline else {
        return Source::Url { url };
    };
    let media = 5..5 + media_len;
    let data = url.len() - data_len..;
    match url {
        Cow::Borrowed(url) => Source::Base64 {
            media_type: Cow::Borrowed(&url[media]),
            data: Cow::Borrowed(&url[data]),
        },
        Cow::Owned(url) => Source::Base64 {
            media_type: Cow::Owned(url[media].to_owned()),
            data: Cow::Owned(url[data].to_owned()),
        },
    }
}
