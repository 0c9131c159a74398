//! The requests that compact: `POST /responses/compact`, and the summary
//! and continuation steps of a compacting `POST /responses`.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::{CreateResponse, Input, InputItem, ItemKind};

use super::super::compaction_items::{is_clients, Mode};
use super::super::history::History;
use super::super::request::{translate, TranslatedRequest};
use super::super::{Options, ParsedRequest, ResponsesContext};
use crate::error::ConvertError;
use crate::ids::ResponseIds;
use crate::loss::LossReport;

/// A `POST /responses/compact` body (`CompactResponseMethodPublicBody`:
/// `model`, `input`, `previous_response_id`, `instructions`,
/// `prompt_cache_key`), parsed, borrowing it.
///
/// ```
/// use std::sync::Arc;
/// use wirebridge_convert::responses_to_chat::compaction::CompactRequest;
/// use wirebridge_convert::responses_to_chat::{History, Options, Seal};
/// use wirebridge_convert::seal::{SealKey, Sealer};
///
/// let body = br#"{"model":"m","input":[{"role":"user","content":"Plan a trip."},
///   {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Where to?"}]}]}"#;
/// let seal = Seal { sealer: Arc::new(Sealer::new(SealKey::generate(), Vec::new())), scope: "t".into() };
/// let options = Options { seal: Some(seal.clone()), ..Options::default() };
/// let request = CompactRequest::parse(body).unwrap();
/// let summarize = request.translate(&History::default(), &options).unwrap();
/// // One Chat request: the conversation, then the summary instruction.
/// let chat: serde_json::Value = serde_json::from_slice(&summarize.body).unwrap();
/// assert_eq!(chat["messages"].as_array().unwrap().len(), 3);
///
/// let reply = br#"{"id":"c","object":"chat.completion","created":1,"model":"m",
///   "choices":[{"index":0,"message":{"role":"assistant","content":"The user plans a trip."},"finish_reason":"stop"}]}"#;
/// let summary = summarize.summary(reply, &seal).unwrap();
/// let compacted: serde_json::Value = serde_json::from_slice(&summarize.compact_resource(&summary)).unwrap();
/// assert_eq!(compacted["object"], "response.compaction");
/// assert_eq!(compacted["output"][0]["role"], "user");
/// assert_eq!(compacted["output"][1]["type"], "compaction");
/// ```
#[derive(Debug)]
pub struct CompactRequest<'a> {
    request: ParsedRequest<'a>,
}

impl<'a> CompactRequest<'a> {
    /// Parses a body; one that is invalid, or names no `model`, is an
    /// error naming the field.
    pub fn parse(body: &'a [u8]) -> Result<Self, ConvertError> {
        let request = ParsedRequest::parse(body)?;
        if request.request.model.is_none() {
            return Err(ConvertError::MissingField("model".into()));
        }
        Ok(Self { request })
    }

    /// The stored response whose conversation is compacted, before the
    /// input.
    pub fn previous_response_id(&self) -> Option<&str> {
        self.request.previous_response_id()
    }

    /// The ids the input's `item_reference` items name.
    pub fn item_references(&self) -> Vec<&str> {
        self.request.item_references()
    }

    /// The Chat request that asks for a summary of the conversation
    /// (`history`, then the input, then [`SUMMARY_PROMPT`](super::SUMMARY_PROMPT)),
    /// and what the answer needs: the client's messages, which the
    /// compacted output keeps. Nothing is kept in a store.
    pub fn translate(
        self,
        history: &History<'a>,
        options: &Options,
    ) -> Result<SummaryRequest, ConvertError> {
        let ids = ResponseIds::new();
        let kept = kept_messages(&self.request.request, history, &ids)?;
        let options = Options {
            store: false,
            ..options.clone()
        };
        let mut summary = self.request.translate_summary(history, &options)?;
        summary.context.ids = ids;
        summary.kept = kept;
        Ok(summary)
    }
}

/// A Chat request that asks the backend for a summary, and what reading
/// its answer needs.
#[derive(Debug)]
pub struct SummaryRequest {
    /// The Chat Completions request body (not streamed).
    pub body: Vec<u8>,
    /// What was dropped translating the conversation.
    pub losses: LossReport,
    /// The response the summary makes: its ids, model and echoed fields,
    /// and whether the client asked for a stream.
    pub context: ResponsesContext,
    /// The turn to keep once answered (a `compaction_trigger` turn, with a
    /// store).
    pub turn: Option<super::super::Turn>,
    /// The client's messages, as output items.
    pub(super) kept: Vec<Box<RawValue>>,
}

impl<'a> ParsedRequest<'a> {
    /// The Chat request that asks for a summary of this request's
    /// conversation: for a turn that ends with a `compaction_trigger`, or
    /// one whose `context_management` threshold is passed.
    pub fn translate_summary(
        self,
        history: &History<'a>,
        options: &Options,
    ) -> Result<SummaryRequest, ConvertError> {
        let mode = Mode {
            summarize: true,
            ..Mode::compacting()
        };
        let t = translate(self, history, options, mode)?;
        Ok(SummaryRequest {
            body: t.body,
            losses: t.losses,
            context: t.context,
            turn: t.turn,
            kept: Vec::new(),
        })
    }

    /// Translates a request whose compaction the caller runs (see
    /// [`compaction`](Self::compaction)): `context_management` is acted
    /// on, not reported as lost. This is what a threshold is measured on.
    pub fn translate_compacting(
        self,
        history: &History<'a>,
        options: &Options,
    ) -> Result<TranslatedRequest, ConvertError> {
        translate(self, history, options, Mode::compacting())
    }
}

impl SummaryRequest {
    /// The model asked for.
    pub fn model(&self) -> &str {
        &self.context.model
    }

    /// Whether the client asked for a stream.
    pub fn stream(&self) -> bool {
        self.context.stream
    }
}

/// The client's messages of a conversation (the stored history, then the
/// input), as `message` items of a compacted output: an `id`, a `status`,
/// and content as parts.
fn kept_messages(
    request: &CreateResponse<'_>,
    history: &History<'_>,
    ids: &ResponseIds,
) -> Result<Vec<Box<RawValue>>, ConvertError> {
    let mut kept = Vec::new();
    let mut n = 0;
    let mut keep = |item: &InputItem<'_>| -> Result<(), ConvertError> {
        n += 1;
        if item.classify() != ItemKind::Message || !is_clients(item) {
            return Ok(());
        }
        let Some(content) = item.content else {
            return Ok(());
        };
        let text_part;
        let content = match content.get().trim_start().starts_with('"') {
            true => {
                text_part = format!(r#"[{{"type":"input_text","text":{}}}]"#, content.get());
                RawValue::from_string(text_part)
                    .map_err(|e| ConvertError::invalid("input", e.to_string()))?
            }
            false => content.to_owned(),
        };
        let id = match &item.id {
            Some(id) => Cow::Borrowed(&**id),
            None => Cow::Owned(ids.input_item("msg", n - 1)),
        };
        let message = Kept {
            kind: "message",
            id: &id,
            status: "completed",
            role: item.role.as_deref().unwrap_or("user"),
            content: &content,
        };
        kept.push(serde_json::value::to_raw_value(&message).expect("messages serialize"));
        Ok(())
    };
    for item in history.items()? {
        keep(&item)?;
    }
    match &request.input {
        None => {}
        Some(Input::Text(text)) => keep(&InputItem {
            role: Some("user".into()),
            content: Some(text.raw()),
            ..InputItem::default()
        })?,
        Some(Input::Items(items)) => {
            for item in items.iter() {
                keep(item)?;
            }
        }
    }
    Ok(kept)
}

/// A kept message, as written.
#[derive(Serialize)]
struct Kept<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: &'a str,
    status: &'static str,
    role: &'a str,
    content: &'a RawValue,
}
