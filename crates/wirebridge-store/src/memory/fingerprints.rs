//! The prompt cache fingerprints a [`MemoryStore`](super::MemoryStore)
//! keeps: a map by tenant and response id, oldest first out, with the
//! store's TTL and bounds (counted apart from the records').

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// A fingerprint's key: its tenant and response id.
type Key = (String, String);

/// The fingerprints, and the order they were kept in.
#[derive(Debug, Default)]
pub(super) struct Fingerprints {
    kept: HashMap<Key, Kept>,
    /// Keys, oldest first; a key kept again is found here more than once,
    /// its older places skipped by their stamp.
    order: VecDeque<(Key, u64)>,
    bytes: usize,
    stamp: u64,
}

#[derive(Debug)]
struct Kept {
    fingerprint: String,
    at: Instant,
    stamp: u64,
}

/// What bounds the fingerprints.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    pub(super) entries: usize,
    pub(super) bytes: usize,
}

impl Fingerprints {
    /// Keeps `fingerprint` for `id` of `tenant`, the oldest going first
    /// when the bounds are reached; one larger than the bytes bound is
    /// not kept.
    pub(super) fn keep(
        &mut self,
        tenant: &str,
        id: &str,
        fingerprint: String,
        now: Instant,
        bounds: Bounds,
    ) -> bool {
        let size = size(tenant, id, &fingerprint);
        if size > bounds.bytes || bounds.entries == 0 {
            return false;
        }
        let key = (tenant.to_owned(), id.to_owned());
        self.remove(&key);
        self.stamp += 1;
        self.bytes += size;
        self.order.push_back((key.clone(), self.stamp));
        let kept = Kept {
            fingerprint,
            at: now,
            stamp: self.stamp,
        };
        self.kept.insert(key, kept);
        while self.kept.len() > bounds.entries || self.bytes > bounds.bytes {
            self.evict_oldest();
        }
        // Places of keys kept again are dropped once they pile up.
        if self.order.len() > 2 * self.kept.len() + 16 {
            let kept = &self.kept;
            self.order
                .retain(|(key, stamp)| kept.get(key).is_some_and(|k| k.stamp == *stamp));
        }
        true
    }

    /// The fingerprint of `id` of `tenant`, if kept and not expired.
    pub(super) fn get(
        &mut self,
        tenant: &str,
        id: &str,
        now: Instant,
        ttl: Duration,
    ) -> Option<String> {
        let key = (tenant.to_owned(), id.to_owned());
        let expired = now.saturating_duration_since(self.kept.get(&key)?.at) >= ttl;
        if expired {
            self.remove(&key);
            return None;
        }
        self.kept.get(&key).map(|k| k.fingerprint.clone())
    }

    /// How many are kept.
    pub(super) fn len(&self) -> usize {
        self.kept.len()
    }

    fn remove(&mut self, key: &Key) {
        if let Some(kept) = self.kept.remove(key) {
            self.bytes -= size(&key.0, &key.1, &kept.fingerprint);
        }
    }

    fn evict_oldest(&mut self) {
        while let Some((key, stamp)) = self.order.pop_front() {
            if self.kept.get(&key).is_some_and(|k| k.stamp == stamp) {
                self.remove(&key);
                return;
            }
        }
    }
}

fn size(tenant: &str, id: &str, fingerprint: &str) -> usize {
    tenant.len() + id.len() + fingerprint.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: Bounds = Bounds {
        entries: 2,
        bytes: 1_000,
    };
    const TTL: Duration = Duration::from_secs(60);

    #[test]
    fn a_fingerprint_is_its_tenant_s_and_expires() {
        let mut prints = Fingerprints::default();
        let now = Instant::now();
        assert!(prints.keep("a", "resp_1", "f1".into(), now, BOUNDS));
        assert_eq!(prints.get("a", "resp_1", now, TTL).as_deref(), Some("f1"));
        assert_eq!(prints.get("b", "resp_1", now, TTL), None);
        let later = now + TTL;
        assert_eq!(prints.get("a", "resp_1", later, TTL), None);
        assert_eq!(prints.len(), 0);
    }

    #[test]
    fn the_oldest_goes_first_and_the_bytes_are_bounded() {
        let mut prints = Fingerprints::default();
        let now = Instant::now();
        prints.keep("a", "1", "f".into(), now, BOUNDS);
        prints.keep("a", "2", "f".into(), now, BOUNDS);
        // Kept again: now the newest.
        prints.keep("a", "1", "g".into(), now, BOUNDS);
        prints.keep("a", "3", "f".into(), now, BOUNDS);
        assert_eq!(prints.get("a", "2", now, TTL), None);
        assert_eq!(prints.get("a", "1", now, TTL).as_deref(), Some("g"));
        assert_eq!(prints.len(), 2);
        let big = "x".repeat(BOUNDS.bytes);
        assert!(!prints.keep("a", "4", big, now, BOUNDS));
        assert_eq!(prints.bytes, 2 * 3);
    }
}
