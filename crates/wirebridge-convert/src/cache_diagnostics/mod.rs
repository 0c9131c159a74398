//! Prompt cache diagnostics: why a request could not reuse the prompt
//! prefix of an earlier one, answered from what the bridge kept of the
//! earlier request.
//!
//! Both client APIs ask for it: Responses with
//! `prompt_cache_options.comparison_response_id` (answered in the
//! response's `prompt_cache_diagnostics`), Messages with
//! `diagnostics.previous_message_id` (answered in the message's
//! `diagnostics`). No backend answers either for the bridge, so the bridge
//! keeps a [`Fingerprint`] of each request it may be asked to compare with
//! and compares the two itself.
//!
//! A fingerprint holds hashes and token estimates, never the prompt's
//! text: what changed is found, not what it was. It is written once for
//! both dialects ([`compare`] gives a [`Verdict`]) and each dialect words
//! the verdict its own way ([`Verdict::responses_json`],
//! [`Verdict::messages_json`]).
//!
//! ```
//! use wirebridge_convert::cache_diagnostics::{compare, Fingerprint, MissReason, Verdict};
//!
//! let mut first = Fingerprint::new("gpt-x");
//! first.set_tools(br#"[{"type":"function","name":"get_time"}]"#);
//! first.push_input(br#"{"role":"user","content":"Reply OK"}"#);
//! let mut second = first.clone();
//! second.set_tools(br#"[{"type":"function","name":"get_date"}]"#);
//! match compare(&first, &second) {
//!     Verdict::Miss { reason, .. } => assert_eq!(reason, MissReason::Tools),
//!     other => panic!("{other:?}"),
//! }
//! assert_eq!(compare(&first, &first.clone()), Verdict::Hit);
//! ```

mod compare;
mod responses;

pub use compare::compare;
pub use responses::{comparison_response_id, responses_fingerprint};
pub(crate) use responses::{keep_comparison_from_backend, record_cache_options};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::truncation::BYTES_PER_TOKEN;

/// One hashed part of a prompt: a digest of its text and the tokens it is
/// estimated to take.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// The first 8 bytes of the SHA-256 of the part, in hex.
    #[serde(rename = "h")]
    pub hash: String,
    /// Tokens, estimated from the part's size.
    #[serde(rename = "t")]
    pub tokens: u64,
    /// Whether the part is a compaction item: a prefix that diverges
    /// there was compacted rather than edited.
    #[serde(rename = "c", default, skip_serializing_if = "is_false")]
    pub compaction: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl Part {
    /// The part of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            hash: digest(bytes),
            tokens: (bytes.len().div_ceil(BYTES_PER_TOKEN)) as u64,
            compaction: false,
        }
    }
}

/// What a request's prompt cache depends on, hashed: enough to say where
/// two requests diverge, and nothing to read the prompt back from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The model (a digest).
    #[serde(rename = "m")]
    pub model: String,
    /// The service tier (Responses) or speed (Messages), a digest; empty
    /// when the request named none.
    #[serde(rename = "s", default)]
    pub service_tier: String,
    /// `prompt_cache_key`, a digest; empty when none was sent.
    #[serde(rename = "k", default)]
    pub prompt_cache_key: String,
    /// The tools, in order: reordering them changes the prefix.
    #[serde(rename = "l", default)]
    pub tools: Part,
    /// The output format asked for (`text.format`), a digest.
    #[serde(rename = "f", default)]
    pub text_format: String,
    /// The reasoning effort (`reasoning.effort`, or a Messages request's
    /// thinking), a digest.
    #[serde(rename = "r", default)]
    pub reasoning_effort: String,
    /// `text.verbosity`, a digest.
    #[serde(rename = "v", default)]
    pub verbosity: String,
    /// Other settings that change the prompt the model is given (a
    /// Messages request's `tool_choice`), a digest.
    #[serde(rename = "o", default)]
    pub other_settings: String,
    /// The instructions (Responses) or system prompt (Messages).
    #[serde(rename = "i", default)]
    pub instructions: Part,
    /// The conversation's entries, in order: the whole input, the history
    /// a stored response brought in included.
    #[serde(rename = "n", default)]
    pub input: Vec<Part>,
}

impl Fingerprint {
    /// The fingerprint of a request to `model`, with nothing else set yet.
    pub fn new(model: &str) -> Self {
        Self {
            model: digest(model.as_bytes()),
            ..Self::default()
        }
    }

    /// Sets the tools, as their JSON array.
    pub fn set_tools(&mut self, tools: &[u8]) {
        self.tools = Part::of(tools);
    }

    /// Sets the instructions (or system prompt) text.
    pub fn set_instructions(&mut self, instructions: &[u8]) {
        self.instructions = Part::of(instructions);
    }

    /// Adds the next entry of the conversation, in a canonical form (the
    /// same entry always gives the same bytes).
    pub fn push_input(&mut self, entry: &[u8]) {
        self.input.push(Part::of(entry));
    }

    /// The fingerprint as a store keeps it.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).expect("a fingerprint always serializes")
    }

    /// A fingerprint a store kept; `None` when it cannot be read (written
    /// by a version that kept another shape), which reads as unknown.
    pub fn decode(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }

    /// Tokens of the whole prompt, estimated.
    pub(crate) fn prompt_tokens(&self) -> u64 {
        self.tools.tokens + self.instructions.tokens + self.input_tokens(0)
    }

    /// Tokens of the input entries from `from` on.
    pub(crate) fn input_tokens(&self, from: usize) -> u64 {
        self.input.iter().skip(from).map(|part| part.tokens).sum()
    }
}

/// A digest of `bytes`: the first 8 bytes of their SHA-256, in hex. The
/// same across processes and versions, so that bridges sharing a store
/// compare what each other kept.
pub(crate) fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(16);
    for byte in &hash[..8] {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// What a request asks of prompt cache diagnostics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheDiagnosis {
    /// The response (Responses) or message (Messages) it asks to be
    /// compared with; `None` for a request that only opts in, to be
    /// compared with later.
    pub comparison: Option<String>,
    /// Its own fingerprint: compared with the earlier one's, and kept
    /// under its response's id for a later request.
    pub fingerprint: Fingerprint,
}

/// What changed first between the request compared with and this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MissReason {
    /// Another model.
    Model,
    /// Another service tier (Messages: speed).
    ServiceTier,
    /// Another `prompt_cache_key`.
    PromptCacheKey,
    /// Tools added, removed, changed or reordered.
    Tools,
    /// Another output format.
    TextFormat,
    /// Another reasoning effort.
    ReasoningEffort,
    /// Another verbosity.
    Verbosity,
    /// Another setting that changes the prompt, with the model, system and
    /// tools the same (a Messages request's `tool_choice`).
    OtherSettings,
    /// Other instructions or system prompt.
    Instructions,
    /// The conversation was compacted: an entry where the earlier request
    /// had its history is a compaction item.
    ContextCompacted,
    /// An entry of the conversation differs, rather than entries only
    /// having been added.
    Input,
}

/// The answer of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing the cache depends on changed: the earlier prompt is a
    /// prefix of this one.
    Hit,
    /// The prefix could not be reused from the first change on.
    Miss {
        /// What changed first.
        reason: MissReason,
        /// Tokens of this request from the change on, estimated.
        missed_tokens: u64,
        /// Tokens of the earlier request's prompt before the change,
        /// estimated.
        reusable_tokens: u64,
    },
    /// The request compared with is not known: never seen, another
    /// tenant's, or no longer kept.
    NotFound,
    /// No answer could be given (the store could not be read).
    Unavailable,
}

impl Verdict {
    /// The verdict as a Responses `prompt_cache_diagnostics` object.
    pub fn responses_json(&self) -> String {
        match self {
            Verdict::Hit => r#"{"type":"cache_hit"}"#.to_owned(),
            Verdict::NotFound => r#"{"type":"comparison_response_not_found"}"#.to_owned(),
            Verdict::Unavailable => r#"{"type":"unavailable"}"#.to_owned(),
            Verdict::Miss {
                reason,
                missed_tokens,
                reusable_tokens,
            } => {
                let reason = match reason {
                    MissReason::Model => "model_changed",
                    MissReason::ServiceTier => "service_tier_changed",
                    MissReason::PromptCacheKey => "prompt_cache_key_changed",
                    MissReason::Tools => "tools_changed",
                    MissReason::TextFormat => "text_format_changed",
                    MissReason::ReasoningEffort => "reasoning_effort_changed",
                    MissReason::Verbosity => "verbosity_changed",
                    MissReason::ContextCompacted => "context_compacted",
                    // Instructions are the start of a Responses prompt's
                    // input; a setting with no reason of its own is not
                    // read from a Responses request.
                    MissReason::Instructions | MissReason::Input | MissReason::OtherSettings => {
                        "input_changed"
                    }
                };
                format!(
                    r#"{{"type":"cache_miss","reason":"{reason}","cache_missed_tokens":{missed_tokens},"comparison_reusable_tokens":{reusable_tokens}}}"#
                )
            }
        }
    }

    /// The verdict as a Messages `diagnostics` object, or `None` where the
    /// message says `"diagnostics": null`: no divergence was found.
    pub fn messages_json(&self) -> Option<String> {
        let reason = match self {
            Verdict::Hit => return None,
            Verdict::NotFound => r#"{"type":"previous_message_not_found"}"#.to_owned(),
            Verdict::Unavailable => r#"{"type":"unavailable"}"#.to_owned(),
            Verdict::Miss {
                reason,
                missed_tokens,
                ..
            } => {
                let reason = match reason {
                    MissReason::Model | MissReason::ServiceTier => "model_changed",
                    MissReason::Tools => "tools_changed",
                    MissReason::Instructions => "system_changed",
                    MissReason::Input | MissReason::ContextCompacted => "messages_changed",
                    // Settings Anthropic's API names no reason for: it
                    // answers that it cannot say.
                    MissReason::PromptCacheKey
                    | MissReason::TextFormat
                    | MissReason::ReasoningEffort
                    | MissReason::Verbosity
                    | MissReason::OtherSettings => {
                        return Some(r#"{"cache_miss_reason":{"type":"unavailable"}}"#.to_owned())
                    }
                };
                format!(r#"{{"type":"{reason}","cache_missed_input_tokens":{missed_tokens}}}"#)
            }
        };
        Some(format!(r#"{{"cache_miss_reason":{reason}}}"#))
    }
}
