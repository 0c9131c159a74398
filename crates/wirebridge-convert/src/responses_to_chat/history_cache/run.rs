//! [`Run`]: a conversation's turns as one request spliced them, kept so
//! that the next request continuing it knows them again by address rather
//! than by looking each one up.
//!
//! A conversation grows by one turn a request. Looking every stored turn
//! up on its own (a hash of its key, a probe, a comparison) cost about 300
//! instructions a turn, so a turn at depth 500 spent 150 K on finding what
//! the last turn had found already. The turns a request spliced are kept
//! together, under the id of the last of them; the next request takes
//! them, checks that its own first turns are the same text at the same
//! addresses (a store that shares its text hands the same allocations out
//! again: see [`SharedTurn`]), and looks up only the turns after them.

use std::sync::Arc;

use super::{is_at, mix, CachedTurn, SharedTurn, StoredPair, K};

/// A conversation's first turns, each with its translation, as one request
/// spliced them, for one tenant and one set of options.
#[derive(Debug)]
pub(in crate::responses_to_chat) struct Run {
    scope: Box<str>,
    fingerprint: u64,
    turns: Vec<RunTurn>,
    /// What it holds, counted as if nothing else held it: the text and
    /// translation of each turn, and its own list.
    pub(super) bytes: usize,
    /// When it was kept (the cache's use clock).
    pub(super) used: u64,
}

/// One turn of a [`Run`]: the shared text it was translated from, which
/// the run holds so that an address found again is that text.
#[derive(Debug)]
struct RunTurn {
    id: Arc<str>,
    input: Arc<str>,
    output: Arc<str>,
    turn: Arc<CachedTurn>,
}

impl Run {
    /// A run of no turns yet, for tenant `scope` and the options and tool
    /// names `fingerprint` stands for.
    pub(in crate::responses_to_chat) fn new(scope: &str, fingerprint: u64) -> Self {
        Self {
            scope: scope.into(),
            fingerprint,
            turns: Vec::new(),
            bytes: std::mem::size_of::<Self>() + scope.len(),
            used: 0,
        }
    }

    /// How many turns it holds.
    pub(in crate::responses_to_chat) fn len(&self) -> usize {
        self.turns.len()
    }

    /// The translations of its turns, oldest first.
    pub(in crate::responses_to_chat) fn turns(&self) -> impl Iterator<Item = &Arc<CachedTurn>> {
        self.turns.iter().map(|turn| &turn.turn)
    }

    /// Whether its turns are the first of `pairs`, for this tenant and
    /// these options: each turn's id and stored text at the addresses it
    /// holds. (Where the items start follows: the same text before a turn
    /// has the same items.)
    pub(super) fn is_start_of(
        &self,
        scope: &str,
        fingerprint: u64,
        pairs: &[StoredPair<'_>],
    ) -> bool {
        self.fingerprint == fingerprint
            && *self.scope == *scope
            && self.turns.len() <= pairs.len()
            && self.turns.iter().zip(pairs).all(|(kept, pair)| {
                is_at(&kept.id, pair.id)
                    && is_at(&kept.input, pair.input)
                    && is_at(&kept.output, pair.output)
            })
    }

    /// Adds the next turn, `pair` as its store shares it, translated as
    /// `turn`; false (and nothing added) when the store does not share it.
    pub(in crate::responses_to_chat) fn push(
        &mut self,
        pair: &StoredPair<'_>,
        turn: &Arc<CachedTurn>,
    ) -> bool {
        let Some(SharedTurn { id, input, output }) = pair.shared else {
            return false;
        };
        self.bytes +=
            std::mem::size_of::<RunTurn>() + turn.bytes() + id.len() + input.len() + output.len();
        self.turns.push(RunTurn {
            id: Arc::clone(id),
            input: Arc::clone(input),
            output: Arc::clone(output),
            turn: Arc::clone(turn),
        });
        true
    }

    /// Keeps only its first `len` turns.
    pub(in crate::responses_to_chat) fn truncate(&mut self, len: usize) {
        for gone in self.turns.drain(len.min(self.turns.len())..) {
            self.bytes -= std::mem::size_of::<RunTurn>()
                + gone.turn.bytes()
                + gone.id.len()
                + gone.input.len()
                + gone.output.len();
        }
    }

    /// Where it is kept: by its last turn's id.
    pub(super) fn slot(&self) -> Option<u64> {
        let last = self.turns.last()?;
        Some(slot(&self.scope, self.fingerprint, &last.id))
    }
}

/// Where the run ending at response `id` is kept.
pub(super) fn slot(scope: &str, fingerprint: u64, id: &str) -> u64 {
    // Another start than a turn's slot, though the maps are apart anyway.
    let hash = (fingerprint ^ 0x52_55_4e).wrapping_mul(K);
    let scope = scope.as_bytes();
    mix(mix(hash, id.as_bytes()), &scope[..scope.len().min(16)])
}
