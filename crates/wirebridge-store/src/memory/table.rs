//! The bounded, expiring table behind `MemoryStore`: plain data, no locking,
//! no clock of its own (every operation is told the time).

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use crate::StoredResponse;

/// The bounds a table keeps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) max_entries: usize,
    pub(crate) max_bytes: usize,
    pub(crate) ttl: Duration,
}

/// Records by tenant then id, with their insertion order for eviction.
#[derive(Debug, Default)]
pub(crate) struct Table {
    tenants: HashMap<String, HashMap<String, Entry>>,
    /// Insertion sequence → (tenant, id), oldest first.
    order: BTreeMap<u64, (String, String)>,
    next_seq: u64,
    bytes: usize,
}

#[derive(Debug)]
struct Entry {
    record: StoredResponse,
    /// `None` when the TTL is too long to be represented: never expires.
    expires_at: Option<Instant>,
    seq: u64,
}

impl Entry {
    fn expired(&self, now: Instant) -> bool {
        self.expires_at.is_some_and(|at| now >= at)
    }
}

/// What became of a record handed to [`Table::insert`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inserted {
    /// Kept, after evicting this many older records.
    Kept { evicted: usize },
    /// Not kept, and nothing changed: it alone exceeds the bounds.
    TooLarge,
}

impl Table {
    /// Stores `record` for `tenant`, replacing a record with the same id, then
    /// evicts the oldest records until the bounds hold again. A record that
    /// exceeds the bounds on its own changes nothing, as a refused write
    /// leaves a server's value in place.
    pub(crate) fn insert(
        &mut self,
        tenant: &str,
        record: StoredResponse,
        now: Instant,
        limits: Limits,
    ) -> Inserted {
        self.reclaim(now);
        if limits.max_entries == 0 || record.size() > limits.max_bytes {
            return Inserted::TooLarge;
        }
        self.remove(tenant, &record.id);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.bytes += record.size();
        self.order
            .insert(seq, (tenant.to_owned(), record.id.clone()));
        let entry = Entry {
            expires_at: now.checked_add(limits.ttl),
            seq,
            record,
        };
        self.tenants
            .entry(tenant.to_owned())
            .or_default()
            .insert(entry.record.id.clone(), entry);
        let mut evicted = 0;
        while self.len() > limits.max_entries || self.bytes > limits.max_bytes {
            if !self.pop_oldest() {
                break;
            }
            evicted += 1;
        }
        Inserted::Kept { evicted }
    }

    /// The record, unless absent or expired (an expired record is dropped).
    pub(crate) fn get(&mut self, tenant: &str, id: &str, now: Instant) -> Option<StoredResponse> {
        self.reclaim(now);
        let entry = self.tenants.get(tenant)?.get(id)?;
        if entry.expired(now) {
            self.remove(tenant, id);
            return None;
        }
        Some(entry.record.clone())
    }

    /// Removes a live record; whether there was one.
    pub(crate) fn delete(&mut self, tenant: &str, id: &str, now: Instant) -> bool {
        self.reclaim(now);
        self.remove(tenant, id)
            .is_some_and(|entry| !entry.expired(now))
    }

    /// Drops expired records, oldest first, and reports how many remain.
    pub(crate) fn live(&mut self, now: Instant) -> (usize, usize) {
        self.reclaim(now);
        (self.len(), self.bytes)
    }

    fn len(&self) -> usize {
        self.order.len()
    }

    /// Records share one TTL, so they expire in insertion order: drop from the
    /// old end until a live one. (A clock that goes backwards can leave an
    /// expired record behind a live one; `get` still hides it.)
    fn reclaim(&mut self, now: Instant) {
        while let Some((_, (tenant, id))) = self.order.first_key_value() {
            let expired = self
                .tenants
                .get(tenant)
                .and_then(|records| records.get(id))
                .is_none_or(|entry| entry.expired(now));
            if !expired || !self.pop_oldest() {
                break;
            }
        }
    }

    fn pop_oldest(&mut self) -> bool {
        let Some((_, (tenant, id))) = self.order.pop_first() else {
            return false;
        };
        self.take(&tenant, &id);
        true
    }

    fn remove(&mut self, tenant: &str, id: &str) -> Option<Entry> {
        let entry = self.take(tenant, id)?;
        self.order.remove(&entry.seq);
        Some(entry)
    }

    /// Takes a record out of the tenant maps (not out of `order`).
    fn take(&mut self, tenant: &str, id: &str) -> Option<Entry> {
        let records = self.tenants.get_mut(tenant)?;
        let entry = records.remove(id)?;
        if records.is_empty() {
            self.tenants.remove(tenant);
        }
        self.bytes -= entry.record.size();
        Some(entry)
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

    const LIMITS: Limits = Limits {
        max_entries: 3,
        max_bytes: 1000,
        ttl: Duration::from_secs(10),
    };

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
    }

    #[test]
    fn too_large_is_not_kept_and_evicts_nothing() {
        let now = Instant::now();
        let mut table = Table::default();
        table.insert("t", record("a", 10), now, LIMITS);
        assert_eq!(
            table.insert("t", record("b", 2000), now, LIMITS),
            Inserted::TooLarge
        );
        assert_eq!(table.live(now), (1, 11));
        assert_eq!(
            table.insert("t", record("a", 2000), now, LIMITS),
            Inserted::TooLarge
        );
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
}
