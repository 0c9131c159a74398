//! The Messages events a reply is read from, as far as the reader reads
//! them, and the token counts they carry.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;

/// One Messages event, as far as it is read here.
#[derive(Deserialize)]
pub(super) struct Event<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) kind: Cow<'a, str>,
    pub(super) index: Option<usize>,
    #[serde(borrow)]
    pub(super) message: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(super) content_block: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(super) delta: Option<&'a RawValue>,
    /// `delta`, when the event was read in one pass: read in place, not
    /// kept raw to be parsed again.
    #[serde(skip)]
    pub(super) read_delta: Option<Piece<'a>>,
    pub(super) usage: Option<Usage>,
    #[serde(borrow)]
    pub(super) error: Option<&'a RawValue>,
}

/// A reply that came whole (`"type": "message"`), as far as it is read
/// here: its blocks are each read as a block that opens whole.
#[derive(Deserialize)]
pub(in crate::responses_to_messages) struct Whole<'a> {
    #[serde(rename = "type", borrow)]
    pub(in crate::responses_to_messages) kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(in crate::responses_to_messages) id: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(in crate::responses_to_messages) model: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(in crate::responses_to_messages) content: Vec<&'a RawValue>,
    #[serde(borrow)]
    pub(in crate::responses_to_messages) stop_reason: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(in crate::responses_to_messages) stop_sequence: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(in crate::responses_to_messages) usage: Option<&'a RawValue>,
}

impl<'a> Whole<'a> {
    /// Reads a body; an error for one that is no Messages message.
    pub(in crate::responses_to_messages) fn read(body: &'a [u8]) -> Result<Self, String> {
        let whole: Whole<'a> = serde_json::from_slice(body).map_err(|e| e.to_string())?;
        if whole.kind.as_deref() != Some("message") {
            return Err("its `type` is not `message`".into());
        }
        Ok(whole)
    }
}

/// `message_start`'s message.
#[derive(Deserialize)]
pub(super) struct Started<'a> {
    #[serde(borrow)]
    pub(super) id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) model: Option<Cow<'a, str>>,
    pub(super) usage: Option<Usage>,
}

/// A block as it opens, or a delta: the union of their fields.
#[derive(Deserialize, Default, Debug)]
pub(super) struct Piece<'a> {
    #[serde(rename = "type", borrow, default)]
    pub(super) kind: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) text: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(super) thinking: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(super) signature: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(super) data: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(super) id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(super) input: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(super) partial_json: Option<&'a RawValue>,
    #[serde(borrow)]
    pub(super) stop_reason: Option<Cow<'a, str>>,
    /// A text block's citations, which have no Responses form here.
    #[serde(borrow)]
    pub(super) citations: Option<&'a RawValue>,
}

/// Token counts; later events repeat or raise them.
#[derive(Deserialize, Default, Clone, Copy, Debug)]
pub(super) struct Usage {
    pub(super) input_tokens: Option<u64>,
    pub(super) output_tokens: Option<u64>,
    pub(super) cache_creation_input_tokens: Option<u64>,
    pub(super) cache_read_input_tokens: Option<u64>,
}

impl Usage {
    pub(super) fn update(&mut self, later: Usage) {
        let keep = |now: &mut Option<u64>, later: Option<u64>| {
            if later.is_some() {
                *now = later;
            }
        };
        keep(&mut self.input_tokens, later.input_tokens);
        keep(&mut self.output_tokens, later.output_tokens);
        keep(
            &mut self.cache_creation_input_tokens,
            later.cache_creation_input_tokens,
        );
        keep(
            &mut self.cache_read_input_tokens,
            later.cache_read_input_tokens,
        );
    }

    /// Responses counts every input token, cached or not, as input.
    pub(super) fn to_responses(self) -> serde_json::Value {
        let cached = self.cache_read_input_tokens.unwrap_or(0);
        let input =
            self.input_tokens.unwrap_or(0) + self.cache_creation_input_tokens.unwrap_or(0) + cached;
        let output = self.output_tokens.unwrap_or(0);
        json!({
            "input_tokens": input,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input + output,
        })
    }
}
