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
//! response id, the lengths and ends of its stored text), at the same place
//! in the conversation, for the same tenant, translated with the same
//! options and tool names. Anything else is translated in full.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use wirebridge_wire::responses::strict::InputTransformation;

use crate::loss::Loss;

/// Stored turns in their Chat form, shared by the requests of one layer
/// (or one set of [`Options`](super::Options)), bounded in bytes; the
/// turns kept longest without use go first.
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
#[derive(Debug)]
pub struct HistoryCache {
    keys: RandomState,
    max_bytes: usize,
    kept: Mutex<Kept>,
    hits: AtomicU64,
    misses: AtomicU64,
    spliced: AtomicU64,
}

#[derive(Debug, Default)]
struct Kept {
    turns: HashMap<u64, Arc<CachedTurn>>,
    /// Keys in the order they were last used (front: longest ago). A key
    /// may be listed more than once; only its last listing counts.
    order: VecDeque<(u64, u64)>,
    /// When each key was last used, in the `order` clock.
    used: HashMap<u64, u64>,
    clock: u64,
    bytes: usize,
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
}

impl CachedTurn {
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
}

/// How much of each end of a stored array goes into its key: with its
/// length, what tells a turn saved again under the same id (a background
/// run's, as it goes from queued to done) from its earlier save.
const ENDS: usize = 48;

impl HistoryCache {
    /// A cache holding at most `max_bytes` of translated turns.
    pub fn new(max_bytes: usize) -> Self {
        Self {
            keys: RandomState::new(),
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

    /// Bytes of translated turns held now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        // A panic elsewhere leaves the maps whole: each change below is
        // made before anything that could panic.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn key(&self, key: &TurnKey<'_>) -> u64 {
        let mut hasher = self.keys.build_hasher();
        key.scope.hash(&mut hasher);
        key.fingerprint.hash(&mut hasher);
        key.start.hash(&mut hasher);
        key.id.hash(&mut hasher);
        for array in [key.input, key.output] {
            let bytes = array.as_bytes();
            bytes.len().hash(&mut hasher);
            hasher.write(&bytes[..bytes.len().min(ENDS)]);
            hasher.write(&bytes[bytes.len().saturating_sub(ENDS)..]);
        }
        hasher.finish()
    }

    pub(super) fn get(&self, key: u64) -> Option<Arc<CachedTurn>> {
        let mut kept = self.lock();
        let turn = kept.turns.get(&key).cloned()?;
        kept.touch(key);
        self.hits.fetch_add(1, Ordering::Relaxed);
        Some(turn)
    }

    pub(super) fn insert(&self, key: u64, turn: Arc<CachedTurn>) {
        self.misses.fetch_add(1, Ordering::Relaxed);
        let bytes = turn.bytes();
        if bytes > self.max_bytes {
            return;
        }
        let mut kept = self.lock();
        if let Some(old) = kept.turns.insert(key, turn) {
            kept.bytes -= old.bytes();
        }
        kept.bytes += bytes;
        kept.touch(key);
        while kept.bytes > self.max_bytes {
            if !kept.evict_one() {
                break;
            }
        }
    }
}

impl Default for HistoryCache {
    /// A cache of 64 MiB.
    fn default() -> Self {
        Self::new(64 << 20)
    }
}

impl Kept {
    fn touch(&mut self, key: u64) {
        self.clock += 1;
        self.used.insert(key, self.clock);
        self.order.push_back((key, self.clock));
        // Listings of keys used again since are dropped once they
        // outnumber the keys, so the order stays within twice the keys.
        if self.order.len() > 2 * self.turns.len() + 16 {
            let used = &self.used;
            self.order.retain(|(key, at)| used.get(key) == Some(at));
        }
    }

    /// Drops the turn used longest ago; false when none is left.
    fn evict_one(&mut self) -> bool {
        while let Some((key, at)) = self.order.pop_front() {
            if self.used.get(&key) != Some(&at) {
                continue;
            }
            self.used.remove(&key);
            if let Some(turn) = self.turns.remove(&key) {
                self.bytes -= turn.bytes();
            }
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(len: usize) -> Arc<CachedTurn> {
        Arc::new(CachedTurn {
            messages: "x".repeat(len),
            message_count: 1,
            item_count: 1,
            withheld: Vec::new(),
            losses: Vec::new(),
            call_ids: Vec::new(),
            last_user: None,
        })
    }

    #[test]
    fn the_turns_used_longest_ago_go_first_and_the_bound_holds() {
        let one = turn(1000).bytes();
        let cache = HistoryCache::new(3 * one);
        for key in 1..=3 {
            cache.insert(key, turn(1000));
        }
        assert!(cache.get(1).is_some());
        cache.insert(4, turn(1000));
        // 2 was used longest ago: 1 was read after it.
        assert!(cache.get(2).is_none());
        for key in [1, 3, 4] {
            assert!(cache.get(key).is_some(), "{key}");
        }
        assert_eq!(cache.bytes(), 3 * one);
        // Used over and over, the order list stays bounded.
        for _ in 0..10_000 {
            cache.get(1);
        }
        assert!(cache.lock().order.len() <= 2 * 3 + 16);
        // A turn larger than the whole cache is not kept.
        cache.insert(5, turn(4 * one));
        assert!(cache.get(5).is_none());
        assert_eq!(cache.bytes(), 3 * one);
    }
}
