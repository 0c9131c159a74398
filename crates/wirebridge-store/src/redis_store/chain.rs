//! A chain read from Redis in pieces of bounded size, stitched together
//! here: the walk of its runs, one script per piece (see
//! `chain/script.rs`), then its turns, one plain `HMGET` per piece.
//!
//! Redis runs one command or script at a time for every tenant of the
//! server: a chain read in one script held every other tenant for as long
//! as it took to copy the whole chain, about a second for a conversation
//! of 100 MiB. In pieces, another tenant waits one piece at most.
//!
//! The pieces read the chain as it was when the first was read: each later
//! one checks that the conversation still has the generation the first saw
//! (a save that only adds a slot leaves it, and leaves the chain as it
//! was; anything that changes a slot changes it). A chain that changed
//! meanwhile is read again from the start, [`READ_ATTEMPTS`] times at
//! most: a link deleted meanwhile is then named missing, as a read after
//! the deletion names it.

#[cfg(test)]
mod reads;
mod reply;
mod script;

use std::sync::atomic::Ordering;

use reply::{Cursor, Segment, Slot, Values, WalkPiece, Walked};

use super::kept::{ChainRead, KeptSlot, Known};
use super::keys::TenantKeys;
use super::record;
use super::scripts::Lua;
use super::RedisStore;
use crate::StoreError;

/// The most slots a piece walks (each an id and the size of its turn), and
/// the most turns a piece reads: what it costs Redis beyond the bytes it
/// copies, about a microsecond per entry.
const PIECE_ENTRIES: usize = 512;

/// The bytes of turns after which a piece of turns (one `HMGET`) stops; it
/// holds at least one turn, so one turn larger than this is a piece of its
/// own. A plain `HMGET` copies a MiB of turns into its reply in about 0.15
/// ms (measured on a busy machine): 4 MiB hold other tenants under a
/// millisecond, and a chain of 100 MiB is 25 round trips.
const PIECE_BYTES: usize = 4 << 20;

/// The bytes a script piece copies: the ids it walks, and the turns a first
/// piece that walked the whole chain sends with it. A script copies a turn
/// at about 1.5 ms per MiB, ten times what an `HMGET` takes: it copies
/// only what a short chain holds, so that such a chain is one round trip.
const SCRIPT_BYTES: usize = 256 << 10;

/// How many times a chain is read from its start when a write changes it
/// while it is read, before the read fails as unavailable.
const READ_ATTEMPTS: usize = 4;

/// The chain script, hashed once.
pub(super) fn script() -> Lua {
    Lua::new(script::CHAIN)
}

/// What a read of a chain in pieces found.
#[derive(Debug)]
enum Attempt {
    /// The tenant does not have the response, or its turn.
    NoChain,
    /// The chain changed between two pieces.
    Changed,
    /// The chain.
    Read(ChainRead),
}

/// What one more piece did.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// It read a piece; more may follow.
    Read,
    /// The conversation changed since the first piece.
    Changed,
    /// Nothing was left to read.
    Done,
}

/// One run of a chain as the walk found it: its first and last slot and
/// those of its slots not kept, from the last down.
#[derive(Debug)]
struct Run {
    first: usize,
    last: usize,
    slots: Vec<Slot>,
}

impl RedisStore {
    /// The chain of `id`, read in pieces, leaving out the slots the store
    /// keeps (`known`); read again from the start when it changes
    /// meanwhile.
    pub(super) async fn read_chain(
        &self,
        keys: &TenantKeys,
        id: &str,
        known: &[Known],
    ) -> Result<Option<ChainRead>, StoreError> {
        for _ in 0..READ_ATTEMPTS {
            match self.read_chain_once(keys, id, known).await? {
                Attempt::NoChain => return Ok(None),
                Attempt::Changed => continue,
                Attempt::Read(read) => {
                    let turns = read.sent.iter().filter(|slot| slot.turn.is_some()).count();
                    self.turns_read.fetch_add(turns as u64, Ordering::Relaxed);
                    return Ok(Some(read));
                }
            }
        }
        // No error caused it: the conversation kept changing.
        Err(StoreError::Unavailable {
            message: format!(
                "the conversation of response {id} changed while it was read, \
                 {READ_ATTEMPTS} times"
            ),
            source: None,
        })
    }

    async fn read_chain_once(
        &self,
        keys: &TenantKeys,
        id: &str,
        known: &[Known],
    ) -> Result<Attempt, StoreError> {
        let Some(mut pieces) = ChainPieces::first(self, keys, id, known).await? else {
            return Ok(Attempt::NoChain);
        };
        loop {
            match pieces.step().await? {
                Step::Read => {}
                Step::Changed => return Ok(Attempt::Changed),
                Step::Done => return pieces.finish().map(Attempt::Read),
            }
        }
    }

    /// One run of the chain script with `args` after the bounds.
    async fn chain_piece(
        &self,
        index: &str,
        stem: &str,
        tail: &[&[u8]],
    ) -> Result<Option<Values>, StoreError> {
        let (entries, bytes) = (PIECE_ENTRIES.to_string(), SCRIPT_BYTES.to_string());
        let mut args: Vec<&[u8]> = Vec::with_capacity(4 + tail.len());
        args.extend([
            stem.as_bytes(),
            entries.as_bytes(),
            bytes.as_bytes(),
            bytes.as_bytes(),
        ]);
        args.extend_from_slice(tail);
        self.run(&self.scripts.chain, &[index.to_owned()], &args)
            .await
    }
}

/// A chain being read, piece by piece: the walk of its runs, newest
/// first, then its turns, oldest first.
struct ChainPieces<'s> {
    store: &'s RedisStore,
    index: String,
    stem: String,
    id: &'s str,
    conversation: u64,
    generation: String,
    kept: usize,
    /// The runs walked, newest first.
    runs: Vec<Run>,
    /// Where the walk goes on, while it has not ended.
    cursor: Option<Cursor>,
    lead: Option<String>,
    /// Once the walk ended: the slots whose turns are read, oldest first,
    /// by number and as the walk sent them.
    numbers: Vec<usize>,
    slots: Vec<Slot>,
    /// The slots whose turns were read, in order.
    sent: Vec<KeptSlot>,
}

impl<'s> ChainPieces<'s> {
    /// The chain's first piece: `None` when the tenant has no chain for
    /// `id`.
    async fn first(
        store: &'s RedisStore,
        keys: &TenantKeys,
        id: &'s str,
        known: &[Known],
    ) -> Result<Option<Self>, StoreError> {
        let (index, stem) = (keys.index(), keys.conversations());
        let numbers: Vec<(String, String)> = known
            .iter()
            .map(|k| (k.conversation.to_string(), k.slots.to_string()))
            .collect();
        let mut args: Vec<&[u8]> = Vec::with_capacity(2 + 4 * known.len());
        args.extend([b"first".as_slice(), id.as_bytes()]);
        for (known, (conversation, slots)) in known.iter().zip(&numbers) {
            args.extend([
                conversation.as_bytes(),
                known.generation.as_bytes(),
                slots.as_bytes(),
                known.last.as_bytes(),
            ]);
        }
        let reply = store.chain_piece(&index, &stem, &args).await?;
        let piece = match reply::walked(id, reply)? {
            None => return Ok(None),
            Some(Walked::Piece(piece)) => piece,
            Some(Walked::Changed) => return Err(corrupt(id, "a first piece answered as a later")),
        };
        let mut pieces = Self {
            store,
            index,
            stem,
            id,
            conversation: piece.conversation,
            generation: piece.generation.clone(),
            kept: piece.kept,
            runs: Vec::new(),
            cursor: None,
            lead: None,
            numbers: Vec::new(),
            slots: Vec::new(),
            sent: Vec::new(),
        };
        pieces.walked(piece)?;
        Ok(Some(pieces))
    }

    /// Reads the next piece, if any is left.
    async fn step(&mut self) -> Result<Step, StoreError> {
        match self.cursor.take() {
            Some(cursor) => self.walk_on(cursor).await,
            None if self.sent.len() < self.slots.len() => self.read_turns().await,
            None => Ok(Step::Done),
        }
    }

    /// The next piece of the walk, from `cursor`.
    async fn walk_on(&mut self, cursor: Cursor) -> Result<Step, StoreError> {
        let numbers = [
            self.conversation.to_string(),
            self.kept.to_string(),
            cursor.at.to_string(),
            cursor.start.to_string(),
            cursor.pos.to_string(),
        ];
        let [conversation, kept, at, start, pos] = numbers.each_ref().map(String::as_bytes);
        let args: [&[u8]; 10] = [
            b"walk",
            self.id.as_bytes(),
            conversation,
            self.generation.as_bytes(),
            kept,
            at,
            start,
            pos,
            cursor.up.as_bytes(),
            cursor.expected.as_bytes(),
        ];
        let reply = self
            .store
            .chain_piece(&self.index, &self.stem, &args)
            .await?;
        match reply::walked(self.id, reply)? {
            Some(Walked::Changed) => Ok(Step::Changed),
            Some(Walked::Piece(piece)) if self.same_read(&piece) => {
                self.walked(piece)?;
                Ok(Step::Read)
            }
            _ => Err(corrupt(self.id, "a later piece answered as a first")),
        }
    }

    /// The next piece of turns: one `HMGET` of the turns of the next
    /// slots, as many as the bounds let one piece take (at least one), with
    /// the conversation's generation and the asked response's place, which
    /// is gone only with the conversation.
    async fn read_turns(&mut self) -> Result<Step, StoreError> {
        let from = self.sent.len();
        let mut bytes = 0;
        let taken = self.slots[from..]
            .iter()
            .take(PIECE_ENTRIES)
            .take_while(|slot| {
                let fits = bytes == 0 || bytes + slot.size <= PIECE_BYTES;
                bytes += slot.size;
                fits
            })
            .count();
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(format!("{}{}", self.stem, self.conversation))
            .arg("g")
            .arg(format!("n:{}", self.id));
        for number in &self.numbers[from..from + taken] {
            cmd.arg(format!("t:{number}"));
        }
        let reply: Values = self.store.bounded(self.store.send(&cmd)).await?;
        let mut reply = reply.into_iter();
        let (Some(generation), Some(own)) = (reply.next(), reply.next()) else {
            return Err(corrupt(self.id, "a piece of turns answered too few values"));
        };
        if own.is_none() || generation.unwrap_or_default() != self.generation.as_bytes() {
            return Ok(Step::Changed);
        }
        let turns: Values = reply.collect();
        if turns.len() != taken {
            return Err(corrupt(self.id, "a piece of turns of the wrong length"));
        }
        self.turns(turns)?;
        Ok(Step::Read)
    }

    /// The chain read, once [`step`](Self::step) is done.
    fn finish(self) -> Result<ChainRead, StoreError> {
        if self.cursor.is_some() || self.sent.len() != self.slots.len() {
            return Err(corrupt(self.id, "the chain was not read to its end"));
        }
        Ok(ChainRead {
            conversation: self.conversation,
            generation: self.generation,
            left_out: self.kept,
            lead: self.lead,
            runs: self.runs.iter().rev().map(|r| (r.first, r.last)).collect(),
            sent: self.sent,
        })
    }

    /// Whether a later piece read the conversation the first did.
    fn same_read(&self, piece: &WalkPiece) -> bool {
        piece.conversation == self.conversation
            && piece.generation == self.generation
            && piece.kept == self.kept
            && piece.turns.is_empty()
    }

    /// Adds a piece of the walk: each segment continues the last run, or
    /// starts one before it. Checked, so that a piece that makes no
    /// progress is an error rather than a read that never ends.
    fn walked(&mut self, piece: WalkPiece) -> Result<(), StoreError> {
        for segment in piece.segments {
            self.segment(segment)?;
        }
        self.cursor = piece.cursor;
        if self.cursor.is_some() {
            return Ok(());
        }
        self.lead = piece.lead;
        self.walk_ended()?;
        if piece.turns.len() > self.slots.len() {
            return Err(corrupt(self.id, "more turns than slots"));
        }
        self.turns(piece.turns)
    }

    /// Adds the slots a piece sent of one run: more of the last run's, or
    /// a run of its own, older than the last and begun at its last slot.
    fn segment(&mut self, segment: Segment) -> Result<(), StoreError> {
        let Segment {
            start,
            pos,
            from,
            slots: mut sent,
        } = segment;
        let kept = self.kept;
        let continues = self.runs.last().is_some_and(|run| {
            (run.first, run.last) == (start, pos)
                && from + run.slots.len() == pos
                && !run.slots.is_empty()
                && !sent.is_empty()
        });
        if continues {
            let run = self.runs.last_mut().expect("checked above");
            run.slots.append(&mut sent);
        } else {
            let follows = self.runs.last().is_none_or(|run| pos < run.first);
            let complete = self
                .runs
                .last()
                .is_none_or(|run| run.slots.len() == slots_sent(run.first, run.last, kept));
            if !follows || !complete || from != pos {
                return Err(corrupt(
                    self.id,
                    "a piece of the walk does not follow the last",
                ));
            }
            self.runs.push(Run {
                first: start,
                last: pos,
                slots: sent,
            });
        }
        let run = self.runs.last().expect("pushed above");
        if run.slots.len() > slots_sent(run.first, run.last, kept) {
            return Err(corrupt(self.id, "more slots sent than a run has"));
        }
        Ok(())
    }

    /// The slots whose turns are read, oldest first.
    fn walk_ended(&mut self) -> Result<(), StoreError> {
        for run in self.runs.iter_mut().rev() {
            if run.slots.len() != slots_sent(run.first, run.last, self.kept) {
                return Err(corrupt(self.id, "a run's slots are not all sent"));
            }
            self.numbers.extend(run.first.max(self.kept)..=run.last);
            self.slots
                .extend(std::mem::take(&mut run.slots).into_iter().rev());
        }
        Ok(())
    }

    /// Adds the turns of the next slots.
    fn turns(&mut self, turns: Values) -> Result<(), StoreError> {
        let from = self.sent.len();
        for (slot, value) in self.slots[from..].iter().zip(turns) {
            let turn = value
                .map(|value| record::decode_turn(&slot.id, &value))
                .transpose()?;
            self.sent.push(KeptSlot {
                id: slot.id.as_str().into(),
                turn,
            });
        }
        Ok(())
    }
}

/// How many slots of the run `first..=last` a chain sends, the first
/// `kept` left out.
fn slots_sent(first: usize, last: usize, kept: usize) -> usize {
    (last + 1).saturating_sub(first.max(kept))
}

fn corrupt(id: &str, why: &str) -> StoreError {
    StoreError::Corrupt(format!("the conversation of response {id}: {why}"))
}
