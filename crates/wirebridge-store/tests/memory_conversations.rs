//! `MemoryStore`'s conversations: the bounds they keep to and what is
//! evicted for them (the shared behaviour is `conversation_suite!()`, in
//! `memory.rs`).

mod common;

use common::conversations::{conversation, item};
use common::tenant;
use wirebridge_store::{ConversationStore, ItemQuery, Lookup, MemoryStore, StoreError};

async fn create(store: &MemoryStore, t: &str, id: &str, items: usize) -> Result<(), StoreError> {
    let items = (0..items).map(|n| item(&format!("{id}_{n}"))).collect();
    store
        .create_conversation(t, conversation(id, "{}"), items)
        .await
}

async fn held(store: &MemoryStore, t: &str, ids: &[&str]) -> Vec<String> {
    let mut held = Vec::new();
    for id in ids {
        if store.conversation(t, id).await.unwrap().is_some() {
            held.push((*id).to_owned());
        }
    }
    held
}

#[tokio::test]
async fn a_tenant_beyond_its_quota_loses_its_least_recently_written_conversation() {
    let store = MemoryStore::new().max_entries_per_tenant(2);
    let (a, b) = (tenant("a"), tenant("b"));
    create(&store, &b, "b1", 1).await.unwrap();
    create(&store, &a, "a1", 1).await.unwrap();
    create(&store, &a, "a2", 1).await.unwrap();
    // Writing to a1 makes a2 the least recently written.
    assert!(store.append_items(&a, "a1", vec![item("x")]).await.unwrap());
    create(&store, &a, "a3", 1).await.unwrap();
    assert_eq!(held(&store, &a, &["a1", "a2", "a3"]).await, ["a1", "a3"]);
    assert_eq!(held(&store, &b, &["b1"]).await, ["b1"]);
    assert_eq!(store.conversation_count(), 3);
}

#[tokio::test]
async fn the_global_bound_takes_from_the_tenant_holding_the_most() {
    let store = MemoryStore::new().max_entries(4);
    let (a, b) = (tenant("a"), tenant("b"));
    create(&store, &b, "b1", 1).await.unwrap();
    for id in ["a1", "a2", "a3"] {
        create(&store, &a, id, 1).await.unwrap();
    }
    create(&store, &b, "b2", 1).await.unwrap();
    assert_eq!(held(&store, &a, &["a1", "a2", "a3"]).await, ["a2", "a3"]);
    assert_eq!(held(&store, &b, &["b1", "b2"]).await, ["b1", "b2"]);
}

#[tokio::test]
async fn a_conversation_that_would_outgrow_the_bounds_is_not_kept() {
    let one_item = item("c_0").size() + conversation("c", "{}").size();
    let store = MemoryStore::new().max_bytes_per_tenant(one_item * 3);
    let t = tenant("a");
    assert!(matches!(
        create(&store, &t, "c", 4).await,
        Err(StoreError::NotKept(_))
    ));
    assert_eq!(store.conversation(&t, "c").await.unwrap(), None);
    create(&store, &t, "c", 2).await.unwrap();
    // Growing past the quota alone is refused, and nothing of it is added.
    let refused = store
        .append_items(&t, "c", vec![item("x"), item("y")])
        .await;
    assert!(
        matches!(refused, Err(StoreError::NotKept(_))),
        "{refused:?}"
    );
    let Lookup::Found(page) = store.list_items(&t, "c", &ItemQuery::all()).await.unwrap() else {
        panic!("the conversation is kept")
    };
    assert_eq!(page.items.len(), 2);
    let bytes = store.conversation_bytes();
    assert!(bytes > 0 && bytes <= one_item * 3, "{bytes}");
}

#[tokio::test]
async fn a_new_tenant_beyond_max_tenants_replaces_the_least_recent_one() {
    let store = MemoryStore::new().max_tenants(2);
    let (a, b, c) = (tenant("a"), tenant("b"), tenant("c"));
    create(&store, &a, "a1", 1).await.unwrap();
    create(&store, &b, "b1", 1).await.unwrap();
    // a wrote last.
    assert!(store.append_items(&a, "a1", vec![item("x")]).await.unwrap());
    create(&store, &c, "c1", 1).await.unwrap();
    assert_eq!(held(&store, &b, &["b1"]).await, Vec::<String>::new());
    assert_eq!(held(&store, &a, &["a1"]).await, ["a1"]);
    assert_eq!(held(&store, &c, &["c1"]).await, ["c1"]);
}

#[tokio::test]
async fn responses_and_conversations_are_counted_apart() {
    let store = MemoryStore::new().max_entries(1);
    let t = tenant("a");
    create(&store, &t, "c1", 1).await.unwrap();
    common::save(&store, &t, common::turn("resp_1", &[])).await;
    assert_eq!(store.len(), 1);
    assert_eq!(store.conversation_count(), 1);
}
