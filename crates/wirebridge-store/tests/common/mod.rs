//! The test suite every store must pass. `shared_suite!()` expands to one
//! test per case; the including file provides `fixture()` (a fresh, empty
//! store and whatever must outlive it) and `expiring_fixture()` (the same with
//! a way to let a little more than half the store's TTL pass). Include it
//! with `#[macro_use] mod common;`.

#![allow(dead_code, unused_macros)] // Each test binary uses its own part.

#[macro_use]
pub mod conversations;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use wirebridge_store::{tenant_key, Chain, ResponseStore, StoreError, StoredResponse, StoredTurn};

/// Lets a little more than half the store's TTL pass.
pub type PassOverHalfTheTtl =
    Box<dyn Fn() -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// One test per shared case, run against `fixture()`.
macro_rules! shared_suite {
    () => {
        shared_suite!(@cases
            save_and_get,
            saving_again_replaces_and_duplicates_nothing,
            delete,
            chain_reads_every_ancestor,
            branches_see_only_their_own_history,
            a_chain_500_deep_is_whole_and_in_order,
            turns_are_read_by_id,
            tenants_are_isolated,
            tenant_separators_do_not_collide,
            chain_of_unknown_id_is_none,
            deleted_ancestor_is_named_missing,
            a_response_cannot_continue_itself,
            interleaved_branches_each_see_their_own,
            a_response_saved_again_elsewhere_leaves_its_old_place_missing,
            a_conversation_10_000_deep_is_whole,
            fingerprints_are_kept_per_tenant,
        );

        #[tokio::test]
        async fn continuing_renews_the_conversation() {
            let (_guard, store, pass_over_half_the_ttl) = expiring_fixture().await;
            common::continuing_renews_the_conversation(&store, pass_over_half_the_ttl).await;
        }

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

/// The ids of `chain`, to compare.
pub fn ids_of(chain: &wirebridge_store::Chain) -> Vec<&str> {
    chain.ids.iter().map(|id| &**id).collect()
}

/// A record for turn `id`, continuing the responses `ancestors` (oldest
/// first): its parent is the last, which is all the record names.
pub fn turn(id: &str, ancestors: &[&str]) -> StoredResponse {
    StoredResponse {
        id: id.to_owned(),
        parent: ancestors.last().map(|a| (*a).to_owned()),
        created_at: 1_700_000_000,
        input: format!(r#"[{{"type":"message","role":"user","content":"question of {id}"}}]"#),
        output: format!(
            r#"[{{"type":"message","id":"msg_{id}","role":"assistant","status":"completed","content":[{{"type":"output_text","text":"answer of {id}","annotations":[]}}]}}]"#
        ),
        response: format!(
            r#"{{"id":"{id}","object":"response","status":"completed","output":[]}}"#
        ),
    }
}

/// Saves `record` for tenant `t`.
pub async fn save(store: &dyn ResponseStore, t: &str, record: StoredResponse) {
    let id = record.id.clone();
    store
        .save(t, record)
        .await
        .unwrap_or_else(|e| panic!("saving {id}: {e}"));
}

/// The ids of the turns of the chain ending at `id`, oldest first, and the
/// missing ancestor it stopped at.
async fn chain_ids(
    store: &dyn ResponseStore,
    tenant: &str,
    id: &str,
) -> Option<(Vec<String>, Option<String>)> {
    let chain = store.chain(tenant, id).await.expect("chain")?;
    let ids = chain.turns.iter().map(|t| t.id.to_string()).collect();
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
    let mut record = turn("resp_save", &[]);
    record.input = r#"[{"role":"user","content":"héllo, \"wörld\"\n\t✓ 🦀"}]"#.to_owned();
    save(store, &t, record.clone()).await;
    assert_eq!(store.get(&t, "resp_save").await.expect("get"), Some(record));
    assert_eq!(store.get(&t, "resp_other").await.expect("get"), None);
    let child = turn("resp_child", &["resp_save"]);
    save(store, &t, child.clone()).await;
    assert_eq!(
        store.get(&t, "resp_child").await.expect("get"),
        Some(child),
        "the parent read back"
    );
}

pub async fn saving_again_replaces_and_duplicates_nothing(store: &dyn ResponseStore) {
    let t = tenant("replace");
    save(store, &t, turn("resp_r", &[])).await;
    save(store, &t, turn("resp_c", &["resp_r"])).await;
    // A retried save changes nothing.
    save(store, &t, turn("resp_c", &["resp_r"])).await;
    assert_eq!(
        chain_ids(store, &t, "resp_c").await,
        whole(&["resp_r", "resp_c"])
    );
    let mut second = turn("resp_r", &[]);
    second.output = "[]".to_owned();
    save(store, &t, second.clone()).await;
    assert_eq!(store.get(&t, "resp_r").await.expect("get"), Some(second));
    let chain = store.chain(&t, "resp_c").await.expect("chain").unwrap();
    assert_eq!(
        &*chain.turns[0].output, "[]",
        "the chain reads the new turn"
    );
}

pub async fn delete(store: &dyn ResponseStore) {
    let t = tenant("delete");
    save(store, &t, turn("resp_d", &[])).await;
    save(store, &t, turn("resp_keep", &[])).await;
    assert!(store.delete(&t, "resp_d").await.expect("delete"));
    assert_eq!(store.get(&t, "resp_d").await.expect("get"), None);
    assert_eq!(store.chain(&t, "resp_d").await.expect("chain"), None);
    assert_eq!(
        store
            .turns(&t, &["resp_d".to_owned()])
            .await
            .expect("turns"),
        [None]
    );
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

pub async fn chain_reads_every_ancestor(store: &dyn ResponseStore) {
    let t = tenant("chain");
    let turns = [
        turn("resp_1", &[]),
        turn("resp_2", &["resp_1"]),
        turn("resp_3", &["resp_1", "resp_2"]),
    ];
    for record in &turns {
        save(store, &t, record.clone()).await;
    }
    assert_eq!(
        store.chain(&t, "resp_3").await.expect("chain"),
        Some(Chain {
            ids: vec!["resp_1".into(), "resp_2".into(), "resp_3".into()],
            turns: turns.iter().map(StoredResponse::turn).collect(),
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
    save(store, &t, turn("resp_root", &[])).await;
    save(store, &t, turn("resp_a", &["resp_root"])).await;
    save(store, &t, turn("resp_b", &["resp_root"])).await;
    save(store, &t, turn("resp_a2", &["resp_root", "resp_a"])).await;
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

pub async fn a_chain_500_deep_is_whole_and_in_order(store: &dyn ResponseStore) {
    let t = tenant("deep");
    let ids: Vec<String> = (0..500).map(|n| format!("resp_{n:03}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    for n in 0..500 {
        save(store, &t, turn(refs[n], &refs[..n])).await;
    }
    let chain = store.chain(&t, "resp_499").await.expect("chain").unwrap();
    assert_eq!(ids_of(&chain), ids);
    assert_eq!(chain.missing, None);
    assert_eq!(chain.turns.len(), 500);
    for (n, turn) in chain.turns.iter().enumerate() {
        assert_eq!(*turn.id, ids[n]);
        assert!(
            turn.input.contains(&format!("question of {}", ids[n])),
            "turn {n}: {}",
            turn.input
        );
        assert!(turn.output.contains(&format!("answer of {}", ids[n])));
    }
    // A branch from the middle sees the first half and itself.
    save(store, &t, turn("resp_fork", &refs[..250])).await;
    let fork = store.chain(&t, "resp_fork").await.expect("chain").unwrap();
    assert_eq!(fork.turns.len(), 251);
    assert_eq!(&*fork.turns[249].id, "resp_249");
    assert_eq!(&*fork.turns[250].id, "resp_fork");
}

pub async fn turns_are_read_by_id(store: &dyn ResponseStore) {
    let t = tenant("turns");
    let (a, b) = (turn("resp_a", &[]), turn("resp_b", &["resp_a"]));
    save(store, &t, a.clone()).await;
    save(store, &t, b.clone()).await;
    let ids = ["resp_b", "resp_gone", "resp_a"].map(str::to_owned);
    assert_eq!(
        store.turns(&t, &ids).await.expect("turns"),
        [Some(b.turn()), None, Some(a.turn())]
    );
    assert_eq!(
        store.turns(&tenant("other"), &ids).await.expect("turns"),
        [None, None, None],
        "another tenant's turns are not found"
    );
    assert_eq!(
        store.turns(&t, &[]).await.expect("turns"),
        Vec::<Option<StoredTurn>>::new()
    );
}

pub async fn tenants_are_isolated(store: &dyn ResponseStore) {
    let (alice, bob, anonymous) = (tenant("alice"), tenant("bob"), tenant_key(None));
    let mine = turn("resp_shared_id", &[]);
    save(store, &alice, mine.clone()).await;
    save(store, &alice, turn("resp_child", &["resp_shared_id"])).await;
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
    let mut theirs = turn("resp_shared_id", &[]);
    theirs.output = r#"["bob's"]"#.to_owned();
    save(store, &bob, theirs.clone()).await;
    assert_eq!(
        store.get(&bob, "resp_shared_id").await.expect("get"),
        Some(theirs)
    );
    assert_eq!(
        store.get(&alice, "resp_shared_id").await.expect("get"),
        Some(mine)
    );
    // Bob's record does not extend Alice's chain, nor the other way round:
    // to Bob, Alice's records are missing.
    save(
        store,
        &bob,
        turn("resp_bob_child", &["resp_other", "resp_child"]),
    )
    .await;
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
        ("a}b", "c"),
        ("a", "b}c"),
        ("{a}", "c"),
        ("", "a:b:c"),
        ("%", "a:b:c"),
    ];
    for (t, id) in pairs {
        let mut record = turn(id, &[]);
        record.output = format!(r#"["{t}"]"#);
        save(store, t, record).await;
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
    save(store, &t, turn("resp_orphan", &["resp_never_saved"])).await;
    assert_eq!(
        chain_ids(store, &t, "resp_orphan").await,
        broken(&["resp_orphan"], "resp_never_saved"),
        "a parent never saved is missing too"
    );
}

/// The nearest missing ancestor is named, and only the turns after it are
/// returned: a continuation must not skip over a hole.
pub async fn deleted_ancestor_is_named_missing(store: &dyn ResponseStore) {
    let t = tenant("deleted-parent");
    save(store, &t, turn("resp_1", &[])).await;
    save(store, &t, turn("resp_2", &["resp_1"])).await;
    save(store, &t, turn("resp_3", &["resp_1", "resp_2"])).await;
    save(store, &t, turn("resp_4", &["resp_1", "resp_2", "resp_3"])).await;
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
    let chain = store.chain(&t, "resp_4").await.expect("chain").unwrap();
    assert_eq!(
        ids_of(&chain),
        ["resp_1", "resp_2", "resp_3", "resp_4"],
        "the ids still name the whole conversation"
    );
    assert!(store.delete(&t, "resp_3").await.expect("delete"));
    assert_eq!(
        chain_ids(store, &t, "resp_4").await,
        broken(&["resp_4"], "resp_3")
    );
}

/// A record that names itself as its parent is refused: no sequence of
/// saves through the API builds one.
pub async fn a_response_cannot_continue_itself(store: &dyn ResponseStore) {
    let t = tenant("itself");
    let mut itself = turn("resp_x", &[]);
    itself.parent = Some("resp_x".to_owned());
    let refused = store.save(&t, itself).await;
    assert!(
        matches!(refused, Err(StoreError::NotKept(_))),
        "{refused:?}"
    );
    assert_eq!(store.get(&t, "resp_x").await.expect("get"), None);
}

/// Two branches of one response continued in turn (each save a branch of
/// the conversation as last saved) each read only their own turns.
pub async fn interleaved_branches_each_see_their_own(store: &dyn ResponseStore) {
    let t = tenant("interleaved");
    save(store, &t, turn("resp_root", &[])).await;
    let (mut a, mut b) = (vec!["resp_root".to_owned()], vec!["resp_root".to_owned()]);
    for n in 0..20 {
        for (branch, name) in [(&mut a, "a"), (&mut b, "b")] {
            let id = format!("resp_{name}{n}");
            let parent = branch.last().unwrap().clone();
            save(store, &t, turn(&id, &[&parent])).await;
            branch.push(id);
        }
    }
    for branch in [&a, &b] {
        let last = branch.last().unwrap();
        let chain = store.chain(&t, last).await.expect("chain").unwrap();
        assert!(chain.is_complete());
        assert_eq!(&ids_of(&chain), branch);
        let turns: Vec<&str> = chain.turns.iter().map(|t| &*t.id).collect();
        assert_eq!(turns, *branch);
    }
    // The middle of a branch too.
    assert_eq!(
        chain_ids(store, &t, "resp_a10").await,
        whole(&a[..12].iter().map(String::as_str).collect::<Vec<_>>())
    );
}

/// A response saved again with another parent moves there: its chain follows
/// the new parent, and the chains through its old place name it missing.
pub async fn a_response_saved_again_elsewhere_leaves_its_old_place_missing(
    store: &dyn ResponseStore,
) {
    let t = tenant("moved");
    save(store, &t, turn("resp_1", &[])).await;
    save(store, &t, turn("resp_2", &["resp_1"])).await;
    save(store, &t, turn("resp_3", &["resp_1", "resp_2"])).await;
    save(store, &t, turn("resp_x", &["resp_1"])).await;
    save(store, &t, turn("resp_2", &["resp_1", "resp_x"])).await;
    assert_eq!(
        chain_ids(store, &t, "resp_2").await,
        whole(&["resp_1", "resp_x", "resp_2"])
    );
    assert_eq!(
        chain_ids(store, &t, "resp_3").await,
        broken(&["resp_3"], "resp_2")
    );
    // Deleted, then saved again: the same.
    assert!(store.delete(&t, "resp_x").await.expect("delete"));
    save(store, &t, turn("resp_x", &["resp_1"])).await;
    assert_eq!(
        chain_ids(store, &t, "resp_2").await,
        broken(&["resp_2"], "resp_x")
    );
    assert_eq!(
        chain_ids(store, &t, "resp_x").await,
        whole(&["resp_1", "resp_x"])
    );
}

/// A conversation of 10,000 turns is read whole, in order, and a branch
/// from its middle sees its first half.
pub async fn a_conversation_10_000_deep_is_whole(store: &dyn ResponseStore) {
    const DEPTH: usize = 10_000;
    let t = tenant("10k");
    let ids: Vec<String> = (0..DEPTH).map(|n| format!("resp_{n:05}")).collect();
    for n in 0..DEPTH {
        let mut record = turn(&ids[n], &[]);
        record.parent = n.checked_sub(1).map(|p| ids[p].clone());
        save(store, &t, record).await;
    }
    let chain = store
        .chain(&t, &ids[DEPTH - 1])
        .await
        .expect("chain")
        .unwrap();
    assert_eq!(chain.missing, None);
    assert_eq!(ids_of(&chain), ids);
    assert_eq!(chain.turns.len(), DEPTH);
    for (n, turn) in chain.turns.iter().enumerate() {
        assert_eq!(*turn.id, ids[n]);
        assert!(turn.output.contains(&format!("answer of {}", ids[n])));
    }
    let mut fork = turn("resp_fork", &[]);
    fork.parent = Some(ids[4_999].clone());
    save(store, &t, fork).await;
    let fork = store.chain(&t, "resp_fork").await.expect("chain").unwrap();
    assert!(fork.is_complete());
    assert_eq!(fork.turns.len(), 5_001);
    assert_eq!(ids_of(&fork)[..5_000], ids[..5_000]);
    let last = store
        .chain(&t, &ids[DEPTH - 1])
        .await
        .expect("chain")
        .unwrap();
    assert_eq!(
        last.turns.len(),
        DEPTH,
        "the fork changes nothing before it"
    );
}

/// Saving a continuation renews its conversation: over half the TTL after
/// the parent, the child is saved; over half the TTL later, past the
/// parent's own TTL, the conversation is whole; it expires as a whole after
/// that. Another conversation saved with the parent is not renewed.
pub async fn continuing_renews_the_conversation(
    store: &dyn ResponseStore,
    pass_over_half_the_ttl: PassOverHalfTheTtl,
) {
    let t = tenant("renew");
    save(store, &t, turn("resp_old", &[])).await;
    save(store, &t, turn("resp_idle", &[])).await;
    pass_over_half_the_ttl().await;
    save(store, &t, turn("resp_new", &["resp_old"])).await;
    pass_over_half_the_ttl().await;
    assert_eq!(store.get(&t, "resp_idle").await.expect("get"), None);
    assert!(store.get(&t, "resp_old").await.expect("get").is_some());
    assert_eq!(
        chain_ids(store, &t, "resp_new").await,
        whole(&["resp_old", "resp_new"])
    );
    pass_over_half_the_ttl().await;
    assert_eq!(store.get(&t, "resp_old").await.expect("get"), None);
    assert_eq!(store.chain(&t, "resp_new").await.expect("chain"), None);
}

/// A parent that expired before its child was saved is named missing.
pub async fn expired_parent_is_named_missing(
    store: &dyn ResponseStore,
    pass_over_half_the_ttl: PassOverHalfTheTtl,
) {
    let t = tenant("expiry");
    save(store, &t, turn("resp_old", &[])).await;
    pass_over_half_the_ttl().await;
    pass_over_half_the_ttl().await;
    assert_eq!(
        store.get(&t, "resp_old").await.expect("get"),
        None,
        "the parent expired"
    );
    save(store, &t, turn("resp_new", &["resp_old"])).await;
    assert_eq!(
        chain_ids(store, &t, "resp_new").await,
        broken(&["resp_new"], "resp_old")
    );
}

/// A prompt cache fingerprint is read back by its tenant alone, and kept
/// again replaces it.
pub async fn fingerprints_are_kept_per_tenant(store: &dyn ResponseStore) {
    let (alice, bob) = (tenant("alice"), tenant("bob"));
    let none = store.fingerprint(&alice, "resp_1").await.expect("read");
    assert_eq!(none, None);
    store
        .keep_fingerprint(&alice, "resp_1", r#"{"m":"1"}"#.to_owned())
        .await
        .expect("keep");
    let read = store.fingerprint(&alice, "resp_1").await.expect("read");
    assert_eq!(read.as_deref(), Some(r#"{"m":"1"}"#));
    assert_eq!(store.fingerprint(&bob, "resp_1").await.expect("read"), None);
    // No response record comes of it.
    assert_eq!(store.get(&alice, "resp_1").await.expect("get"), None);
    store
        .keep_fingerprint(&alice, "resp_1", r#"{"m":"2"}"#.to_owned())
        .await
        .expect("keep");
    let read = store.fingerprint(&alice, "resp_1").await.expect("read");
    assert_eq!(read.as_deref(), Some(r#"{"m":"2"}"#));
}

/// A lease on a background run is held until it expires unrenewed, and is
/// its tenant's alone (for the stores that keep leases: the memory store
/// keeps none).
pub async fn a_lease_is_held_until_it_expires_unrenewed(store: &dyn ResponseStore) {
    let lease = Duration::from_millis(600);
    let (alice, mallory) = (tenant("alice"), tenant("mallory"));
    assert_eq!(lease_held(store, &alice).await, Some(false));
    store
        .hold_lease(&alice, "resp_1", lease)
        .await
        .expect("hold");
    assert_eq!(lease_held(store, &alice).await, Some(true));
    assert_eq!(lease_held(store, &mallory).await, Some(false));
    // Renewed before it expires, it lasts on.
    tokio::time::sleep(Duration::from_millis(400)).await;
    store
        .hold_lease(&alice, "resp_1", lease)
        .await
        .expect("renew");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(lease_held(store, &alice).await, Some(true));
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(lease_held(store, &alice).await, Some(false));
}

async fn lease_held(store: &dyn ResponseStore, t: &str) -> Option<bool> {
    store.lease_held(t, "resp_1").await.expect("read the lease")
}
