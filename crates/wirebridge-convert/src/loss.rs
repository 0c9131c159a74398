//! What a translation could not carry over, and what to do about it.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// A kind of loss. The [`LossPolicy`] decides per kind whether to drop the
/// field and report it, or to reject the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossKind {
    /// A request parameter the target API (or this backend) does not accept.
    UnsupportedParameter,
    /// A feature that needs server-side state the bridge does not have
    /// (`previous_response_id`, `conversation`, `item_reference`, `background`,
    /// stored `prompt`s).
    StatefulFeature,
    /// A hosted tool (`web_search`, `file_search`, `code_interpreter`, ...)
    /// the backend cannot run.
    HostedTool,
    /// A `tool_choice` naming a hosted tool.
    HostedToolChoice,
    /// A custom tool's grammar, described to the model instead of enforced.
    CustomToolGrammar,
    /// Reasoning items in the conversation that are not replayed.
    ReasoningHistory,
    /// A reasoning setting the target cannot express (summaries).
    ReasoningSetting,
    /// An `include` option the target cannot honour.
    IncludeOption,
    /// An input or output item of a type the target cannot express.
    UnsupportedItem,
    /// A content part the target cannot express.
    UnsupportedContent,
    /// A sampling parameter the target does not have (`stop`, `seed`, ...).
    SamplingParameter,
    /// A request for several alternative answers (`n > 1`).
    MultipleChoices,
    /// Extra choices in an upstream reply; only the first is translated.
    ExtraChoices,
    /// The oldest turns of a conversation, left out so that it fits the
    /// backend's context window (`truncation: "auto"`).
    TruncatedInput,
}

impl LossKind {
    /// Every kind, for documentation and configuration checks.
    pub const ALL: [LossKind; 14] = [
        LossKind::UnsupportedParameter,
        LossKind::StatefulFeature,
        LossKind::HostedTool,
        LossKind::HostedToolChoice,
        LossKind::CustomToolGrammar,
        LossKind::ReasoningHistory,
        LossKind::ReasoningSetting,
        LossKind::IncludeOption,
        LossKind::UnsupportedItem,
        LossKind::UnsupportedContent,
        LossKind::SamplingParameter,
        LossKind::MultipleChoices,
        LossKind::ExtraChoices,
        LossKind::TruncatedInput,
    ];

    /// The snake_case name used in configuration and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            LossKind::UnsupportedParameter => "unsupported_parameter",
            LossKind::StatefulFeature => "stateful_feature",
            LossKind::HostedTool => "hosted_tool",
            LossKind::HostedToolChoice => "hosted_tool_choice",
            LossKind::CustomToolGrammar => "custom_tool_grammar",
            LossKind::ReasoningHistory => "reasoning_history",
            LossKind::ReasoningSetting => "reasoning_setting",
            LossKind::IncludeOption => "include_option",
            LossKind::UnsupportedItem => "unsupported_item",
            LossKind::UnsupportedContent => "unsupported_content",
            LossKind::SamplingParameter => "sampling_parameter",
            LossKind::MultipleChoices => "multiple_choices",
            LossKind::ExtraChoices => "extra_choices",
            LossKind::TruncatedInput => "truncated_input",
        }
    }

    /// What the default policy does with this kind.
    ///
    /// Rejected by default: features whose silent removal changes the answer
    /// the client gets (a conversation without its history, one answer where
    /// several were asked for).
    pub fn default_action(self) -> LossAction {
        match self {
            LossKind::StatefulFeature | LossKind::MultipleChoices => LossAction::Reject,
            _ => LossAction::Drop,
        }
    }
}

impl fmt::Display for LossKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to do with a loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossAction {
    /// Leave the field out and report it.
    Drop,
    /// Refuse the request with a 400 naming the field.
    Reject,
}

/// Per-kind decisions; kinds not listed use [`LossKind::default_action`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LossPolicy {
    overrides: BTreeMap<LossKind, LossAction>,
}

impl LossPolicy {
    /// A policy that rejects every loss: the strictest translation.
    pub fn strict() -> Self {
        let overrides = LossKind::ALL
            .iter()
            .map(|k| (*k, LossAction::Reject))
            .collect();
        Self { overrides }
    }

    /// Sets the action for one kind.
    pub fn with(mut self, kind: LossKind, action: LossAction) -> Self {
        self.overrides.insert(kind, action);
        self
    }

    /// The action for a kind.
    pub fn action(&self, kind: LossKind) -> LossAction {
        self.overrides
            .get(&kind)
            .copied()
            .unwrap_or_else(|| kind.default_action())
    }
}

/// One thing that did not make it across.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// What kind of loss.
    pub kind: LossKind,
    /// JSON path in the source document, such as `tools[8]` or `include[0]`.
    pub path: String,
    /// Why it could not be carried over.
    pub reason: String,
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.path, self.kind, self.reason)
    }
}

/// How many paths [`LossReport::paths`] lists before it counts the rest.
pub const LISTED_PATHS: usize = 32;

/// The longest path [`LossReport::paths`] lists whole, in bytes.
pub const LISTED_PATH_BYTES: usize = 160;

/// `text` up to `max` bytes, cut at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The losses of one translation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct LossReport {
    losses: Vec<Loss>,
}

impl LossReport {
    /// Whether nothing was lost.
    pub fn is_empty(&self) -> bool {
        self.losses.is_empty()
    }

    /// The losses, in the order they were found.
    pub fn iter(&self) -> std::slice::Iter<'_, Loss> {
        self.losses.iter()
    }

    /// The number of losses.
    pub fn len(&self) -> usize {
        self.losses.len()
    }

    /// The paths, comma-separated: the value of a response header and of
    /// the exchange log's `dropped` field. Bounded, since a client decides
    /// how many items a request has: the first [`LISTED_PATHS`] paths (each
    /// cut at [`LISTED_PATH_BYTES`]), then `+N more`.
    pub fn paths(&self) -> String {
        // Sized at once: this is written for every exchange that lost
        // anything.
        let listed = self.losses.iter().take(LISTED_PATHS);
        let size = listed
            .map(|l| l.path.len().min(LISTED_PATH_BYTES) + 2)
            .sum::<usize>()
            + 16;
        let mut out = String::with_capacity(size);
        for (i, loss) in self.losses.iter().take(LISTED_PATHS).enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(cut(&loss.path, LISTED_PATH_BYTES));
        }
        let rest = self.losses.len().saturating_sub(LISTED_PATHS);
        if rest > 0 {
            out.push_str(&format!(", +{rest} more"));
        }
        out
    }

    /// Adds the losses of another report.
    pub fn extend(&mut self, other: LossReport) {
        self.losses.extend(other.losses);
    }

    /// Adds a loss found outside a translation (a store that could not give
    /// the whole conversation back, say), reported like the others.
    pub fn push(&mut self, loss: Loss) {
        self.losses.push(loss);
    }
}

impl<'a> IntoIterator for &'a LossReport {
    type Item = &'a Loss;
    type IntoIter = std::slice::Iter<'a, Loss>;

    fn into_iter(self) -> Self::IntoIter {
        self.losses.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_defaults_and_overrides() {
        let policy = LossPolicy::default();
        assert_eq!(policy.action(LossKind::HostedTool), LossAction::Drop);
        assert_eq!(policy.action(LossKind::StatefulFeature), LossAction::Reject);
        let policy = policy.with(LossKind::HostedTool, LossAction::Reject);
        assert_eq!(policy.action(LossKind::HostedTool), LossAction::Reject);
        assert!(LossKind::ALL
            .iter()
            .all(|k| LossPolicy::strict().action(*k) == LossAction::Reject));
    }

    #[test]
    fn paths_are_bounded_however_many_items_were_lost() {
        let mut report = LossReport::default();
        for i in 0..100_000 {
            report.push(Loss {
                kind: LossKind::HostedTool,
                path: format!("tools[{i}]"),
                reason: "hosted".into(),
            });
        }
        let paths = report.paths();
        assert!(paths.starts_with("tools[0], tools[1], "), "{paths}");
        assert!(paths.contains("tools[31], +99968 more"), "{paths}");
        assert!(!paths.contains("tools[32]"), "{paths}");
        assert!(paths.len() < 1_000, "{} bytes", paths.len());

        let mut long = LossReport::default();
        long.push(Loss {
            kind: LossKind::UnsupportedParameter,
            path: "é".repeat(1_000),
            reason: "long".into(),
        });
        assert_eq!(long.paths(), "é".repeat(LISTED_PATH_BYTES / 2));
        let mut few = LossReport::default();
        for path in ["a", "b"] {
            few.push(Loss {
                kind: LossKind::HostedTool,
                path: path.into(),
                reason: String::new(),
            });
        }
        assert_eq!(few.paths(), "a, b");
    }

    #[test]
    fn policy_reads_from_config_names() {
        let policy: LossPolicy = serde_json::from_str(r#"{"hosted_tool":"reject"}"#).unwrap();
        assert_eq!(policy.action(LossKind::HostedTool), LossAction::Reject);
        assert!(serde_json::from_str::<LossPolicy>(r#"{"nope":"drop"}"#).is_err());
    }
}
