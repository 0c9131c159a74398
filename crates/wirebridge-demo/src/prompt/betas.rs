//! `anthropic-beta`: the betas of a Messages request that change what the
//! demo accepts, as they change what Anthropic's API accepts.

use http::HeaderMap;

/// The beta under which a `system` turn may stand among `messages`
/// (Claude Code sends its environment so, after the user's message, and
/// sends the conversation again without it when the turn is refused).
const MID_CONVERSATION_SYSTEM: &str = "mid-conversation-tool-changes-2026-07-01";

/// What a Messages request's betas turn on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct MessagesBetas {
    /// A message of `messages` may have the role `system`.
    pub(crate) system_turns: bool,
}

impl MessagesBetas {
    /// Reads every `anthropic-beta` header (each a comma-separated list).
    pub(crate) fn from_headers(headers: &HeaderMap) -> Self {
        let system_turns = headers
            .get_all("anthropic-beta")
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|beta| beta.trim() == MID_CONVERSATION_SYSTEM);
        Self { system_turns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn the_mid_conversation_beta_is_read_from_any_header_value() {
        let mut headers = HeaderMap::new();
        assert!(!MessagesBetas::from_headers(&headers).system_turns);
        headers.append(
            "anthropic-beta",
            HeaderValue::from_static("claude-code-20250219"),
        );
        assert!(!MessagesBetas::from_headers(&headers).system_turns);
        headers.append(
            "anthropic-beta",
            HeaderValue::from_static("effort-2025-11-24, mid-conversation-tool-changes-2026-07-01"),
        );
        assert!(MessagesBetas::from_headers(&headers).system_turns);
    }
}
