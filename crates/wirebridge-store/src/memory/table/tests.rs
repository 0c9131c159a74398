//! The table's own tests: quotas, eviction, expiry and chains.

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
    chain.turns.iter().map(|turn| &*turn.id).collect()
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
    let named: Vec<&str> = chain.ids.iter().map(|id| &**id).collect();
    assert_eq!(named, ["r1", "r2", "b3", "b4"]);
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
