//! [`HistoryCache`]: stored turns kept in their Chat form, so that a turn
//! continuing a stored conversation translates only what is new.
//!
//! A Chat backend keeps nothing, so every turn of a stored conversation
//! sends it the whole history; without this cache every turn also reads
//! every earlier item and translates it again, and a turn costs in
//! proportion to the conversation's depth. With it, a stored turn (its
//! input items and its output items) is translated once, the first time a
//! request continues past it, and its Chat messages are kept; later turns
//! copy them.
//!
//! A kept translation is used only where it is exactly what translating
//! the whole conversation would give (see `spliced.rs`): the same turn (its
//! response id and its stored text, compared whole: by address where the
//! store shares its text, else byte for byte, which costs what copying the
//! text does, a fraction of reading it), at the same place in the
//! conversation, for the same tenant, translated with the same options and
//! tool names. Anything else is translated in full.
//!
//! The turns one request spliced are also kept together, one run a
//! conversation (`run.rs`), so that the next request finds them by the
//! address of their text instead of looking each one up.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use wirebridge_wire::responses::strict::InputTransformation;

use crate::loss::Loss;

mod run;

pub(super) use run::Run;

/// Stored turns in their Chat form, shared by the requests of one layer
/// (or one set of [`Options`](super::Options)), bounded in bytes; the
/// turns (and runs of turns) kept longest without use go first.
///
/// ```
/// use wirebridge_convert::responses_to_chat::{History, HistoryCache, Options, ParsedRequest};
///
/// let cache = HistoryCache::new(1 << 20);
/// let input = r#"[{"type":"message","id":"msg_1","role":"user","content":"My name is Ada."}]"#;
/// let output = r#"[{"type":"message","id":"msg_2","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello Ada!","annotations":[]}]}]"#;
/// let body = br#"{"model":"m","previous_response_id":"resp_1","input":"What is my name?"}"#;
/// for _ in 0..2 {
///     let history = History::new("resp_1", [input, output]).with_cache(&cache, "tenant", ["resp_1"]);
///     let translated = ParsedRequest::parse(body).unwrap().translate(&history, &Options::default()).unwrap();
///     let chat: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
///     assert_eq!(chat["messages"][1]["content"], "Hello Ada!");
/// }
/// // The first request translated the stored turn, the second copied it.
/// assert_eq!((cache.misses(), cache.hits()), (1, 1));
/// assert_eq!(cache.spliced_requests(), 2);
/// ```
pub struct HistoryCache {
    max_bytes: usize,
    kept: Mutex<Kept>,
    hits: AtomicU64,
    misses: AtomicU64,
    spliced: AtomicU64,
}

#[derive(Debug, Default)]
struct Kept {
    /// By [`slot`]: a number cheap to make, the entry then checked whole.
    turns: HashMap<u64, Entry, BuildHasherDefault<SlotHasher>>,
    /// Conversations' first turns as a request spliced them, by the slot
    /// of their first turn's id (see [`Run`]).
    runs: HashMap<u64, Run, BuildHasherDefault<SlotHasher>>,
    /// The use clock: each lookup that finds a turn stamps it.
    clock: u64,
    bytes: usize,
}

/// One stored turn as its store shares it: its response id and its input
/// and output arrays, each in a shared allocation the store hands out
/// again for as long as the turn is unchanged.
#[derive(Debug, Clone, Copy)]
pub struct SharedTurn<'h> {
    /// The response id.
    pub id: &'h Arc<str>,
    /// The turn's input items, a JSON array.
    pub input: &'h Arc<str>,
    /// Its output items, a JSON array.
    pub output: &'h Arc<str>,
}

/// One stored turn: its response id, its input items and its output items.
#[derive(Debug, Clone, Copy)]
pub(super) struct StoredPair<'h> {
    pub(super) id: &'h str,
    pub(super) input: &'h str,
    pub(super) output: &'h str,
    /// The same, as the store shares them, when it does.
    pub(super) shared: Option<SharedTurn<'h>>,
}

/// Hashes a [`slot`], which is a hash already, to itself.
#[derive(Debug, Default)]
struct SlotHasher(u64);

impl Hasher for SlotHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; anything else still spreads.
        for &byte in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(byte)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }

    fn write_u64(&mut self, slot: u64) {
        self.0 = slot;
    }
}

/// A kept turn, and everything its key holds, to check a lookup against.
#[derive(Debug)]
struct Entry {
    turn: Arc<CachedTurn>,
    scope: Box<str>,
    fingerprint: u64,
    start: usize,
    /// The response id and the stored text it was translated from: the
    /// store's own allocations where it shares them, else copies.
    id: Arc<str>,
    input: Arc<str>,
    output: Arc<str>,
    used: u64,
    bytes: usize,
}

impl Entry {
    fn is(&self, key: &TurnKey<'_>) -> bool {
        self.fingerprint == key.fingerprint
            && self.start == key.start
            && same(&self.id, key.id)
            && *self.scope == *key.scope
            && same(&self.input, key.input)
            && same(&self.output, key.output)
    }
}

/// Whether `given` is the text `kept` holds: at the same address, or
/// byte for byte.
fn same(kept: &Arc<str>, given: &str) -> bool {
    is_at(kept, given) || **kept == *given
}

/// Whether `text` is the text `shared` holds, where it holds it. Whoever
/// holds `shared` knows that `text` is the same text by its address alone:
/// the allocation cannot have been freed and reused while held, and the
/// text of an `Arc<str>` held twice is never written to.
pub(super) fn is_at(shared: &Arc<str>, text: &str) -> bool {
    std::ptr::eq(shared.as_ptr(), text.as_ptr()) && shared.len() == text.len()
}

/// What an entry keeps of `text`: the store's allocation, when `shared`
/// is it, else a copy.
fn keep(text: &str, shared: Option<&Arc<str>>) -> Arc<str> {
    match shared {
        Some(shared) if is_at(shared, text) => Arc::clone(shared),
        _ => text.into(),
    }
}

/// One stored turn translated: what splicing it into a request needs.
#[derive(Debug)]
pub(super) struct CachedTurn {
    /// The Chat messages, serialized and joined by commas (no brackets).
    pub(super) messages: String,
    pub(super) message_count: usize,
    /// How many items the turn has (input and output).
    pub(super) item_count: usize,
    /// Reasoning items withheld from the backend, in order.
    pub(super) withheld: Vec<InputTransformation>,
    /// Losses its translation recorded, in order.
    pub(super) losses: Vec<Loss>,
    /// The call ids of its calls (a later tool result may answer one).
    pub(super) call_ids: Vec<String>,
    /// The index among its items of its last user message, if any.
    pub(super) last_user: Option<usize>,
    /// Whether it can be spliced at all: a turn that cannot (see
    /// `spliced.rs`) is kept as such, so that the requests continuing past
    /// it go straight to translating the whole conversation rather than
    /// reading it twice.
    pub(super) spliceable: bool,
}

impl CachedTurn {
    /// A turn that cannot be spliced, of `item_count` items.
    pub(super) fn unspliceable(item_count: usize) -> Self {
        Self {
            messages: String::new(),
            message_count: 0,
            item_count,
            withheld: Vec::new(),
            losses: Vec::new(),
            call_ids: Vec::new(),
            last_user: None,
            spliceable: false,
        }
    }

    fn bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.messages.len()
            + self.call_ids.iter().map(|id| id.len() + 24).sum::<usize>()
            + self
                .losses
                .iter()
                .map(|l| l.path.len() + l.reason.len() + 64)
                .sum::<usize>()
            + self.withheld.len() * 64
    }
}

/// What a turn is kept under.
pub(super) struct TurnKey<'k> {
    pub(super) scope: &'k str,
    /// The options and tool names it was translated with.
    pub(super) fingerprint: u64,
    /// Where its first item is in the conversation.
    pub(super) start: usize,
    /// Its response id.
    pub(super) id: &'k str,
    /// Its stored input and output arrays.
    pub(super) input: &'k str,
    pub(super) output: &'k str,
    /// The same, as the store shares them, when it does.
    pub(super) shared: Option<SharedTurn<'k>>,
}

/// One request's lookups of its stored turns: the lock taken at the first
/// and held while they find what they look for, every turn found stamped
/// with the one time it was taken. [`release`](Self::release) lets it go
/// before work that takes long (translating a turn not kept), and
/// dropping the lookups counts their hits.
///
/// Measured at depth 500 on the memory store (callgrind, 100 turns over a
/// Chat backend): 669.5 K instructions a turn with the lock taken for each
/// turn looked up, 657.5 K with it taken once (−1.8%).
pub(super) struct Lookups<'c> {
    cache: &'c HistoryCache,
    held: Option<std::sync::MutexGuard<'c, Kept>>,
    clock: u64,
    hits: u64,
}

impl Lookups<'_> {
    /// The turn kept under `key`, stamped as used.
    pub(super) fn get(&mut self, key: &TurnKey<'_>) -> Option<Arc<CachedTurn>> {
        let (kept, clock) = self.hold();
        let entry = kept.turns.get_mut(&slot(key)).filter(|e| e.is(key))?;
        entry.used = clock;
        let turn = Arc::clone(&entry.turn);
        self.hits += 1;
        Some(turn)
    }

    /// The run of turns the last request continuing this conversation
    /// kept (see [`Run`]), cut to the turns `pairs` starts with, unless it
    /// has none of them. It is taken from the cache, to be given back
    /// longer ([`HistoryCache::keep_run`]).
    pub(super) fn take_run(
        &mut self,
        scope: &str,
        fingerprint: u64,
        pairs: &[StoredPair<'_>],
    ) -> Option<Run> {
        let first = pairs.first()?;
        let (kept, _) = self.hold();
        let mut run = kept.runs.remove(&run::slot(scope, fingerprint, first.id))?;
        kept.bytes -= run.bytes;
        let matching = run.matching(scope, fingerprint, pairs);
        if matching == 0 {
            return None;
        }
        run.truncate(matching);
        self.hits += matching as u64;
        Some(run)
    }

    /// The cache, held, and the time this request's lookups stamp.
    fn hold(&mut self) -> (&mut Kept, u64) {
        if self.held.is_none() {
            let mut kept = self.cache.lock();
            kept.clock += 1;
            self.clock = kept.clock;
            self.held = Some(kept);
        }
        (self.held.as_mut().expect("held just now"), self.clock)
    }

    /// Lets the lock go; the next lookup takes it again.
    pub(super) fn release(&mut self) {
        self.held = None;
    }
}

impl Drop for Lookups<'_> {
    fn drop(&mut self) {
        self.held = None;
        self.cache.hits.fetch_add(self.hits, Ordering::Relaxed);
    }
}

/// Where a turn is looked for: a multiply-rotate hash of its place,
/// response id and the start of its tenant (ids are the bridge's own, not
/// a client's to choose), the entry found there then compared with the
/// whole key.
fn slot(key: &TurnKey<'_>) -> u64 {
    let hash = (key.fingerprint ^ key.start as u64).wrapping_mul(K);
    let scope = key.scope.as_bytes();
    mix(mix(hash, key.id.as_bytes()), &scope[..scope.len().min(16)])
}

const K: u64 = 0x517c_c1b7_2722_0a95;

/// `hash` with `bytes` mixed in, eight at a time (read as whole words: a
/// copy of each into a word was a call to `memcpy`, most of what a lookup
/// cost).
fn mix(mut hash: u64, bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        hash = (hash.rotate_left(5) ^ word).wrapping_mul(K);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let word = rest
            .iter()
            .rev()
            .fold(0, |word, &byte| (word << 8) | u64::from(byte));
        hash = (hash.rotate_left(5) ^ word).wrapping_mul(K);
    }
    hash
}

impl HistoryCache {
    /// The bytes of translated turns a cache holds by default: 64 MiB.
    pub const DEFAULT_MAX_BYTES: usize = 64 << 20;

    /// A cache holding at most `max_bytes` of translated turns (0: none,
    /// and a history with it is translated whole).
    pub fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            kept: Mutex::default(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            spliced: AtomicU64::new(0),
        }
    }

    /// How many stored turns were copied from the cache.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// How many stored turns were translated and offered to the cache.
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }

    /// How many requests were translated with their stored turns spliced
    /// (the others, translated whole, had something a turn's translation
    /// alone cannot stand for).
    pub fn spliced_requests(&self) -> u64 {
        self.spliced.load(Ordering::Relaxed)
    }

    pub(super) fn note_spliced(&self) {
        self.spliced.fetch_add(1, Ordering::Relaxed);
    }

    /// The most bytes of translated turns it holds.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Bytes of translated turns held now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        // A panic elsewhere leaves the maps whole: each change below is
        // made before anything that could panic.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The turn kept under `key`, stamped as used now.
    #[cfg(test)]
    fn get(&self, key: &TurnKey<'_>) -> Option<Arc<CachedTurn>> {
        self.lookups().get(key)
    }

    /// Looks up one request's turns under one hold of the lock (a request
    /// at depth 500 looks up 500 turns); see [`Lookups`].
    pub(super) fn lookups(&self) -> Lookups<'_> {
        Lookups {
            cache: self,
            held: None,
            clock: 0,
            hits: 0,
        }
    }

    /// Keeps `run`, the turns a request spliced, for the next request
    /// continuing the conversation (see [`Lookups::take_run`]).
    pub(super) fn keep_run(&self, mut run: Run) {
        let Some(slot) = run.slot() else {
            return;
        };
        if run.bytes > self.max_bytes {
            return;
        }
        let mut kept = self.lock();
        kept.clock += 1;
        run.used = kept.clock;
        kept.bytes += run.bytes;
        if let Some(old) = kept.runs.insert(slot, run) {
            kept.bytes -= old.bytes;
        }
        if kept.bytes > self.max_bytes {
            kept.shrink_to(self.max_bytes - self.max_bytes / 8);
        }
    }

    /// Keeps `turn` under `key`; when the cache is over its bound, the
    /// turns used longest ago go, down to seven eighths of it (so a full
    /// cache sorts its turns once per many inserts, not on each).
    pub(super) fn insert(&self, key: &TurnKey<'_>, turn: Arc<CachedTurn>) {
        self.misses.fetch_add(1, Ordering::Relaxed);
        let bytes =
            turn.bytes() + key.scope.len() + key.id.len() + key.input.len() + key.output.len();
        if bytes > self.max_bytes {
            return;
        }
        let mut kept = self.lock();
        kept.clock += 1;
        let entry = Entry {
            turn,
            scope: key.scope.into(),
            fingerprint: key.fingerprint,
            start: key.start,
            id: keep(key.id, key.shared.map(|turn| turn.id)),
            input: keep(key.input, key.shared.map(|turn| turn.input)),
            output: keep(key.output, key.shared.map(|turn| turn.output)),
            used: kept.clock,
            bytes,
        };
        if let Some(old) = kept.turns.insert(slot(key), entry) {
            kept.bytes -= old.bytes;
        }
        kept.bytes += bytes;
        if kept.bytes > self.max_bytes {
            kept.shrink_to(self.max_bytes - self.max_bytes / 8);
        }
    }
}

impl fmt::Debug for HistoryCache {
    /// Its bounds and counts, never the conversations it holds.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HistoryCache")
            .field("max_bytes", &self.max_bytes)
            .field("bytes", &self.bytes())
            .field("hits", &self.hits())
            .field("misses", &self.misses())
            .field("spliced_requests", &self.spliced_requests())
            .finish()
    }
}

impl Default for HistoryCache {
    /// A cache of [`DEFAULT_MAX_BYTES`](Self::DEFAULT_MAX_BYTES).
    fn default() -> Self {
        Self::new(Self::DEFAULT_MAX_BYTES)
    }
}

impl Kept {
    /// Drops the turns and runs used longest ago until at most `target`
    /// bytes stay.
    fn shrink_to(&mut self, target: usize) {
        let turns = self.turns.iter().map(|(k, e)| (e.used, *k, false));
        let runs = self.runs.iter().map(|(k, r)| (r.used, *k, true));
        let mut ages: Vec<(u64, u64, bool)> = turns.chain(runs).collect();
        ages.sort_unstable();
        for (_, slot, is_run) in ages {
            if self.bytes <= target {
                break;
            }
            let freed = if is_run {
                self.runs.remove(&slot).map(|run| run.bytes)
            } else {
                self.turns.remove(&slot).map(|entry| entry.bytes)
            };
            self.bytes -= freed.unwrap_or(0);
        }
    }
}

#[cfg(test)]
mod tests;
