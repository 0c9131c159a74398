//! [`Run`]: a conversation's turns as one request spliced them, kept so
//! that the next request continuing it knows them again by address rather
//! than by looking each one up.
//!
//! A conversation grows by one turn a request. Looking every stored turn
//! up on its own (a hash of its key, a probe, a comparison) cost about 300
//! instructions a turn, so a turn at depth 500 spent 150 K on finding what
//! the last turn had found already. The turns a request spliced are kept
//! together, one run a conversation, under the id of its first turn; the
//! next request takes the run, finds how many of its own first turns are
//! the same text at the same addresses (a store that shares its text hands
//! the same allocations out again: see [`SharedTurn`]), and looks up only
//! the turns after those. A request continuing an earlier turn (another
//! branch) keeps the turns both share, and the run grows from there.

use std::sync::Arc;

use super::{is_at, mix, CachedTurn, SharedTurn, StoredPair, K};

/// A conversation's first turns, each with its translation, as one request
/// spliced them, for one tenant and one set of options.
#[derive(Debug)]
pub(in crate::responses_to_chat) struct Run {
    scope: Box<str>,
    fingerprint: u64,
    turns: Vec<RunTurn>,
    /// The Chat messages of its turns, joined by commas: what a request
    /// splicing all of them writes, in one copy.
    messages: String,
    /// How many items its turns have.
    item_count: usize,
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
    /// Where its first item is in the conversation.
    start: usize,
    /// Where its messages end in the run's.
    end: usize,
}

impl Run {
    /// A run of no turns yet, for tenant `scope` and the options and tool
    /// names `fingerprint` stands for.
    pub(in crate::responses_to_chat) fn new(scope: &str, fingerprint: u64) -> Self {
        Self {
            scope: scope.into(),
            fingerprint,
            turns: Vec::new(),
            messages: String::new(),
            item_count: 0,
            bytes: std::mem::size_of::<Self>() + scope.len(),
            used: 0,
        }
    }

    /// How many turns it holds.
    pub(in crate::responses_to_chat) fn len(&self) -> usize {
        self.turns.len()
    }

    /// The translations of its turns, oldest first.
    pub(in crate::responses_to_chat) fn turns(
        &self,
    ) -> impl DoubleEndedIterator<Item = &Arc<CachedTurn>> {
        self.turns.iter().map(|turn| &turn.turn)
    }

    /// How many items its turns have.
    pub(in crate::responses_to_chat) fn item_count(&self) -> usize {
        self.item_count
    }

    /// Its turns' messages, joined by commas.
    pub(in crate::responses_to_chat) fn messages(&self) -> &str {
        &self.messages
    }

    /// Where the last user message among its turns is in the conversation.
    pub(in crate::responses_to_chat) fn last_user(&self) -> Option<usize> {
        let turn = self
            .turns
            .iter()
            .rev()
            .find(|t| t.turn.last_user.is_some())?;
        Some(turn.start + turn.turn.last_user?)
    }

    /// How many of its first turns end at or before item `end`.
    pub(in crate::responses_to_chat) fn turns_ending_by(&self, end: usize) -> usize {
        self.turns
            .partition_point(|turn| turn.start + turn.turn.item_count <= end)
    }

    /// How many of its first turns are the first of `pairs`, for this
    /// tenant and these options: each turn's id and stored text at the
    /// addresses it holds. (Where the items start follows: the same text
    /// before a turn has the same items.)
    pub(super) fn matching(
        &self,
        scope: &str,
        fingerprint: u64,
        pairs: &[StoredPair<'_>],
    ) -> usize {
        if self.fingerprint != fingerprint || *self.scope != *scope {
            return 0;
        }
        self.turns
            .iter()
            .zip(pairs)
            .take_while(|(kept, pair)| {
                is_at(&kept.id, pair.id)
                    && is_at(&kept.input, pair.input)
                    && is_at(&kept.output, pair.output)
            })
            .count()
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
        let room = self.messages.capacity();
        if turn.message_count > 0 {
            if !self.messages.is_empty() {
                self.messages.push(',');
            }
            self.messages.push_str(&turn.messages);
        }
        // The joined messages counted by their room, as it grows.
        self.bytes += std::mem::size_of::<RunTurn>()
            + turn.bytes()
            + id.len()
            + input.len()
            + output.len()
            + (self.messages.capacity() - room);
        self.turns.push(RunTurn {
            id: Arc::clone(id),
            input: Arc::clone(input),
            output: Arc::clone(output),
            turn: Arc::clone(turn),
            start: self.item_count,
            end: self.messages.len(),
        });
        self.item_count += turn.item_count;
        true
    }

    /// Keeps only its first `len` turns.
    pub(in crate::responses_to_chat) fn truncate(&mut self, len: usize) {
        for gone in self.turns.drain(len.min(self.turns.len())..) {
            self.item_count -= gone.turn.item_count;
            self.bytes -= std::mem::size_of::<RunTurn>()
                + gone.turn.bytes()
                + gone.id.len()
                + gone.input.len()
                + gone.output.len();
        }
        // The text goes; its room stays counted, and is used again as the
        // run grows.
        self.messages
            .truncate(self.turns.last().map_or(0, |turn| turn.end));
    }

    /// Where it is kept: by its first turn's id.
    pub(super) fn slot(&self) -> Option<u64> {
        let first = self.turns.first()?;
        Some(slot(&self.scope, self.fingerprint, &first.id))
    }
}

/// Where the run of the conversation starting with response `id` is kept.
pub(super) fn slot(scope: &str, fingerprint: u64, id: &str) -> u64 {
    // Another start than a turn's slot, though the maps are apart anyway.
    let hash = (fingerprint ^ 0x52_55_4e).wrapping_mul(K);
    let scope = scope.as_bytes();
    mix(mix(hash, id.as_bytes()), &scope[..scope.len().min(16)])
}
