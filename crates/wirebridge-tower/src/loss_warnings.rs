//! Which losses a layer has warned about already.
//!
//! A client that always sends what cannot be translated (Codex sends a
//! `web_search` tool with every request) would otherwise put the same
//! warning in the log once per exchange, burying every other one. A layer
//! warns once per distinct set of dropped paths; later exchanges with the
//! same set are logged at `debug`. The exchange's own record (the observer,
//! the `x-wirebridge-dropped` header) still lists its losses every time.

use std::collections::HashSet;
use std::sync::Mutex;

/// Distinct sets of dropped paths remembered per layer.
const MAX_SETS: usize = 256;
/// Bytes of paths remembered per layer: a set can hold a path per input
/// item, so counting sets alone would not bound the memory.
const MAX_BYTES: usize = 64 * 1024;

/// How to log an exchange's losses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LossLevel {
    /// The first exchange with these losses: `warn`.
    Warn,
    /// The first exchange with a new set once no more are remembered:
    /// `warn` that later new sets are logged at `debug`, then log this one
    /// at `debug` too.
    WarnFull,
    /// Warned about before, or new once no more are remembered: `debug`.
    Debug,
}

/// The sets of dropped paths a layer has warned about, bounded.
#[derive(Debug, Default)]
pub(crate) struct LossWarnings {
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    /// Each set as its paths sorted, deduplicated and joined by newlines.
    sets: HashSet<String>,
    bytes: usize,
    /// Whether a set was turned away for lack of room: nothing more is
    /// remembered.
    full: bool,
}

impl LossWarnings {
    /// How to log the losses at `paths` (not empty), remembering them.
    pub(crate) fn level<'p>(&self, paths: impl IntoIterator<Item = &'p str>) -> LossLevel {
        let mut paths: Vec<&str> = paths.into_iter().collect();
        paths.sort_unstable();
        paths.dedup();
        let key = paths.join("\n");
        // A poisoned lock only means another exchange panicked while
        // logging; the set is still a set.
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.sets.contains(&key) {
            return LossLevel::Debug;
        }
        // Once a set does not fit, nothing more is remembered, so that
        // which sets are warned about does not depend on their sizes.
        if !seen.full && seen.sets.len() < MAX_SETS && seen.bytes + key.len() <= MAX_BYTES {
            seen.bytes += key.len();
            seen.sets.insert(key);
            return LossLevel::Warn;
        }
        match std::mem::replace(&mut seen.full, true) {
            false => LossLevel::WarnFull,
            true => LossLevel::Debug,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_set_is_warned_once_in_any_order() {
        let warnings = LossWarnings::default();
        assert_eq!(warnings.level(["tools[0]", "metadata"]), LossLevel::Warn);
        assert_eq!(warnings.level(["metadata", "tools[0]"]), LossLevel::Debug);
        assert_eq!(
            warnings.level(["metadata", "tools[0]", "metadata"]),
            LossLevel::Debug
        );
        assert_eq!(warnings.level(["metadata"]), LossLevel::Warn);
        assert_eq!(warnings.level(["metadata"]), LossLevel::Debug);
    }

    #[test]
    fn past_the_bound_new_sets_are_logged_at_debug() {
        let warnings = LossWarnings::default();
        for n in 0..MAX_SETS {
            assert_eq!(
                warnings.level([format!("input[{n}]").as_str()]),
                LossLevel::Warn
            );
        }
        assert_eq!(warnings.level(["store"]), LossLevel::WarnFull);
        assert_eq!(warnings.level(["user"]), LossLevel::Debug);
        assert_eq!(warnings.level(["store"]), LossLevel::Debug);
        assert_eq!(warnings.level(["input[0]"]), LossLevel::Debug);
        let seen = warnings.seen.lock().unwrap();
        assert_eq!(seen.sets.len(), MAX_SETS);
    }

    #[test]
    fn large_sets_are_bounded_by_bytes() {
        let warnings = LossWarnings::default();
        assert_eq!(warnings.level(["metadata"]), LossLevel::Warn);
        let huge: Vec<String> = (0..20_000).map(|n| format!("input[{n}].id")).collect();
        let huge = huge.iter().map(String::as_str);
        assert_eq!(warnings.level(huge.clone()), LossLevel::WarnFull);
        assert_eq!(warnings.level(huge), LossLevel::Debug);
        assert_eq!(warnings.level(["metadata"]), LossLevel::Debug);
        assert_eq!(warnings.level(["user"]), LossLevel::Debug);
        assert_eq!(warnings.seen.lock().unwrap().bytes, "metadata".len());
    }
}
