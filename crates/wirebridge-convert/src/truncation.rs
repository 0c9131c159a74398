//! `truncation: "auto"`: which entries of a conversation to leave out so
//! that it fits the backend's context window, the same for Chat messages
//! and Responses items.
//!
//! The API drops items from the beginning of the conversation. Here the
//! conversation is cut at a user message, so that what the backend reads
//! still starts a turn (many chat templates refuse a conversation that
//! starts with the assistant) and no call is parted from its result: the
//! oldest turns go first, as few as make it fit. When the latest turn alone
//! is too long (a long tool loop), its user message stays and its oldest
//! steps go, a step being the calls and the results that answer them,
//! never the last step. System and developer messages always stay.

/// Bytes a token is taken for where the backend's tokenizer is not asked:
/// by a truncation, and by a compaction threshold
/// ([`estimate_tokens`](crate::responses_to_chat::compaction::estimate_tokens)).
/// Changing it changes both, and the docs that say 4.
pub(crate) const BYTES_PER_TOKEN: usize = 4;

/// The tokens of `body`, estimated from its size.
pub(crate) fn estimate(body: &[u8]) -> u64 {
    body.len().div_ceil(BYTES_PER_TOKEN) as u64
}

/// What an entry of a conversation is, for truncation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A system or developer message: never left out.
    Instruction,
    /// A user message: a turn starts here.
    User,
    /// Something the model wrote (a message, a call, reasoning).
    Model,
    /// A tool result: it goes with the calls before it.
    Result,
}

/// What to leave out: `keep[i]` says whether entry `i` stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Whether each entry stays.
    pub(crate) keep: Vec<bool>,
    /// How many entries are left out.
    pub(crate) dropped: usize,
    /// Whether leaving them out frees `excess` bytes: when not, as much as
    /// could go went, and the rest is too long.
    pub(crate) fits: bool,
}

/// The entries to leave out of `entries` (each with its size in bytes) to
/// free `excess` bytes.
pub(crate) fn plan(entries: &[(Entry, usize)], excess: usize) -> Plan {
    let mut keep = vec![true; entries.len()];
    let mut freed = 0;
    let last_user = entries.iter().rposition(|(kind, _)| *kind == Entry::User);
    // Whole turns first: everything before a user message, the oldest
    // turn first, up to the latest turn.
    if let Some(last_user) = last_user {
        for (i, (kind, size)) in entries[..last_user].iter().enumerate() {
            if freed >= excess && *kind == Entry::User {
                break;
            }
            if *kind != Entry::Instruction {
                keep[i] = false;
                freed += size;
            }
        }
    }
    // Then the latest turn's oldest steps, never its last.
    if freed < excess {
        let start = last_user.map_or(0, |u| u + 1);
        let steps = steps(entries, start);
        for step in steps.iter().take(steps.len().saturating_sub(1)) {
            if freed >= excess {
                break;
            }
            for i in step.clone() {
                if entries[i].0 != Entry::Instruction {
                    keep[i] = false;
                    freed += entries[i].1;
                }
            }
        }
    }
    let dropped = keep.iter().filter(|k| !**k).count();
    Plan {
        keep,
        dropped,
        fits: freed >= excess,
    }
}

/// The steps of the entries from `start` on: each the model's entries and
/// the results that follow them. A step starts at a model entry that
/// follows a result (or anything but a model entry).
fn steps(entries: &[(Entry, usize)], start: usize) -> Vec<std::ops::Range<usize>> {
    let mut steps: Vec<std::ops::Range<usize>> = Vec::new();
    let mut previous = None;
    for (i, (kind, _)) in entries.iter().enumerate().skip(start) {
        let starts = match kind {
            Entry::Model => previous != Some(Entry::Model),
            _ => steps.is_empty(),
        };
        match steps.last_mut() {
            Some(step) if !starts => step.end = i + 1,
            _ => steps.push(i..i + 1),
        }
        if *kind != Entry::Instruction {
            previous = Some(*kind);
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::Entry::*;
    use super::*;

    fn kept(entries: &[(Entry, usize)], excess: usize) -> (Vec<usize>, bool) {
        let plan = plan(entries, excess);
        let kept = (0..entries.len()).filter(|i| plan.keep[*i]).collect();
        assert_eq!(
            plan.dropped,
            entries.len() - plan.keep.iter().filter(|k| **k).count()
        );
        (kept, plan.fits)
    }

    #[test]
    fn the_oldest_whole_turns_go_first_and_no_more_than_needed() {
        let turns = [
            (Instruction, 10),
            (User, 10),
            (Model, 10),
            (User, 10),
            (Model, 10),
            (Result, 10),
            (Model, 10),
            (User, 10),
        ];
        assert_eq!(kept(&turns, 0), ((0..8).collect(), true));
        assert_eq!(kept(&turns, 15), (vec![0, 3, 4, 5, 6, 7], true));
        assert_eq!(kept(&turns, 40), (vec![0, 7], true));
        // The latest turn is a user message alone: nothing more can go.
        assert_eq!(kept(&turns, 100), (vec![0, 7], false));
    }

    #[test]
    fn a_long_last_turn_loses_its_oldest_steps_never_its_user_message_or_last_step() {
        let turns = [
            (User, 10),
            (Model, 10),
            (Model, 10),
            (Result, 10),
            (Result, 10),
            (Model, 10),
            (Result, 10),
            (Model, 10),
        ];
        // The first step is a reasoning entry, two calls and their results.
        assert_eq!(kept(&turns, 30), (vec![0, 5, 6, 7], true));
        assert_eq!(kept(&turns, 50), (vec![0, 7], true));
        assert_eq!(kept(&turns, 70), (vec![0, 7], false));
    }

    #[test]
    fn instructions_stay_wherever_they_are() {
        let turns = [(User, 10), (Instruction, 10), (Model, 10), (User, 10)];
        assert_eq!(kept(&turns, 20), (vec![1, 3], true));
        // Without a user message, steps go from the start.
        let loop_only = [(Instruction, 5), (Model, 10), (Result, 10), (Model, 10)];
        assert_eq!(kept(&loop_only, 5), (vec![0, 3], true));
    }

    /// Random conversations and excesses: what the plan keeps always
    /// holds together.
    #[test]
    fn every_plan_keeps_instructions_the_latest_entry_and_calls_with_their_results() {
        let mut rng = wirebridge_testkit::mutate::Rng(0x7275_6e63_6174_6521);
        for _ in 0..5000 {
            let len = rng.below(24);
            let entries: Vec<(Entry, usize)> = (0..len)
                .map(|_| {
                    let kind = [Instruction, User, Model, Model, Result][rng.below(5)];
                    (kind, 1 + rng.below(100))
                })
                .collect();
            let excess = rng.below(1500);
            let plan = plan(&entries, excess);
            let freed: usize = (0..len)
                .filter(|i| !plan.keep[*i])
                .map(|i| entries[i].1)
                .sum();
            assert_eq!(plan.fits, freed >= excess, "{entries:?} {excess}");
            assert_eq!(plan.dropped, plan.keep.iter().filter(|k| !**k).count());
            let said: Vec<usize> = (0..len).filter(|i| entries[*i].0 != Instruction).collect();
            for (i, (kind, _)) in entries.iter().enumerate() {
                assert!(
                    *kind != Instruction || plan.keep[i],
                    "an instruction went: {entries:?}"
                );
            }
            if let Some(&last) = said.last() {
                assert!(
                    plan.keep[last],
                    "the latest entry went: {entries:?} {excess}"
                );
            }
            // A result goes with the model's entries just before it.
            for (at, &i) in said.iter().enumerate() {
                if entries[i].0 != Result {
                    continue;
                }
                let call = said[..at].iter().rev().find(|&&j| entries[j].0 != Result);
                if let Some(&j) = call.filter(|&&j| entries[j].0 == Model) {
                    assert_eq!(
                        plan.keep[i], plan.keep[j],
                        "a call parted from its result: {entries:?} {excess}"
                    );
                }
            }
            // What goes is the oldest, but for the latest user message.
            let last_user = entries.iter().rposition(|(kind, _)| *kind == User);
            for (at, &i) in said.iter().enumerate() {
                if plan.keep[i] && Some(i) != last_user {
                    assert!(
                        said[at..].iter().all(|&j| plan.keep[j]),
                        "a newer entry went before an older one: {entries:?} {excess}"
                    );
                }
            }
        }
    }
}
