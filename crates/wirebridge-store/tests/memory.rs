//! `MemoryStore`: the shared suite, then its bounds and expiry.

#[macro_use]
mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{tenant, turn, PassOverHalfTheTtl};
use wirebridge_store::{MemoryStore, ResponseStore, StoreError, StoredResponse};

async fn fixture() -> ((), MemoryStore) {
    ((), MemoryStore::new())
}

async fn expiring_fixture() -> ((), MemoryStore, PassOverHalfTheTtl) {
    let clock = ManualClock::new();
    let store = MemoryStore::new()
        .ttl(Duration::from_secs(10))
        .clock(clock.reader());
    let pass: PassOverHalfTheTtl = Box::new(move || {
        clock.advance(Duration::from_secs(6));
        Box::pin(async {})
    });
    ((), store, pass)
}

shared_suite!();
conversation_suite!();

/// A clock that moves only when told to.
#[derive(Clone)]
struct ManualClock(Arc<Mutex<Instant>>);

impl ManualClock {
    fn new() -> Self {
        Self(Arc::new(Mutex::new(Instant::now())))
    }

    fn advance(&self, by: Duration) {
        *self.0.lock().unwrap() += by;
    }

    fn reader(&self) -> impl Fn() -> Instant + Send + Sync + 'static {
        let clock = self.clone();
        move || *clock.0.lock().unwrap()
    }
}

/// A record of exactly `size` bytes as `StoredResponse::size` counts them.
fn sized(id: &str, size: usize) -> StoredResponse {
    let mut record = turn(id, &[]);
    record.parent = None;
    record.output.clear();
    record.response.clear();
    record.input = "x".repeat(size - id.len());
    assert_eq!(record.size(), size);
    record
}

async fn present(store: &MemoryStore, tenant: &str, ids: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for id in ids {
        if store.get(tenant, id).await.unwrap().is_some() {
            found.push((*id).to_owned());
        }
    }
    found
}

#[tokio::test]
async fn evicts_the_oldest_beyond_max_entries() {
    let store = MemoryStore::new().max_entries(3);
    let t = tenant("count");
    for id in ["r1", "r2", "r3", "r4", "r5"] {
        store.save(&t, turn(id, &[])).await.unwrap();
    }
    assert_eq!(store.len(), 3);
    assert_eq!(
        present(&store, &t, &["r1", "r2", "r3", "r4", "r5"]).await,
        ["r3", "r4", "r5"]
    );
}

#[tokio::test]
async fn evicts_the_oldest_beyond_max_bytes() {
    let store = MemoryStore::new().max_bytes(350);
    let t = tenant("bytes");
    for id in ["r1", "r2", "r3"] {
        store.save(&t, sized(id, 100)).await.unwrap();
    }
    assert_eq!((store.len(), store.bytes()), (3, 300));
    store.save(&t, sized("r4", 100)).await.unwrap();
    assert_eq!((store.len(), store.bytes()), (3, 300));
    assert_eq!(
        present(&store, &t, &["r1", "r2", "r3", "r4"]).await,
        ["r2", "r3", "r4"]
    );
    // A big one pushes out as many as it takes.
    store.save(&t, sized("big", 300)).await.unwrap();
    assert_eq!((store.len(), store.bytes()), (1, 300));
    assert_eq!(
        present(&store, &t, &["r2", "r3", "r4", "big"]).await,
        ["big"]
    );
}

#[tokio::test]
async fn the_global_bound_evicts_from_the_tenant_holding_the_most() {
    let store = MemoryStore::new().max_entries(2);
    let (alice, bob) = (tenant("alice"), tenant("bob"));
    store.save(&alice, turn("r1", &[])).await.unwrap();
    store.save(&bob, turn("r2", &[])).await.unwrap();
    store.save(&alice, turn("r3", &[])).await.unwrap();
    assert_eq!(present(&store, &alice, &["r1", "r3"]).await, ["r3"]);
    assert_eq!(present(&store, &bob, &["r2"]).await, ["r2"]);
}

#[tokio::test]
async fn saving_again_makes_a_record_the_newest() {
    let store = MemoryStore::new().max_entries(2);
    let t = tenant("resave");
    store.save(&t, turn("a", &[])).await.unwrap();
    store.save(&t, turn("b", &[])).await.unwrap();
    store.save(&t, turn("a", &[])).await.unwrap();
    store.save(&t, turn("c", &[])).await.unwrap();
    assert_eq!(present(&store, &t, &["a", "b", "c"]).await, ["a", "c"]);
}

#[tokio::test]
async fn a_record_over_max_bytes_alone_is_not_kept() {
    let store = MemoryStore::new().max_bytes(150);
    let t = tenant("huge");
    store.save(&t, sized("small", 100)).await.unwrap();
    let refused = store.save(&t, sized("huge", 151)).await;
    assert!(
        matches!(&refused, Err(StoreError::NotKept(m)) if m.contains("151 bytes") && m.contains("150")),
        "{refused:?}"
    );
    assert_eq!(
        present(&store, &t, &["small", "huge"]).await,
        ["small"],
        "nothing evicted for it"
    );
    // A refused replacement leaves the record it would replace.
    let refused = store.save(&t, sized("small", 200)).await;
    assert!(
        matches!(refused, Err(StoreError::NotKept(_))),
        "{refused:?}"
    );
    assert_eq!(
        store.get(&t, "small").await.unwrap(),
        Some(sized("small", 100))
    );
    store.save(&t, sized("exact", 150)).await.unwrap();
    assert_eq!(present(&store, &t, &["small", "exact"]).await, ["exact"]);
}

#[tokio::test]
async fn zero_max_entries_keeps_nothing() {
    let store = MemoryStore::new().max_entries(0);
    let refused = store.save("t", turn("r1", &[])).await;
    assert!(
        matches!(&refused, Err(StoreError::NotKept(m)) if m.contains("max_entries")),
        "{refused:?}"
    );
    assert!(store.is_empty());
    assert_eq!(store.get("t", "r1").await.unwrap(), None);
}

#[tokio::test]
async fn expired_records_are_invisible_and_reclaimed() {
    let clock = ManualClock::new();
    let store = MemoryStore::new()
        .ttl(Duration::from_secs(60))
        .clock(clock.reader());
    let t = tenant("ttl");
    store.save(&t, sized("r1", 100)).await.unwrap();
    clock.advance(Duration::from_secs(30));
    store.save(&t, sized("r2", 100)).await.unwrap();
    clock.advance(Duration::from_secs(29));
    assert_eq!(
        present(&store, &t, &["r1", "r2"]).await,
        ["r1", "r2"],
        "59 s old"
    );
    clock.advance(Duration::from_secs(1));
    assert_eq!(present(&store, &t, &["r1", "r2"]).await, ["r2"], "60 s old");
    assert_eq!((store.len(), store.bytes()), (1, 100), "reclaimed");
    assert!(
        !store.delete(&t, "r1").await.unwrap(),
        "an expired record cannot be deleted"
    );
    clock.advance(Duration::from_secs(30));
    assert!(store.is_empty());
    assert_eq!(store.bytes(), 0);
}

#[tokio::test]
async fn expiry_with_the_real_clock() {
    let store = MemoryStore::new().ttl(Duration::from_millis(200));
    let t = tenant("real-ttl");
    store.save(&t, turn("r1", &[])).await.unwrap();
    assert!(store.get(&t, "r1").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(store.get(&t, "r1").await.unwrap(), None);
    assert!(store.is_empty());
}

#[tokio::test]
async fn extreme_ttls_do_not_panic() {
    let forever = MemoryStore::new().ttl(Duration::MAX);
    forever.save("t", turn("r1", &[])).await.unwrap();
    assert!(forever.get("t", "r1").await.unwrap().is_some());
    let never = MemoryStore::new().ttl(Duration::ZERO);
    never.save("t", turn("r1", &[])).await.unwrap();
    assert_eq!(never.get("t", "r1").await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_between_tasks_on_several_threads() {
    let store = Arc::new(MemoryStore::new().max_entries(1_000));
    let tasks: Vec<_> = (0..8)
        .map(|task| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let t = tenant(&format!("task-{task}"));
                for n in 0..200 {
                    let id = format!("r{n:03}");
                    store.save(&t, sized(&id, 100)).await.unwrap();
                    // Once the store is full, another task's save may evict
                    // this record at once: a read finds it or nothing, never
                    // another record.
                    if let Some(found) = store.get(&t, &id).await.unwrap() {
                        assert_eq!(found.id, id);
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!((store.len(), store.bytes()), (1_000, 100_000));
}

#[tokio::test]
async fn a_tenant_beyond_its_quota_evicts_only_its_own_records() {
    let store = MemoryStore::new()
        .max_entries(100)
        .max_entries_per_tenant(5);
    let (heavy, quiet) = (tenant("heavy"), tenant("quiet"));
    let quiet_ids = ["q1", "q2", "q3"];
    for id in quiet_ids {
        store.save(&quiet, turn(id, &[])).await.unwrap();
    }
    let heavy_ids: Vec<String> = (0..500).map(|n| format!("h{n:03}")).collect();
    for id in &heavy_ids {
        store.save(&heavy, turn(id, &[])).await.unwrap();
    }
    assert_eq!(present(&store, &quiet, &quiet_ids).await, quiet_ids);
    let heavy_ids: Vec<&str> = heavy_ids.iter().map(String::as_str).collect();
    assert_eq!(
        present(&store, &heavy, &heavy_ids).await,
        heavy_ids[495..],
        "its own newest five"
    );
    assert_eq!(store.len(), 8);
}

#[tokio::test]
async fn a_tenant_beyond_its_byte_quota_evicts_only_its_own_records() {
    let store = MemoryStore::new()
        .max_bytes(10_000)
        .max_bytes_per_tenant(350);
    let (heavy, quiet) = (tenant("heavy"), tenant("quiet"));
    store.save(&quiet, sized("q1", 300)).await.unwrap();
    for n in 0..50 {
        store
            .save(&heavy, sized(&format!("h{n:02}"), 100))
            .await
            .unwrap();
    }
    assert_eq!(present(&store, &quiet, &["q1"]).await, ["q1"]);
    assert_eq!(
        present(&store, &heavy, &["h46", "h47", "h48", "h49"]).await,
        ["h47", "h48", "h49"]
    );
    assert_eq!((store.len(), store.bytes()), (4, 600));

    // Over the quota on its own: refused, and the tenant's records stay.
    let refused = store.save(&heavy, sized("huge", 351)).await;
    assert!(
        matches!(&refused, Err(StoreError::NotKept(m)) if m.contains("per tenant")),
        "{refused:?}"
    );
    assert_eq!((store.len(), store.bytes()), (4, 600));
    // Exactly the quota: kept, after the tenant's others made room.
    store.save(&heavy, sized("whole", 350)).await.unwrap();
    assert_eq!(
        present(&store, &heavy, &["h47", "h48", "h49", "whole"]).await,
        ["whole"]
    );
    assert_eq!(present(&store, &quiet, &["q1"]).await, ["q1"]);
}

#[tokio::test]
async fn the_global_bound_evicts_from_tenants_over_their_fair_share() {
    let store = MemoryStore::new()
        .max_entries(8)
        .max_bytes(10_000)
        .max_entries_per_tenant(5)
        .max_bytes_per_tenant(10_000);
    let tenants = [tenant("a"), tenant("b"), tenant("c")];
    for (t, name) in tenants.iter().zip(["a", "b", "c"]) {
        for n in 1..=4 {
            store
                .save(t, turn(&format!("{name}{n}"), &[]))
                .await
                .unwrap();
        }
    }
    // Twelve saved, none over its tenant's quota: each save over the bound
    // of 8 evicts from the tenant holding the most (the least recently
    // saving of a tie), never the oldest record of all.
    assert_eq!(store.len(), 8);
    assert_eq!(
        present(&store, &tenants[0], &["a1", "a2", "a3", "a4"]).await,
        ["a3", "a4"]
    );
    assert_eq!(
        present(&store, &tenants[1], &["b1", "b2", "b3", "b4"]).await,
        ["b2", "b3", "b4"]
    );
    assert_eq!(
        present(&store, &tenants[2], &["c1", "c2", "c3", "c4"]).await,
        ["c2", "c3", "c4"]
    );

    let bytes = MemoryStore::new().max_bytes(500).max_bytes_per_tenant(400);
    for (t, name) in tenants.iter().zip(["a", "b", "c"]) {
        bytes
            .save(t, sized(&format!("{name}1"), 200))
            .await
            .unwrap();
    }
    assert_eq!((bytes.len(), bytes.bytes()), (2, 400));
    assert!(present(&bytes, &tenants[0], &["a1"]).await.is_empty());
}

/// Five tenants each within their quota fill the store together: the one
/// that holds little, and saved before them all, keeps its conversation.
#[tokio::test]
async fn tenants_within_their_quota_do_not_evict_a_tenant_holding_less() {
    let store = MemoryStore::new()
        .max_bytes(100_000)
        .max_bytes_per_tenant(25_000);
    let victim = tenant("victim");
    store.save(&victim, turn("v1", &[])).await.unwrap();
    store.save(&victim, turn("v2", &["v1"])).await.unwrap();
    store
        .save(&victim, turn("v3", &["v1", "v2"]))
        .await
        .unwrap();
    for heavy in 0..5 {
        let t = tenant(&format!("heavy-{heavy}"));
        for n in 0..24 {
            store
                .save(&t, sized(&format!("h{heavy}-{n:02}"), 1_000))
                .await
                .unwrap();
        }
    }
    assert!(store.bytes() <= 100_000, "{}", store.bytes());
    let chain = store.chain(&victim, "v3").await.unwrap().expect("kept");
    assert!(chain.is_complete(), "{chain:?}");
    assert_eq!(chain.turns.len(), 3);
}

#[tokio::test]
async fn a_new_tenant_beyond_max_tenants_evicts_the_least_recent_one_whole() {
    let store = MemoryStore::new().max_tenants(3);
    let [a, b, c, d] = ["a", "b", "c", "d"].map(tenant);
    store.save(&a, turn("a1", &[])).await.unwrap();
    store.save(&b, turn("b1", &[])).await.unwrap();
    store.save(&b, turn("b2", &["b1"])).await.unwrap();
    store.save(&c, turn("c1", &[])).await.unwrap();
    // a saves again: b is now the least recent.
    store.save(&a, turn("a2", &["a1"])).await.unwrap();
    store.save(&d, turn("d1", &[])).await.unwrap();
    assert_eq!(store.tenants(), 3);
    assert!(present(&store, &b, &["b1", "b2"]).await.is_empty());
    assert_eq!(present(&store, &a, &["a1", "a2"]).await, ["a1", "a2"]);
    assert_eq!(present(&store, &c, &["c1"]).await, ["c1"]);
    assert_eq!(present(&store, &d, &["d1"]).await, ["d1"]);
    // Reading does not count as recent: c is next.
    assert!(store.get(&c, "c1").await.unwrap().is_some());
    store.save(&b, turn("b3", &[])).await.unwrap();
    assert!(present(&store, &c, &["c1"]).await.is_empty());
    assert_eq!(store.len(), 4);
}

#[tokio::test]
async fn the_default_quota_keeps_one_tenant_from_filling_the_store() {
    let store = MemoryStore::new();
    let (heavy, quiet) = (tenant("heavy"), tenant("quiet"));
    store.save(&quiet, turn("q1", &[])).await.unwrap();
    for n in 0..26_000 {
        store
            .save(&heavy, turn(&format!("h{n}"), &[]))
            .await
            .unwrap();
    }
    assert_eq!(store.len(), 1 + MemoryStore::DEFAULT_MAX_ENTRIES_PER_TENANT);
    assert_eq!(present(&store, &quiet, &["q1"]).await, ["q1"]);
    assert_eq!(present(&store, &heavy, &["h999", "h1000"]).await, ["h1000"]);
}

#[test]
fn defaults_are_documented_values() {
    assert_eq!(MemoryStore::DEFAULT_MAX_ENTRIES, 100_000);
    assert_eq!(MemoryStore::DEFAULT_MAX_BYTES, 256 * 1024 * 1024);
    assert_eq!(MemoryStore::DEFAULT_MAX_ENTRIES_PER_TENANT, 25_000);
    assert_eq!(MemoryStore::DEFAULT_MAX_TENANTS, 1_000);
    assert_eq!(MemoryStore::DEFAULT_MAX_BYTES_PER_TENANT, 64 * 1024 * 1024);
    assert_eq!(MemoryStore::DEFAULT_TTL, Duration::from_secs(30 * 86_400));
    let debug = format!("{:?}", MemoryStore::default());
    assert!(debug.contains("max_entries: 100000"), "{debug}");
    assert!(debug.contains("max_entries_per_tenant: 25000"), "{debug}");
    assert!(debug.contains("max_tenants: 1000"), "{debug}");
}
