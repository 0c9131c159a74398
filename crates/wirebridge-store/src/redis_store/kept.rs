//! [`KeptTurns`]: the stored turns a [`RedisStore`](super::RedisStore) has
//! read or saved, kept in the process so that reading a conversation again
//! fetches only the turns it does not have.
//!
//! Without it, every turn of a stored conversation has Redis copy the whole
//! history into the chain script's reply, and the store decode it: both
//! grow with the conversation's depth. With it, a turn fetches what was
//! added since the store last read or wrote the conversation, usually
//! nothing but the turn before.
//!
//! A conversation's slots are kept with the generation Redis had for the
//! conversation when they were read (see `scripts.rs`): it changes whenever
//! a slot does (a response saved again in place, moved, or deleted) and
//! when the conversation is made again after expiring, but not when a
//! response is added. The chain script leaves out the slots the store
//! keeps only while that generation is still the conversation's, so a kept
//! turn is what Redis has, whichever process wrote it.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::{Chain, StoredTurn};

/// A generation for a change to a conversation that no other change, by
/// any process, at any time, has had: the time the process first made one
/// and a number drawn then from the system's randomness, and a count.
pub(super) fn new_generation() -> String {
    static PROCESS: OnceLock<String> = OnceLock::new();
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let process = PROCESS.get_or_init(|| {
        let random = std::collections::hash_map::RandomState::new().hash_one(std::process::id());
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos());
        format!("{nanos:x}.{random:x}.")
    });
    let count = COUNT.fetch_add(1, Ordering::Relaxed);
    let mut generation = String::with_capacity(process.len() + 16);
    generation.push_str(process);
    let _ = write!(generation, "{count:x}");
    generation
}

/// What one slot of a conversation held when it was read or saved.
#[derive(Debug, Clone)]
pub(super) struct KeptSlot {
    pub(super) id: Arc<str>,
    /// `None` for a response deleted from its slot.
    pub(super) turn: Option<StoredTurn>,
}

impl KeptSlot {
    /// What keeping it costs, roughly: its text and the bookkeeping.
    fn bytes(&self) -> usize {
        const OVERHEAD: usize = 96;
        let turn = self
            .turn
            .as_ref()
            .map_or(0, |t| t.input.len() + t.output.len());
        OVERHEAD + self.id.len() + turn
    }
}

/// A chain as the chain script sent it: the conversation's number and
/// generation, the first slots it left out, the nearest ancestor kept in
/// another conversation, the runs of slots the chain goes through (first
/// and last, oldest first), and the slots it sent, in chain order.
#[derive(Debug)]
pub(super) struct ChainRead {
    pub(super) conversation: u64,
    pub(super) generation: String,
    pub(super) left_out: usize,
    pub(super) lead: Option<String>,
    pub(super) runs: Vec<(usize, usize)>,
    pub(super) sent: Vec<KeptSlot>,
}

/// The first slots of a conversation the store keeps, to name to the chain
/// script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Known {
    pub(super) conversation: u64,
    pub(super) generation: String,
    pub(super) slots: usize,
    /// The response in the last of them.
    pub(super) last: Arc<str>,
}

/// Stored turns kept by conversation, bounded in bytes; the conversations
/// used longest ago go first.
pub(super) struct KeptTurns {
    max_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// By the tenant's index key (which names the prefix and the tenant).
    tenants: HashMap<String, Tenant>,
    /// The conversations by when they were last used, oldest first.
    by_use: BTreeMap<u64, (Arc<str>, u64)>,
    clock: u64,
    bytes: usize,
}

struct Tenant {
    /// Its index key, shared with `by_use`.
    name: Arc<str>,
    conversations: HashMap<u64, Conversation>,
    /// Which conversation holds each kept response.
    ids: HashMap<Arc<str>, u64>,
    /// The conversations used last, the latest first.
    recent: Vec<u64>,
}

/// How many of a tenant's conversations used last are named to the chain
/// script for a response the store has not seen.
const RECENT: usize = 4;

impl Tenant {
    fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            conversations: HashMap::new(),
            ids: HashMap::new(),
            recent: Vec::new(),
        }
    }

    fn used(&mut self, conversation: u64) {
        match self.recent.iter().position(|&c| c == conversation) {
            Some(at) => self.recent[..=at].rotate_right(1),
            None => {
                self.recent.truncate(RECENT - 1);
                self.recent.insert(0, conversation);
            }
        }
    }
}

struct Conversation {
    generation: String,
    slots: Vec<Option<KeptSlot>>,
    /// How many first slots are all kept.
    prefix: usize,
    bytes: usize,
    used: u64,
}

impl KeptTurns {
    /// Keeps up to `max_bytes` of turns; 0 keeps none.
    pub(super) fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Whether any turn is kept.
    pub(super) fn keeps(&self) -> bool {
        self.max_bytes > 0
    }

    /// What the store keeps of the conversation holding `id`, when it knows
    /// which that is; else of the tenant's conversations used last (`id`
    /// was saved by another process, most often continuing one of them).
    pub(super) fn known(&self, tenant: &str, id: &str) -> Vec<Known> {
        if self.max_bytes == 0 {
            return Vec::new();
        }
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(kept) = inner.tenants.get(tenant) else {
            return Vec::new();
        };
        let candidates = match kept.ids.get(id) {
            Some(conversation) => std::slice::from_ref(conversation),
            None => kept.recent.as_slice(),
        };
        candidates
            .iter()
            .filter_map(|&conversation| {
                let held = kept.conversations.get(&conversation)?;
                let last = held.slots.get(held.prefix.checked_sub(1)?)?.as_ref()?;
                Some(Known {
                    conversation,
                    generation: held.generation.clone(),
                    slots: held.prefix,
                    last: last.id.clone(),
                })
            })
            .collect()
    }

    /// The chain of `read`, its left-out slots taken from what is kept, and
    /// the slots it sent kept. `None` when the slots it left out are no
    /// longer all kept (evicted meanwhile, or replaced by a read of another
    /// generation): the chain must be read again in full.
    pub(super) fn chain(&self, tenant: &str, read: ChainRead) -> Option<Chain> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let inner = &mut *inner;
        let conversation = read.conversation;
        let held = inner
            .tenants
            .get(tenant)
            .and_then(|kept| kept.conversations.get(&conversation));
        let stale = held.is_none_or(|h| h.generation != read.generation);
        if read.left_out > 0 && (stale || held.is_some_and(|h| h.prefix < read.left_out)) {
            return None;
        }
        if stale {
            self.drop_conversation(inner, tenant, conversation);
        }
        let held = inner.conversation(tenant, conversation, &read.generation);
        let slots = read
            .runs
            .iter()
            .flat_map(|&(first, last)| first.max(read.left_out)..=last);
        let (mut added, mut freed) = (0, 0);
        let mut ids = Vec::with_capacity(read.sent.len());
        for (at, slot) in slots.zip(read.sent) {
            ids.push(slot.id.clone());
            let (more, less) = held.put(at, slot);
            (added, freed) = (added + more, freed + less);
        }
        let chain = held.chain(read.lead, &read.runs);
        let kept = inner.tenants.get_mut(tenant).expect("kept above");
        for id in ids {
            kept.ids.insert(id, conversation);
        }
        inner.bytes = inner.bytes + added - freed;
        // A conversation without a generation (saved by an older bridge
        // and not since) cannot be checked, so it is not kept.
        if read.generation.is_empty() {
            self.drop_conversation(inner, tenant, conversation);
        }
        self.evict(inner);
        chain
    }

    /// Keeps a response the store saved at `slot` of `conversation`, now of
    /// `generation`.
    pub(super) fn saved(
        &self,
        tenant: &str,
        conversation: u64,
        generation: &str,
        slot: usize,
        turn: StoredTurn,
    ) {
        if self.max_bytes == 0 {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let inner = &mut *inner;
        let stale = inner
            .tenants
            .get(tenant)
            .and_then(|kept| kept.conversations.get(&conversation))
            .is_some_and(|held| held.generation != generation);
        if stale {
            self.drop_conversation(inner, tenant, conversation);
        }
        let id = turn.id.clone();
        let held = inner.conversation(tenant, conversation, generation);
        let (added, freed) = held.put(
            slot,
            KeptSlot {
                id: id.clone(),
                turn: Some(turn),
            },
        );
        // Saved again elsewhere, it left its old slot, and the old
        // conversation's generation changed: that is read again.
        let kept = inner.tenants.get_mut(tenant).expect("kept above");
        kept.ids.insert(id, conversation);
        inner.bytes = inner.bytes + added - freed;
        self.evict(inner);
    }

    /// Drops the conversations used longest ago until what is kept fits.
    fn evict(&self, inner: &mut Inner) {
        while inner.bytes > self.max_bytes {
            let Some((_, (tenant, conversation))) = inner.by_use.pop_first() else {
                break;
            };
            self.drop_conversation(inner, &tenant, conversation);
        }
    }

    fn drop_conversation(&self, inner: &mut Inner, tenant: &str, conversation: u64) {
        let Some(kept) = inner.tenants.get_mut(tenant) else {
            return;
        };
        if let Some(old) = kept.conversations.remove(&conversation) {
            inner.bytes -= old.bytes;
            inner.by_use.remove(&old.used);
            for slot in old.slots.iter().flatten() {
                if kept.ids.get(&slot.id) == Some(&conversation) {
                    kept.ids.remove(&slot.id);
                }
            }
            kept.recent.retain(|&c| c != conversation);
        }
        if kept.conversations.is_empty() {
            inner.tenants.remove(tenant);
        }
    }

    /// How many bytes of turns are kept now.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bytes
    }
}

impl Inner {
    /// The conversation kept of `tenant`, made (of `generation`) if it is
    /// not, and marked used now.
    fn conversation(
        &mut self,
        tenant: &str,
        conversation: u64,
        generation: &str,
    ) -> &mut Conversation {
        self.clock += 1;
        let clock = self.clock;
        if !self.tenants.contains_key(tenant) {
            self.tenants.insert(tenant.to_owned(), Tenant::new(tenant));
        }
        let kept = self.tenants.get_mut(tenant).expect("made above");
        kept.used(conversation);
        let held = kept
            .conversations
            .entry(conversation)
            .or_insert_with(|| Conversation::new(generation.to_owned(), clock));
        self.by_use.remove(&held.used);
        held.used = clock;
        self.by_use.insert(clock, (kept.name.clone(), conversation));
        held
    }
}

impl Conversation {
    fn new(generation: String, used: u64) -> Self {
        Self {
            generation,
            slots: Vec::new(),
            prefix: 0,
            bytes: 0,
            used,
        }
    }

    /// Keeps `slot` at `at`: the bytes it added, and those it freed (the
    /// same response kept there before, under the same generation). The
    /// slots before it count too, kept or not: a conversation of many
    /// slots costs its list even when few of them are kept.
    fn put(&mut self, at: usize, slot: KeptSlot) -> (usize, usize) {
        let mut added = slot.bytes();
        if self.slots.len() <= at {
            added += (at + 1 - self.slots.len()) * std::mem::size_of::<Option<KeptSlot>>();
            self.slots.resize(at + 1, None);
        }
        let freed = self.slots[at].replace(slot).map_or(0, |old| old.bytes());
        self.bytes = self.bytes + added - freed;
        while self.slots.get(self.prefix).is_some_and(Option::is_some) {
            self.prefix += 1;
        }
        (added, freed)
    }

    /// The chain through `runs`, all of whose slots are kept: its ids (the
    /// lead first), and its turns after the nearest one missing. `None`
    /// when the newest has no turn.
    fn chain(&self, lead: Option<String>, runs: &[(usize, usize)]) -> Option<Chain> {
        let slots: Vec<&KeptSlot> = runs
            .iter()
            .flat_map(|&(first, last)| first..=last)
            .map(|at| self.slots.get(at).and_then(Option::as_ref))
            .collect::<Option<_>>()?;
        let present = slots
            .iter()
            .rev()
            .take_while(|slot| slot.turn.is_some())
            .count();
        if present == 0 {
            return None;
        }
        let first = slots.len() - present;
        let mut ids = Vec::with_capacity(slots.len() + 1);
        ids.extend(lead.as_deref().map(Arc::from));
        ids.extend(slots.iter().map(|slot| Arc::clone(&slot.id)));
        let turns = slots[first..]
            .iter()
            .filter_map(|slot| slot.turn.clone())
            .collect();
        let missing = match first {
            0 => lead,
            _ => Some(slots[first - 1].id.to_string()),
        };
        Some(Chain {
            ids,
            turns,
            missing,
        })
    }
}

#[cfg(test)]
mod tests;
