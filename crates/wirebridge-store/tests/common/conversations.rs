//! The conversation suite every store must pass: `conversation_suite!()`
//! expands to one test per case, run against the including file's
//! `fixture()` and `expiring_fixture()`, as `shared_suite!()` is.

use wirebridge_store::{
    ConversationStore, ItemQuery, Lookup, Order, ResponseStore, StoredConversation, StoredItem,
};

use super::tenant;

/// One test per conversation case, run against `fixture()`.
macro_rules! conversation_suite {
    () => {
        conversation_suite!(@cases
            create_read_update_delete,
            items_are_listed_in_pages,
            appended_items_come_last_once_each,
            one_item_is_read_and_deleted,
            conversations_are_tenant_scoped,
            concurrent_appends_lose_nothing,
            a_conversation_of_5_000_items_is_read_whole,
        );

        #[tokio::test]
        async fn writing_renews_a_conversation() {
            let (_keep, store, pass_over_half_the_ttl) = expiring_fixture().await;
            common::conversations::writing_renews_a_conversation(
                &store,
                pass_over_half_the_ttl,
            )
            .await;
        }
    };
    (@cases $($case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() {
                let (_keep, store) = fixture().await;
                common::conversations::$case(&store).await;
            }
        )*
    };
}

fn conversations(store: &dyn ResponseStore) -> &dyn ConversationStore {
    store
        .conversations()
        .expect("the store keeps conversations")
}

pub fn conversation(id: &str, metadata: &str) -> StoredConversation {
    StoredConversation {
        id: id.to_owned(),
        created_at: 1_700_000_000,
        metadata: metadata.to_owned(),
    }
}

pub fn item(id: &str) -> StoredItem {
    StoredItem {
        id: id.to_owned(),
        item: format!(
            r#"{{"type":"message","id":"{id}","role":"user","status":"completed","content":[{{"type":"input_text","text":"{id}"}}]}}"#
        ),
    }
}

fn items(ids: &[&str]) -> Vec<StoredItem> {
    ids.iter().map(|id| item(id)).collect()
}

fn query(after: Option<&str>, limit: usize, order: Order) -> ItemQuery {
    ItemQuery {
        after: after.map(str::to_owned),
        limit,
        order,
    }
}

/// The ids of a page and whether more follow, or why there is no page.
async fn page(
    store: &dyn ConversationStore,
    t: &str,
    id: &str,
    query: &ItemQuery,
) -> Result<(Vec<String>, bool), &'static str> {
    match store.list_items(t, id, query).await.expect("listed") {
        Lookup::Found(page) => Ok((
            page.items.into_iter().map(|item| item.id).collect(),
            page.has_more,
        )),
        Lookup::NoConversation => Err("no conversation"),
        Lookup::NoItem => Err("no item"),
    }
}

fn ids(ids: &[&str], more: bool) -> Result<(Vec<String>, bool), &'static str> {
    Ok((ids.iter().map(|id| (*id).to_owned()).collect(), more))
}

pub async fn create_read_update_delete(store: &dyn ResponseStore) {
    let store = conversations(store);
    let t = tenant("a");
    let kept = conversation("conv_1", r#"{"topic":"x"}"#);
    store
        .create_conversation(&t, kept.clone(), items(&["m1"]))
        .await
        .unwrap();
    assert_eq!(store.conversation(&t, "conv_1").await.unwrap(), Some(kept));
    let updated = store
        .update_conversation(&t, "conv_1", r#"{"topic":"y"}"#.to_owned())
        .await
        .unwrap()
        .expect("the conversation is there");
    assert_eq!(updated.metadata, r#"{"topic":"y"}"#);
    assert_eq!(updated.created_at, 1_700_000_000);
    assert_eq!(
        store.conversation(&t, "conv_1").await.unwrap(),
        Some(updated)
    );
    assert_eq!(
        store
            .update_conversation(&t, "conv_2", "{}".to_owned())
            .await
            .unwrap(),
        None
    );
    assert!(store.delete_conversation(&t, "conv_1").await.unwrap());
    assert!(!store.delete_conversation(&t, "conv_1").await.unwrap());
    assert_eq!(store.conversation(&t, "conv_1").await.unwrap(), None);
    // Its items went with it.
    assert_eq!(
        page(store, &t, "conv_1", &ItemQuery::all()).await,
        Err("no conversation")
    );
}

pub async fn items_are_listed_in_pages(store: &dyn ResponseStore) {
    let store = conversations(store);
    let t = tenant("a");
    store
        .create_conversation(
            &t,
            conversation("conv_1", "{}"),
            items(&["a", "b", "c", "d", "e"]),
        )
        .await
        .unwrap();
    let q = |after, limit, order| query(after, limit, order);
    assert_eq!(
        page(store, &t, "conv_1", &q(None, 2, Order::Descending)).await,
        ids(&["e", "d"], true)
    );
    assert_eq!(
        page(store, &t, "conv_1", &q(Some("d"), 2, Order::Descending)).await,
        ids(&["c", "b"], true)
    );
    assert_eq!(
        page(store, &t, "conv_1", &q(Some("b"), 2, Order::Descending)).await,
        ids(&["a"], false)
    );
    assert_eq!(
        page(store, &t, "conv_1", &q(Some("c"), 20, Order::Ascending)).await,
        ids(&["d", "e"], false)
    );
    assert_eq!(
        page(store, &t, "conv_1", &q(Some("e"), 20, Order::Ascending)).await,
        ids(&[], false)
    );
    assert_eq!(
        page(store, &t, "conv_1", &q(Some("zz"), 20, Order::Ascending)).await,
        Err("no item")
    );
    assert_eq!(
        page(store, &t, "conv_2", &ItemQuery::all()).await,
        Err("no conversation")
    );
    // Items are read back as written.
    let Lookup::Found(all) = store
        .list_items(&t, "conv_1", &ItemQuery::all())
        .await
        .unwrap()
    else {
        panic!("listed")
    };
    assert_eq!(all.items[0], item("a"));
}

pub async fn appended_items_come_last_once_each(store: &dyn ResponseStore) {
    let store = conversations(store);
    let t = tenant("a");
    store
        .create_conversation(&t, conversation("conv_1", "{}"), items(&["a", "b", "a"]))
        .await
        .unwrap();
    assert!(store
        .append_items(&t, "conv_1", items(&["c", "b", "d", "d"]))
        .await
        .unwrap());
    assert_eq!(
        page(store, &t, "conv_1", &ItemQuery::all()).await,
        ids(&["a", "b", "c", "d"], false)
    );
    assert!(!store
        .append_items(&t, "conv_2", items(&["x"]))
        .await
        .unwrap());
    assert_eq!(store.conversation(&t, "conv_2").await.unwrap(), None);
}

pub async fn one_item_is_read_and_deleted(store: &dyn ResponseStore) {
    let store = conversations(store);
    let t = tenant("a");
    let kept = conversation("conv_1", "{}");
    store
        .create_conversation(&t, kept.clone(), items(&["a", "b", "c"]))
        .await
        .unwrap();
    assert_eq!(
        store.item(&t, "conv_1", "b").await.unwrap(),
        Lookup::Found(item("b"))
    );
    assert_eq!(store.item(&t, "conv_1", "x").await.unwrap(), Lookup::NoItem);
    assert_eq!(
        store.item(&t, "conv_2", "b").await.unwrap(),
        Lookup::NoConversation
    );
    assert_eq!(
        store.delete_item(&t, "conv_1", "b").await.unwrap(),
        Lookup::Found(kept)
    );
    assert_eq!(
        store.delete_item(&t, "conv_1", "b").await.unwrap(),
        Lookup::NoItem
    );
    assert_eq!(
        store.delete_item(&t, "conv_2", "a").await.unwrap(),
        Lookup::NoConversation
    );
    assert_eq!(
        page(store, &t, "conv_1", &ItemQuery::all()).await,
        ids(&["a", "c"], false)
    );
    // A deleted item may be added again, at the end.
    assert!(store
        .append_items(&t, "conv_1", items(&["b"]))
        .await
        .unwrap());
    assert_eq!(
        page(store, &t, "conv_1", &ItemQuery::all()).await,
        ids(&["a", "c", "b"], false)
    );
}

pub async fn conversations_are_tenant_scoped(store: &dyn ResponseStore) {
    let store = conversations(store);
    let (a, b) = (tenant("a"), tenant("b"));
    store
        .create_conversation(&a, conversation("conv_1", r#"{"who":"a"}"#), items(&["x"]))
        .await
        .unwrap();
    assert_eq!(store.conversation(&b, "conv_1").await.unwrap(), None);
    assert_eq!(
        page(store, &b, "conv_1", &ItemQuery::all()).await,
        Err("no conversation")
    );
    assert_eq!(
        store.item(&b, "conv_1", "x").await.unwrap(),
        Lookup::NoConversation
    );
    assert!(!store
        .append_items(&b, "conv_1", items(&["y"]))
        .await
        .unwrap());
    assert_eq!(
        store
            .update_conversation(&b, "conv_1", "{}".to_owned())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.delete_item(&b, "conv_1", "x").await.unwrap(),
        Lookup::NoConversation
    );
    assert!(!store.delete_conversation(&b, "conv_1").await.unwrap());
    // The same id, another tenant: two conversations.
    store
        .create_conversation(&b, conversation("conv_1", r#"{"who":"b"}"#), items(&["z"]))
        .await
        .unwrap();
    assert_eq!(
        page(store, &a, "conv_1", &ItemQuery::all()).await,
        ids(&["x"], false)
    );
    assert_eq!(
        page(store, &b, "conv_1", &ItemQuery::all()).await,
        ids(&["z"], false)
    );
    assert_eq!(
        store
            .conversation(&a, "conv_1")
            .await
            .unwrap()
            .unwrap()
            .metadata,
        r#"{"who":"a"}"#
    );
}

/// Twenty turns append their input and output at once: every item is kept,
/// each turn's two together.
pub async fn concurrent_appends_lose_nothing(store: &dyn ResponseStore) {
    let store = conversations(store);
    let t = tenant("a");
    store
        .create_conversation(&t, conversation("conv_1", "{}"), Vec::new())
        .await
        .unwrap();
    let turns = (0..20).map(|n| {
        let (t, turn) = (&t, [format!("in_{n}"), format!("out_{n}")]);
        async move {
            let items = turn.iter().map(|id| item(id)).collect();
            store.append_items(t, "conv_1", items).await
        }
    });
    for appended in futures_util::future::join_all(turns).await {
        assert!(appended.unwrap());
    }
    let (listed, more) = page(store, &t, "conv_1", &ItemQuery::all()).await.unwrap();
    assert!(!more);
    assert_eq!(listed.len(), 40);
    for pair in listed.chunks(2) {
        assert_eq!(pair[0].replace("in_", "out_"), pair[1], "{listed:?}");
    }
}

pub async fn a_conversation_of_5_000_items_is_read_whole(store: &dyn ResponseStore) {
    let store = conversations(store);
    let t = tenant("a");
    store
        .create_conversation(&t, conversation("conv_1", "{}"), Vec::new())
        .await
        .unwrap();
    for turn in 0..2_500 {
        let pair = vec![item(&format!("in_{turn}")), item(&format!("out_{turn}"))];
        assert!(store.append_items(&t, "conv_1", pair).await.unwrap());
    }
    let (listed, _) = page(store, &t, "conv_1", &ItemQuery::all()).await.unwrap();
    assert_eq!(listed.len(), 5_000);
    assert_eq!(listed[0], "in_0");
    assert_eq!(listed[4_999], "out_2499");
    assert_eq!(
        page(
            store,
            &t,
            "conv_1",
            &query(Some("out_2497"), 3, Order::Ascending)
        )
        .await,
        ids(&["in_2498", "out_2498", "in_2499"], true)
    );
}

/// A conversation written to within its TTL lives on; one left alone
/// expires.
pub async fn writing_renews_a_conversation(
    store: &dyn ResponseStore,
    pass_over_half_the_ttl: super::PassOverHalfTheTtl,
) {
    let store = conversations(store);
    let t = tenant("a");
    for id in ["conv_1", "conv_2"] {
        store
            .create_conversation(&t, conversation(id, "{}"), items(&["a"]))
            .await
            .unwrap();
    }
    pass_over_half_the_ttl().await;
    assert!(store
        .append_items(&t, "conv_1", items(&["b"]))
        .await
        .unwrap());
    pass_over_half_the_ttl().await;
    assert_eq!(
        page(store, &t, "conv_1", &ItemQuery::all()).await,
        ids(&["a", "b"], false)
    );
    assert_eq!(store.conversation(&t, "conv_2").await.unwrap(), None);
}
