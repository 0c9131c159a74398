//! The bounded, expiring table behind `MemoryStore`: plain data, no locking,
//! no clock of its own (every operation is told the time).
//!
//! Per tenant: where each response is (its conversation, and its slot
//! there), and the tenant's conversations. A conversation holds its
//! responses in slots, in the order they were saved, each slot naming the
//! slot of its parent: a save appends one slot and renews the conversation,
//! whatever its depth, and a chain is read by following parent slots back.
//! A conversation expires as a whole, a TTL after its latest save. A slot
//! whose response is gone (deleted, evicted, replaced) keeps its id and its
//! parent, so that a chain through it names it missing and still knows the
//! ids before it; gone slots at the start of a conversation are dropped.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{Chain, StoredResponse, StoredTurn};

mod evict;
#[cfg(test)]
mod tests;

/// The bounds a table keeps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) max_entries: usize,
    pub(crate) max_bytes: usize,
    pub(crate) max_entries_per_tenant: usize,
    pub(crate) max_bytes_per_tenant: usize,
    pub(crate) max_tenants: usize,
    pub(crate) ttl: Duration,
}

impl Limits {
    /// Why a record of `size` bytes can never be kept, whatever is evicted
    /// for it; `None` if it can.
    pub(crate) fn exceeded_by(&self, size: usize) -> Option<String> {
        if self.max_entries == 0 {
            Some("the memory store keeps no records (max_entries is 0)".to_owned())
        } else if self.max_entries_per_tenant == 0 {
            Some("the memory store keeps no records (max_entries_per_tenant is 0)".to_owned())
        } else if self.max_tenants == 0 {
            Some("the memory store keeps no records (max_tenants is 0)".to_owned())
        } else if size > self.max_bytes {
            Some(format!(
                "it is {size} bytes, more than the memory store's bound of {} bytes",
                self.max_bytes
            ))
        } else if size > self.max_bytes_per_tenant {
            Some(format!(
                "it is {size} bytes, more than the memory store's quota of {} bytes per tenant",
                self.max_bytes_per_tenant
            ))
        } else {
            None
        }
    }
}

/// A tenant's name, shared by the maps that refer to it.
type Name = Arc<str>;

/// Every tenant's conversations, with the orders eviction and expiry follow.
#[derive(Debug, Default)]
pub(crate) struct Table {
    tenants: HashMap<Name, Tenant>,
    /// Tenants by their latest save, least recent first: the one a new
    /// tenant beyond `max_tenants` replaces, and the tie-break of eviction.
    recency: BTreeMap<u64, Name>,
    /// Conversations by their latest save, oldest first, over all tenants:
    /// they share one TTL, so this is the order in which they expire. Each
    /// with its deadline, so that the oldest is checked without finding it.
    expiry: BTreeMap<u64, (Name, u64, Option<Instant>)>,
    /// The last sequence number given out; each save takes the next.
    seq: u64,
    next_conversation: u64,
    entries: usize,
    bytes: usize,
}

/// One tenant's responses and conversations.
#[derive(Debug)]
struct Tenant {
    /// Its name, shared with the table's maps.
    name: Name,
    /// Where each of its responses is.
    places: HashMap<String, Place>,
    conversations: HashMap<u64, Conversation>,
    /// Its conversations by their latest save, least recent first: its
    /// quota evicts the oldest responses of the first.
    order: BTreeMap<u64, u64>,
    /// Its latest save: its key in [`Table::recency`].
    seq: u64,
    entries: usize,
    bytes: usize,
}

impl Tenant {
    fn new(name: Name, seq: u64) -> Self {
        Self {
            name,
            places: HashMap::new(),
            conversations: HashMap::new(),
            order: BTreeMap::new(),
            seq,
            entries: 0,
            bytes: 0,
        }
    }

    fn over(&self, limits: Limits) -> bool {
        self.entries > limits.max_entries_per_tenant || self.bytes > limits.max_bytes_per_tenant
    }

    /// The slot a response is in, with its conversation.
    fn find(&self, id: &str) -> Option<(Place, &Conversation, &Slot)> {
        let place = *self.places.get(id)?;
        let conversation = self.conversations.get(&place.conversation)?;
        let slot = conversation.slot(place.slot)?;
        Some((place, conversation, slot))
    }

    /// The response `id` and its conversation, unless absent or expired.
    fn live(&self, id: &str, now: Instant) -> Option<(Place, &Conversation, &Kept)> {
        let (place, conversation, slot) = self.find(id)?;
        if conversation.expired(now) {
            return None;
        }
        Some((place, conversation, slot.kept.as_deref()?))
    }
}

/// Where a response is: its conversation, and the absolute index of its
/// slot there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Place {
    conversation: u64,
    slot: usize,
}

/// The responses of one conversation, in the order they were saved.
#[derive(Debug)]
struct Conversation {
    /// The absolute index of `slots[0]`: the slots before it were all gone,
    /// and have been dropped.
    base: usize,
    slots: VecDeque<Slot>,
    /// The slots whose response is kept.
    live: usize,
    /// Its latest save: its key in [`Tenant::order`] and [`Table::expiry`]
    /// (0 before the first).
    seq: u64,
    /// `None` when the TTL is too long to be represented: never expires.
    expires_at: Option<Instant>,
}

impl Conversation {
    fn new() -> Self {
        Self {
            base: 0,
            slots: VecDeque::new(),
            live: 0,
            seq: 0,
            expires_at: None,
        }
    }

    fn expired(&self, now: Instant) -> bool {
        self.expires_at.is_some_and(|at| now >= at)
    }

    fn slot(&self, index: usize) -> Option<&Slot> {
        self.slots.get(index.checked_sub(self.base)?)
    }

    fn slot_mut(&mut self, index: usize) -> Option<&mut Slot> {
        self.slots.get_mut(index.checked_sub(self.base)?)
    }

    /// Drops the gone slots at the start: a chain that reaches back to one
    /// of them finds its parent's id in the slot after, and names it missing.
    fn drop_gone_front(&mut self) {
        while self.slots.front().is_some_and(|slot| slot.kept.is_none()) {
            self.slots.pop_front();
            self.base += 1;
        }
    }

    /// The conversation ending at slot `index`, from its newest response
    /// back: ids as far as known, turns up to the nearest gone one.
    fn chain(&self, index: usize) -> Chain {
        // At most every slot up to `index`, and the parent before them.
        let slots = index.saturating_sub(self.base) + 1;
        let mut ids = Vec::with_capacity(slots + 1);
        let mut turns = Vec::with_capacity(slots);
        let mut missing: Option<String> = None;
        let mut at = self.slot(index);
        while let Some(slot) = at {
            ids.push(slot.id.clone());
            match (&slot.kept, &missing) {
                (Some(kept), None) => turns.push(kept.turn()),
                (None, None) => missing = Some(slot.id.to_string()),
                _ => {}
            }
            // A parent slot comes before its child's, so the walk ends.
            at = slot.parent_slot.and_then(|parent| self.slot(parent));
            if at.is_none() {
                // The parent is in no slot kept here: never saved in this
                // conversation, or gone and dropped.
                if let Some(parent) = &slot.parent {
                    ids.push(parent.as_str().into());
                    missing.get_or_insert_with(|| parent.clone());
                }
            }
        }
        ids.reverse();
        turns.reverse();
        Chain {
            ids,
            turns,
            missing,
        }
    }
}

/// One response of a conversation, kept or gone.
#[derive(Debug)]
struct Slot {
    /// Shared with the chains that name it.
    id: Arc<str>,
    parent: Option<String>,
    /// The absolute index of the parent's slot, when the parent was in this
    /// conversation when this response was saved.
    parent_slot: Option<usize>,
    /// `None` once the response is gone.
    kept: Option<Box<Kept>>,
}

/// What is kept of a response besides its id and parent.
#[derive(Debug)]
struct Kept {
    created_at: u64,
    // Shared with every chain that reads the turn.
    id: Arc<str>,
    input: Arc<str>,
    output: Arc<str>,
    response: String,
    /// [`StoredResponse::size`] of the record.
    size: usize,
}

impl Kept {
    fn turn(&self) -> StoredTurn {
        StoredTurn {
            id: Arc::clone(&self.id),
            input: Arc::clone(&self.input),
            output: Arc::clone(&self.output),
        }
    }
}

/// What became of a record handed to [`Table::insert`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Inserted {
    /// Kept, after evicting this many other records.
    Kept { evicted: usize },
    /// Not kept, and nothing changed: it alone exceeds the bounds, for the
    /// reason given.
    TooLarge(String),
}

impl Table {
    /// Stores `record` for `tenant`, replacing a record with the same id, in
    /// its parent's conversation (or a new one), and renews that
    /// conversation; then evicts until the bounds hold again. A record that
    /// exceeds the bounds on its own changes nothing, as a refused write
    /// leaves a server's value in place.
    ///
    /// Eviction never takes the record just saved, and takes, in turn:
    /// - the tenant's own oldest records while it is over its quota;
    /// - the tenant that saved least recently, whole, while there are more
    ///   tenants than `max_tenants`;
    /// - while the store is over a global bound, the oldest record of the
    ///   tenant holding the most of what is over (bytes, or records): a
    ///   tenant over its fair share, since the store as a whole is over, never
    ///   the one with the oldest record of all. Of tenants holding as much,
    ///   the one that saved least recently.
    ///
    /// A tenant's oldest records are those of its least recently saved
    /// conversation, in the order they were saved.
    pub(crate) fn insert(
        &mut self,
        tenant: &str,
        record: StoredResponse,
        now: Instant,
        limits: Limits,
    ) -> Inserted {
        self.reclaim(now);
        let size = record.size();
        if let Some(why) = limits.exceeded_by(size) {
            return Inserted::TooLarge(why);
        }
        self.seq += 1;
        let seq = self.seq;
        // A new id, the common case, is looked for once.
        let kept = self
            .tenants
            .get(tenant)
            .is_some_and(|t| t.places.contains_key(&record.id));
        if kept {
            if self.replace_in_place(tenant, &record, size, seq, now, limits) {
                return Inserted::Kept {
                    evicted: self.evict(tenant, &record.id, limits),
                };
            }
            self.remove_record(tenant, &record.id);
        }
        let name = self.touch_tenant(tenant, seq);
        let Some(t) = self.tenants.get_mut(&name) else {
            return Inserted::TooLarge("the tenant could not be made".to_owned());
        };
        let parent = record
            .parent
            .as_deref()
            .and_then(|p| t.live(p, now))
            .map(|(place, _, _)| place);
        let number = match parent {
            Some(place) => place.conversation,
            None => {
                self.next_conversation += 1;
                t.conversations
                    .insert(self.next_conversation, Conversation::new());
                self.next_conversation
            }
        };
        let Some(conversation) = t.conversations.get_mut(&number) else {
            return Inserted::TooLarge("the conversation could not be made".to_owned());
        };
        let index = conversation.base + conversation.slots.len();
        let id: Arc<str> = record.id.as_str().into();
        conversation.slots.push_back(Slot {
            id: Arc::clone(&id),
            parent: record.parent,
            parent_slot: parent.map(|place| place.slot),
            kept: Some(Box::new(Kept {
                created_at: record.created_at,
                id,
                input: record.input.into(),
                output: record.output.into(),
                response: record.response,
                size,
            })),
        });
        conversation.live += 1;
        t.places.insert(
            record.id.clone(),
            Place {
                conversation: number,
                slot: index,
            },
        );
        t.entries += 1;
        t.bytes += size;
        self.entries += 1;
        self.bytes += size;
        self.renew(&name, number, seq, now, limits.ttl);
        Inserted::Kept {
            evicted: self.evict(tenant, &record.id, limits),
        }
    }

    /// Replaces the record of `record.id` where it is when it continues the
    /// same parent, in the same place: its conversation is then renewed and
    /// nothing else changes. Whether it did.
    fn replace_in_place(
        &mut self,
        tenant: &str,
        record: &StoredResponse,
        size: usize,
        seq: u64,
        now: Instant,
        limits: Limits,
    ) -> bool {
        let Some(t) = self.tenants.get_mut(tenant) else {
            return false;
        };
        let Some((place, conversation, _)) = t.live(&record.id, now) else {
            return false;
        };
        let Some(slot) = conversation.slot(place.slot) else {
            return false;
        };
        let parent = record.parent.as_deref().and_then(|p| t.live(p, now));
        let same = slot.parent == record.parent
            && match parent {
                Some((parent, _, _)) => {
                    parent.conversation == place.conversation
                        && slot.parent_slot == Some(parent.slot)
                }
                // Named missing either way.
                None => true,
            };
        if !same {
            return false;
        }
        let Some(kept) = t
            .conversations
            .get_mut(&place.conversation)
            .and_then(|c| c.slot_mut(place.slot))
            .and_then(|slot| slot.kept.as_mut())
        else {
            return false;
        };
        let old = kept.size;
        **kept = Kept {
            created_at: record.created_at,
            id: record.id.as_str().into(),
            input: record.input.as_str().into(),
            output: record.output.as_str().into(),
            response: record.response.clone(),
            size,
        };
        t.bytes = t.bytes - old + size;
        self.bytes = self.bytes - old + size;
        let name = self.touch_tenant(tenant, seq);
        self.renew(&name, place.conversation, seq, now, limits.ttl);
        true
    }

    /// The tenant's shared name, making the tenant if it has none, and
    /// makes it the most recent.
    fn touch_tenant(&mut self, tenant: &str, seq: u64) -> Name {
        // One lookup for a tenant already kept, the common case: its name
        // is a field of its own.
        let t = match self.tenants.get_mut(tenant) {
            Some(t) => t,
            None => {
                let name: Name = Arc::from(tenant);
                self.tenants
                    .entry(name.clone())
                    .or_insert_with(|| Tenant::new(name, 0))
            }
        };
        self.recency.remove(&t.seq);
        t.seq = seq;
        self.recency.insert(seq, t.name.clone());
        t.name.clone()
    }

    /// Makes conversation `number` of `tenant` the most recent, expiring a
    /// TTL from `now`.
    fn renew(&mut self, tenant: &Name, number: u64, seq: u64, now: Instant, ttl: Duration) {
        let Some(t) = self.tenants.get_mut(tenant) else {
            return;
        };
        let Some(conversation) = t.conversations.get_mut(&number) else {
            return;
        };
        t.order.remove(&conversation.seq);
        self.expiry.remove(&conversation.seq);
        conversation.seq = seq;
        conversation.expires_at = now.checked_add(ttl);
        t.order.insert(seq, number);
        self.expiry
            .insert(seq, (tenant.clone(), number, conversation.expires_at));
    }

    /// The response's conversation, dropped if it has expired (a clock that
    /// went backwards can leave one behind a live one); whether it is live.
    fn check_expiry(&mut self, tenant: &str, id: &str, now: Instant) -> bool {
        let Some((place, conversation, _)) = self.tenants.get(tenant).and_then(|t| t.find(id))
        else {
            return false;
        };
        if conversation.expired(now) {
            self.remove_conversation(tenant, place.conversation);
            return false;
        }
        true
    }

    /// The record, unless absent or expired (an expired one is dropped).
    pub(crate) fn get(&mut self, tenant: &str, id: &str, now: Instant) -> Option<StoredResponse> {
        self.reclaim(now);
        if !self.check_expiry(tenant, id, now) {
            return None;
        }
        let (_, _, slot) = self.tenants.get(tenant)?.find(id)?;
        let kept = slot.kept.as_deref()?;
        Some(StoredResponse {
            id: slot.id.to_string(),
            parent: slot.parent.clone(),
            created_at: kept.created_at,
            input: kept.input.to_string(),
            output: kept.output.to_string(),
            response: kept.response.clone(),
        })
    }

    /// The turn of a record, unless absent or expired.
    pub(crate) fn turn(&self, tenant: &str, id: &str, now: Instant) -> Option<StoredTurn> {
        let (_, _, kept) = self.tenants.get(tenant)?.live(id, now)?;
        Some(kept.turn())
    }

    /// The conversation ending at `id`, unless it is absent or expired.
    pub(crate) fn chain(&mut self, tenant: &str, id: &str, now: Instant) -> Option<Chain> {
        self.reclaim(now);
        if !self.check_expiry(tenant, id, now) {
            return None;
        }
        let (place, conversation, _) = self.tenants.get(tenant)?.live(id, now)?;
        Some(conversation.chain(place.slot))
    }

    /// Removes a live record; whether there was one.
    pub(crate) fn delete(&mut self, tenant: &str, id: &str, now: Instant) -> bool {
        self.reclaim(now);
        self.check_expiry(tenant, id, now) && self.remove_record(tenant, id)
    }

    /// Drops expired conversations and reports the records and bytes that
    /// remain.
    pub(crate) fn live(&mut self, now: Instant) -> (usize, usize) {
        self.reclaim(now);
        (self.entries, self.bytes)
    }

    /// How many tenants hold records.
    pub(crate) fn tenants(&self) -> usize {
        self.tenants.len()
    }
}
