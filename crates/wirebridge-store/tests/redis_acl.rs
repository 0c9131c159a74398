//! `RedisStore` as a Redis ACL user (`redis://user:password@host/db`) of a
//! real `redis-server` whose `default` user is off: the shared suites
//! (responses, fingerprints, conversations) and leases through a user
//! allowed only what the docs' `ACL SETUSER` line grants, then refused
//! credentials. Run with `--features redis`.

#![cfg(feature = "redis")]

#[macro_use]
mod common;
mod redis_server;

use std::time::{Duration, Instant};

use common::{tenant, turn, PassOverHalfTheTtl};
use redis::aio::MultiplexedConnection;
use redis_server::RedisServer;
use wirebridge_store::{RedisStore, ResponseStore, StoreError};

/// The admin's password; the store never uses it.
const ADMIN: &str = "admin-pw";
/// The bridge user's password, as the server knows it.
const PASSWORD: &str = "p@ss:w0rd/1";
/// The same, as a URL writes it.
const PASSWORD_IN_URL: &str = "p%40ss%3Aw0rd%2F1";

/// The page that gives the `ACL SETUSER` line a deployment uses for the
/// bridge's user: the rules tested here are read from it, so that the line
/// a reader copies is the one these tests hold to.
const STATE_PAGE: &str = include_str!("../../../docs/state.md");

/// How that line starts; the rules follow.
const SETUSER: &str = "ACL SETUSER bridge on >PASSWORD ";

/// What the store needs, as the docs give it: its scripts, the commands
/// they run, and the plain commands it sends, on keys under its prefix
/// only.
fn bridge_rules() -> Vec<&'static str> {
    let mut lines = STATE_PAGE.lines().filter_map(|l| l.strip_prefix(SETUSER));
    let rules = lines
        .next()
        .unwrap_or_else(|| panic!("docs/state.md has no line starting {SETUSER:?}"));
    assert!(lines.next().is_none(), "docs/state.md gives the line twice");
    rules.split_whitespace().collect()
}

/// A server with an `admin` user and no usable `default` user.
fn server() -> RedisServer {
    let admin_password = format!(">{ADMIN}");
    RedisServer::start_with(&[
        "--user",
        "admin",
        "on",
        &admin_password,
        "~*",
        "&*",
        "+@all",
        "--user",
        "default",
        "off",
    ])
}

async fn admin(server: &RedisServer) -> MultiplexedConnection {
    let url = format!("redis://admin:{ADMIN}@127.0.0.1:{}/", server.port());
    let client = redis::Client::open(url).unwrap();
    client.get_multiplexed_async_connection().await.unwrap()
}

/// `ACL SETUSER name on >password` with the bridge's rules.
async fn create_user(server: &RedisServer, name: &str) {
    let mut cmd = redis::cmd("ACL");
    cmd.arg("SETUSER")
        .arg(name)
        .arg("on")
        .arg(format!(">{PASSWORD}"))
        .arg(bridge_rules());
    let () = cmd.query_async(&mut admin(server).await).await.unwrap();
}

fn url(server: &RedisServer, user: &str, password: &str) -> String {
    format!("redis://{user}:{password}@127.0.0.1:{}/0", server.port())
}

async fn fixture() -> (RedisServer, RedisStore) {
    let server = server();
    create_user(&server, "bridge").await;
    let store = RedisStore::connect(&url(&server, "bridge", PASSWORD_IN_URL))
        .await
        .expect("connect as the bridge user");
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

/// Leases on background runs, held and read as the bridge's user.
#[tokio::test]
async fn leases_are_held_and_read() {
    let (_server, store) = fixture().await;
    common::a_lease_is_held_until_it_expires_unrenewed(&store).await;
}

/// The user's limits hold: keys under another prefix are refused, and
/// nothing is written there.
#[tokio::test]
async fn the_user_is_held_to_its_prefix() {
    let (server, store) = fixture().await;
    let t = tenant("limited");
    store.save(&t, turn("resp_1", &[])).await.unwrap();
    let elsewhere = store.clone().prefix("other");
    let refused = elsewhere.save(&t, turn("resp_2", &[])).await;
    assert!(
        matches!(&refused, Err(StoreError::Unavailable { message, .. }) if message.contains("no permissions")),
        "{refused:?}"
    );
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut admin(&server).await)
        .await
        .unwrap();
    assert_eq!(keys.len(), 2, "the index and one conversation: {keys:?}");
    assert!(
        keys.iter().all(|k| k.starts_with("wirebridge:resp:")),
        "{keys:?}"
    );
}

/// A wrong password is refused promptly, saying so, and neither the error
/// nor the store's `Debug` shows the password.
#[tokio::test]
async fn a_wrong_password_fails_clearly_without_showing_it() {
    let server = server();
    create_user(&server, "bridge").await;
    let wrong = "wr0ng-s3cret";
    let started = Instant::now();
    let Err(StoreError::Unavailable { message, .. }) =
        RedisStore::connect(&url(&server, "bridge", wrong)).await
    else {
        panic!("a wrong password was accepted");
    };
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(message.to_lowercase().contains("auth"), "{message}");
    assert!(!message.contains(wrong), "{message}");

    let store = RedisStore::builder(&url(&server, "bridge", wrong))
        .build()
        .unwrap();
    let failed = store.get(&tenant("x"), "resp_1").await;
    let Err(StoreError::Unavailable { message, .. }) = &failed else {
        panic!("{failed:?}");
    };
    assert!(!message.contains(wrong), "{message}");
    for shown in [
        format!("{store:?}"),
        format!("{:?}", RedisStore::builder(&url(&server, "bridge", wrong))),
    ] {
        assert!(!shown.contains(wrong), "{shown}");
    }
}

/// A store whose user does not exist yet works once an admin creates it,
/// without being made again.
#[tokio::test]
async fn a_user_created_later_is_used_without_a_new_store() {
    let server = server();
    let store = RedisStore::builder(&url(&server, "late", PASSWORD_IN_URL))
        .build()
        .unwrap();
    let t = tenant("late");
    for _ in 0..2 {
        let refused = store.save(&t, turn("resp_1", &[])).await;
        assert!(
            matches!(refused, Err(StoreError::Unavailable { .. })),
            "{refused:?}"
        );
    }
    create_user(&server, "late").await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match store.save(&t, turn("resp_1", &[])).await {
            Ok(()) => break,
            Err(e) => assert!(Instant::now() < deadline, "still refused: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(store.get(&t, "resp_1").await.unwrap().is_some());
}
