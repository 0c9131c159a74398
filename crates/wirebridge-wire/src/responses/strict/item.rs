//! Output items, as emitted: in a `Response` and its stream events, and
//! (messages and tool calls) as assistant history in a request.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::raw::{empty_array, JsonText};

/// Status of an output item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    /// Being generated.
    InProgress,
    /// Done.
    Completed,
    /// Cut short.
    Incomplete,
}

/// An output item.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputItem<'a> {
    /// An assistant message.
    Message(OutputMessage<'a>),
    /// A function tool call.
    FunctionCall(FunctionCall<'a>),
    /// A custom (freeform) tool call.
    CustomToolCall(CustomToolCall<'a>),
    /// Reasoning.
    Reasoning(ReasoningItem<'a>),
    /// A search for deferred tools, run by the client.
    ToolSearchCall(ToolSearchCall<'a>),
    /// The conversation before it, summarized and sealed.
    Compaction(CompactionItem<'a>),
}

/// `message` output item.
#[derive(Debug, Serialize)]
pub struct OutputMessage<'a> {
    /// `msg_…` id.
    pub id: &'a str,
    /// Status.
    pub status: ItemStatus,
    /// Always `"assistant"`.
    pub role: &'static str,
    /// Text and refusal parts.
    pub content: Vec<OutputPart<'a>>,
    /// Whether the message is commentary before tool calls or the final
    /// answer; left out when not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<MessagePhase>,
}

/// What an assistant message is to the turn it ends or continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessagePhase {
    /// Said on the way: tool calls follow it in the same response.
    Commentary,
    /// The answer that ends the turn.
    FinalAnswer,
}

/// A part of an assistant message: in an output item, and in the assistant
/// history of a request.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputPart<'a> {
    /// Text.
    OutputText {
        /// The text.
        text: JsonText<'a>,
        /// Citations (JSON array).
        annotations: &'a RawValue,
        /// Token log probabilities (JSON array).
        logprobs: &'a RawValue,
    },
    /// A refusal.
    Refusal {
        /// Why the model refused.
        refusal: JsonText<'a>,
    },
}

/// A citation in an `output_text` part.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Annotation<'a> {
    /// A web page the text cites.
    UrlCitation {
        /// The page.
        url: JsonText<'a>,
        /// Its title.
        title: JsonText<'a>,
        /// Where the citing text starts in the part's text.
        start_index: u64,
        /// Where it ends.
        end_index: u64,
    },
}

impl<'a> OutputPart<'a> {
    /// An `output_text` part without annotations or log probabilities.
    pub fn text(text: JsonText<'a>) -> Self {
        OutputPart::OutputText {
            text,
            annotations: empty_array(),
            logprobs: empty_array(),
        }
    }
}

/// A function call: an output item, or assistant history in a request
/// (where `id` and `status` may be left out).
#[derive(Debug, Serialize)]
pub struct FunctionCall<'a> {
    /// `fc_…` item id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Cow<'a, str>>,
    /// Status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
    /// Function name.
    pub name: Cow<'a, str>,
    /// Namespace of a namespaced tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Cow<'a, str>>,
    /// The call id shared with the tool output.
    pub call_id: Cow<'a, str>,
    /// Arguments as a JSON text, exactly as the model or client wrote them.
    pub arguments: JsonText<'a>,
}

impl<'a> FunctionCall<'a> {
    /// A call with no item id, status or namespace, as assistant history in
    /// a request.
    pub fn new(call_id: Cow<'a, str>, name: Cow<'a, str>, arguments: JsonText<'a>) -> Self {
        Self {
            id: None,
            status: None,
            name,
            namespace: None,
            call_id,
            arguments,
        }
    }
}

/// A custom (freeform) tool call: an output item, or assistant history in a
/// request (where `id` and `status` may be left out).
#[derive(Debug, Serialize)]
pub struct CustomToolCall<'a> {
    /// `ctc_…` item id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Cow<'a, str>>,
    /// Status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
    /// Tool name.
    pub name: Cow<'a, str>,
    /// Namespace of a namespaced tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Cow<'a, str>>,
    /// The call id shared with the tool output.
    pub call_id: Cow<'a, str>,
    /// Freeform input.
    pub input: JsonText<'a>,
}

impl<'a> CustomToolCall<'a> {
    /// A call with no item id, status or namespace, as assistant history in
    /// a request.
    pub fn new(call_id: Cow<'a, str>, name: Cow<'a, str>, input: JsonText<'a>) -> Self {
        Self {
            id: None,
            status: None,
            name,
            namespace: None,
            call_id,
            input,
        }
    }
}

/// `reasoning` output item.
#[derive(Debug, Serialize)]
pub struct ReasoningItem<'a> {
    /// `rs_…` id.
    pub id: &'a str,
    /// Status.
    pub status: ItemStatus,
    /// Summary parts.
    pub summary: Vec<ReasoningPart<'a>>,
    /// Raw reasoning text parts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ReasoningPart<'a>>>,
    /// The reasoning, sealed for the client to send back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encrypted_content: Option<&'a str>,
}

/// `tool_search_call` output item.
#[derive(Debug, Serialize)]
pub struct ToolSearchCall<'a> {
    /// `tsc_…` item id.
    pub id: &'a str,
    /// Status.
    pub status: ItemStatus,
    /// The call id the client's `tool_search_output` answers.
    pub call_id: &'a str,
    /// Always `client`: the client runs the search.
    pub execution: &'static str,
    /// The search arguments, a JSON object (`{"query": …, "limit": …}`).
    pub arguments: &'a RawValue,
}

/// `compaction` output item: what stands for the conversation before it.
#[derive(Debug, Serialize)]
pub struct CompactionItem<'a> {
    /// `cmp_…` id.
    pub id: &'a str,
    /// The summary, sealed: only its sealer can read it.
    pub encrypted_content: &'a str,
}

/// A `summary_text` or `reasoning_text` part.
#[derive(Debug, Serialize)]
pub struct ReasoningPart<'a> {
    /// `summary_text` or `reasoning_text`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The text.
    pub text: JsonText<'a>,
}
