//! The bounded, expiring table behind `MemoryStore`: plain data, no locking,
//! no clock of its own (every operation is told the time).

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use crate::{StoredResponse, StoredTurn};

/// The bounds a table keeps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) max_entries: usize,
    pub(crate) max_bytes: usize,
    pub(crate) max_entries_per_tenant: usize,
    pub(crate) max_bytes_per_tenant: usize,
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

/// Records by tenant then id, with their insertion order for eviction.
#[derive(Debug, Default)]
pub(crate) struct Table {
    tenants: HashMap<String, Records>,
    /// Insertion sequence → tenant, oldest first, over all tenants: for the
    /// global bounds and for expiry.
    order: BTreeMap<u64, String>,
    next_seq: u64,
    bytes: usize,
}

/// One tenant's records.
#[derive(Debug, Default)]
struct Records {
    by_id: HashMap<String, Entry>,
    /// Insertion sequence → id, oldest first: for the tenant's quota, which
    /// must find the tenant's oldest record without walking everyone's.
    order: BTreeMap<u64, String>,
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

impl Records {
    fn insert(&mut self, entry: Entry) {
        self.bytes += entry.record.size();
        self.order.insert(entry.seq, entry.record.id.clone());
        self.by_id.insert(entry.record.id.clone(), entry);
    }

    fn remove(&mut self, id: &str) -> Option<Entry> {
        let entry = self.by_id.remove(id)?;
        self.order.remove(&entry.seq);
        self.bytes -= entry.record.size();
        Some(entry)
    }

    fn over(&self, limits: Limits) -> bool {
        self.by_id.len() > limits.max_entries_per_tenant || self.bytes > limits.max_bytes_per_tenant
    }

    /// The entry inserted as `seq`.
    fn at(&self, seq: u64) -> Option<&Entry> {
        self.by_id.get(self.order.get(&seq)?)
    }
}

/// What became of a record handed to [`Table::insert`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Inserted {
    /// Kept, after evicting this many older records.
    Kept { evicted: usize },
    /// Not kept, and nothing changed: it alone exceeds the bounds, for the
    /// reason given.
    TooLarge(String),
}

impl Table {
    /// Stores `record` for `tenant`, replacing a record with the same id, then
    /// evicts the oldest records until the bounds hold again: first the
    /// tenant's own beyond its quota, then anyone's beyond the global bounds.
    /// A record that exceeds the bounds on its own changes nothing, as a
    /// refused write leaves a server's value in place.
    ///
    /// The record's live ancestors are renewed with it: they expire with
    /// it, and are evicted just before it, so a conversation that goes on
    /// keeps its beginning.
    pub(crate) fn insert(
        &mut self,
        tenant: &str,
        record: StoredResponse,
        now: Instant,
        limits: Limits,
    ) -> Inserted {
        self.reclaim(now);
        if let Some(why) = limits.exceeded_by(record.size()) {
            return Inserted::TooLarge(why);
        }
        self.remove(tenant, &record.id);
        self.renew(tenant, &record.ancestors, now, limits);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.bytes += record.size();
        self.order.insert(seq, tenant.to_owned());
        let records = self.tenants.entry(tenant.to_owned()).or_default();
        records.insert(Entry {
            expires_at: now.checked_add(limits.ttl),
            seq,
            record,
        });
        let mut evicted = 0;
        // The quota first, from the tenant's own records: a tenant saving
        // heavily makes room at its own expense, never at another's.
        while self.tenants.get(tenant).is_some_and(|r| r.over(limits)) {
            if !self.pop_oldest_of(tenant) {
                break;
            }
            evicted += 1;
        }
        while self.len() > limits.max_entries || self.bytes > limits.max_bytes {
            if !self.pop_oldest() {
                break;
            }
            evicted += 1;
        }
        Inserted::Kept { evicted }
    }

    /// Makes `tenant`'s live records `ids` the newest, in that order, and has
    /// them expire `limits.ttl` from `now`.
    fn renew(&mut self, tenant: &str, ids: &[String], now: Instant, limits: Limits) {
        let Some(records) = self.tenants.get_mut(tenant) else {
            return;
        };
        for id in ids {
            let Some(entry) = records.by_id.get_mut(id) else {
                continue;
            };
            if entry.expired(now) {
                continue;
            }
            let seq = self.next_seq;
            self.next_seq += 1;
            records.order.remove(&entry.seq);
            self.order.remove(&entry.seq);
            records.order.insert(seq, id.clone());
            self.order.insert(seq, tenant.to_owned());
            entry.seq = seq;
            entry.expires_at = now.checked_add(limits.ttl);
        }
    }

    /// The record, unless absent or expired (an expired record is dropped).
    pub(crate) fn get(&mut self, tenant: &str, id: &str, now: Instant) -> Option<StoredResponse> {
        self.reclaim(now);
        let entry = self.tenants.get(tenant)?.by_id.get(id)?;
        if entry.expired(now) {
            self.remove(tenant, id);
            return None;
        }
        Some(entry.record.clone())
    }

    /// The turn of a record, unless absent or expired.
    pub(crate) fn turn(&mut self, tenant: &str, id: &str, now: Instant) -> Option<StoredTurn> {
        let entry = self.tenants.get(tenant)?.by_id.get(id)?;
        (!entry.expired(now)).then(|| entry.record.turn())
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
        while let Some((&seq, tenant)) = self.order.first_key_value() {
            let expired = self
                .tenants
                .get(tenant)
                .and_then(|records| records.at(seq))
                .is_none_or(|entry| entry.expired(now));
            if !expired || !self.pop_oldest() {
                break;
            }
        }
    }

    /// Removes the oldest record of all tenants.
    fn pop_oldest(&mut self) -> bool {
        let Some((&seq, tenant)) = self.order.first_key_value() else {
            return false;
        };
        let tenant = tenant.clone();
        match self.tenants.get(&tenant).and_then(|r| r.order.get(&seq)) {
            Some(id) => {
                let id = id.clone();
                self.remove(&tenant, &id);
            }
            // Unreachable while the maps agree; dropping the stray sequence
            // number keeps eviction loops finite if they ever do not.
            None => {
                self.order.remove(&seq);
            }
        }
        true
    }

    /// Removes the oldest record of `tenant`.
    fn pop_oldest_of(&mut self, tenant: &str) -> bool {
        let oldest = self
            .tenants
            .get(tenant)
            .and_then(|r| r.order.first_key_value())
            .map(|(_, id)| id.clone());
        oldest.is_some_and(|id| self.remove(tenant, &id).is_some())
    }

    /// Takes a record out of its tenant's records and out of the global order.
    fn remove(&mut self, tenant: &str, id: &str) -> Option<Entry> {
        let records = self.tenants.get_mut(tenant)?;
        let entry = records.remove(id)?;
        if records.by_id.is_empty() {
            self.tenants.remove(tenant);
        }
        self.order.remove(&entry.seq);
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
            ancestors: Vec::new(),
            created_at: 0,
            input: "x".repeat(body),
            output: String::new(),
            response: String::new(),
        }
    }

    const LIMITS: Limits = Limits {
        max_entries: 3,
        max_bytes: 1000,
        max_entries_per_tenant: 3,
        max_bytes_per_tenant: 1000,
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

    fn child(id: &str, ancestors: &[&str]) -> StoredResponse {
        StoredResponse {
            ancestors: ancestors.iter().map(|a| (*a).to_owned()).collect(),
            parent: ancestors.last().map(|a| (*a).to_owned()),
            ..record(id, 1)
        }
    }

    #[test]
    fn a_continued_conversation_is_renewed_and_evicted_last() {
        let now = Instant::now();
        let mut table = Table::default();
        table.insert("t", record("root", 1), now, LIMITS);
        table.insert("t", record("other", 1), now, LIMITS);
        let later = now + Duration::from_secs(6);
        table.insert("t", child("leaf", &["root"]), later, LIMITS);
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
}
