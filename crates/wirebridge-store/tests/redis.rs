//! `RedisStore` against a real `redis-server`: the shared suite, then keys,
//! TTLs, restarts and outages. Run with `--features redis`.

#![cfg(feature = "redis")]

#[macro_use]
mod common;
mod redis_server;

use std::future::Future;
use std::time::{Duration, Instant};

use common::{tenant, turn, PassOverHalfTheTtl};
use redis::aio::MultiplexedConnection;
use redis_server::RedisServer;
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

/// A plain connection, to look at what the store wrote.
async fn raw(server: &RedisServer) -> MultiplexedConnection {
    let client = redis::Client::open(server.url()).unwrap();
    client.get_multiplexed_async_connection().await.unwrap()
}

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

/// Runs `operation`, failing the test if it takes 5 s or more.
async fn promptly<T>(what: &str, operation: impl Future<Output = T>) -> T {
    let started = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(10), operation)
        .await
        .unwrap_or_else(|_| panic!("{what} hung"));
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "{what} took {took:?}");
    result
}

#[tokio::test]
async fn keys_are_namespaced_by_prefix_and_tenant() {
    let (server, store) = fixture().await;
    let store = store.prefix("test:ns");
    let alice = tenant("alice");
    store.save(&alice, turn("resp_1", &[])).await.unwrap();
    store
        .save(&tenant_key(None), turn("resp_2", &[]))
        .await
        .unwrap();
    let mut connection = raw(&server).await;
    assert_eq!(
        keys(&mut connection, "test:ns:*").await,
        [
            format!("test:ns:{{{alice}}}:a:resp_1"),
            format!("test:ns:{{{alice}}}:r:resp_1"),
            format!("test:ns:{{{alice}}}:t:resp_1"),
            "test:ns:{anonymous}:a:resp_2".to_owned(),
            "test:ns:{anonymous}:r:resp_2".to_owned(),
            "test:ns:{anonymous}:t:resp_2".to_owned(),
        ]
    );
    for part in ["a", "r", "t"] {
        let kind: String = redis::cmd("TYPE")
            .arg(format!("test:ns:{{{alice}}}:{part}:resp_1"))
            .query_async(&mut connection)
            .await
            .unwrap();
        assert_eq!(kind, "string", "{part}");
    }

    let default_store = RedisStore::connect(&server.url()).await.unwrap();
    default_store
        .save(&alice, turn("resp_3", &[]))
        .await
        .unwrap();
    assert_eq!(
        keys(&mut connection, "wirebridge:resp:*").await.len(),
        3,
        "the default prefix"
    );
    assert_eq!(
        keys(&mut connection, "*").await.len(),
        9,
        "nothing else written"
    );
}

/// What a continuation stores: only its own items, embedded as JSON, and
/// the list of the responses it continues.
#[tokio::test]
async fn each_item_is_stored_once() {
    let (server, store) = fixture().await;
    let t = tenant("once");
    store.save(&t, turn("resp_1", &[])).await.unwrap();
    store.save(&t, turn("resp_2", &["resp_1"])).await.unwrap();
    let mut connection = raw(&server).await;
    let value = |key: String| {
        let mut connection = connection.clone();
        async move {
            let value: String = redis::cmd("GET")
                .arg(key)
                .query_async(&mut connection)
                .await
                .unwrap();
            value
        }
    };
    let turn_2 = value(format!("wirebridge:resp:{{{t}}}:t:resp_2")).await;
    assert!(turn_2.contains("question of resp_2"), "{turn_2}");
    assert!(
        !turn_2.contains("resp_1"),
        "no item of the parent: {turn_2}"
    );
    assert!(
        turn_2.starts_with(r#"{"v":2,"input":[{"type":"message""#),
        "items embedded, not escaped: {turn_2}"
    );
    assert_eq!(
        value(format!("wirebridge:resp:{{{t}}}:a:resp_2")).await,
        r#"["resp_1"]"#
    );
    let envelope = value(format!("wirebridge:resp:{{{t}}}:r:resp_2")).await;
    assert!(!envelope.contains("question"), "{envelope}");
    let _ = &mut connection;
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
    for part in ["a", "r", "t"] {
        let default_ttl = ttl_of(
            &mut connection,
            &format!("wirebridge:resp:{{{t}}}:{part}:resp_default"),
        )
        .await;
        assert!((month - 5..=month).contains(&default_ttl), "{default_ttl}");
        let ttl = ttl_of(
            &mut connection,
            &format!("wirebridge:resp:{{{t}}}:{part}:resp_90"),
        )
        .await;
        assert!((85..=90).contains(&ttl), "{ttl}");
    }
    // A continuation saved with the longer TTL extends its parent's; one
    // with a shorter TTL does not shorten it.
    store
        .save(&t, turn("resp_child", &["resp_90"]))
        .await
        .unwrap();
    short
        .save(&t, turn("resp_short", &["resp_default"]))
        .await
        .unwrap();
    for part in ["a", "r", "t"] {
        let renewed = ttl_of(
            &mut connection,
            &format!("wirebridge:resp:{{{t}}}:{part}:resp_90"),
        )
        .await;
        assert!((month - 5..=month).contains(&renewed), "{part}: {renewed}");
        let kept = ttl_of(
            &mut connection,
            &format!("wirebridge:resp:{{{t}}}:{part}:resp_default"),
        )
        .await;
        assert!((month - 5..=month).contains(&kept), "{part}: {kept}");
    }
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
async fn killed_server_is_unavailable_promptly_then_recovers() {
    let (mut server, store) = fixture().await;
    let t = tenant("outage");
    store.save(&t, turn("resp_1", &[])).await.unwrap();
    let port = server.port();
    server.kill();

    let get = promptly("get while down", store.get(&t, "resp_1")).await;
    assert!(matches!(get, Err(StoreError::Unavailable(_))), "{get:?}");
    let save = promptly("save while down", store.save(&t, turn("resp_2", &[]))).await;
    assert!(matches!(save, Err(StoreError::Unavailable(_))), "{save:?}");
    let delete = promptly("delete while down", store.delete(&t, "resp_1")).await;
    assert!(
        matches!(delete, Err(StoreError::Unavailable(_))),
        "{delete:?}"
    );
    let chain = promptly("chain while down", store.chain(&t, "resp_1")).await;
    assert!(
        matches!(chain, Err(StoreError::Unavailable(_))),
        "{chain:?}"
    );

    let _server = RedisServer::start_on(port);
    // The new server starts empty (it persists nothing); what matters is that
    // the same store works again, from its first operation on.
    let get = promptly("get after restart", store.get(&t, "resp_1")).await;
    assert_eq!(get, Ok(None));
    store.save(&t, turn("resp_3", &[])).await.unwrap();
    assert_eq!(
        store.get(&t, "resp_3").await.unwrap(),
        Some(turn("resp_3", &[]))
    );
}

#[tokio::test]
async fn restarted_server_serves_the_first_operation_after() {
    let (mut server, store) = fixture().await;
    let t = tenant("restart");
    store.save(&t, turn("resp_1", &[])).await.unwrap();
    let port = server.port();
    server.kill();
    let _server = RedisServer::start_on(port);
    // The store's connection died unnoticed; the operation retries on a new one.
    let save = promptly("save after restart", store.save(&t, turn("resp_2", &[]))).await;
    assert_eq!(save, Ok(()));
    assert_eq!(store.get(&t, "resp_2").await, Ok(Some(turn("resp_2", &[]))));
}

#[tokio::test]
async fn frozen_server_is_unavailable_promptly_then_recovers() {
    let (server, store) = fixture().await;
    let t = tenant("frozen");
    store.save(&t, turn("resp_1", &[])).await.unwrap();
    server.pause();
    let get = promptly("get while frozen", store.get(&t, "resp_1")).await;
    assert!(matches!(get, Err(StoreError::Unavailable(_))), "{get:?}");
    let save = promptly("save while frozen", store.save(&t, turn("resp_2", &[]))).await;
    assert!(matches!(save, Err(StoreError::Unavailable(_))), "{save:?}");
    server.resume();

    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match promptly("get after thawing", store.get(&t, "resp_1")).await {
            Ok(record) => {
                assert_eq!(record, Some(turn("resp_1", &[])));
                break;
            }
            Err(e) => assert!(
                Instant::now() < deadline,
                "still failing after the server is back: {e}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn connecting_to_no_server_fails_promptly() {
    let port = {
        let server = RedisServer::start();
        server.port()
    };
    let result = promptly(
        "connect",
        RedisStore::connect(&format!("redis://127.0.0.1:{port}/")),
    )
    .await;
    assert!(
        matches!(result, Err(StoreError::Unavailable(_))),
        "{result:?}"
    );
    let invalid = RedisStore::connect("not a url").await;
    assert!(
        matches!(invalid, Err(StoreError::Unavailable(ref m)) if m.contains("invalid")),
        "{invalid:?}"
    );
}

#[tokio::test]
async fn unreadable_values_are_corrupt_not_panics() {
    let (server, store) = fixture().await;
    let t = tenant("corrupt");
    for id in ["resp_garbage", "resp_list", "resp_child"] {
        let ancestors: &[&str] = if id == "resp_child" {
            &["resp_garbage"]
        } else {
            &[]
        };
        store.save(&t, turn(id, ancestors)).await.unwrap();
    }
    let mut connection = raw(&server).await;
    let _: () = redis::cmd("SET")
        .arg(format!("wirebridge:resp:{{{t}}}:t:resp_garbage"))
        .arg("not json")
        .query_async(&mut connection)
        .await
        .unwrap();
    let list = format!("wirebridge:resp:{{{t}}}:a:resp_list");
    let _: () = redis::cmd("DEL")
        .arg(&list)
        .query_async(&mut connection)
        .await
        .unwrap();
    let _: () = redis::cmd("RPUSH")
        .arg(&list)
        .arg("x")
        .query_async(&mut connection)
        .await
        .unwrap();
    let got = store.get(&t, "resp_garbage").await;
    assert!(matches!(got, Err(StoreError::Corrupt(_))), "{got:?}");
    // `MGET` reads a value of another type as absent: the record is gone.
    assert_eq!(store.get(&t, "resp_list").await, Ok(None));
    for id in ["resp_garbage", "resp_list"] {
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
    assert!(
        store.delete(&t, "resp_list").await.unwrap(),
        "a corrupt record can still be deleted"
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

/// The calls of `command` the server has counted, from `INFO commandstats`.
async fn calls(connection: &mut MultiplexedConnection, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(connection)
        .await
        .unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// Reading a conversation is one round trip at any depth, and so is saving
/// a turn: counted by the store and, for the scripts, by the server.
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
    for depth in [1, 50, 500] {
        let (evalsha, mget) = (
            calls(&mut connection, "evalsha").await,
            calls(&mut connection, "mget").await,
        );
        let before = store.round_trips();
        let chain = store.chain(&t, refs[depth - 1]).await.unwrap().unwrap();
        assert_eq!(chain.turns.len(), depth);
        assert_eq!(store.round_trips() - before, 1, "depth {depth}");
        assert_eq!(
            calls(&mut connection, "evalsha").await - evalsha,
            1,
            "depth {depth}"
        );
        // Inside the script, the ancestors are read in batches of 512.
        let batches = u64::from(depth > 1);
        assert_eq!(calls(&mut connection, "mget").await - mget, batches);
    }
}

/// A server restarted empty has lost the scripts: the first call loads the
/// script again by its source, and works.
#[tokio::test]
async fn scripts_are_reloaded_after_a_server_restart() {
    let (mut server, store) = fixture().await;
    let t = tenant("reload");
    store.save(&t, turn("resp_1", &[])).await.unwrap();
    let port = server.port();
    server.kill();
    let _server = RedisServer::start_on(port);
    let saved = store.save(&t, turn("resp_2", &[])).await;
    assert_eq!(saved, Ok(()));
    let chain = store.chain(&t, "resp_2").await.unwrap().unwrap();
    assert_eq!(chain.turns, [turn("resp_2", &[]).turn()]);
}

/// Made while its server is down, a store fails promptly, then works once
/// the server is up, without being made again.
#[tokio::test]
async fn a_store_made_while_the_server_is_down_works_once_it_is_up() {
    let port = {
        let server = RedisServer::start();
        server.port()
    };
    let store = RedisStore::builder(&format!("redis://127.0.0.1:{port}/"))
        .build()
        .expect("made without connecting");
    let t = tenant("early");
    let down = promptly("save while down", store.save(&t, turn("resp_1", &[]))).await;
    assert!(matches!(down, Err(StoreError::Unavailable(_))), "{down:?}");
    let ping = promptly("ping while down", store.ping()).await;
    assert!(matches!(ping, Err(StoreError::Unavailable(_))), "{ping:?}");

    let _server = RedisServer::start_on(port);
    let saved = promptly("save once up", store.save(&t, turn("resp_1", &[]))).await;
    assert_eq!(saved, Ok(()));
    assert_eq!(store.ping().await, Ok(()));
    assert!(store.get(&t, "resp_1").await.unwrap().is_some());
}
