//! The backend's summary, read from its reply and sealed.

use serde::Deserialize;
use serde_json::value::{to_raw_value, RawValue};
use wirebridge_wire::chat::lenient::ChatCompletion;
use wirebridge_wire::responses::strict::{CompactionItem, OutputItem, ResponseStatus, Usage};

use super::super::body::translate_body;
use super::super::compaction_items::Mode;
use super::super::history::History;
use super::super::reply::{token_usage, usage};
use super::super::request::{translate, TranslatedRequest};
use super::super::{Options, ParsedRequest, ResponsesContext, Seal};
use super::request::SummaryRequest;
use crate::error::ConvertError;
use crate::ids::ResponseIds;
use crate::loss::{Loss, LossKind, LossReport};
use crate::summary::ReplySummary;

/// A conversation's summary, as the backend wrote it, sealed for the
/// client.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The summary.
    pub(crate) text: String,
    /// The summary, sealed: the `encrypted_content` of its item.
    pub(super) sealed: String,
    /// The tokens writing it took, when the backend said.
    pub usage: Option<Usage>,
    /// What was lost writing it (a summary cut short).
    pub losses: LossReport,
}

impl Summary {
    /// The `compaction` item, at `index` in the output of the response
    /// whose ids are `ids`.
    pub(crate) fn item(&self, ids: &ResponseIds, index: usize) -> Box<RawValue> {
        let id = ids.item("cmp", index);
        let item = OutputItem::Compaction(CompactionItem {
            id: &id,
            encrypted_content: &self.sealed,
        });
        to_raw_value(&item).expect("items always serialize")
    }
}

impl Summary {
    /// How writing the summary went, for observers: completed, with its
    /// usage.
    pub fn report(&self) -> ReplySummary {
        ReplySummary {
            outcome: Some(ResponseStatus::Completed.as_str().to_owned()),
            usage: self.usage.as_ref().map(token_usage),
            tool_calls: Vec::new(),
        }
    }
}

impl SummaryRequest {
    /// Reads the summary from the backend's reply (a `chat.completion`
    /// body) and seals it with `seal`. A reply with no text is the
    /// upstream's failure; one cut short by a limit is kept, and reported.
    pub fn summary(&self, reply: &[u8], seal: &Seal) -> Result<Summary, ConvertError> {
        let context = ResponsesContext {
            seal: None,
            leading: Vec::new(),
            prior_usage: None,
            ..self.context.clone()
        };
        let body = translate_body(reply, &context)?;
        let mut text = String::new();
        for item in &body.output {
            append_text(item, &mut text);
        }
        if text.trim().is_empty() {
            return Err(ConvertError::InvalidUpstream(
                "the backend answered the request for a summary with no text".into(),
            ));
        }
        let mut losses = body.losses;
        if body.status == ResponseStatus::Incomplete {
            losses.push(Loss {
                kind: LossKind::UnsupportedContent,
                path: "output".into(),
                reason: "the backend stopped the summary before its end (a token limit or a \
                         content filter); the compaction holds what it wrote"
                    .into(),
            });
        }
        let usage = serde_json::from_slice::<ChatCompletion<'_>>(reply)
            .ok()
            .and_then(|c| c.usage.as_ref().map(usage));
        Ok(Summary {
            sealed: seal.compaction(&text),
            text,
            usage,
            losses,
        })
    }
}

/// Appends the text of an output item, if it is a message.
fn append_text(item: &RawValue, out: &mut String) {
    #[derive(Deserialize)]
    struct Item {
        #[serde(rename = "type")]
        kind: String,
        #[serde(default)]
        content: Vec<Part>,
    }
    #[derive(Deserialize)]
    struct Part {
        #[serde(rename = "type")]
        kind: String,
        #[serde(default)]
        text: Option<String>,
    }
    let Ok(item) = serde_json::from_str::<Item>(item.get()) else {
        return;
    };
    if item.kind != "message" {
        return;
    }
    for part in item.content {
        if let (true, Some(text)) = (part.kind == "output_text", part.text) {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&text);
        }
    }
}

impl<'a> ParsedRequest<'a> {
    /// Translates the request with its conversation compacted into
    /// `summary`: the client's messages, then the summary, are what the
    /// backend reads; the reply's output starts with the `compaction`
    /// item, and its usage counts the summary's.
    pub fn translate_compacted(
        self,
        history: &History<'a>,
        options: &Options,
        summary: &Summary,
    ) -> Result<TranslatedRequest, ConvertError> {
        let mode = Mode {
            compacted: Some(&summary.text),
            ..Mode::compacting()
        };
        let mut t = translate(self, history, options, mode)?;
        t.context.leading = vec![summary.item(&t.context.ids, 0)];
        t.context.prior_usage = summary.usage;
        t.losses.extend(summary.losses.clone());
        Ok(t)
    }
}
