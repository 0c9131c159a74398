//! `RedisStore` when its server is gone, frozen or restarted: each
//! operation fails promptly as unavailable, and the same store works again
//! once the server is back. Run with `--features redis`.

#![cfg(feature = "redis")]

mod common;
mod redis_server;

use std::future::Future;
use std::time::{Duration, Instant};

use common::{tenant, turn};
use redis_server::RedisServer;
use wirebridge_store::{RedisStore, ResponseStore, StoreError};

async fn fixture() -> (RedisServer, RedisStore) {
    let server = RedisServer::start();
    let store = RedisStore::connect(&server.url()).await.expect("connect");
    (server, store)
}

/// Runs `operation`, failing the test if it takes 5 s or more: more than
/// twice the store's 2 s timeout, which is what "promptly" means here.
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
async fn killed_server_is_unavailable_promptly_then_recovers() {
    let (mut server, store) = fixture().await;
    let t = tenant("outage");
    store.save(&t, turn("resp_1", &[])).await.unwrap();
    let port = server.port();
    server.kill();

    let get = promptly("get while down", store.get(&t, "resp_1")).await;
    assert!(
        matches!(get, Err(StoreError::Unavailable { .. })),
        "{get:?}"
    );
    let save = promptly("save while down", store.save(&t, turn("resp_2", &[]))).await;
    assert!(
        matches!(save, Err(StoreError::Unavailable { .. })),
        "{save:?}"
    );
    let delete = promptly("delete while down", store.delete(&t, "resp_1")).await;
    assert!(
        matches!(delete, Err(StoreError::Unavailable { .. })),
        "{delete:?}"
    );
    let chain = promptly("chain while down", store.chain(&t, "resp_1")).await;
    assert!(
        matches!(chain, Err(StoreError::Unavailable { .. })),
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
    assert!(
        matches!(get, Err(StoreError::Unavailable { .. })),
        "{get:?}"
    );
    let save = promptly("save while frozen", store.save(&t, turn("resp_2", &[]))).await;
    assert!(
        matches!(save, Err(StoreError::Unavailable { .. })),
        "{save:?}"
    );
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
        matches!(result, Err(StoreError::Unavailable { .. })),
        "{result:?}"
    );
    let invalid = RedisStore::connect("not a url").await;
    assert!(
        matches!(invalid, Err(StoreError::Unavailable { ref message, .. }) if message.contains("invalid")),
        "{invalid:?}"
    );
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
    assert!(
        matches!(down, Err(StoreError::Unavailable { .. })),
        "{down:?}"
    );
    let ping = promptly("ping while down", store.ping()).await;
    assert!(
        matches!(ping, Err(StoreError::Unavailable { .. })),
        "{ping:?}"
    );

    let _server = RedisServer::start_on(port);
    let saved = promptly("save once up", store.save(&t, turn("resp_1", &[]))).await;
    assert_eq!(saved, Ok(()));
    assert_eq!(store.ping().await, Ok(()));
    assert!(store.get(&t, "resp_1").await.unwrap().is_some());
}
