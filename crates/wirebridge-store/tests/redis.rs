//! `RedisStore` against a real `redis-server`: the shared suites (responses
//! and conversations), then keys, TTLs, layouts and the work a save does
//! (outages: `redis_outages.rs`; long chains, and the turns one process
//! keeps read again: `redis_chains.rs`).
//! Run with `--features redis`.

#![cfg(feature = "redis")]

#[macro_use]
mod common;
mod redis_server;

use std::time::Duration;

use common::{ids_of, tenant, turn, PassOverHalfTheTtl};
use redis::aio::MultiplexedConnection;
use redis_server::{calls, hset, raw, RedisServer};
use wirebridge_store::{tenant_key, RedisStore, ResponseStore, StoreError};

async fn fixture() -> (RedisServer, RedisStore) {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url()).await.expect("connect");
    (server, store)
}

async fn expiring_fixture() -> (RedisServer, RedisStore, PassOverHalfTheTtl) {
    let (server, store) = fixture().await;
    let pass: PassOverHalfTheTtl =
        Box::new(|| Box::pin(tokio::time::sleep(Duration::from_millis(1300))));
    (server, store.ttl(Duration::from_secs(2)), pass)
}

shared_suite!();
conversation_suite!();

async fn keys(connection: &mut MultiplexedConnection, pattern: &str) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(pattern)
        .query_async(connection)
        .await
        .unwrap();
    keys.sort();
    keys
}

async fn ttl_of(connection: &mut MultiplexedConnection, key: &str) -> i64 {
    redis::cmd("TTL")
        .arg(key)
        .query_async(connection)
        .await
        .unwrap()
}

async fn hget(connection: &mut MultiplexedConnection, key: &str, field: &str) -> Option<String> {
    redis::cmd("HGET")
        .arg(key)
        .arg(field)
        .query_async(connection)
        .await
        .unwrap()
}

#[tokio::test]
async fn keys_are_namespaced_by_prefix_and_tenant() {
    let (server, store) = fixture().await;
    let store = store.prefix("test:ns");
    let alice = tenant("alice");
    store.save(&alice, turn("resp_1", &[])).await.unwrap();
    store
        .save(&alice, turn("resp_2", &["resp_1"]))
        .await
        .unwrap();
    store
        .save(&tenant_key(None), turn("resp_3", &[]))
        .await
        .unwrap();
    let mut connection = raw(&server).await;
    assert_eq!(
        keys(&mut connection, "test:ns:*").await,
        [
            format!("test:ns:{{{alice}}}:c:1"),
            format!("test:ns:{{{alice}}}:x"),
            "test:ns:{anonymous}:c:1".to_owned(),
            "test:ns:{anonymous}:x".to_owned(),
        ]
    );
    for key in ["c:1", "x"] {
        let kind: String = redis::cmd("TYPE")
            .arg(format!("test:ns:{{{alice}}}:{key}"))
            .query_async(&mut connection)
            .await
            .unwrap();
        assert_eq!(kind, "hash", "{key}");
    }

    let default_store = RedisStore::connect(&server.url()).await.unwrap();
    default_store
        .save(&alice, turn("resp_4", &[]))
        .await
        .unwrap();
    assert_eq!(
        keys(&mut connection, "wirebridge:resp:*").await.len(),
        2,
        "the default prefix"
    );
    assert_eq!(
        keys(&mut connection, "*").await.len(),
        6,
        "nothing else written"
    );
}

/// What a continuation stores: only its own items, embedded as JSON, and
/// its place in its parent's conversation, whatever the depth.
#[tokio::test]
async fn each_item_is_stored_once() {
    let (server, store) = fixture().await;
    let t = tenant("once");
    store.save(&t, turn("resp_1", &[])).await.unwrap();
    store.save(&t, turn("resp_2", &["resp_1"])).await.unwrap();
    store.save(&t, turn("resp_b", &["resp_1"])).await.unwrap();
    let mut connection = raw(&server).await;
    let conversation = format!("wirebridge:resp:{{{t}}}:c:1");
    let turn_2 = hget(&mut connection, &conversation, "t:1").await.unwrap();
    assert!(turn_2.contains("question of resp_2"), "{turn_2}");
    assert!(
        !turn_2.contains("resp_1"),
        "no item of the parent: {turn_2}"
    );
    assert!(
        turn_2.starts_with(r#"{"v":3,"input":[{"type":"message""#),
        "items embedded, not escaped: {turn_2}"
    );
    let envelope = hget(&mut connection, &conversation, "r:1").await.unwrap();
    assert!(!envelope.contains("question"), "{envelope}");
    // Slots in the order saved, the turns by slot; resp_2 extends resp_1's
    // run, resp_b (a branch) starts its own after resp_1.
    let places: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(&conversation)
        .arg(&["#", "i:0", "i:1", "i:2", "n:resp_1", "n:resp_2", "n:resp_b"][..])
        .query_async(&mut connection)
        .await
        .unwrap();
    let places: Vec<&str> = places.iter().map(|p| p.as_deref().unwrap()).collect();
    assert_eq!(
        places,
        [
            "3",
            "resp_1",
            "resp_2",
            "resp_b",
            "0 0 -",
            "1 0 -",
            "2 2 +resp_1"
        ]
    );
    let index = format!("wirebridge:resp:{{{t}}}:x");
    for id in ["resp_1", "resp_2", "resp_b"] {
        assert_eq!(
            hget(&mut connection, &index, &format!("i:{id}"))
                .await
                .as_deref(),
            Some("1")
        );
    }
}

#[tokio::test]
async fn every_key_has_the_ttl_and_continuing_renews_it() {
    let (server, store) = fixture().await;
    let t = tenant("ttl");
    store.save(&t, turn("resp_default", &[])).await.unwrap();
    let short = store.clone().ttl(Duration::from_secs(90));
    short.save(&t, turn("resp_90", &[])).await.unwrap();
    let mut connection = raw(&server).await;
    let month = 30 * 24 * 60 * 60;
    let key = |part: &str| format!("wirebridge:resp:{{{t}}}:{part}");
    let in_a_month = |ttl: i64| (month - 5..=month).contains(&ttl);
    assert!(in_a_month(ttl_of(&mut connection, &key("x")).await));
    assert!(in_a_month(ttl_of(&mut connection, &key("c:1")).await));
    let ttl = ttl_of(&mut connection, &key("c:2")).await;
    assert!((85..=90).contains(&ttl), "{ttl}");
    // A continuation saved with the longer TTL extends its conversation's;
    // one with a shorter TTL does not shorten it.
    store
        .save(&t, turn("resp_child", &["resp_90"]))
        .await
        .unwrap();
    short
        .save(&t, turn("resp_short", &["resp_default"]))
        .await
        .unwrap();
    for part in ["x", "c:1", "c:2"] {
        let ttl = ttl_of(&mut connection, &key(part)).await;
        assert!(in_a_month(ttl), "{part}: {ttl}");
    }
    assert_eq!(keys(&mut connection, "*").await.len(), 3);
}

#[tokio::test]
async fn a_fingerprint_is_one_key_of_its_tenant_with_the_ttl() {
    let (server, store) = fixture().await;
    let t = tenant("prints");
    let short = store.ttl(Duration::from_secs(90));
    short
        .keep_fingerprint(&t, "resp_1", "{}".to_owned())
        .await
        .unwrap();
    let mut connection = raw(&server).await;
    let key = format!("wirebridge:resp:{{{t}}}:f:resp_1");
    assert_eq!(keys(&mut connection, "*").await, vec![key.clone()]);
    let ttl = ttl_of(&mut connection, &key).await;
    assert!((85..=90).contains(&ttl), "{ttl}");
}

#[tokio::test]
async fn records_expire_after_a_one_second_ttl() {
    let (_server, store) = fixture().await;
    let store = store.ttl(Duration::from_secs(1));
    let t = tenant("expiry");
    store.save(&t, turn("resp_1", &[])).await.unwrap();
    assert!(store.get(&t, "resp_1").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(store.get(&t, "resp_1").await.unwrap(), None);
    assert_eq!(store.chain(&t, "resp_1").await.unwrap(), None);
}

#[tokio::test]
async fn a_new_store_on_the_same_server_sees_old_records() {
    let server = RedisServer::start();
    let t = tenant("persist");
    {
        let store = RedisStore::connect(&server.url()).await.unwrap();
        store.save(&t, turn("resp_1", &[])).await.unwrap();
        store.save(&t, turn("resp_2", &["resp_1"])).await.unwrap();
    }
    let store = RedisStore::connect(&server.url()).await.unwrap();
    let chain = store
        .chain(&t, "resp_2")
        .await
        .unwrap()
        .expect("kept on the server");
    assert_eq!(
        chain.turns,
        [
            turn("resp_1", &[]).turn(),
            turn("resp_2", &["resp_1"]).turn()
        ]
    );
    assert_eq!(chain.missing, None);
}

#[tokio::test]
async fn unreadable_values_are_corrupt_not_panics() {
    let server = RedisServer::start();
    // Edits made beside the bridge do not change a conversation's
    // generation: a store that keeps turns would not read them again.
    let store = RedisStore::builder(&server.url())
        .kept_turns(0)
        .build()
        .unwrap();
    let t = tenant("corrupt");
    store.save(&t, turn("resp_garbage", &[])).await.unwrap();
    store
        .save(&t, turn("resp_child", &["resp_garbage"]))
        .await
        .unwrap();
    store.save(&t, turn("resp_place", &[])).await.unwrap();
    store.save(&t, turn("resp_slot", &[])).await.unwrap();
    let mut connection = raw(&server).await;
    let conversation = |n: u32| format!("wirebridge:resp:{{{t}}}:c:{n}");
    hset(&mut connection, &conversation(1), "t:0", "not json").await;
    hset(
        &mut connection,
        &conversation(2),
        "n:resp_place",
        "0 garbage",
    )
    .await;
    hset(&mut connection, &conversation(3), "i:0", "resp_other").await;
    let got = store.get(&t, "resp_garbage").await;
    assert!(matches!(got, Err(StoreError::Corrupt(_))), "{got:?}");
    for id in ["resp_garbage", "resp_place", "resp_slot"] {
        let chain = store.chain(&t, id).await;
        assert!(
            matches!(chain, Err(StoreError::Corrupt(_))),
            "{id}: {chain:?}"
        );
    }
    let chain = store.chain(&t, "resp_child").await;
    assert!(
        matches!(chain, Err(StoreError::Corrupt(ref m)) if m.contains("resp_garbage")),
        "an unreadable ancestor: {chain:?}"
    );
    assert!(store.get(&t, "resp_place").await.unwrap().is_some());
    assert!(
        store.delete(&t, "resp_place").await.unwrap(),
        "a corrupt record can still be deleted"
    );
    // A conversation that is not a hash any more.
    let _: () = redis::cmd("DEL")
        .arg(conversation(3))
        .query_async(&mut connection)
        .await
        .unwrap();
    let _: () = redis::cmd("RPUSH")
        .arg(conversation(3))
        .arg("x")
        .query_async(&mut connection)
        .await
        .unwrap();
    let got = store.get(&t, "resp_slot").await;
    assert!(matches!(got, Err(StoreError::Corrupt(_))), "{got:?}");
    let chain = store.chain(&t, "resp_slot").await;
    assert!(matches!(chain, Err(StoreError::Corrupt(_))), "{chain:?}");
    // An index entry naming a conversation that does not exist.
    let index = format!("wirebridge:resp:{{{t}}}:x");
    hset(&mut connection, &index, "i:resp_lost", "99").await;
    assert_eq!(store.get(&t, "resp_lost").await, Ok(None));
    assert_eq!(store.chain(&t, "resp_lost").await, Ok(None));
    assert!(!store.delete(&t, "resp_lost").await.unwrap());
}

/// Records saved in the layout before this one (three string keys per
/// response, the ancestors' ids in one of them) are not read, and break
/// nothing: a new save of the same ids works beside them.
#[tokio::test]
async fn records_of_the_previous_layout_are_ignored() {
    let (server, store) = fixture().await;
    let t = tenant("previous");
    let mut connection = raw(&server).await;
    let base = format!("wirebridge:resp:{{{t}}}");
    for (part, value) in [
        (
            "r",
            r#"{"v":2,"id":"resp_1","parent":null,"created_at":1,"response":{}}"#,
        ),
        ("t", r#"{"v":2,"input":[],"output":[]}"#),
        ("a", "[]"),
    ] {
        let _: () = redis::cmd("SET")
            .arg(format!("{base}:{part}:resp_1"))
            .arg(value)
            .query_async(&mut connection)
            .await
            .unwrap();
    }
    assert_eq!(store.get(&t, "resp_1").await, Ok(None));
    assert_eq!(store.chain(&t, "resp_1").await, Ok(None));
    assert_eq!(
        store.turns(&t, &["resp_1".to_owned()]).await,
        Ok(vec![None])
    );
    assert_eq!(store.delete(&t, "resp_1").await, Ok(false));
    store.save(&t, turn("resp_2", &["resp_1"])).await.unwrap();
    let chain = store.chain(&t, "resp_2").await.unwrap().unwrap();
    assert_eq!(chain.missing.as_deref(), Some("resp_1"));
    store.save(&t, turn("resp_1", &[])).await.unwrap();
    assert_eq!(
        store.get(&t, "resp_1").await.unwrap(),
        Some(turn("resp_1", &[]))
    );
}

#[tokio::test]
async fn a_save_refused_for_memory_is_not_kept() {
    let server =
        RedisServer::start_with(&["--maxmemory", "4mb", "--maxmemory-policy", "noeviction"]);
    let store = RedisStore::connect(&server.url()).await.unwrap();
    let t = tenant("full");
    let big = |id: &str| {
        let mut record = turn(id, &[]);
        record.output = format!(r#"["{}"]"#, "x".repeat(256 << 10));
        record
    };
    let mut kept = Vec::new();
    let refused = loop {
        let id = format!("resp_{}", kept.len());
        match store.save(&t, big(&id)).await {
            Ok(()) => kept.push(id),
            Err(e) => break e,
        }
        assert!(kept.len() < 100, "25 MiB saved under a 4 MiB maxmemory");
    };
    let StoreError::NotKept(message) = &refused else {
        panic!("{refused:?}");
    };
    assert!(message.contains("out of memory"), "{message}");
    assert!(!message.contains("redis://"), "{message}");
    // Nothing evicted, and the store still serves reads and deletes.
    for id in &kept {
        assert!(store.get(&t, id).await.unwrap().is_some(), "{id}");
    }
    let refused_id = format!("resp_{}", kept.len());
    assert_eq!(store.get(&t, &refused_id).await.unwrap(), None);
    assert!(store.delete(&t, &kept[0]).await.unwrap());
}

/// The calls of every command the server has counted but `INFO`, from
/// `INFO commandstats`.
async fn all_calls(connection: &mut MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(connection)
        .await
        .unwrap();
    info.lines()
        .filter(|line| line.starts_with("cmdstat_") && !line.starts_with("cmdstat_info:"))
        .filter_map(|line| {
            line.split_once("calls=")?
                .1
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

/// Reading a conversation that fits in one piece (500 small turns) is one
/// round trip, and saving a turn is one at any depth: counted by the store
/// and, for the scripts, by the server. The turns a store keeps are not
/// sent again: Redis's work for a conversation read again is flat in its
/// depth. (Longer chains, read in pieces: `redis_chains.rs`.)
#[tokio::test]
async fn one_round_trip_per_chain_and_per_save_at_any_depth() {
    let (server, store) = fixture().await;
    let t = tenant("round-trips");
    let ids: Vec<String> = (0..500).map(|n| format!("resp_{n}")).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    // Loads both scripts on the server.
    store.save(&t, turn(refs[0], &[])).await.unwrap();
    store.chain(&t, refs[0]).await.unwrap();
    let mut connection = raw(&server).await;
    for n in 1..500 {
        let before = store.round_trips();
        store.save(&t, turn(refs[n], &refs[..n])).await.unwrap();
        assert_eq!(store.round_trips() - before, 1, "saving turn {n}");
    }
    // Another process, which has read nothing yet, then the one that saved
    // every turn and keeps them.
    let other = RedisStore::connect(&server.url()).await.unwrap();
    for (reader, fresh) in [(&other, true), (&other, false), (&store, false)] {
        for depth in [1, 50, 500] {
            let (evalsha, hmget) = (
                calls(&mut connection, "evalsha").await,
                calls(&mut connection, "hmget").await,
            );
            let (before, read) = (reader.round_trips(), reader.turns_read());
            let chain = reader.chain(&t, refs[depth - 1]).await.unwrap().unwrap();
            assert_eq!(chain.turns.len(), depth);
            assert_eq!(ids_of(&chain), ids[..depth]);
            assert_eq!(&*chain.turns[depth - 1].id, refs[depth - 1]);
            assert_eq!(reader.round_trips() - before, 1, "depth {depth}");
            assert_eq!(
                calls(&mut connection, "evalsha").await - evalsha,
                1,
                "depth {depth}"
            );
            // Inside the script, one piece: the ids of the one run, then
            // their turns, one `HMGET` each; only the turns not read before.
            let read_before = match depth {
                1 => 0,
                50 => 1,
                _ => 50,
            };
            let (hmgets, turns) = match fresh {
                true => (2, depth - read_before),
                false => (0, 0),
            };
            assert_eq!(
                calls(&mut connection, "hmget").await - hmget,
                hmgets,
                "depth {depth}, fresh {fresh}"
            );
            assert_eq!(reader.turns_read() - read, turns as u64, "depth {depth}");
        }
    }
}

/// A save runs the same commands on the server at any depth: no command per
/// ancestor, one conversation renewed.
#[tokio::test]
async fn a_save_does_the_same_work_at_any_depth() {
    let (server, store) = fixture().await;
    let t = tenant("flat");
    let mut connection = raw(&server).await;
    let mut parent: Option<String> = None;
    let mut commands = Vec::new();
    for n in 0..5_000 {
        let id = format!("resp_{n}");
        let mut record = turn(&id, &[]);
        record.parent = parent.replace(id);
        if [10, 100, 1_000, 4_999].contains(&n) {
            let before = all_calls(&mut connection).await;
            store.save(&t, record).await.unwrap();
            // The `INFO` itself is not counted.
            commands.push(all_calls(&mut connection).await - before);
        } else {
            store.save(&t, record).await.unwrap();
        }
    }
    assert!(
        commands.iter().all(|&n| n == commands[0]),
        "commands per save at depths 10, 100, 1,000, 5,000: {commands:?}"
    );
    assert!(commands[0] <= 24, "{commands:?}");
}

/// What Redis holds for a conversation grows with its turns, not with their
/// square (as it did when every response listed its ancestors): 10,000
/// small turns take a few MB, twice what 5,000 take.
#[tokio::test]
async fn a_deep_conversation_takes_memory_linear_in_its_depth() {
    let (server, store) = fixture().await;
    let t = tenant("memory");
    let mut connection = raw(&server).await;
    let conversation = format!("wirebridge:resp:{{{t}}}:c:1");
    let mut usage = Vec::new();
    let mut parent: Option<String> = None;
    for n in 0..10_000 {
        let id = format!("resp_{n:05}");
        let mut record = turn(&id, &[]);
        record.parent = parent.replace(id);
        store.save(&t, record).await.unwrap();
        if n + 1 == 5_000 || n + 1 == 10_000 {
            let bytes: u64 = redis::cmd("MEMORY")
                .arg("USAGE")
                .arg(&conversation)
                .arg("SAMPLES")
                .arg(0)
                .query_async(&mut connection)
                .await
                .unwrap();
            usage.push(bytes);
        }
    }
    let (half, whole) = (usage[0], usage[1]);
    assert!(whole < 10 << 20, "10,000 turns take {whole} B");
    assert!(
        whole < half * 5 / 2,
        "5,000 turns take {half} B, 10,000 take {whole} B"
    );
}

#[tokio::test]
async fn a_lease_is_held_until_it_expires_unrenewed_and_is_the_tenant_s_own() {
    let (_server, store) = fixture().await;
    common::a_lease_is_held_until_it_expires_unrenewed(&store).await;
}
