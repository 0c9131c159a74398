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
    store.save(&alice, turn("resp_1", None)).await.unwrap();
    store
        .save(&tenant_key(None), turn("resp_2", None))
        .await
        .unwrap();
    let mut connection = raw(&server).await;
    assert_eq!(
        keys(&mut connection, "test:ns:*").await,
        [
            format!("test:ns:{alice}:resp_1"),
            "test:ns:anonymous:resp_2".to_owned()
        ]
    );
    let kind: String = redis::cmd("TYPE")
        .arg(format!("test:ns:{alice}:resp_1"))
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(kind, "string", "one value per record");

    let default_store = RedisStore::connect(&server.url()).await.unwrap();
    default_store
        .save(&alice, turn("resp_3", None))
        .await
        .unwrap();
    assert_eq!(
        keys(&mut connection, "wirebridge:resp:*").await,
        [format!("wirebridge:resp:{alice}:resp_3")]
    );
    assert_eq!(
        keys(&mut connection, "*").await.len(),
        3,
        "nothing else written"
    );
}

#[tokio::test]
async fn every_key_has_the_ttl() {
    let (server, store) = fixture().await;
    let t = tenant("ttl");
    store.save(&t, turn("resp_default", None)).await.unwrap();
    let store = store.ttl(Duration::from_secs(90));
    store.save(&t, turn("resp_90", None)).await.unwrap();
    let mut connection = raw(&server).await;
    let month = 30 * 24 * 60 * 60;
    let default_ttl = ttl_of(
        &mut connection,
        &format!("wirebridge:resp:{t}:resp_default"),
    )
    .await;
    assert!((month - 5..=month).contains(&default_ttl), "{default_ttl}");
    let ttl = ttl_of(&mut connection, &format!("wirebridge:resp:{t}:resp_90")).await;
    assert!((85..=90).contains(&ttl), "{ttl}");
}

#[tokio::test]
async fn records_expire_after_a_one_second_ttl() {
    let (_server, store) = fixture().await;
    let store = store.ttl(Duration::from_secs(1));
    let t = tenant("expiry");
    store.save(&t, turn("resp_1", None)).await.unwrap();
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
        store.save(&t, turn("resp_1", None)).await.unwrap();
        store
            .save(&t, turn("resp_2", Some("resp_1")))
            .await
            .unwrap();
    }
    let store = RedisStore::connect(&server.url()).await.unwrap();
    let chain = store
        .chain(&t, "resp_2")
        .await
        .unwrap()
        .expect("kept on the server");
    assert_eq!(
        chain.records,
        [turn("resp_1", None), turn("resp_2", Some("resp_1"))]
    );
    assert_eq!(chain.missing, None);
}

#[tokio::test]
async fn killed_server_is_unavailable_promptly_then_recovers() {
    let (mut server, store) = fixture().await;
    let t = tenant("outage");
    store.save(&t, turn("resp_1", None)).await.unwrap();
    let port = server.port();
    server.kill();

    let get = promptly("get while down", store.get(&t, "resp_1")).await;
    assert!(matches!(get, Err(StoreError::Unavailable(_))), "{get:?}");
    let save = promptly("save while down", store.save(&t, turn("resp_2", None))).await;
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
    store.save(&t, turn("resp_3", None)).await.unwrap();
    assert_eq!(
        store.get(&t, "resp_3").await.unwrap(),
        Some(turn("resp_3", None))
    );
}

#[tokio::test]
async fn restarted_server_serves_the_first_operation_after() {
    let (mut server, store) = fixture().await;
    let t = tenant("restart");
    store.save(&t, turn("resp_1", None)).await.unwrap();
    let port = server.port();
    server.kill();
    let _server = RedisServer::start_on(port);
    // The store's connection died unnoticed; the operation retries on a new one.
    let save = promptly("save after restart", store.save(&t, turn("resp_2", None))).await;
    assert_eq!(save, Ok(()));
    assert_eq!(
        store.get(&t, "resp_2").await,
        Ok(Some(turn("resp_2", None)))
    );
}

#[tokio::test]
async fn frozen_server_is_unavailable_promptly_then_recovers() {
    let (server, store) = fixture().await;
    let t = tenant("frozen");
    store.save(&t, turn("resp_1", None)).await.unwrap();
    server.pause();
    let get = promptly("get while frozen", store.get(&t, "resp_1")).await;
    assert!(matches!(get, Err(StoreError::Unavailable(_))), "{get:?}");
    let save = promptly("save while frozen", store.save(&t, turn("resp_2", None))).await;
    assert!(matches!(save, Err(StoreError::Unavailable(_))), "{save:?}");
    server.resume();

    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match promptly("get after thawing", store.get(&t, "resp_1")).await {
            Ok(record) => {
                assert_eq!(record, Some(turn("resp_1", None)));
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
    let mut connection = raw(&server).await;
    let garbage = format!("wirebridge:resp:{t}:resp_garbage");
    let _: () = redis::cmd("SET")
        .arg(&garbage)
        .arg("not json")
        .query_async(&mut connection)
        .await
        .unwrap();
    let list = format!("wirebridge:resp:{t}:resp_list");
    let _: () = redis::cmd("RPUSH")
        .arg(&list)
        .arg("x")
        .query_async(&mut connection)
        .await
        .unwrap();
    for id in ["resp_garbage", "resp_list"] {
        let got = store.get(&t, id).await;
        assert!(matches!(got, Err(StoreError::Corrupt(_))), "{id}: {got:?}");
    }
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
        let mut record = turn(id, None);
        record.output = "x".repeat(256 << 10);
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
