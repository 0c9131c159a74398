//! The `demo:` words of a user message that script failures and pacing.

use std::time::Duration;

/// What the `demo:` triggers of a message ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Triggers {
    /// `demo:error STATUS`: answer with this HTTP status and an error body.
    pub error: Option<u16>,
    /// `demo:fail-midstream`: a few chunks, then an in-band error.
    pub fail_midstream: bool,
    /// `demo:cut`: a few chunks, then the connection is dropped.
    pub cut: bool,
    /// `demo:slow MS`: this pause between chunks.
    pub slow: Option<Duration>,
    /// `demo:redacted`: a Messages answer carries a `redacted_thinking` block.
    pub redacted: bool,
}

/// The status `demo:error` uses when no valid status follows it.
const DEFAULT_ERROR_STATUS: u16 = 500;

/// Find the triggers in `text`. Words are compared ASCII case-insensitively;
/// the number after `demo:error` / `demo:slow` may also be joined with `=`
/// or `:` (`demo:error=429`).
pub(crate) fn parse(text: &str) -> Triggers {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut t = Triggers::default();
    for (i, word) in words.iter().enumerate() {
        let word = word.trim_end_matches([',', '.', ';', '!', '?', '"', '\'', ')']);
        let word = word.trim_start_matches(['"', '\'', '(']);
        let lower = word.to_ascii_lowercase();
        let Some(rest) = lower.strip_prefix("demo:") else {
            continue;
        };
        let (name, joined) = match rest.split_once(['=', ':']) {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (rest, None),
        };
        let arg = || -> Option<u64> {
            let next = words
                .get(i + 1)
                .map(|w| w.trim_end_matches([',', '.', ';']));
            joined.as_deref().or(next)?.parse().ok()
        };
        match name {
            "error" => {
                let status = arg()
                    .and_then(|n| u16::try_from(n).ok())
                    .filter(|s| (400..=599).contains(s))
                    .unwrap_or(DEFAULT_ERROR_STATUS);
                t.error.get_or_insert(status);
            }
            "fail-midstream" => t.fail_midstream = true,
            "cut" => t.cut = true,
            "redacted" => t.redacted = true,
            "slow" => {
                if let Some(ms) = arg() {
                    t.slow = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_trigger() {
        assert_eq!(parse("please demo:error 429 now").error, Some(429));
        assert_eq!(parse("demo:error=503").error, Some(503));
        assert_eq!(parse("demo:error").error, Some(500));
        assert_eq!(parse("demo:error 200").error, Some(500));
        assert!(parse("x DEMO:FAIL-MIDSTREAM.").fail_midstream);
        assert!(parse("(demo:cut)").cut);
        assert!(parse("think, demo:redacted.").redacted);
        assert_eq!(
            parse("hello demo:slow 25 world").slow,
            Some(Duration::from_millis(25))
        );
        assert_eq!(parse("demo:slow soon").slow, None);
        assert_eq!(parse("nothing here, demo: cut"), Triggers::default());
    }
}
