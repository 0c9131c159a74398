//! `anthropic-beta`: the betas a client turns on for one request.
//!
//! A beta either changes nothing a backend could tell apart (it names the
//! client, or lifts a limit the bridge never set), unlocks fields the
//! translation carries or reports one by one where a request uses them,
//! or changes what the reply says: those are known, and no loss. A beta
//! that turns on a feature only Anthropic's API has is reported with what
//! it asks for; any other one asks for something the bridge cannot
//! promise, and is reported by name.

use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// The beta that adds `output_tokens_details.thinking_tokens` to usage.
const THINKING_TOKEN_COUNT: &str = "thinking-token-count-2026-05-13";

/// Betas the translation honours, with what each asks for.
const KNOWN: [&str; 32] = [
    // Name the client or its credential; they ask nothing of the reply.
    "claude-code-20250219",
    "oauth-2025-04-20",
    // Thinking between tool calls stays where the backend put it.
    "interleaved-thinking-2025-05-14",
    // Tool input is streamed as the backend streams it.
    "fine-grained-tool-streaming-2025-05-14",
    // A Claude-side encoding of tool calls: the same wire either way.
    "token-efficient-tools-2025-02-19",
    // `max_tokens` is handed on as asked; the bridge caps nothing.
    "output-128k-2025-02-19",
    "output-300k-2026-03-24",
    // A 1M-token context window (Claude Code's `[1m]` models): the
    // backend's own window applies, which the bridge does not narrow.
    "context-1m-2025-08-07",
    // Each turn goes upstream with the tools and system it names.
    "mid-conversation-tool-changes-2026-07-01",
    // `output_config.effort` becomes the reasoning effort.
    "effort-2025-11-24",
    // `output_config.format` (or the older `output_format`) becomes
    // `text.format`.
    "structured-outputs-2025-11-13",
    "structured-outputs-2025-12-15",
    // Usage says how many output tokens were thinking.
    THINKING_TOKEN_COUNT,
    // `thinking.display: "updates"`: reasoning hidden as with `omitted`,
    // the notes between tool calls as ordinary text.
    "thinking-display-updates-2026-08-18",
    // `cache_control` breakpoints, documents, token counting: translated.
    "prompt-caching-2024-07-31",
    // How long, and for whom, a cached prefix is kept: a choice about
    // Anthropic's cache; the backend caches the prefix as it does.
    "extended-cache-ttl-2025-04-11",
    "prompt-caching-scope-2026-01-05",
    "pdfs-2024-09-25",
    "token-counting-2024-11-01",
    // Fields the translation reports where a request uses them:
    // `context_management` edits, deferred tools and tool search, server
    // tools, file ids, containers and MCP servers.
    "context-management-2025-06-27",
    "compact-2026-01-12",
    // `compaction`: the conversation summarized on the bridge's engine,
    // and the `compaction` block read back in later requests.
    "compact-2026-09-04",
    "advanced-tool-use-2025-11-20",
    "tool-search-tool-2025-10-19",
    "web-search-2025-03-05",
    "web-fetch-2025-09-10",
    "code-execution-2025-05-22",
    "code-execution-2025-08-25",
    "files-api-2025-04-14",
    "skills-2025-10-02",
    "mcp-client-2025-11-20",
    // `thread`: the bridge keeps the thread as a chain of its stored
    // responses.
    "message-threads-2026-08-12",
];

/// Betas Claude Code sends that turn on a feature of Anthropic's API the
/// bridge does not implement, with what the report says of each.
const UNSUPPORTED: [(&str, &str); 2] = [
    (
        "dangerous-tool-use-2026-09-03",
        "turns on Anthropic's server-side check of tool calls (the request's `safeguards`), which the backend does not run",
    ),
    (
        "afk-mode-2026-01-31",
        "turns on behaviour Anthropic's API keeps for sessions whose tool calls run unattended (Claude Code's auto mode); the backend has no such mode",
    ),
];

/// What the client's betas change in the translation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct BetaPlan {
    /// Usage carries `output_tokens_details.thinking_tokens`.
    pub(super) count_thinking: bool,
}

/// Reads the betas a request turned on (each `anthropic-beta` value is a
/// comma-separated list) and reports those the bridge does not know.
pub(super) fn plan(
    betas: &[&str],
    losses: &mut LossRecorder<'_>,
) -> Result<BetaPlan, ConvertError> {
    let mut plan = BetaPlan::default();
    let names = betas
        .iter()
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|name| !name.is_empty());
    for name in names {
        if name == THINKING_TOKEN_COUNT {
            plan.count_thinking = true;
        } else if let Some((_, what)) = UNSUPPORTED.iter().find(|(beta, _)| *beta == name) {
            losses.record(
                LossKind::UnsupportedParameter,
                "anthropic-beta",
                format!("'{name}' {what}"),
            )?;
        } else if !KNOWN.contains(&name) {
            losses.record(
                LossKind::UnsupportedParameter,
                "anthropic-beta",
                format!("'{name}' is a beta of Anthropic's API that the bridge does not know; whatever it turns on is not carried to the backend"),
            )?;
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::LossPolicy;

    fn reported(betas: &[&str]) -> (BetaPlan, Vec<String>) {
        let policy = LossPolicy::default();
        let mut losses = LossRecorder::new(&policy);
        let plan = plan(betas, &mut losses).unwrap();
        let reasons = losses.finish().iter().map(|l| l.reason.clone()).collect();
        (plan, reasons)
    }

    #[test]
    fn claude_codes_betas_are_known() {
        // As Claude Code 2.1.332 sends them: `-p` with JSON output; its
        // `[1m]` models; stream-json (what the Agent SDK drives), whose
        // retry without the display beta drops the token count too.
        let sent = [
            "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20,effort-2025-11-24",
            "claude-code-20250219,context-1m-2025-08-07,interleaved-thinking-2025-05-14,context-management-2025-06-27,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20,effort-2025-11-24",
            "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20,effort-2025-11-24,thinking-display-updates-2026-08-18",
            "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,mid-conversation-tool-changes-2026-07-01,advanced-tool-use-2025-11-20,effort-2025-11-24,thinking-display-updates-2026-08-18",
        ];
        for sent in sent {
            let (plan, reasons) = reported(&[sent]);
            assert_eq!(plan.count_thinking, sent.contains("thinking-token-count"));
            assert!(reasons.is_empty(), "{sent}: {reasons:?}");
        }
    }

    #[test]
    fn the_interactive_terminals_feature_betas_are_reported_for_what_they_ask() {
        // As Claude Code 2.1.332 sends them in its terminal, in auto mode:
        // two betas of features only Anthropic's API has.
        let sent = "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13,advanced-tool-use-2025-11-20,effort-2025-11-24,dangerous-tool-use-2026-09-03,thinking-display-updates-2026-08-18,afk-mode-2026-01-31";
        let (plan, reasons) = reported(&[sent]);
        assert!(plan.count_thinking);
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        assert!(
            reasons[0].starts_with("'dangerous-tool-use-2026-09-03' turns on"),
            "{reasons:?}"
        );
        assert!(
            reasons[1].starts_with("'afk-mode-2026-01-31' turns on"),
            "{reasons:?}"
        );
        assert!(
            !reasons.iter().any(|r| r.contains("does not know")),
            "{reasons:?}"
        );
    }

    #[test]
    fn the_message_threads_beta_is_read_as_such() {
        // The SDKs' thread helper adds it to every turn of a thread.
        let (_, reasons) = reported(&["effort-2025-11-24,message-threads-2026-08-12"]);
        assert!(reasons.is_empty(), "{reasons:?}");
    }

    #[test]
    fn unknown_betas_are_reported_by_name() {
        let (plan, reasons) = reported(&[
            " dreaming-2026-04-21 , effort-2025-11-24",
            "context-1m-2025-08-07,made-up-2030-01-01",
        ]);
        assert!(!plan.count_thinking);
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        assert!(reasons[0].contains("'dreaming-2026-04-21'"), "{reasons:?}");
        assert!(reasons[1].contains("'made-up-2030-01-01'"), "{reasons:?}");
    }

    #[test]
    fn a_strict_policy_refuses_an_unknown_beta() {
        let policy = LossPolicy::strict();
        let mut losses = LossRecorder::new(&policy);
        let err = plan(&["effort-2025-11-24,made-up-2030-01-01"], &mut losses).unwrap_err();
        assert_eq!(err.param(), Some("anthropic-beta"));
        let mut losses = LossRecorder::new(&policy);
        assert!(plan(&["effort-2025-11-24"], &mut losses).is_ok());
    }
}
