//! The test suite every store must pass. `shared_suite!()` expands to one
//! test per case; the including file provides `fixture()` (a fresh, empty
//! store and whatever must outlive it) and `expiring_fixture()` (the same with
//! a way to let a little more than half the store's TTL pass). Include it
//! with `#[macro_use] mod common;`.

#![allow(dead_code)] // Each test binary uses its own part.

use std::future::Future;
use std::pin::Pin;

use wirebridge_store::{tenant_key, ResponseStore, StoredResponse};

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
            deleted_parent_ends_the_chain,
        );

        #[tokio::test]
        async fn expired_parent_ends_the_chain() {
            let (_guard, store, pass_over_half_the_ttl) = expiring_fixture().await;
            common::expired_parent_ends_the_chain(&store, pass_over_half_the_ttl).await;
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
    tenant_key(Some(&format!("Bearer sk-{name}")))
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

fn ids(chain: &[StoredResponse]) -> Vec<&str> {
    chain.iter().map(|r| r.id.as_str()).collect()
}

async fn chain_ids(store: &dyn ResponseStore, tenant: &str, id: &str) -> Option<Vec<String>> {
    let chain = store.chain(tenant, id).await.expect("chain");
    chain.map(|chain| ids(&chain).into_iter().map(str::to_owned).collect())
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
        Some(turns.to_vec())
    );
    assert_eq!(
        chain_ids(store, &t, "resp_2").await,
        Some(vec!["resp_1".into(), "resp_2".into()])
    );
    assert_eq!(
        chain_ids(store, &t, "resp_1").await,
        Some(vec!["resp_1".into()])
    );
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
        Some(vec!["resp_root".into(), "resp_a".into()])
    );
    assert_eq!(
        chain_ids(store, &t, "resp_b").await,
        Some(vec!["resp_root".into(), "resp_b".into()])
    );
    assert_eq!(
        chain_ids(store, &t, "resp_a2").await,
        Some(vec!["resp_root".into(), "resp_a".into(), "resp_a2".into()])
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
    // Bob's record does not extend Alice's chain, nor the other way round.
    store
        .save(&bob, turn("resp_bob_child", Some("resp_child")))
        .await
        .expect("save");
    assert_eq!(
        chain_ids(store, &bob, "resp_bob_child").await,
        Some(vec!["resp_bob_child".into()])
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
        Some(vec!["resp_orphan".into()])
    );
}

pub async fn deleted_parent_ends_the_chain(store: &dyn ResponseStore) {
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
    assert!(store.delete(&t, "resp_2").await.expect("delete"));
    assert_eq!(
        chain_ids(store, &t, "resp_3").await,
        Some(vec!["resp_3".into()])
    );
}

/// The parent is saved, over half the TTL passes, the child is saved, over
/// half the TTL passes again: the parent is gone, the child's chain is the
/// child alone.
pub async fn expired_parent_ends_the_chain(
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
        Some(vec!["resp_old".into(), "resp_new".into()])
    );
    pass_over_half_the_ttl().await;
    assert_eq!(
        store.get(&t, "resp_old").await.expect("get"),
        None,
        "the parent expired"
    );
    assert_eq!(
        chain_ids(store, &t, "resp_new").await,
        Some(vec!["resp_new".into()])
    );
}
