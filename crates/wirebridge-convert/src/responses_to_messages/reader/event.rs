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
    pub(super) usage: Option<Usage>,
    #[serde(borrow)]
    pub(super) error: Option<&'a RawValue>,
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
#[derive(Deserialize, Default)]
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
}

/// Token counts; later events repeat or raise them.
#[derive(Deserialize, Default, Clone, Copy)]
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

pub(super) fn parse_piece(raw: Option<&RawValue>) -> Result<Piece<'_>, String> {
    match raw {
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|e| format!("the upstream sent a content block that is not readable: {e}")),
        None => Ok(Piece::default()),
    }
}
