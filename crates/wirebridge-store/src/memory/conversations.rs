//! The bounded, expiring table of conversations behind `MemoryStore`: plain
//! data, no locking, no clock of its own (every operation is told the time).
//!
//! Conversations are bounded by the same numbers as responses, counted
//! apart: a conversation counts as one record, its bytes are its metadata's
//! and its items'. Every write renews a conversation; eviction takes whole
//! conversations, least recently written first, with the fairness rules of
//! the response table: a tenant over its quota loses its own, a store over
//! a bound takes from the tenant holding the most, and a new tenant beyond
//! the bound on tenants replaces the one that wrote least recently.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use super::table::Limits;
use crate::conversation::{page, ItemPage, ItemQuery, Lookup, StoredConversation, StoredItem};

type Name = Arc<str>;

/// One conversation and its items, oldest first.
#[derive(Debug)]
struct Kept {
    conversation: StoredConversation,
    items: Vec<StoredItem>,
    bytes: usize,
    /// The sequence number of its latest write.
    written: u64,
    expires: Instant,
}

impl Kept {
    fn holds(&self, item_id: &str) -> Option<usize> {
        self.items.iter().position(|item| item.id == item_id)
    }
}

/// One tenant's conversations, with their write order.
#[derive(Debug, Default)]
struct Tenant {
    conversations: HashMap<String, Kept>,
    /// Conversation ids by their latest write, least recent first.
    order: BTreeMap<u64, String>,
    bytes: usize,
}

impl Tenant {
    fn latest(&self) -> u64 {
        self.order.keys().next_back().copied().unwrap_or(0)
    }
}

/// Every tenant's conversations.
#[derive(Debug, Default)]
pub(crate) struct Conversations {
    tenants: HashMap<Name, Tenant>,
    seq: u64,
    count: usize,
    bytes: usize,
}

impl Conversations {
    /// Creates a conversation (replacing one with its id); the reason it
    /// cannot be kept, if so.
    pub(crate) fn create(
        &mut self,
        tenant: &str,
        conversation: StoredConversation,
        items: Vec<StoredItem>,
        now: Instant,
        limits: Limits,
    ) -> Result<(), String> {
        let mut unique: Vec<StoredItem> = Vec::with_capacity(items.len());
        for item in items {
            if !unique.iter().any(|kept| kept.id == item.id) {
                unique.push(item);
            }
        }
        let bytes = conversation.size() + unique.iter().map(StoredItem::size).sum::<usize>();
        if let Some(why) = limits.exceeded_by(bytes) {
            return Err(why);
        }
        let id = conversation.id.clone();
        self.remove(tenant, &id);
        self.seq += 1;
        let kept = Kept {
            conversation,
            items: unique,
            bytes,
            written: self.seq,
            expires: now + limits.ttl,
        };
        let name = self.tenant_name(tenant, limits);
        let entry = self.tenants.entry(name).or_default();
        entry.order.insert(kept.written, id.clone());
        entry.bytes += bytes;
        entry.conversations.insert(id.clone(), kept);
        self.count += 1;
        self.bytes += bytes;
        self.evict(tenant, &id, limits);
        Ok(())
    }

    /// The live conversation `id` of `tenant`, dropping it if it expired.
    fn live(&mut self, tenant: &str, id: &str, now: Instant) -> Option<&mut Kept> {
        let expired = self.tenants.get(tenant)?.conversations.get(id)?.expires <= now;
        if expired {
            self.remove(tenant, id);
            return None;
        }
        self.tenants.get_mut(tenant)?.conversations.get_mut(id)
    }

    pub(crate) fn get(
        &mut self,
        tenant: &str,
        id: &str,
        now: Instant,
    ) -> Option<StoredConversation> {
        self.live(tenant, id, now)
            .map(|kept| kept.conversation.clone())
    }

    pub(crate) fn update(
        &mut self,
        tenant: &str,
        id: &str,
        metadata: String,
        now: Instant,
        limits: Limits,
    ) -> Result<Option<StoredConversation>, String> {
        let Some(kept) = self.live(tenant, id, now) else {
            return Ok(None);
        };
        let grown = kept.bytes - kept.conversation.metadata.len() + metadata.len();
        if let Some(why) = limits.exceeded_by(grown) {
            return Err(why);
        }
        let before = kept.bytes;
        kept.conversation.metadata = metadata;
        kept.bytes = grown;
        let conversation = kept.conversation.clone();
        self.resize(tenant, before, grown);
        self.renew(tenant, id, now, limits);
        Ok(Some(conversation))
    }

    pub(crate) fn append(
        &mut self,
        tenant: &str,
        id: &str,
        items: Vec<StoredItem>,
        now: Instant,
        limits: Limits,
    ) -> Result<bool, String> {
        let Some(kept) = self.live(tenant, id, now) else {
            return Ok(false);
        };
        let mut added: Vec<StoredItem> = Vec::with_capacity(items.len());
        for item in items {
            if kept.holds(&item.id).is_none() && !added.iter().any(|a| a.id == item.id) {
                added.push(item);
            }
        }
        let before = kept.bytes;
        let grown = before + added.iter().map(StoredItem::size).sum::<usize>();
        if let Some(why) = limits.exceeded_by(grown) {
            return Err(format!("conversation {id} would grow too large: {why}"));
        }
        kept.items.extend(added);
        kept.bytes = grown;
        self.resize(tenant, before, grown);
        self.renew(tenant, id, now, limits);
        self.evict(tenant, id, limits);
        Ok(true)
    }

    pub(crate) fn list(
        &mut self,
        tenant: &str,
        id: &str,
        query: &ItemQuery,
        now: Instant,
    ) -> Lookup<ItemPage> {
        let Some(kept) = self.live(tenant, id, now) else {
            return Lookup::NoConversation;
        };
        match page(&kept.items, query) {
            Ok((items, has_more)) => Lookup::Found(ItemPage {
                items: items.into_iter().cloned().collect(),
                has_more,
            }),
            Err(()) => Lookup::NoItem,
        }
    }

    pub(crate) fn item(
        &mut self,
        tenant: &str,
        id: &str,
        item_id: &str,
        now: Instant,
    ) -> Lookup<StoredItem> {
        let Some(kept) = self.live(tenant, id, now) else {
            return Lookup::NoConversation;
        };
        match kept.holds(item_id) {
            Some(at) => Lookup::Found(kept.items[at].clone()),
            None => Lookup::NoItem,
        }
    }

    pub(crate) fn delete_item(
        &mut self,
        tenant: &str,
        id: &str,
        item_id: &str,
        now: Instant,
        limits: Limits,
    ) -> Lookup<StoredConversation> {
        let Some(kept) = self.live(tenant, id, now) else {
            return Lookup::NoConversation;
        };
        let Some(at) = kept.holds(item_id) else {
            return Lookup::NoItem;
        };
        let before = kept.bytes;
        let removed = kept.items.remove(at);
        kept.bytes -= removed.size();
        let (after, conversation) = (kept.bytes, kept.conversation.clone());
        self.resize(tenant, before, after);
        self.renew(tenant, id, now, limits);
        Lookup::Found(conversation)
    }

    /// Removes a conversation; whether it was there (expired or not).
    pub(crate) fn remove(&mut self, tenant: &str, id: &str) -> bool {
        let Some(entry) = self.tenants.get_mut(tenant) else {
            return false;
        };
        let Some(kept) = entry.conversations.remove(id) else {
            return false;
        };
        entry.order.remove(&kept.written);
        entry.bytes -= kept.bytes;
        if entry.conversations.is_empty() {
            self.tenants.remove(tenant);
        }
        self.count -= 1;
        self.bytes -= kept.bytes;
        true
    }

    /// The number of live conversations and their bytes, dropping expired
    /// ones.
    pub(crate) fn live_totals(&mut self, now: Instant) -> (usize, usize) {
        let expired: Vec<(Name, String)> = self
            .tenants
            .iter()
            .flat_map(|(name, tenant)| {
                tenant
                    .conversations
                    .iter()
                    .filter(|(_, kept)| kept.expires <= now)
                    .map(|(id, _)| (Arc::clone(name), id.clone()))
            })
            .collect();
        for (name, id) in expired {
            self.remove(&name, &id);
        }
        (self.count, self.bytes)
    }

    fn resize(&mut self, tenant: &str, before: usize, after: usize) {
        if let Some(entry) = self.tenants.get_mut(tenant) {
            entry.bytes = entry.bytes + after - before;
        }
        self.bytes = self.bytes + after - before;
    }

    fn renew(&mut self, tenant: &str, id: &str, now: Instant, limits: Limits) {
        self.seq += 1;
        let seq = self.seq;
        let Some(entry) = self.tenants.get_mut(tenant) else {
            return;
        };
        if let Some(kept) = entry.conversations.get_mut(id) {
            entry.order.remove(&kept.written);
            kept.written = seq;
            kept.expires = now + limits.ttl;
            entry.order.insert(seq, id.to_owned());
        }
    }

    /// The tenant's shared name; a new tenant beyond the bound replaces
    /// the one that wrote least recently, with all its conversations.
    fn tenant_name(&mut self, tenant: &str, limits: Limits) -> Name {
        if let Some((name, _)) = self.tenants.get_key_value(tenant) {
            return Arc::clone(name);
        }
        while self.tenants.len() >= limits.max_tenants.max(1) {
            let Some(stalest) = self
                .tenants
                .iter()
                .min_by_key(|(_, t)| t.latest())
                .map(|(name, _)| Arc::clone(name))
            else {
                break;
            };
            let ids: Vec<String> = self.tenants[&stalest].order.values().cloned().collect();
            for id in ids {
                self.remove(&stalest, &id);
            }
        }
        Arc::from(tenant)
    }

    /// Evicts until every bound holds, never the conversation `keep` of
    /// `tenant` (the one just written).
    fn evict(&mut self, tenant: &str, keep: &str, limits: Limits) {
        loop {
            let own = self.tenants.get(tenant);
            let over_quota = own.is_some_and(|t| {
                t.conversations.len() > limits.max_entries_per_tenant
                    || t.bytes > limits.max_bytes_per_tenant
            });
            let victim_tenant: Option<Name> = if over_quota {
                self.tenants
                    .get_key_value(tenant)
                    .map(|(n, _)| Arc::clone(n))
            } else if self.count > limits.max_entries {
                self.heaviest(|t| t.conversations.len())
            } else if self.bytes > limits.max_bytes {
                self.heaviest(|t| t.bytes)
            } else {
                return;
            };
            let Some(name) = victim_tenant else { return };
            let oldest = self.tenants[&name]
                .order
                .values()
                .find(|id| !(&*name == tenant && id.as_str() == keep))
                .cloned();
            match oldest {
                Some(id) => {
                    self.remove(&name, &id);
                }
                // Only the conversation just written is left: it fits the
                // bounds on its own (checked before it was written).
                None => return,
            }
        }
    }

    /// The tenant holding the most, by `measure`.
    fn heaviest(&self, measure: impl Fn(&Tenant) -> usize) -> Option<Name> {
        self.tenants
            .iter()
            .max_by_key(|(_, t)| (measure(t), std::cmp::Reverse(t.latest())))
            .map(|(name, _)| Arc::clone(name))
    }
}
