//! The label sets of the metrics, and the short lists their values come
//! from.

use prometheus_client::encoding::EncodeLabelSet;

/// A translated exchange.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ExchangeLabels {
    /// `responses`, `responses/compact` or `chat/completions`.
    pub endpoint: &'static str,
    /// `http` or `websocket`.
    pub transport: &'static str,
    /// `responses_to_chat` or `chat_to_responses`.
    pub direction: &'static str,
    /// One of the first models seen, or `other`.
    pub model: String,
    /// Whether the reply was streamed.
    pub stream: bool,
    /// The status sent to the client.
    pub status: u16,
    /// How the reply ended ([`outcome`]).
    pub outcome: &'static str,
}

/// The timing histograms.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct TimingLabels {
    /// `responses_to_chat` or `chat_to_responses`.
    pub direction: &'static str,
    /// Whether the reply was streamed: the times of the two differ by far.
    pub stream: bool,
}

/// Tokens.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct TokenLabels {
    /// `responses_to_chat` or `chat_to_responses`.
    pub direction: &'static str,
    /// One of the first models seen, or `other`.
    pub model: String,
    /// `input`, `output`, `cached_input` or `reasoning`.
    pub kind: &'static str,
}

/// Losses.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct LossLabels {
    /// `responses_to_chat` or `chat_to_responses`.
    pub direction: &'static str,
    /// A loss kind (`hosted_tool`, `unsupported_parameter`, …).
    pub kind: &'static str,
}

/// A request forwarded without translation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ForwardedLabels {
    /// The status sent to the client.
    pub status: u16,
}

/// A metric split by one kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct KindLabels {
    /// What kind of thing was counted or timed.
    pub kind: &'static str,
}

/// The time of a store operation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct OperationLabels {
    /// `save`, `get`, `delete`, `chain` or `turns`.
    pub operation: &'static str,
}

/// A store operation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct StoreLabels {
    /// `save`, `get`, `delete`, `chain` or `turns`.
    pub operation: &'static str,
    /// `ok`, `unavailable` or `error`.
    pub result: &'static str,
}

/// The endpoint a translated exchange's path ends with.
pub fn endpoint(path: &str) -> &'static str {
    let path = path.trim_end_matches('/');
    if path.ends_with("/responses/compact") {
        "responses/compact"
    } else if path.ends_with("/responses/input_tokens") {
        "responses/input_tokens"
    } else if path.ends_with("/messages") {
        "messages"
    } else if path.ends_with("/messages/count_tokens") {
        "messages/count_tokens"
    } else if path.ends_with("/responses") {
        "responses"
    } else if path.ends_with("/chat/completions") {
        "chat/completions"
    } else {
        "other"
    }
}

/// How a reply ended, in the client's terms: a Responses status or a Chat
/// `finish_reason`; `error` for an error status (whose reply, if any, was
/// an error body), and `other` for anything else an upstream made up.
pub fn outcome(status: u16, outcome: Option<&str>) -> &'static str {
    const KNOWN: [&str; 15] = [
        "completed",
        "incomplete",
        "failed",
        "cancelled",
        "stop",
        "length",
        "tool_calls",
        "content_filter",
        "function_call",
        "end_turn",
        "tool_use",
        "max_tokens",
        "stop_sequence",
        "pause_turn",
        "refusal",
    ];
    if status >= 400 {
        return "error";
    }
    match outcome {
        None => "none",
        Some(outcome) => KNOWN
            .iter()
            .find(|known| **known == outcome)
            .copied()
            .unwrap_or("other"),
    }
}

/// One upstream replica.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ReplicaLabels {
    /// Its index in the upstream list, from 0: never its address, which
    /// may hold credentials.
    pub replica: u16,
}

impl ReplicaLabels {
    /// The labels of the replica at `index` (the list holds at most a few
    /// hundred).
    pub fn of(index: usize) -> Self {
        Self {
            replica: u16::try_from(index).unwrap_or(u16::MAX),
        }
    }
}
