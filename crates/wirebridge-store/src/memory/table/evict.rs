//! How a table keeps to its bounds: eviction by tenant, and expiry.

use std::time::Instant;

use super::{Limits, Name, Place, Table};

impl Table {
    /// Evicts until the bounds hold (see [`insert`](Self::insert)), never
    /// `tenant`'s record `keep`; how many records went.
    pub(super) fn evict(&mut self, tenant: &str, keep: &str, limits: Limits) -> usize {
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

    /// Evicts the oldest record of the tenant holding the most bytes (of
    /// those holding as much, the least recently saving); whether there was
    /// one.
    pub(crate) fn evict_one(&mut self) -> bool {
        let mut most: Option<(usize, &Name)> = None;
        for name in self.recency.values() {
            let holds = self.tenants.get(name).map_or(0, |t| t.bytes);
            if holds > 0 && most.is_none_or(|(held, _)| holds > held) {
                most = Some((holds, name));
            }
        }
        let Some(victim) = most.map(|(_, name)| name.clone()) else {
            return false;
        };
        self.evict_oldest_of(&victim, "")
    }

    /// The tenant holding the most bytes (or records), the least recently
    /// saving of those holding as much, that has a record to evict (the
    /// tenant saving must have another than the one it saved).
    pub(super) fn holding_most(&self, bytes: bool, saving: &str) -> Option<Name> {
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
    pub(super) fn evict_oldest_of(&mut self, tenant: &str, keep: &str) -> bool {
        let Some(t) = self.tenants.get(tenant) else {
            return false;
        };
        let oldest = t
            .order
            .values()
            .filter_map(|number| t.conversations.get(number))
            .flat_map(|conversation| conversation.slots.iter())
            .filter(|slot| slot.kept.is_some())
            // The shared id, not a copy of it.
            .map(|slot| &slot.id)
            .find(|id| ***id != *keep)
            .cloned();
        match oldest {
            Some(id) => self.remove_record(tenant, &id),
            None => false,
        }
    }

    /// Removes a tenant and everything it holds; how many records it held.
    pub(super) fn drop_tenant(&mut self, tenant: &str) -> usize {
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
    pub(super) fn remove_record(&mut self, tenant: &str, id: &str) -> bool {
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
    pub(super) fn remove_conversation(&mut self, tenant: &str, number: u64) {
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
            if t.places.get(&*slot.id) == Some(&place) {
                t.places.remove(&*slot.id);
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

    /// Conversations share one TTL, so they expire in the order of their
    /// latest save: drops from the old end until a live one.
    pub(super) fn reclaim(&mut self, now: Instant) {
        while let Some((_, (tenant, number, expires_at))) = self.expiry.first_key_value() {
            if expires_at.is_none_or(|at| now < at) {
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
