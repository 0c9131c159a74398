//! What a backend speaking Anthropic's Messages API takes beyond the API
//! itself: the limits it requires, how it is told to cache, and how its
//! key and version are sent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `anthropic-version` sent when the profile names none: the version every
/// Messages server reads.
pub const DEFAULT_VERSION: &str = "2023-06-01";

/// A Messages backend's settings, in a [`BackendProfile`](super::BackendProfile).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MessagesProfile {
    /// `max_tokens` when the client sets no output limit: Messages requires
    /// one, Responses and Chat do not.
    pub max_tokens: u64,
    /// The `thinking.budget_tokens` each reasoning effort asks for. An
    /// effort not listed takes the nearest listed one; `none` turns
    /// thinking off.
    pub thinking_budgets: BTreeMap<String, u64>,
    /// Whether cache breakpoints (`cache_control`) are marked: on the last
    /// tool, the system prompt and the conversation's last block, so that
    /// every turn reads the turns before it from the backend's cache
    /// (Anthropic caches only what is marked; servers that cache every
    /// prefix on their own, such as llama.cpp's, need none).
    pub cache_control: bool,
    /// Whether the client's bearer credential is sent as `x-api-key`
    /// (Anthropic's header) rather than as `authorization`.
    pub api_key_header: bool,
    /// The `anthropic-version` header, unless the client sent one.
    pub version: String,
    /// Betas the backend is asked for in `anthropic-beta` (beside any the
    /// client sent): what a deployment turns on for every request, such as
    /// a longer context window.
    pub betas: Vec<String>,
}

impl Default for MessagesProfile {
    fn default() -> Self {
        let budgets = [
            ("minimal", 1024),
            ("low", 2048),
            ("medium", 8192),
            ("high", 16384),
            ("xhigh", 32768),
        ];
        Self {
            max_tokens: 8192,
            thinking_budgets: budgets.iter().map(|(e, b)| (e.to_string(), *b)).collect(),
            cache_control: false,
            api_key_header: false,
            version: DEFAULT_VERSION.into(),
            betas: Vec::new(),
        }
    }
}

impl MessagesProfile {
    /// Anthropic's API: the key as `x-api-key`, cache breakpoints marked.
    pub fn anthropic() -> Self {
        Self {
            cache_control: true,
            api_key_header: true,
            max_tokens: 32000,
            ..Self::default()
        }
    }

    /// The thinking budget for a reasoning effort: `None` for `none`, or
    /// when no budget is listed.
    pub fn thinking_budget(&self, effort: &str) -> Option<u64> {
        if effort == "none" {
            return None;
        }
        if let Some(budget) = self.thinking_budgets.get(effort) {
            return Some(*budget);
        }
        let rank = |e: &str| {
            super::REASONING_EFFORTS
                .iter()
                .position(|known| *known == e)
                .unwrap_or(super::REASONING_EFFORTS.len())
        };
        let wanted = rank(effort);
        self.thinking_budgets
            .iter()
            .min_by_key(|(e, _)| (rank(e).abs_diff(wanted), rank(e)))
            .map(|(_, budget)| *budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efforts_take_their_budget_or_the_nearest() {
        let profile = MessagesProfile::default();
        assert_eq!(profile.thinking_budget("none"), None);
        assert_eq!(profile.thinking_budget("low"), Some(2048));
        assert_eq!(profile.thinking_budget("high"), Some(16384));
        // `max` is past every listed effort: the highest listed.
        assert_eq!(profile.thinking_budget("max"), Some(32768));
        let only_high = MessagesProfile {
            thinking_budgets: [("high".to_string(), 4000)].into(),
            ..MessagesProfile::default()
        };
        assert_eq!(only_high.thinking_budget("low"), Some(4000));
        let empty = MessagesProfile {
            thinking_budgets: BTreeMap::new(),
            ..MessagesProfile::default()
        };
        assert_eq!(empty.thinking_budget("high"), None);
    }
}
