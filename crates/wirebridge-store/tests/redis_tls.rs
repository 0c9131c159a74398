//! `RedisStore` over TLS (`rediss://`) to a real `redis-server` that accepts
//! only TLS, with certificates made by `openssl` at test time: the shared
//! suite, then the certificate checks. Run with `--features redis`.

#![cfg(feature = "redis")]

#[macro_use]
mod common;
mod redis_server;

use std::time::{Duration, Instant};

use common::{tenant, turn, PassOverHalfTheTtl};
use redis_server::certs::Certificates;
use redis_server::{scratch_dir, RedisServer, RemoveOnDrop};
use wirebridge_store::{RedisConfigError, RedisStore, ResponseStore, StoreError};

/// A TLS-only server, its certificates, and the directory they are in
/// (dropped in that order).
type Guard = (RedisServer, Certificates, RemoveOnDrop);

fn tls_server(config: &[&str]) -> Guard {
    let dir = scratch_dir();
    let certificates = Certificates::generate(dir.as_ref());
    let server = RedisServer::start_tls(&certificates, config);
    (server, certificates, dir)
}

async fn fixture() -> (Guard, RedisStore) {
    let guard = tls_server(&[]);
    let (server, certificates, _) = &guard;
    let store = RedisStore::builder(&server.url())
        .ca_certificate(certificates.pem("ca.crt"))
        .connect()
        .await
        .expect("connect over TLS");
    (guard, store)
}

async fn expiring_fixture() -> (Guard, RedisStore, PassOverHalfTheTtl) {
    let (guard, store) = fixture().await;
    let pass: PassOverHalfTheTtl =
        Box::new(|| Box::pin(tokio::time::sleep(Duration::from_millis(1300))));
    (guard, store.ttl(Duration::from_secs(2)), pass)
}

shared_suite!();

/// `connect`, failing the test if it takes 5 s or more.
async fn connect_promptly(
    builder: wirebridge_store::RedisStoreBuilder,
) -> Result<RedisStore, StoreError> {
    let started = Instant::now();
    let result = tokio::time::timeout(Duration::from_secs(10), builder.connect())
        .await
        .expect("connect hung");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    result
}

#[tokio::test]
async fn the_url_says_tls() {
    let (server, _, _dir) = tls_server(&[]);
    assert!(
        server.url().starts_with("rediss://127.0.0.1:"),
        "{}",
        server.url()
    );
    // Plain Redis protocol to a TLS port is no answer.
    let plain = server.url().replacen("rediss://", "redis://", 1);
    let refused = connect_promptly(RedisStore::builder(&plain)).await;
    assert!(
        matches!(refused, Err(StoreError::Unavailable { .. })),
        "{refused:?}"
    );
}

/// A server whose certificate another CA signed is refused, and the error
/// says it is about the certificate.
#[tokio::test]
async fn a_wrong_ca_fails_clearly() {
    let (server, certificates, _dir) = tls_server(&[]);
    let wrong = RedisStore::builder(&server.url()).ca_certificate(certificates.pem("other-ca.crt"));
    let Err(StoreError::Unavailable { message, .. }) = connect_promptly(wrong).await else {
        panic!("a server certificate from another CA was accepted");
    };
    assert!(message.to_lowercase().contains("certificate"), "{message}");
    // The system's CAs did not sign it either.
    let system = connect_promptly(RedisStore::builder(&server.url())).await;
    assert!(
        matches!(system, Err(StoreError::Unavailable { .. })),
        "{system:?}"
    );
    // And the right CA still works on the same server.
    let right = RedisStore::builder(&server.url()).ca_certificate(certificates.pem("ca.crt"));
    connect_promptly(right).await.expect("the right CA");
}

/// A server that asks clients for a certificate gets one from
/// `client_certificate`, and refuses clients without.
#[tokio::test]
async fn a_client_certificate_is_presented() {
    let (server, certificates, _dir) = tls_server(&["--tls-auth-clients", "yes"]);
    let ca = certificates.pem("ca.crt");
    let store = connect_promptly(
        RedisStore::builder(&server.url())
            .ca_certificate(ca.clone())
            .client_certificate(
                certificates.pem("client.crt"),
                certificates.pem("client.key"),
            ),
    )
    .await
    .expect("connect with a client certificate");
    let t = tenant("mtls");
    store.save(&t, turn("resp_1", &[])).await.unwrap();
    assert_eq!(
        store.get(&t, "resp_1").await.unwrap(),
        Some(turn("resp_1", &[]))
    );

    let without = RedisStore::builder(&server.url()).ca_certificate(ca);
    let refused = connect_promptly(without).await;
    assert!(
        matches!(refused, Err(StoreError::Unavailable { .. })),
        "{refused:?}"
    );
}

#[tokio::test]
async fn certificates_that_cannot_be_used_are_refused_when_building() {
    let dir = scratch_dir();
    let certificates = Certificates::generate(dir.as_ref());
    let tls = |builder: wirebridge_store::RedisStoreBuilder| match builder.build() {
        Err(RedisConfigError::Tls(message)) => message,
        other => panic!("{other:?}"),
    };
    let message =
        tls(RedisStore::builder("redis://127.0.0.1:1/").ca_certificate(certificates.pem("ca.crt")));
    assert!(message.contains("rediss://"), "{message}");
    let message =
        tls(RedisStore::builder("rediss://127.0.0.1:1/").ca_certificate(b"not PEM".to_vec()));
    assert!(message.contains("no PEM certificate"), "{message}");
    let message = tls(
        RedisStore::builder("rediss://127.0.0.1:1/").client_certificate(
            certificates.pem("client.crt"),
            certificates.pem("client.crt"),
        ),
    );
    assert!(message.contains("private key"), "{message}");
    let insecure = RedisStore::builder("rediss://127.0.0.1:1/#insecure").build();
    assert!(
        matches!(insecure, Err(RedisConfigError::Url(_))),
        "{insecure:?}"
    );
}
