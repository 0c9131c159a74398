//! The test suite every store must pass. `shared_suite!()` expands to one
//! test per case; the including file provides `fixture()` (a fresh, empty
//! store and whatever must outlive it) and `expiring_fixture()` (the same with
//! a way to let a little more than half the store's TTL pass). Include it
//! with `#[macro_use] mod common;`.

#![allow(dead_code)] // Each test binary uses its own part.

use std::future::Future;
use std::pin::Pin;

use wirebridge_store::{tenant_key, Chain, ResponseStore, StoreError, StoredResponse};

/// Lets a little more than half the store's TTL pass.
pub type PassOverHalfTheTtl =
    Box<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// One test per shared case, run against `fixture()`.
macro_rules! shared_suite {
    () => {
        shared_suite!(@cases
            save_and_get,
            saving_again_replaces,
            delete,
            chain_follows_parents,
            branches_see_only_their_own_history,
            tenants_are_isolated,
            tenant_separators_do_not_collide,
            chain_of_unknown_id_is_none,
            deleted_parent_is_named_missing,
            looping_parents_are_corrupt,
        );

        #[tokio::test]
        async fn expired_parent_is_named_missing() {
            let (_guard, store, pass_over_half_the_ttl) = expiring_fixture().await;
            common::expired_parent_is_named_missing(&store, pass_over_half_the_ttl).await;
        }
    };
    (@cases $($case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() {
                let (_guard, store) = fixture().await;
                common::$case(&store).await;
            }
        )*
    };
}

/// The tenant of a made-up API key.
pub fn tenant(name: &str) -> String {
    tenant_key(Some(format!("Bearer sk-{name}").as_bytes()))
}

/// A record for turn `id`, continuing `parent`.
pub fn turn(id: &str, parent: Option<&str>) -> StoredResponse {
    StoredResponse {
        id: id.to_owned(),
        parent: parent.map(str::to_owned),
        created_at: 1_700_000_000,
        input: format!(r#"[{{"type":"message","role":"user","content":"question of {id}"}}]"#),
        output: format!(
            r#"[{{"type":"message","id":"msg_{id}","role":"assistant","status":"completed","content":[{{"type":"output_text","text":"answer of {id}","annotations":[]}}]}}]"#
        ),
        response: format!(r#"{{"id":"{id}","object":"response","status":"completed"}}"#),
    }
}

/// The ids of the chain ending at `id`, oldest first, and the missing
/// ancestor it stopped at.
async fn chain_ids(
    store: &dyn ResponseStore,
    tenant: &str,
    id: &str,
) -> Option<(Vec<String>, Option<String>)> {
    let chain = store.chain(tenant, id).await.expect("chain")?;
    let ids = chain.records.iter().map(|r| r.id.clone()).collect();
    Some((ids, chain.missing))
}

/// A chain of `ids` with no missing ancestor.
fn whole(ids: &[&str]) -> Option<(Vec<String>, Option<String>)> {
    Some((ids.iter().map(|id| (*id).to_owned()).collect(), None))
}

/// A chain of `ids` that stopped at the missing ancestor `missing`.
fn broken(ids: &[&str], missing: &str) -> Option<(Vec<String>, Option<String>)> {
    Some((
        ids.iter().map(|id| (*id).to_owned()).collect(),
        Some(missing.to_owned()),
    ))
}

pub async fn save_and_get(store: &dyn ResponseStore) {
    let t = tenant("save");
    let mut record = turn("resp_save", None);
    record.input = r#"[{"role":"user","content":"héllo, \"wörld\"\n\t✓ 🦀"}]"#.to_owned();
    store.save(&t, record.clone()).await.expect("save");
    assert_eq!(store.get(&t, "resp_save").await.expect("get"), Some(record));
    assert_eq!(store.get(&t, "resp_other").await.expect("get"), None);
}

pub async fn saving_again_replaces(store: &dyn ResponseStore) {
    let t = tenant("replace");
    store.save(&t, turn("resp_r", None)).await.expect("save");
    let mut second = turn("resp_r", None);
    second.output = "[]".to_owned();
    store.save(&t, second.clone()).await.expect("save");
    assert_eq!(store.get(&t, "resp_r").await.expect("get"), Some(second));
}

pub async fn delete(store: &dyn ResponseStore) {
    let t = tenant("delete");
    store.save(&t, turn("resp_d", None)).await.expect("save");
    store.save(&t, turn("resp_keep", None)).await.expect("save");
    assert!(store.delete(&t, "resp_d").await.expect("delete"));
    assert_eq!(store.get(&t, "resp_d").await.expect("get"), None);
    assert_eq!(store.chain(&t, "resp_d").await.expect("chain"), None);
    assert!(
        !store.delete(&t, "resp_d").await.expect("delete"),
        "deleting twice"
    );
    assert!(!store.delete(&t, "resp_never").await.expect("delete"));
    assert!(
        store.get(&t, "resp_keep").await.expect("get").is_some(),
        "only the one deleted"
    );
}

pub async fn chain_follows_parents(store: &dyn ResponseStore) {
    let t = tenant("chain");
    let turns = [
        turn("resp_1", None),
        turn("resp_2", Some("resp_1")),
        turn("resp_3", Some("resp_2")),
    ];
    for record in &turns {
        store.save(&t, record.clone()).await.expect("save");
    }
    assert_eq!(
        store.chain(&t, "resp_3").await.expect("chain"),
        Some(Chain {
            records: turns.to_vec(),
            missing: None
        })
    );
    assert_eq!(
        chain_ids(store, &t, "resp_2").await,
        whole(&["resp_1", "resp_2"])
    );
    assert_eq!(chain_ids(store, &t, "resp_1").await, whole(&["resp_1"]));
}

pub async fn branches_see_only_their_own_history(store: &dyn ResponseStore) {
    let t = tenant("branch");
    store.save(&t, turn("resp_root", None)).await.expect("save");
    store
        .save(&t, turn("resp_a", Some("resp_root")))
        .await
        .expect("save");
    store
        .save(&t, turn("resp_b", Some("resp_root")))
        .await
        .expect("save");
    store
        .save(&t, turn("resp_a2", Some("resp_a")))
        .await
        .expect("save");
    assert_eq!(
        chain_ids(store, &t, "resp_a").await,
        whole(&["resp_root", "resp_a"])
    );
    assert_eq!(
        chain_ids(store, &t, "resp_b").await,
        whole(&["resp_root", "resp_b"])
    );
    assert_eq!(
        chain_ids(store, &t, "resp_a2").await,
        whole(&["resp_root", "resp_a", "resp_a2"])
    );
}

pub async fn tenants_are_isolated(store: &dyn ResponseStore) {
    let (alice, bob, anonymous) = (tenant("alice"), tenant("bob"), tenant_key(None));
    let mine = turn("resp_shared_id", None);
    store.save(&alice, mine.clone()).await.expect("save");
    store
        .save(&alice, turn("resp_child", Some("resp_shared_id")))
        .await
        .expect("save");
    for other in [&bob, &anonymous] {
        assert_eq!(store.get(other, "resp_shared_id").await.expect("get"), None);
        assert_eq!(store.chain(other, "resp_child").await.expect("chain"), None);
        assert!(!store.delete(other, "resp_shared_id").await.expect("delete"));
    }
    assert_eq!(
        store.get(&alice, "resp_shared_id").await.expect("get"),
        Some(mine.clone()),
        "not deleted by others"
    );

    // The same id saved by another tenant is another record.
    let mut theirs = turn("resp_shared_id", None);
    theirs.output = r#"["bob's"]"#.to_owned();
    store.save(&bob, theirs.clone()).await.expect("save");
    assert_eq!(
        store.get(&bob, "resp_shared_id").await.expect("get"),
        Some(theirs)
    );
    assert_eq!(
        store.get(&alice, "resp_shared_id").await.expect("get"),
        Some(mine)
    );
    // Bob's record does not extend Alice's chain, nor the other way round:
    // to Bob, Alice's record is missing.
    store
        .save(&bob, turn("resp_bob_child", Some("resp_child")))
        .await
        .expect("save");
    assert_eq!(
        chain_ids(store, &bob, "resp_bob_child").await,
        broken(&["resp_bob_child"], "resp_child")
    );
}

pub async fn tenant_separators_do_not_collide(store: &dyn ResponseStore) {
    // Tenants from a configured header may hold any text.
    let pairs = [
        ("a:b", "c"),
        ("a", "b:c"),
        ("a%3Ab", "c"),
        ("a:b%", "c"),
        ("", "a:b:c"),
    ];
    for (t, id) in pairs {
        let mut record = turn(id, None);
        record.output = format!(r#"["{t}"]"#);
        store.save(t, record).await.expect("save");
    }
    for (t, id) in pairs {
        let record = store.get(t, id).await.expect("get").expect("saved");
        assert_eq!(
            record.output,
            format!(r#"["{t}"]"#),
            "tenant {t:?}, id {id:?}"
        );
    }
}

pub async fn chain_of_unknown_id_is_none(store: &dyn ResponseStore) {
    let t = tenant("unknown");
    assert_eq!(store.chain(&t, "resp_nope").await.expect("chain"), None);
    store
        .save(&t, turn("resp_orphan", Some("resp_never_saved")))
        .await
        .expect("save");
    assert_eq!(
        chain_ids(store, &t, "resp_orphan").await,
        broken(&["resp_orphan"], "resp_never_saved"),
        "a parent never saved is missing too"
    );
}

/// The nearest missing ancestor is named, not the oldest: the walk cannot see
/// past it.
pub async fn deleted_parent_is_named_missing(store: &dyn ResponseStore) {
    let t = tenant("deleted-parent");
    store.save(&t, turn("resp_1", None)).await.expect("save");
    store
        .save(&t, turn("resp_2", Some("resp_1")))
        .await
        .expect("save");
    store
        .save(&t, turn("resp_3", Some("resp_2")))
        .await
        .expect("save");
    store
        .save(&t, turn("resp_4", Some("resp_3")))
        .await
        .expect("save");
    assert!(store.delete(&t, "resp_2").await.expect("delete"));
    assert_eq!(
        chain_ids(store, &t, "resp_4").await,
        broken(&["resp_3", "resp_4"], "resp_2")
    );
    assert_eq!(
        chain_ids(store, &t, "resp_3").await,
        broken(&["resp_3"], "resp_2")
    );
    assert_eq!(
        chain_ids(store, &t, "resp_1").await,
        whole(&["resp_1"]),
        "the older part is whole"
    );
    assert!(store.delete(&t, "resp_1").await.expect("delete"));
    assert_eq!(
        chain_ids(store, &t, "resp_4").await,
        broken(&["resp_3", "resp_4"], "resp_2")
    );
}

/// A record whose parents loop back to it (no sequence of saves through the
/// API builds one) is corrupt, not an endless or shortened chain.
pub async fn looping_parents_are_corrupt(store: &dyn ResponseStore) {
    let t = tenant("loop");
    store
        .save(&t, turn("resp_a", Some("resp_b")))
        .await
        .expect("save");
    store
        .save(&t, turn("resp_b", Some("resp_a")))
        .await
        .expect("save");
    let chain = store.chain(&t, "resp_a").await;
    assert!(matches!(chain, Err(StoreError::Corrupt(_))), "{chain:?}");
    store
        .save(&t, turn("resp_self", Some("resp_self")))
        .await
        .expect("save");
    let chain = store.chain(&t, "resp_self").await;
    assert!(matches!(chain, Err(StoreError::Corrupt(_))), "{chain:?}");
}

/// The parent is saved, over half the TTL passes, the child is saved, over
/// half the TTL passes again: the parent is gone, the child's chain is the
/// child alone, and names the parent as missing.
pub async fn expired_parent_is_named_missing(
    store: &dyn ResponseStore,
    pass_over_half_the_ttl: PassOverHalfTheTtl,
) {
    let t = tenant("expiry");
    store.save(&t, turn("resp_old", None)).await.expect("save");
    pass_over_half_the_ttl().await;
    store
        .save(&t, turn("resp_new", Some("resp_old")))
        .await
        .expect("save");
    assert_eq!(
        chain_ids(store, &t, "resp_new").await,
        whole(&["resp_old", "resp_new"])
    );
    pass_over_half_the_ttl().await;
    assert_eq!(
        store.get(&t, "resp_old").await.expect("get"),
        None,
        "the parent expired"
    );
    assert_eq!(
        chain_ids(store, &t, "resp_new").await,
        broken(&["resp_new"], "resp_old")
    );
}
