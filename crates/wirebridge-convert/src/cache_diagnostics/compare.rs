//! The comparison of two fingerprints, the same for both dialects.

use super::{Fingerprint, MissReason, Verdict};

/// Compares `current` with `baseline`, the request it was expected to
/// reuse the prefix of: the first thing that changed, in the order a
/// prompt is built (the settings every cached prefix depends on, then the
/// tools, the instructions and the conversation), or a hit when the
/// baseline's prompt is a prefix of this one's.
pub fn compare(baseline: &Fingerprint, current: &Fingerprint) -> Verdict {
    let whole = |reason| Verdict::Miss {
        reason,
        missed_tokens: current.prompt_tokens(),
        reusable_tokens: 0,
    };
    let settings = [
        (MissReason::Model, &baseline.model, &current.model),
        (
            MissReason::ServiceTier,
            &baseline.service_tier,
            &current.service_tier,
        ),
        (
            MissReason::PromptCacheKey,
            &baseline.prompt_cache_key,
            &current.prompt_cache_key,
        ),
    ];
    if let Some((reason, ..)) = settings.iter().find(|(_, a, b)| a != b) {
        return whole(*reason);
    }
    if baseline.tools.hash != current.tools.hash {
        return whole(MissReason::Tools);
    }
    let rendering = [
        (
            MissReason::TextFormat,
            &baseline.text_format,
            &current.text_format,
        ),
        (
            MissReason::ReasoningEffort,
            &baseline.reasoning_effort,
            &current.reasoning_effort,
        ),
        (
            MissReason::Verbosity,
            &baseline.verbosity,
            &current.verbosity,
        ),
        (
            MissReason::OtherSettings,
            &baseline.other_settings,
            &current.other_settings,
        ),
    ];
    if let Some((reason, ..)) = rendering.iter().find(|(_, a, b)| a != b) {
        return whole(*reason);
    }
    if baseline.instructions.hash != current.instructions.hash {
        return Verdict::Miss {
            reason: MissReason::Instructions,
            missed_tokens: current.instructions.tokens + current.input_tokens(0),
            reusable_tokens: baseline.tools.tokens,
        };
    }
    let diverged = baseline
        .input
        .iter()
        .zip(&current.input)
        .position(|(was, is)| was.hash != is.hash);
    match diverged {
        None => Verdict::Hit,
        Some(at) => Verdict::Miss {
            reason: match current.input[at].compaction {
                true => MissReason::ContextCompacted,
                false => MissReason::Input,
            },
            missed_tokens: current.input_tokens(at),
            reusable_tokens: baseline.tools.tokens
                + baseline.instructions.tokens
                + baseline
                    .input
                    .iter()
                    .take(at)
                    .map(|p| p.tokens)
                    .sum::<u64>(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::super::{digest, Part};
    use super::*;

    /// A request with tools, instructions and two entries, each of a
    /// known size (4 bytes a token).
    fn base() -> Fingerprint {
        let mut f = Fingerprint::new("model-a");
        f.set_tools(&[b't'; 40]); // 10 tokens
        f.set_instructions(&[b'i'; 20]); // 5 tokens
        f.push_input(&[b'a'; 8]); // 2 tokens
        f.push_input(&[b'b'; 12]); // 3 tokens
        f
    }

    fn miss(reason: MissReason, missed: u64, reusable: u64) -> Verdict {
        Verdict::Miss {
            reason,
            missed_tokens: missed,
            reusable_tokens: reusable,
        }
    }

    #[test]
    fn the_same_request_is_a_hit() {
        assert_eq!(compare(&base(), &base()), Verdict::Hit);
    }

    #[test]
    fn entries_added_after_the_baseline_s_prompt_are_a_hit() {
        let mut next = base();
        next.push_input(b"the answer");
        next.push_input(b"the next question");
        assert_eq!(compare(&base(), &next), Verdict::Hit);
    }

    #[test]
    fn another_model_misses_the_whole_prompt() {
        let mut next = base();
        next.model = digest(b"model-b");
        assert_eq!(compare(&base(), &next), miss(MissReason::Model, 20, 0));
    }

    #[test]
    fn each_setting_the_cache_depends_on_is_named() {
        type Set = fn(&mut Fingerprint);
        let cases: [(Set, MissReason); 7] = [
            (
                |f| f.service_tier = digest(b"flex"),
                MissReason::ServiceTier,
            ),
            (
                |f| f.prompt_cache_key = digest(b"k"),
                MissReason::PromptCacheKey,
            ),
            (|f| f.text_format = digest(b"json"), MissReason::TextFormat),
            (
                |f| f.reasoning_effort = digest(b"high"),
                MissReason::ReasoningEffort,
            ),
            (|f| f.verbosity = digest(b"low"), MissReason::Verbosity),
            (
                |f| f.other_settings = digest(b"any"),
                MissReason::OtherSettings,
            ),
            (|f| f.set_tools(b"[]"), MissReason::Tools),
        ];
        for (set, reason) in cases {
            let mut next = base();
            set(&mut next);
            let missed = next.prompt_tokens();
            assert_eq!(
                compare(&base(), &next),
                miss(reason, missed, 0),
                "{reason:?}"
            );
        }
    }

    #[test]
    fn reordered_tools_are_tools_changed() {
        let mut first = base();
        first.set_tools(br#"[{"name":"a"},{"name":"b"}]"#);
        let mut next = base();
        next.set_tools(br#"[{"name":"b"},{"name":"a"}]"#);
        assert!(matches!(
            compare(&first, &next),
            Verdict::Miss {
                reason: MissReason::Tools,
                ..
            }
        ));
    }

    #[test]
    fn the_model_is_named_before_the_tools() {
        let mut next = base();
        next.model = digest(b"model-b");
        next.set_tools(b"[]");
        assert!(matches!(
            compare(&base(), &next),
            Verdict::Miss {
                reason: MissReason::Model,
                ..
            }
        ));
    }

    #[test]
    fn other_instructions_keep_only_the_tools() {
        let mut next = base();
        next.set_instructions(&[b'j'; 20]);
        assert_eq!(
            compare(&base(), &next),
            miss(MissReason::Instructions, 10, 10)
        );
    }

    #[test]
    fn an_edited_entry_keeps_the_prefix_before_it() {
        let mut next = base();
        next.input[1] = Part::of(&[b'c'; 16]); // 4 tokens
        next.push_input(&[b'd'; 4]); // 1 token
        assert_eq!(
            compare(&base(), &next),
            // 4 + 1 missed; tools, instructions and the first entry kept.
            miss(MissReason::Input, 5, 17)
        );
    }

    #[test]
    fn a_compaction_where_the_history_was_is_context_compacted() {
        let mut next = base();
        next.input[0] = Part {
            compaction: true,
            ..Part::of(b"sealed summary")
        };
        assert!(matches!(
            compare(&base(), &next),
            Verdict::Miss {
                reason: MissReason::ContextCompacted,
                reusable_tokens: 15,
                ..
            }
        ));
    }

    #[test]
    fn a_fingerprint_survives_its_store() {
        let mut f = base();
        f.input[0].compaction = true;
        assert_eq!(Fingerprint::decode(&f.encode()), Some(f));
        assert_eq!(Fingerprint::decode("not a fingerprint"), None);
    }

    #[test]
    fn verdicts_are_worded_as_each_api_words_them() {
        let tools = miss(MissReason::Tools, 7, 0);
        assert_eq!(
            tools.responses_json(),
            r#"{"type":"cache_miss","reason":"tools_changed","cache_missed_tokens":7,"comparison_reusable_tokens":0}"#
        );
        assert_eq!(
            tools.messages_json().as_deref(),
            Some(r#"{"cache_miss_reason":{"type":"tools_changed","cache_missed_input_tokens":7}}"#)
        );
        assert_eq!(Verdict::Hit.responses_json(), r#"{"type":"cache_hit"}"#);
        assert_eq!(Verdict::Hit.messages_json(), None);
        assert_eq!(
            Verdict::NotFound.responses_json(),
            r#"{"type":"comparison_response_not_found"}"#
        );
        assert_eq!(
            Verdict::NotFound.messages_json().as_deref(),
            Some(r#"{"cache_miss_reason":{"type":"previous_message_not_found"}}"#)
        );
        let system = miss(MissReason::Instructions, 3, 1);
        assert!(system
            .responses_json()
            .contains(r#""reason":"input_changed""#));
        assert!(system
            .messages_json()
            .unwrap()
            .contains(r#""type":"system_changed""#));
        let effort = miss(MissReason::ReasoningEffort, 3, 0);
        assert_eq!(
            effort.messages_json().as_deref(),
            Some(r#"{"cache_miss_reason":{"type":"unavailable"}}"#)
        );
    }
}
