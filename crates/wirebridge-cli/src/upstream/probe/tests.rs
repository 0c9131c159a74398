//! The probe ejects a replica that fails it and returns it once it
//! answers, long before its back-off would have ended.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use http::{Response, StatusCode};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use wirebridge_tower::ReplicaHealth;

use super::*;
use crate::config::{ReplicaSettings, UpstreamUrl};
use crate::upstream::{Backend, UpstreamOptions};

/// A server that answers 500 while `failing`, else 200, and keeps the
/// paths it was asked for.
async fn server(failing: Arc<AtomicBool>, paths: Arc<Mutex<Vec<String>>>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (failing, paths) = (Arc::clone(&failing), Arc::clone(&paths));
            let service =
                hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                    paths.lock().unwrap().push(request.uri().path().to_owned());
                    let status = match failing.load(Ordering::SeqCst) {
                        true => StatusCode::INTERNAL_SERVER_ERROR,
                        false => StatusCode::OK,
                    };
                    let mut response =
                        Response::new(Full::new(Bytes::from_static(b"{\"data\":[]}")));
                    *response.status_mut() = status;
                    async move { Ok::<_, Infallible>(response) }
                });
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
        }
    });
    port
}

fn url(port: u16) -> UpstreamUrl {
    UpstreamUrl {
        uri: format!("http://127.0.0.1:{port}/v1").parse().unwrap(),
        credentials: None,
    }
}

async fn until_ready(health: &ReplicaHealth, ready: &[bool]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while health.ready() != ready {
        assert!(Instant::now() < deadline, "{:?}", health.ready());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_replica_failing_its_probes_is_ejected_and_returns_when_it_answers() {
    let paths = Arc::new(Mutex::new(Vec::new()));
    let healthy = server(Arc::new(AtomicBool::new(false)), Arc::clone(&paths)).await;
    let failing = Arc::new(AtomicBool::new(true));
    let sick = server(Arc::clone(&failing), Arc::clone(&paths)).await;
    let options = UpstreamOptions::for_tests(2);
    let settings = ReplicaSettings {
        load_factor: 1.25,
        move_slack: 2,
        eject_after: 3,
        // Far longer than the test: only a probe can bring it back.
        backoff: Duration::from_secs(600),
        resolve_every: None,
        probe_every: Some(Duration::from_millis(50)),
    };
    let backend = Backend::replicas(
        &[url(healthy), url(sick)],
        None,
        &options,
        &settings,
        1 << 20,
    );
    let health = backend.health().unwrap();
    // No request was sent: the probes alone eject it.
    until_ready(&health, &[true, false]).await;
    failing.store(false, Ordering::SeqCst);
    until_ready(&health, &[true, true]).await;
    let paths = paths.lock().unwrap();
    assert!(
        !paths.is_empty() && paths.iter().all(|p| p == "/v1/models"),
        "{paths:?}"
    );
}
