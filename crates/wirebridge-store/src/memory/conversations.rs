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
//!
//! A conversation's items are kept indexed by id (`items.rs`): a write costs
//! what it writes and a page what it lists, however long the conversation,
//! so the store's one lock is held no longer for a long conversation.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use super::items::Items;
use super::table::Limits;
use crate::conversation::{ItemPage, ItemQuery, Lookup, StoredConversation, StoredItem};

type Name = Arc<str>;

/// One conversation and its items, oldest first.
#[derive(Debug)]
struct Kept {
    conversation: StoredConversation,
    items: Items,
    bytes: usize,
    /// The sequence number of its latest write.
    written: u64,
    expires: Instant,
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
        // The first of a repeated id is kept, as an append keeps it.
        let unique: Items = items.into_iter().collect();
        let bytes = conversation.size() + unique.bytes();
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
        // What the new items (the first of a repeated id) add, each looked
        // up in the index, never compared with the items held: nothing is
        // added unless all of them fit.
        let mut fresh: HashSet<&str> = HashSet::with_capacity(items.len());
        let added: usize = items
            .iter()
            .filter(|item| !kept.items.holds(&item.id) && fresh.insert(&item.id))
            .map(StoredItem::size)
            .sum();
        drop(fresh);
        let before = kept.bytes;
        let grown = before + added;
        if let Some(why) = limits.exceeded_by(grown) {
            return Err(format!("conversation {id} would grow too large: {why}"));
        }
        for item in items {
            kept.items.push(item);
        }
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
        match kept.items.page(query) {
            Ok((items, has_more)) => Lookup::Found(ItemPage { items, has_more }),
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
        match kept.items.get(item_id) {
            Some(item) => Lookup::Found(item.clone()),
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
        let Some(removed) = kept.items.remove(item_id) else {
            return Lookup::NoItem;
        };
        let before = kept.bytes;
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::items::touched;
    use super::*;
    use crate::conversation::Order;

    /// The length of the conversations the issue was found with.
    const LONG: usize = 60_000;

    fn limits() -> Limits {
        Limits {
            max_entries: 100,
            max_bytes: 1 << 30,
            max_entries_per_tenant: 100,
            max_bytes_per_tenant: 1 << 30,
            max_tenants: 10,
            ttl: Duration::from_secs(3600),
        }
    }

    fn item(id: &str) -> StoredItem {
        StoredItem {
            id: id.to_owned(),
            item: format!(r#"{{"id":"{id}"}}"#),
        }
    }

    /// A store holding one conversation, `c` of tenant `t`, of `LONG`
    /// items `i0`, `i1`, …
    fn long(now: Instant) -> Conversations {
        let mut conversations = Conversations::default();
        let conversation = StoredConversation {
            id: "c".into(),
            created_at: 0,
            metadata: "{}".into(),
        };
        let items = (0..LONG).map(|n| item(&format!("i{n}"))).collect();
        conversations
            .create("t", conversation, items, now, limits())
            .unwrap();
        conversations
    }

    /// The items `work` looks at.
    fn looked_at(work: impl FnOnce()) -> u64 {
        let before = touched();
        work();
        touched() - before
    }

    #[test]
    fn writes_to_a_long_conversation_look_at_the_items_written_only() {
        let now = Instant::now();
        let mut conversations = long(now);
        let bytes = conversations.live_totals(now).1;
        let appended = looked_at(|| {
            let items = vec![item("new"), item("i7"), item("new")];
            assert_eq!(
                conversations.append("t", "c", items, now, limits()),
                Ok(true)
            );
        });
        // Each of the three looked up twice: once to count what it adds,
        // once to add it.
        assert!(appended <= 2 * 3, "one append looked at {appended} items");
        // Only the new item was added, and counted.
        assert_eq!(conversations.live_totals(now).1, bytes + item("new").size());
        let found = looked_at(|| {
            let found = conversations.item("t", "c", "i30000", now);
            assert_eq!(found, Lookup::Found(item("i30000")));
        });
        assert!(found <= 1, "one lookup looked at {found} items");
        let deleted = looked_at(|| {
            let deleted = conversations.delete_item("t", "c", "i30000", now, limits());
            assert!(matches!(deleted, Lookup::Found(_)), "{deleted:?}");
        });
        assert!(deleted <= 1, "one deletion looked at {deleted} items");
        assert_eq!(
            conversations.live_totals(now).1,
            bytes + item("new").size() - item("i30000").size()
        );
    }

    #[test]
    fn a_page_of_a_long_conversation_looks_at_its_own_items_only() {
        let now = Instant::now();
        let mut conversations = long(now);
        assert!(matches!(
            conversations.delete_item("t", "c", "i30001", now, limits()),
            Lookup::Found(_)
        ));
        let query = |after: &str, order| ItemQuery {
            after: Some(after.to_owned()),
            limit: 3,
            order,
        };
        let ids = |page: Lookup<ItemPage>| match page {
            Lookup::Found(page) => (
                page.items
                    .into_iter()
                    .map(|item| item.id)
                    .collect::<Vec<_>>(),
                page.has_more,
            ),
            other => panic!("{other:?}"),
        };
        let mut pages = Vec::new();
        let read = looked_at(|| {
            for order in [Order::Ascending, Order::Descending] {
                let page = conversations.list("t", "c", &query("i30000", order), now);
                pages.push(ids(page));
            }
        });
        // The item after, the page's own, and the one that says more follow.
        assert!(read <= 2 * 5, "two pages of 3 looked at {read} items");
        assert_eq!(
            pages,
            [
                (
                    vec!["i30002".to_owned(), "i30003".into(), "i30004".into()],
                    true
                ),
                (
                    vec!["i29999".to_owned(), "i29998".into(), "i29997".into()],
                    true
                ),
            ]
        );
        let last = conversations.list(
            "t",
            "c",
            &query(&format!("i{}", LONG - 2), Order::Ascending),
            now,
        );
        assert_eq!(ids(last), (vec![format!("i{}", LONG - 1)], false));
        let first = conversations.list("t", "c", &query("i1", Order::Descending), now);
        assert_eq!(ids(first), (vec!["i0".to_owned()], false));
        assert_eq!(
            conversations.list("t", "c", &query("i30001", Order::Ascending), now),
            Lookup::NoItem
        );
    }
}
