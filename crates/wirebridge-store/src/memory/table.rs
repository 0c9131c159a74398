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
    /// they share one TTL, so this is the order in which they expire.
    expiry: BTreeMap<u64, (Name, u64)>,
    /// The last sequence number given out; each save takes the next.
    seq: u64,
    next_conversation: u64,
    entries: usize,
    bytes: usize,
}

/// One tenant's responses and conversations.
#[derive(Debug)]
struct Tenant {
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
    fn new(seq: u64) -> Self {
        Self {
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
        let mut ids = Vec::new();
        let mut turns = Vec::new();
        let mut missing: Option<String> = None;
        let mut at = self.slot(index);
        while let Some(slot) = at {
            ids.push(slot.id.clone());
            match (&slot.kept, &missing) {
                (Some(kept), None) => turns.push(kept.turn(&slot.id)),
                (None, None) => missing = Some(slot.id.clone()),
                _ => {}
            }
            // A parent slot comes before its child's, so the walk ends.
            at = slot.parent_slot.and_then(|parent| self.slot(parent));
            if at.is_none() {
                // The parent is in no slot kept here: never saved in this
                // conversation, or gone and dropped.
                if let Some(parent) = &slot.parent {
                    ids.push(parent.clone());
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
    id: String,
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
    input: String,
    output: String,
    response: String,
    /// [`StoredResponse::size`] of the record.
    size: usize,
}

impl Kept {
    fn turn(&self, id: &str) -> StoredTurn {
        StoredTurn {
            id: id.to_owned(),
            input: self.input.clone(),
            output: self.output.clone(),
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
        if self.replace_in_place(tenant, &record, size, seq, now, limits) {
            return Inserted::Kept {
                evicted: self.evict(tenant, &record.id, limits),
            };
        }
        self.remove_record(tenant, &record.id);
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
        conversation.slots.push_back(Slot {
            id: record.id.clone(),
            parent: record.parent,
            parent_slot: parent.map(|place| place.slot),
            kept: Some(Box::new(Kept {
                created_at: record.created_at,
                input: record.input,
                output: record.output,
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
            input: record.input.clone(),
            output: record.output.clone(),
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
        let name = match self.tenants.get_key_value(tenant) {
            Some((name, _)) => name.clone(),
            None => {
                let name: Name = Arc::from(tenant);
                self.tenants.insert(name.clone(), Tenant::new(0));
                name
            }
        };
        if let Some(t) = self.tenants.get_mut(&name) {
            self.recency.remove(&t.seq);
            t.seq = seq;
            self.recency.insert(seq, name.clone());
        }
        name
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
        self.expiry.insert(seq, (tenant.clone(), number));
    }

    /// Evicts until the bounds hold (see [`insert`](Self::insert)), never
    /// `tenant`'s record `keep`; how many records went.
    fn evict(&mut self, tenant: &str, keep: &str, limits: Limits) -> usize {
        let mut evicted = 0;
        while self
            .tenants
            .get(tenant)
            .is_some_and(|t| t.over(limits) && t.entries > 1)
        {
            if !self.evict_oldest_of(tenant, keep) {
                break;
            }
            evicted += 1;
        }
        while self.tenants.len() > limits.max_tenants {
            let Some(least_recent) = self.recency.values().next().cloned() else {
                break;
            };
            if &*least_recent == tenant {
                break;
            }
            evicted += self.drop_tenant(&least_recent);
        }
        loop {
            let over_bytes = self.bytes > limits.max_bytes;
            if !over_bytes && self.entries <= limits.max_entries {
                break;
            }
            let Some(victim) = self.holding_most(over_bytes, tenant) else {
                break;
            };
            if !self.evict_oldest_of(&victim, keep) {
                break;
            }
            evicted += 1;
        }
        evicted
    }

    /// The tenant holding the most bytes (or records), the least recently
    /// saving of those holding as much, that has a record to evict (the
    /// tenant saving must have another than the one it saved).
    fn holding_most(&self, bytes: bool, saving: &str) -> Option<Name> {
        let mut most: Option<(usize, &Name)> = None;
        for name in self.recency.values() {
            let Some(t) = self.tenants.get(name) else {
                continue;
            };
            if t.entries == 0 || (&**name == saving && t.entries < 2) {
                continue;
            }
            let holds = if bytes { t.bytes } else { t.entries };
            if most.is_none_or(|(held, _)| holds > held) {
                most = Some((holds, name));
            }
        }
        most.map(|(_, name)| name.clone())
    }

    /// Evicts the oldest record of `tenant` other than `keep`: the first of
    /// its least recently saved conversation.
    fn evict_oldest_of(&mut self, tenant: &str, keep: &str) -> bool {
        let Some(t) = self.tenants.get(tenant) else {
            return false;
        };
        let oldest = t
            .order
            .values()
            .filter_map(|number| t.conversations.get(number))
            .flat_map(|conversation| conversation.slots.iter())
            .filter(|slot| slot.kept.is_some())
            .map(|slot| slot.id.as_str())
            .find(|id| *id != keep)
            .map(str::to_owned);
        match oldest {
            Some(id) => self.remove_record(tenant, &id),
            None => false,
        }
    }

    /// Removes a tenant and everything it holds; how many records it held.
    fn drop_tenant(&mut self, tenant: &str) -> usize {
        let Some(t) = self.tenants.remove(tenant) else {
            return 0;
        };
        self.recency.remove(&t.seq);
        for conversation in t.conversations.values() {
            self.expiry.remove(&conversation.seq);
        }
        self.entries -= t.entries;
        self.bytes -= t.bytes;
        t.entries
    }

    /// Takes a response out, leaving its slot gone (and dropping its
    /// conversation, or its tenant, left with nothing); whether it was
    /// there. Expiry is the caller's to check.
    fn remove_record(&mut self, tenant: &str, id: &str) -> bool {
        let Some(t) = self.tenants.get_mut(tenant) else {
            return false;
        };
        let Some(place) = t.places.remove(id) else {
            return false;
        };
        let Some(conversation) = t.conversations.get_mut(&place.conversation) else {
            return false;
        };
        let kept = conversation
            .slot_mut(place.slot)
            .and_then(|slot| slot.kept.take());
        let Some(kept) = kept else {
            return false;
        };
        conversation.live -= 1;
        conversation.drop_gone_front();
        t.entries -= 1;
        t.bytes -= kept.size;
        self.entries -= 1;
        self.bytes -= kept.size;
        if conversation.live == 0 {
            let seq = conversation.seq;
            t.conversations.remove(&place.conversation);
            t.order.remove(&seq);
            self.expiry.remove(&seq);
        }
        if t.places.is_empty() {
            self.drop_tenant(tenant);
        }
        true
    }

    /// Removes a whole conversation of `tenant`.
    fn remove_conversation(&mut self, tenant: &str, number: u64) {
        let Some(t) = self.tenants.get_mut(tenant) else {
            return;
        };
        let Some(conversation) = t.conversations.remove(&number) else {
            return;
        };
        t.order.remove(&conversation.seq);
        self.expiry.remove(&conversation.seq);
        for (offset, slot) in conversation.slots.iter().enumerate() {
            let Some(kept) = &slot.kept else {
                continue;
            };
            let place = Place {
                conversation: number,
                slot: conversation.base + offset,
            };
            if t.places.get(&slot.id) == Some(&place) {
                t.places.remove(&slot.id);
            }
            t.entries -= 1;
            t.bytes -= kept.size;
            self.entries -= 1;
            self.bytes -= kept.size;
        }
        if t.places.is_empty() {
            self.drop_tenant(tenant);
        }
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
            id: slot.id.clone(),
            parent: slot.parent.clone(),
            created_at: kept.created_at,
            input: kept.input.clone(),
            output: kept.output.clone(),
            response: kept.response.clone(),
        })
    }

    /// The turn of a record, unless absent or expired.
    pub(crate) fn turn(&self, tenant: &str, id: &str, now: Instant) -> Option<StoredTurn> {
        let (_, _, kept) = self.tenants.get(tenant)?.live(id, now)?;
        Some(kept.turn(id))
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

    /// Conversations share one TTL, so they expire in the order of their
    /// latest save: drops from the old end until a live one.
    fn reclaim(&mut self, now: Instant) {
        while let Some((_, (tenant, number))) = self.expiry.first_key_value() {
            let expired = self
                .tenants
                .get(tenant)
                .and_then(|t| t.conversations.get(number))
                .is_none_or(|conversation| conversation.expired(now));
            if !expired {
                break;
            }
            let (tenant, number) = (tenant.clone(), *number);
            let before = self.expiry.len();
            self.remove_conversation(&tenant, number);
            if self.expiry.len() == before {
                // Unreachable while the maps agree; dropping the stray entry
                // keeps the loop finite if they ever do not.
                self.expiry.pop_first();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, body: usize) -> StoredResponse {
        StoredResponse {
            id: id.to_owned(),
            parent: None,
            created_at: 0,
            input: "x".repeat(body),
            output: String::new(),
            response: String::new(),
        }
    }

    fn child(id: &str, parent: &str) -> StoredResponse {
        StoredResponse {
            parent: Some(parent.to_owned()),
            ..record(id, 1)
        }
    }

    const LIMITS: Limits = Limits {
        max_entries: 3,
        max_bytes: 1000,
        max_entries_per_tenant: 3,
        max_bytes_per_tenant: 1000,
        max_tenants: 10,
        ttl: Duration::from_secs(10),
    };

    fn ids(chain: &Chain) -> Vec<&str> {
        chain.turns.iter().map(|turn| turn.id.as_str()).collect()
    }

    #[test]
    fn replacing_keeps_the_byte_count_right() {
        let now = Instant::now();
        let mut table = Table::default();
        table.insert("t", record("a", 100), now, LIMITS);
        table.insert("t", record("a", 10), now, LIMITS);
        assert_eq!(table.live(now), (1, 11));
        assert!(table.delete("t", "a", now));
        assert_eq!(table.live(now), (0, 0));
        assert!(table.tenants.is_empty());
        assert!(table.expiry.is_empty() && table.recency.is_empty());
    }

    #[test]
    fn too_large_is_not_kept_and_evicts_nothing() {
        let now = Instant::now();
        let mut table = Table::default();
        table.insert("t", record("a", 10), now, LIMITS);
        assert!(matches!(
            table.insert("t", record("b", 2000), now, LIMITS),
            Inserted::TooLarge(_)
        ));
        assert_eq!(table.live(now), (1, 11));
        assert!(matches!(
            table.insert("t", record("a", 2000), now, LIMITS),
            Inserted::TooLarge(_)
        ));
        assert!(
            table.get("t", "a", now).is_some_and(|r| r.size() == 11),
            "a refused replacement leaves the record in place"
        );
    }

    #[test]
    fn a_clock_going_backwards_still_hides_expired_records() {
        let now = Instant::now();
        let later = now + Duration::from_secs(5);
        let mut table = Table::default();
        table.insert("t", record("late", 1), later, LIMITS);
        table.insert("t", record("early", 1), now, LIMITS);
        let at = now + Duration::from_secs(11);
        assert!(table.get("t", "early", at).is_none());
        assert!(table.get("t", "late", at).is_some());
        assert_eq!(table.live(at), (1, 5));
    }

    #[test]
    fn an_unrepresentable_ttl_never_expires() {
        let now = Instant::now();
        let limits = Limits {
            ttl: Duration::MAX,
            ..LIMITS
        };
        let mut table = Table::default();
        table.insert("t", record("a", 1), now, limits);
        assert!(table
            .get("t", "a", now + Duration::from_secs(1 << 40))
            .is_some());
    }

    #[test]
    fn a_continued_conversation_is_renewed_and_evicted_last() {
        let now = Instant::now();
        let mut table = Table::default();
        table.insert("t", record("root", 1), now, LIMITS);
        table.insert("t", record("other", 1), now, LIMITS);
        let later = now + Duration::from_secs(6);
        table.insert("t", child("leaf", "root"), later, LIMITS);
        // "other" is now the oldest: the fourth record evicts it, not "root".
        table.insert("t", record("fourth", 1), later, LIMITS);
        assert!(table.get("t", "other", later).is_none());
        assert!(table.get("t", "root", later).is_some());
        // Renewed at `later`, "root" outlives its own TTL from `now`.
        let after_first_ttl = now + Duration::from_secs(12);
        assert!(table.get("t", "root", after_first_ttl).is_some());
        assert!(table.get("t", "leaf", after_first_ttl).is_some());
        let after_both = later + Duration::from_secs(10);
        assert!(table.get("t", "root", after_both).is_none());
        assert_eq!(table.live(after_both), (0, 0));
    }

    #[test]
    fn a_tenant_over_its_quota_evicts_only_its_own() {
        let now = Instant::now();
        let limits = Limits {
            max_entries: 10,
            max_entries_per_tenant: 2,
            max_bytes_per_tenant: 25,
            ..LIMITS
        };
        let mut table = Table::default();
        table.insert("a", record("a1", 1), now, limits);
        table.insert("b", record("b1", 1), now, limits);
        table.insert("a", record("a2", 1), now, limits);
        assert_eq!(
            table.insert("a", record("a3", 1), now, limits),
            Inserted::Kept { evicted: 1 }
        );
        assert!(table.get("a", "a1", now).is_none());
        assert!(table.get("b", "b1", now).is_some());
        // Two records are one too many; then a3 (3 bytes) and a4 (23) are
        // one byte over 25.
        assert_eq!(
            table.insert("a", record("a4", 21), now, limits),
            Inserted::Kept { evicted: 2 }
        );
        assert!(table.get("a", "a3", now).is_none());
        assert_eq!(table.tenants["a"].bytes, 23);
        assert_eq!(table.live(now), (2, 26));
        assert!(table.get("b", "b1", now).is_some());
    }

    #[test]
    fn a_deep_conversation_is_one_conversation_of_slots() {
        let now = Instant::now();
        let limits = Limits {
            max_entries: 100_000,
            max_entries_per_tenant: 100_000,
            max_bytes: 1 << 30,
            max_bytes_per_tenant: 1 << 30,
            ..LIMITS
        };
        let mut table = Table::default();
        table.insert("t", record("r0", 1), now, limits);
        for n in 1..10_000 {
            table.insert(
                "t",
                child(&format!("r{n}"), &format!("r{}", n - 1)),
                now,
                limits,
            );
        }
        // One conversation, one slot per response, each naming one parent.
        let t = &table.tenants["t"];
        assert_eq!(t.conversations.len(), 1);
        let conversation = t.conversations.values().next().unwrap();
        assert_eq!(conversation.slots.len(), 10_000);
        assert_eq!(table.expiry.len(), 1);
        let chain = table.chain("t", "r9999", now).unwrap();
        assert_eq!(chain.turns.len(), 10_000);
        assert_eq!(chain.ids.len(), 10_000);
        assert!(chain.is_complete());
    }

    #[test]
    fn branches_and_gone_slots() {
        let now = Instant::now();
        let limits = Limits {
            max_entries: 100,
            max_entries_per_tenant: 100,
            ..LIMITS
        };
        let mut table = Table::default();
        table.insert("t", record("r1", 1), now, limits);
        table.insert("t", child("r2", "r1"), now, limits);
        table.insert("t", child("r3", "r2"), now, limits);
        table.insert("t", child("b3", "r2"), now, limits);
        table.insert("t", child("r4", "r3"), now, limits);
        table.insert("t", child("b4", "b3"), now, limits);
        assert_eq!(
            ids(&table.chain("t", "r4", now).unwrap()),
            ["r1", "r2", "r3", "r4"]
        );
        assert_eq!(
            ids(&table.chain("t", "b4", now).unwrap()),
            ["r1", "r2", "b3", "b4"]
        );
        // The first slot gone and dropped: its id is still named, from the
        // slot after it.
        assert!(table.delete("t", "r1", now));
        let conversation = table.tenants["t"].conversations.values().next().unwrap();
        assert_eq!(conversation.base, 1);
        let chain = table.chain("t", "b4", now).unwrap();
        assert_eq!(chain.missing.as_deref(), Some("r1"));
        assert_eq!(chain.ids, ["r1", "r2", "b3", "b4"]);
        assert_eq!(ids(&chain), ["r2", "b3", "b4"]);
        // Saving a record again elsewhere leaves its old slot gone.
        table.insert("t", child("r3", "b4"), now, limits);
        let chain = table.chain("t", "r4", now).unwrap();
        assert_eq!(chain.missing.as_deref(), Some("r3"));
        assert_eq!(
            ids(&table.chain("t", "r3", now).unwrap()),
            ["r2", "b3", "b4", "r3"]
        );
    }

    #[test]
    fn global_eviction_never_takes_the_record_just_saved() {
        let now = Instant::now();
        let limits = Limits {
            max_entries: 10,
            max_bytes: 500,
            max_entries_per_tenant: 10,
            max_bytes_per_tenant: 500,
            ..LIMITS
        };
        let mut table = Table::default();
        table.insert("a", record("a1", 148), now, limits);
        table.insert("b", record("b1", 148), now, limits);
        // The saving tenant holds the most, but only the record it saves.
        assert_eq!(
            table.insert("c", record("c1", 298), now, limits),
            Inserted::Kept { evicted: 1 }
        );
        assert!(table.get("c", "c1", now).is_some());
        assert!(
            table.get("a", "a1", now).is_none(),
            "the least recent of a and b"
        );
        assert!(table.get("b", "b1", now).is_some());
    }
}
